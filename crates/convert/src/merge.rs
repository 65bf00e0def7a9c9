//! Combines the Ingresses' outputs into one model, incrementally. Every host and path,
//! TLS host, backend and the default backend is a key with a set of claims ordered by the
//! claiming Ingress's age (oldest first) and the claim's place in it; the oldest claim
//! wins and every other conflicting claim is reported. When outputs change, only the keys
//! they claimed (and the keys that depend on those) are resolved again, so a merge of
//! everything from scratch and a merge of one change cannot disagree.

use std::collections::BTreeSet;
use std::sync::Arc;

use model::{
    Backend, BackendId, CertId, Condition, GatewayRule, HostKey, OrdMap, PathMatch, ProxyModel,
    Route, RouteTarget, TlsCert,
};
use resources::ObjectRef;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::Diagnostic;
use crate::ingress::IngressOutput;
use crate::small_set::SmallSet;

/// When an Ingress counts as older: creation time, then namespace and name.
pub(crate) type Age = (Option<resources::jiff::Timestamp>, String, String);

/// An Ingress's output with its age.
pub(crate) type AgedOutput = (Arc<Age>, Arc<IngressOutput>);

/// A claim's place in the merge order: the Ingress's age, then the claim's index in it.
type Position = (Arc<Age>, u32);

/// A claim: the output that made it, and which of its entries.
#[derive(Debug, Clone)]
struct Claim {
    output: Arc<IngressOutput>,
    index: usize,
}

type RouteKey = (HostKey, PathMatch);

/// The claims on one key, oldest first. Nearly every key has one claim, so a sorted
/// vector (one small allocation) serves better than a tree.
#[derive(Debug, Default)]
struct Claims(Vec<(Position, Claim)>);

impl Claims {
    fn insert(&mut self, position: Position, claim: Claim) {
        match self.0.binary_search_by(|(p, _)| p.cmp(&position)) {
            Ok(index) => self.0[index] = (position, claim),
            Err(index) => self.0.insert(index, (position, claim)),
        }
    }

    fn remove(&mut self, position: &Position) {
        if let Ok(index) = self.0.binary_search_by(|(p, _)| p.cmp(position)) {
            self.0.remove(index);
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (&Position, &Claim)> {
        self.0.iter().map(|(p, c)| (p, c))
    }

    fn values(&self) -> impl Iterator<Item = &Claim> {
        self.0.iter().map(|(_, c)| c)
    }
}

/// Diagnostics by the key that produced them, so resolving a key replaces its own.
#[derive(Debug, Default)]
struct Diagnostics {
    ingresses: FxHashMap<ObjectRef, Vec<Diagnostic>>,
    tls: FxHashMap<HostKey, Vec<Diagnostic>>,
    routes: FxHashMap<RouteKey, Vec<Diagnostic>>,
    backends: FxHashMap<BackendId, Vec<Diagnostic>>,
    default: Vec<Diagnostic>,
    certificates: FxHashMap<CertId, Vec<Diagnostic>>,
}

/// Stores a key's diagnostics; the key is cloned only when there are some.
fn set<K: Clone + Eq + std::hash::Hash>(
    map: &mut FxHashMap<K, Vec<Diagnostic>>,
    key: &K,
    diagnostics: Vec<Diagnostic>,
) {
    if diagnostics.is_empty() {
        map.remove(key);
    } else {
        map.insert(key.clone(), diagnostics);
    }
}

impl Diagnostics {
    fn all(&self) -> impl Iterator<Item = &Diagnostic> {
        self.ingresses
            .values()
            .chain(self.tls.values())
            .chain(self.routes.values())
            .chain(self.backends.values())
            .chain(self.certificates.values())
            .flatten()
            .chain(&self.default)
    }
}

/// Keys whose resolution must be redone.
#[derive(Debug, Default)]
struct Dirty {
    tls: FxHashSet<HostKey>,
    routes: FxHashSet<RouteKey>,
    default: bool,
    backends: FxHashSet<BackendId>,
    certificates: FxHashSet<CertId>,
    host_certificates: FxHashSet<HostKey>,
}

/// The merge state: claims per key, the winners, and the model they make.
#[derive(Debug, Default)]
pub(crate) struct Merger {
    outputs: FxHashMap<ObjectRef, AgedOutput>,
    tls_claims: FxHashMap<HostKey, Claims>,
    route_claims: FxHashMap<RouteKey, Claims>,
    default_claims: Claims,
    /// Paths claimed per host, to find a host's routes when its TLS changes.
    paths_by_host: FxHashMap<HostKey, SmallSet<PathMatch>>,
    /// Exact hosts with claimed paths, by the suffix a wildcard TLS host would cover.
    exact_hosts_by_suffix: FxHashMap<String, BTreeSet<String>>,
    /// Winning TLS claim per host: the object and the secret it names.
    tls_winners: FxHashMap<HostKey, (ObjectRef, Option<CertId>)>,
    /// Hosts served with each certificate, with the Ingress that asked for it.
    certificate_users: FxHashMap<CertId, BTreeSet<(HostKey, ObjectRef)>>,
    /// Uses of each backend by winning routes and the winning default backend.
    backend_uses: FxHashMap<BackendId, Claims>,
    /// The backend each winning route and the winning default use, by position.
    route_winners: FxHashMap<RouteKey, Vec<(Position, BackendId)>>,
    default_winner: Option<(Position, BackendId)>,
    diagnostics: Diagnostics,
    hosts: OrdMap<HostKey, model::Host>,
    backends: OrdMap<BackendId, Backend>,
    certs: OrdMap<CertId, TlsCert>,
    default_backend: Option<BackendId>,
}

impl Merger {
    /// Replaces an Ingress's output (`None`: it no longer contributes) and resolves again
    /// every key the old or the new output claimed. `certificate` loads a TLS Secret.
    pub(crate) fn update(
        &mut self,
        changes: Vec<(ObjectRef, Option<AgedOutput>)>,
        changed_secrets: &BTreeSet<CertId>,
        mut certificate: impl FnMut(&CertId) -> Result<TlsCert, String>,
    ) {
        let mut dirty = Dirty::default();
        for (object, new) in changes {
            if let Some((age, old)) = self.outputs.remove(&object) {
                self.unclaim(&age, &old, &mut dirty);
            }
            let own = new
                .as_ref()
                .map(|(_, output)| output.diagnostics.clone())
                .unwrap_or_default();
            set(&mut self.diagnostics.ingresses, &object, own);
            if let Some((age, output)) = new {
                self.claim(&age, &output, &mut dirty);
                self.outputs.insert(object, (age, output));
            }
        }
        dirty.certificates.extend(
            changed_secrets
                .iter()
                .filter(|id| self.certificate_users.contains_key(*id))
                .cloned(),
        );
        self.resolve(dirty, &mut certificate);
    }

    /// The merged hosts, backends, certificates and default backend, into `model`.
    pub(crate) fn fill(&self, model: &mut ProxyModel) {
        model.hosts = self.hosts.clone();
        model.backends = self.backends.clone();
        model.certs = self.certs.clone();
        model.default_backend = self.default_backend.clone();
    }

    /// Every conflict and object problem, unsorted.
    pub(crate) fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.all()
    }

    /// What Gateway API status needs of every converted HTTPRoute.
    pub(crate) fn route_outcomes(
        &self,
    ) -> std::collections::BTreeMap<ObjectRef, crate::gateway_status::RouteOutcome> {
        self.outputs
            .iter()
            .filter_map(|(object, (_, output))| {
                Some((object.clone(), output.route_outcome.clone()?))
            })
            .collect()
    }

    /// Certificates in use, so their Secrets stay cached.
    pub(crate) fn certificates_in_use(&self) -> impl Iterator<Item = &CertId> {
        self.certificate_users.keys()
    }

    fn claim(&mut self, age: &Arc<Age>, output: &Arc<IngressOutput>, dirty: &mut Dirty) {
        let claim = |index: usize| Claim {
            output: output.clone(),
            index,
        };
        for (index, tls) in output.tls.iter().enumerate() {
            self.tls_claims
                .entry(tls.host.clone())
                .or_default()
                .insert((age.clone(), index as u32), claim(index));
            dirty.tls.insert(tls.host.clone());
        }
        if output.default_backend.is_some() {
            self.default_claims.insert((age.clone(), 0), claim(0));
            dirty.default = true;
        }
        for (index, rule) in output.rules.iter().enumerate() {
            let key = (rule.host.clone(), rule.path.clone());
            let claims = self.route_claims.entry(key.clone()).or_default();
            if claims.is_empty() {
                self.paths_by_host
                    .entry(rule.host.clone())
                    .or_default()
                    .insert(rule.path.clone());
                if let Some((name, suffix)) = exact_suffix(&rule.host) {
                    self.exact_hosts_by_suffix
                        .entry(suffix.to_owned())
                        .or_default()
                        .insert(name.to_owned());
                }
            }
            claims.insert((age.clone(), index as u32 + 1), claim(index));
            dirty.routes.insert(key);
        }
    }

    fn unclaim(&mut self, age: &Arc<Age>, output: &IngressOutput, dirty: &mut Dirty) {
        for (index, tls) in output.tls.iter().enumerate() {
            if let Some(claims) = self.tls_claims.get_mut(&tls.host) {
                claims.remove(&(age.clone(), index as u32));
                if claims.is_empty() {
                    self.tls_claims.remove(&tls.host);
                }
            }
            dirty.tls.insert(tls.host.clone());
        }
        if output.default_backend.is_some() {
            self.default_claims.remove(&(age.clone(), 0));
            dirty.default = true;
        }
        for (index, rule) in output.rules.iter().enumerate() {
            let key = (rule.host.clone(), rule.path.clone());
            if let Some(claims) = self.route_claims.get_mut(&key) {
                claims.remove(&(age.clone(), index as u32 + 1));
                if claims.is_empty() {
                    self.route_claims.remove(&key);
                    self.forget_path(&rule.host, &rule.path);
                }
            }
            dirty.routes.insert(key);
        }
    }

    fn forget_path(&mut self, host: &HostKey, path: &PathMatch) {
        let Some(paths) = self.paths_by_host.get_mut(host) else {
            return;
        };
        paths.remove(path);
        if !paths.is_empty() {
            return;
        }
        self.paths_by_host.remove(host);
        if let Some((name, suffix)) = exact_suffix(host)
            && let Some(names) = self.exact_hosts_by_suffix.get_mut(suffix)
        {
            names.remove(name);
            if names.is_empty() {
                self.exact_hosts_by_suffix.remove(suffix);
            }
        }
    }

    fn has_tls(&self, host: &HostKey) -> bool {
        self.tls_winners.contains_key(host)
            || exact_suffix(host).is_some_and(|(_, suffix)| {
                self.tls_winners
                    .contains_key(&HostKey::Wildcard(suffix.to_owned()))
            })
    }

    fn resolve(
        &mut self,
        mut dirty: Dirty,
        certificate: &mut impl FnMut(&CertId) -> Result<TlsCert, String>,
    ) {
        let tls_hosts = std::mem::take(&mut dirty.tls);
        for host in &tls_hosts {
            self.resolve_tls(host, &mut dirty);
        }
        let default_dirty = dirty.default;
        if default_dirty {
            self.resolve_default(&mut dirty);
        }
        let routes = std::mem::take(&mut dirty.routes);
        // A changed Ingress's new claims take the positions of its old ones: every old use
        // goes before any new one is added.
        for key in &routes {
            for (position, id) in self.route_winners.remove(key).into_iter().flatten() {
                self.remove_use(&id, &position, &mut dirty);
            }
        }
        for key in &routes {
            self.resolve_route(key, &mut dirty);
        }
        let backends = std::mem::take(&mut dirty.backends);
        for id in &backends {
            self.resolve_backend(id);
        }
        let certificates = std::mem::take(&mut dirty.certificates);
        for id in &certificates {
            self.resolve_certificate(id, certificate, &mut dirty);
        }
        let mut hosts = std::mem::take(&mut dirty.host_certificates);
        hosts.extend(routes.into_iter().map(|(host, _)| host));
        for host in &hosts {
            self.settle_host(host);
        }
    }

    /// The TLS winner of a host; a change of it re-resolves the routes it redirects and
    /// the certificates involved.
    fn resolve_tls(&mut self, host: &HostKey, dirty: &mut Dirty) {
        let claims = self.tls_claims.get(host);
        let winner = claims.and_then(|c| c.values().next()).map(|claim| {
            let tls = &claim.output.tls[claim.index];
            (claim.output.object.clone(), tls.secret.clone())
        });
        let mut diagnostics = Vec::new();
        if let (Some(claims), Some((owner, secret))) = (claims, &winner) {
            for claim in claims.values().skip(1) {
                let tls = &claim.output.tls[claim.index];
                if claim.output.object != *owner && tls.secret != *secret {
                    diagnostics.push(Diagnostic {
                        object: claim.output.object.clone(),
                        field: tls.field.clone(),
                        message: format!("TLS for host {} is already configured by {owner}, which is older; this entry is ignored", tls.host),
                    });
                }
            }
        }
        set(&mut self.diagnostics.tls, host, diagnostics);
        let previous = match &winner {
            Some(winner) => self.tls_winners.insert(host.clone(), winner.clone()),
            None => self.tls_winners.remove(host),
        };
        if previous == winner {
            return;
        }
        // Whether the host (or, for a wildcard, the hosts it covers) has TLS may have
        // changed: their redirects are resolved again.
        if previous.is_none() || winner.is_none() {
            let mut hosts = vec![host.clone()];
            if let HostKey::Wildcard(suffix) = host {
                hosts.extend(
                    self.exact_hosts_by_suffix
                        .get(suffix)
                        .into_iter()
                        .flatten()
                        .map(|name| HostKey::Exact(name.clone())),
                );
            }
            for host in hosts {
                for path in self.paths_by_host.get(&host).into_iter().flatten() {
                    dirty.routes.insert((host.clone(), path.clone()));
                }
            }
        }
        for (_, secret) in previous.iter().chain(winner.iter()) {
            let Some(id) = secret else { continue };
            dirty.certificates.insert(id.clone());
        }
        if let Some((owner, Some(id))) = &previous
            && let Some(users) = self.certificate_users.get_mut(id)
        {
            users.remove(&(host.clone(), owner.clone()));
            if users.is_empty() {
                self.certificate_users.remove(id);
            }
        }
        if let Some((owner, Some(id))) = &winner {
            self.certificate_users
                .entry(id.clone())
                .or_default()
                .insert((host.clone(), owner.clone()));
        }
        dirty.host_certificates.insert(host.clone());
    }

    fn resolve_default(&mut self, dirty: &mut Dirty) {
        let (new, diagnostics) = self.default_winner_claim();
        self.diagnostics.default = diagnostics;
        if let Some((position, id)) = self.default_winner.take() {
            self.remove_use(&id, &position, dirty);
        }
        self.default_backend = new.as_ref().map(|(_, id, _)| id.clone());
        if let Some((position, id, claim)) = new {
            self.add_use(&id, position.clone(), claim, dirty);
            self.default_winner = Some((position, id));
        }
    }

    /// The oldest default backend claim, and a report for every other one.
    #[allow(clippy::type_complexity)]
    fn default_winner_claim(&self) -> (Option<(Position, BackendId, Claim)>, Vec<Diagnostic>) {
        let mut claims = self.default_claims.iter();
        let winner = claims.next();
        let mut diagnostics = Vec::new();
        if let Some((_, owner)) = winner {
            for (_, claim) in claims {
                let Some((_, field)) = &claim.output.default_backend else {
                    continue;
                };
                diagnostics.push(Diagnostic {
                    object: claim.output.object.clone(),
                    field: field.clone(),
                    message: format!("the default backend is already set by {}, which is older; this one is ignored", owner.output.object),
                });
            }
        }
        let new = winner.and_then(|(position, claim)| {
            let (backend, _) = claim.output.default_backend.as_ref()?;
            Some((position.clone(), backend.id.clone(), claim.clone()))
        });
        (new, diagnostics)
    }

    fn resolve_route(&mut self, key: &RouteKey, dirty: &mut Dirty) {
        let claims = self.route_claims.get(key).filter(|c| !c.is_empty());
        let mut diagnostics = Vec::new();
        let mut route = None;
        let mut uses: Vec<(Position, BackendId, Claim)> = Vec::new();
        if let Some(claims) = claims {
            let mut listeners = claims
                .values()
                .map(|claim| &claim.output.rules[claim.index].listeners);
            let first_listeners = listeners.next();
            let one_set = listeners.all(|l| Some(l) == first_listeners);
            let all_plain = one_set
                && claims
                    .values()
                    .all(|claim| claim.output.rules[claim.index].is_plain());
            let resolved = if all_plain {
                plain_route(claims, &mut uses, &mut diagnostics)
            } else {
                chain_route(claims, &mut uses, &mut diagnostics)
            };
            if let Some((target, winner)) = resolved {
                let rule = &winner.output.rules[winner.index];
                let https_redirect =
                    (rule.ssl_redirect && self.has_tls(&rule.host)).then_some(rule.redirect_code);
                let listeners = claims
                    .values()
                    .map(|claim| claim.output.rules[claim.index].listeners.clone())
                    .reduce(|a, b| a.union(&b))
                    .unwrap_or_default();
                route = Some(Route {
                    target,
                    listeners,
                    https_redirect,
                    origin: winner.output.origin.clone(),
                });
            }
        }
        set(&mut self.diagnostics.routes, key, diagnostics);
        let mut winners = Vec::with_capacity(uses.len());
        for (position, id, claim) in uses {
            self.add_use(&id, position.clone(), claim, dirty);
            winners.push((position, id));
        }
        if !winners.is_empty() {
            self.route_winners.insert(key.clone(), winners);
        }
        let (host, path) = key;
        let current = self.hosts.get(host).and_then(|h| h.routes.get(path));
        if current == route.as_ref() {
            return;
        }
        let entry = self.hosts.entry(host.clone()).or_default();
        match route {
            Some(route) => {
                entry.routes.insert(path.clone(), route);
            }
            None => {
                entry.routes.remove(path);
            }
        }
    }

    fn add_use(&mut self, id: &BackendId, position: Position, claim: Claim, dirty: &mut Dirty) {
        self.backend_uses
            .entry(id.clone())
            .or_default()
            .insert(position, claim);
        dirty.backends.insert(id.clone());
    }

    fn remove_use(&mut self, id: &BackendId, position: &Position, dirty: &mut Dirty) {
        if let Some(uses) = self.backend_uses.get_mut(id) {
            uses.remove(position);
            if uses.is_empty() {
                self.backend_uses.remove(id);
            }
        }
        dirty.backends.insert(id.clone());
    }

    /// A backend is the first use's value, with the origins of every use; a use with other
    /// settings is reported.
    fn resolve_backend(&mut self, id: &BackendId) {
        let Some(uses) = self.backend_uses.get(id) else {
            self.backends.remove(id);
            self.diagnostics.backends.remove(id);
            return;
        };
        let mut merged: Option<Backend> = None;
        let mut owner: Option<&ObjectRef> = None;
        let mut diagnostics = Vec::new();
        for (position, claim) in uses.iter() {
            let (backend, field) = match &claim.output.default_backend {
                // The default backend is claim 0 of its Ingress; rules are 1 and up.
                Some((backend, field)) if position.1 == 0 => (backend, field.clone()),
                _ => {
                    let rule = &claim.output.rules[claim.index];
                    let Some((backend, _)) = rule.backends.iter().find(|(b, _)| b.id == *id) else {
                        continue;
                    };
                    (backend, format!("{}.backend", rule.field))
                }
            };
            match &mut merged {
                None => {
                    merged = Some((**backend).clone());
                    owner = Some(&claim.output.object);
                }
                Some(existing) => {
                    if !existing.same_section_settings(backend) {
                        let owner = owner.map(ToString::to_string).unwrap_or_default();
                        diagnostics.push(Diagnostic {
                            object: claim.output.object.clone(),
                            field,
                            message: format!("backend {} is configured differently by {owner}, which is older; its settings are used", backend.id),
                        });
                    }
                    if !existing.origins.contains(&claim.output.origin) {
                        existing.origins.push(claim.output.origin.clone());
                    }
                }
            }
        }
        set(&mut self.diagnostics.backends, id, diagnostics);
        if let Some(backend) = merged
            && self.backends.get(id) != Some(&backend)
        {
            self.backends.insert(id.clone(), backend);
        }
    }

    fn resolve_certificate(
        &mut self,
        id: &CertId,
        certificate: &mut impl FnMut(&CertId) -> Result<TlsCert, String>,
        dirty: &mut Dirty,
    ) {
        let users = self.certificate_users.get(id);
        let result = users.map(|_| certificate(id));
        let mut diagnostics = Vec::new();
        match (users, result) {
            (Some(users), Some(Ok(cert))) => {
                dirty
                    .host_certificates
                    .extend(users.iter().map(|(h, _)| h.clone()));
                if self.certs.get(id) != Some(&cert) {
                    self.certs.insert(id.clone(), cert);
                }
            }
            (Some(users), Some(Err(why))) => {
                dirty
                    .host_certificates
                    .extend(users.iter().map(|(h, _)| h.clone()));
                if let Some((_, object)) = users.iter().next() {
                    diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field: "spec.tls".to_owned(),
                        message: format!("{why}; the default certificate is served for its hosts"),
                    });
                }
                self.certs.remove(id);
            }
            _ => {
                self.certs.remove(id);
            }
        }
        set(&mut self.diagnostics.certificates, id, diagnostics);
    }

    /// Sets a host's certificate from its TLS winner, and drops a host left with neither
    /// routes nor a certificate.
    fn settle_host(&mut self, host: &HostKey) {
        let cert = match self.tls_winners.get(host) {
            Some((_, Some(id))) => {
                // The certificates in the model are the ones that loaded.
                self.certs.contains_key(id).then(|| id.clone())
            }
            _ => None,
        };
        let current = self.hosts.get(host);
        let has_routes = current.is_some_and(|h| !h.routes.is_empty());
        if !has_routes && cert.is_none() {
            if current.is_some() {
                self.hosts.remove(host);
            }
            return;
        }
        if current.is_some_and(|h| h.cert == cert) {
            return;
        }
        self.hosts.entry(host.clone()).or_default().cert = cert;
    }
}

/// Ingress semantics: the oldest claim wins, every other one is reported.
fn plain_route(
    claims: &Claims,
    uses: &mut Vec<(Position, BackendId, Claim)>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(RouteTarget, Claim)> {
    let mut ordered = claims.iter();
    let (position, claim) = ordered.next()?;
    for (_, other) in ordered {
        if other.output.origin != claim.output.origin {
            diagnostics.push(conflict(other, claim));
        }
    }
    let backend = claim.output.rules[claim.index]
        .backends
        .first()?
        .0
        .id
        .clone();
    uses.push((position.clone(), backend.clone(), claim.clone()));
    Some((RouteTarget::Backend(backend), claim.clone()))
}

/// Gateway API semantics: every claim on the path is a rule, tried in the order of
/// precedence (a regular-expression path first, then a method match, then more header matches, then more query
/// matches, then the older route, then the rule's place in it); a rule with the same
/// conditions as one before it, or after one without conditions, is never reached and
/// is reported.
fn chain_route(
    claims: &Claims,
    uses: &mut Vec<(Position, BackendId, Claim)>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(RouteTarget, Claim)> {
    let mut ordered: Vec<(&Position, &Claim)> = claims.iter().collect();
    ordered.sort_by_cached_key(|(position, claim)| {
        let conditions = &claim.output.rules[claim.index].conditions;
        let count =
            |wanted: fn(&Condition) -> bool| conditions.iter().filter(|c| wanted(c)).count();
        (
            std::cmp::Reverse(count(|c| matches!(c, Condition::Path(_)))),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Method(_)))),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Header(_)))),
            std::cmp::Reverse(count(|c| matches!(c, Condition::Query(_)))),
            (*position).clone(),
        )
    });
    // Routes of different listeners share the path: each rule keeps to its own.
    let union = ordered
        .iter()
        .map(|(_, claim)| claim.output.rules[claim.index].listeners.clone())
        .reduce(|a, b| a.union(&b))
        .unwrap_or_default();
    let mut chain: Vec<GatewayRule> = Vec::new();
    let mut chained: Vec<Claim> = Vec::new();
    let mut takes_all: Option<Claim> = None;
    for (position, claim) in ordered {
        let rule = &claim.output.rules[claim.index];
        let mut conditions = rule.conditions.clone();
        if rule.listeners != union {
            conditions.push(Condition::Listeners(rule.listeners.clone()));
        }
        let shadowing = takes_all.clone().or_else(|| {
            chain
                .iter()
                .position(|entry| entry.conditions == conditions)
                .and_then(|index| chained.get(index).cloned())
        });
        if let Some(earlier) = shadowing {
            if earlier.output.origin != claim.output.origin {
                diagnostics.push(conflict(claim, &earlier));
            }
            continue;
        }
        let mut action = (*rule.filters).clone();
        if action.backends.is_empty() {
            action.backends = rule
                .backends
                .iter()
                .map(|(backend, weight)| model::RuleBackend::plain(backend.id.clone(), *weight))
                .collect();
        }
        for (backend, _) in &rule.backends {
            uses.push((position.clone(), backend.id.clone(), claim.clone()));
        }
        if conditions.is_empty() {
            takes_all = Some(claim.clone());
        }
        chain.push(GatewayRule {
            conditions,
            action,
            origin: claim.output.origin.clone(),
        });
        chained.push(claim.clone());
    }
    let winner = chained.first()?.clone();
    Some((RouteTarget::Rules(chain.into()), winner))
}

/// A later claim on a path already routed by an older one.
fn conflict(later: &Claim, earlier: &Claim) -> Diagnostic {
    let rule = &later.output.rules[later.index];
    Diagnostic {
        object: later.output.object.clone(),
        field: rule.field.clone(),
        message: format!(
            "host {} path '{}' is already routed by {}, which is older; this path is ignored",
            rule.host, rule.path_text, earlier.output.origin
        ),
    }
}

/// `(name, suffix)` of an exact host: the suffix a one-label wildcard covering it names.
fn exact_suffix(host: &HostKey) -> Option<(&str, &str)> {
    match host {
        HostKey::Exact(name) => name
            .split_once('.')
            .map(|(_, suffix)| (name.as_str(), suffix)),
        _ => None,
    }
}
