//! Combines the objects' contributions into one model, incrementally. Every host and
//! path, TLS host, backend and the default backend is a key with a set of claims ordered
//! by the claiming object's age (oldest first) and which claim of it it is; the oldest claim
//! wins and every other conflicting claim is reported. When outputs change, only the keys
//! they claimed (and the keys that depend on those) are resolved again, so a merge of
//! everything from scratch and a merge of one change cannot disagree.

mod chain;
mod claims;
mod settle;
mod tcp;

use std::collections::BTreeSet;
use std::sync::Arc;

use model::{
    Backend, BackendId, CertId, HostKey, OrdMap, PathMatch, ProxyModel, Route, TlsCert, TlsOptions,
};
use resources::ObjectRef;
use rustc_hash::FxHashMap;

use self::chain::{Use, chain_route, oldest_ingress_only, plain_route};
use self::claims::{Claims, Diagnostics, Dirty, Held, Position, RouteKey, position, set};
use crate::contribution::{ClaimKind, Contribution};
use crate::diagnostic::Diagnostic;
use crate::outcome::RouteOutcome;
use crate::small_set::SmallSet;

/// Below this many keys to resolve, the calling thread is faster than sharing them out
/// to the pool.
pub(crate) const PARALLEL_FROM: usize = 2048;

/// Replacements claimed but not yet resolved: the keys they touched, and whether a
/// route's status outcome changed.
#[derive(Debug, Default)]
pub(crate) struct Claiming {
    dirty: Dirty,
    outcomes_changed: bool,
}

/// What the claims on one host and path come to.
struct RouteResolution {
    route: Option<Route>,
    uses: Vec<Use>,
    diagnostics: Vec<Diagnostic>,
}

/// The winning TLS claim per host.
type TlsWinners = FxHashMap<HostKey, TlsWinner>;
/// A host's winning TLS claim: the object, the secret it names, the host's options.
type TlsWinner = (ObjectRef, Option<CertId>, Arc<TlsOptions>);

/// Routes resolved on the pool's threads per chunk handed to the calling thread.
const STREAMED_ROUTES: usize = 256;

/// The merge state: claims per key, the winners, and the model they make.
#[derive(Debug, Default)]
pub(crate) struct Merger {
    contributions: FxHashMap<ObjectRef, Arc<Contribution>>,
    tls_claims: FxHashMap<HostKey, Claims<Held>>,
    passthrough_claims: FxHashMap<HostKey, Claims<Held>>,
    /// The winning passthrough claim per SNI name, and the backend it uses.
    passthrough_winners: FxHashMap<HostKey, (Position, Option<BackendId>)>,
    route_claims: FxHashMap<RouteKey, Claims<Held>>,
    default_claims: Claims<Arc<Contribution>>,
    /// Paths claimed per host, to find a host's routes when its TLS changes.
    paths_by_host: FxHashMap<HostKey, SmallSet<PathMatch>>,
    /// Exact hosts with claimed paths, by the suffix a wildcard TLS host would cover.
    exact_hosts_by_suffix: FxHashMap<String, BTreeSet<Arc<str>>>,
    /// Winning TLS claim per host: the object, the secret it names, the host's options.
    tls_winners: TlsWinners,
    /// The suffixes of the wildcard hosts among `tls_winners`, each with the namespace
    /// whose routes it covers (`None`: every namespace's, a Gateway API route's): whether a
    /// wildcard covers an exact host is asked of every route, and a key to ask
    /// `tls_winners` would be built (and its text copied) each time.
    tls_wildcards: FxHashMap<Arc<str>, Option<resources::Name>>,
    /// Hosts served with each certificate, with the Ingress that asked for it.
    certificate_users: FxHashMap<CertId, BTreeSet<(HostKey, ObjectRef)>>,
    /// Uses of each backend by winning routes and the winning default backend.
    backend_uses: FxHashMap<BackendId, Claims<Arc<Contribution>>>,
    /// The backend each winning route and the winning default use, by position.
    route_winners: FxHashMap<RouteKey, Vec<(Position, BackendId)>>,
    default_winner: Option<(Position, BackendId)>,
    diagnostics: Diagnostics,
    hosts: OrdMap<HostKey, model::Host>,
    backends: OrdMap<BackendId, Arc<Backend>>,
    certs: OrdMap<CertId, TlsCert>,
    default_backend: Option<BackendId>,
    /// The default backend's rule, when its object's keys give it one.
    default_rule: Option<Arc<model::GatewayRule>>,
    passthrough: OrdMap<HostKey, model::Passthrough>,
    /// TCP claims per port and name.
    tcp_claims: FxHashMap<(u16, HostKey), Claims<Held>>,
    /// The names claimed on each TCP port, with how many claims each has.
    tcp_hosts: FxHashMap<u16, std::collections::BTreeMap<HostKey, usize>>,
    /// The backend uses of each TCP port's winning claims.
    tcp_winners: FxHashMap<u16, Vec<(Position, BackendId)>>,
    /// The TCP ports serving each certificate, with the object that set the port.
    tcp_certificate_users: FxHashMap<CertId, std::collections::BTreeMap<u16, ObjectRef>>,
    tcp_services: model::TcpServices,
    /// No merge follows this one (a cache that records nothing merges every snapshot
    /// from nothing): what only a next merge would read is not kept. At 100k services
    /// that is ~40 MB of route winners, and the time to fill and free them.
    one_pass: bool,
}

impl Merger {
    /// A merger for one merge from nothing, never followed by another.
    pub(crate) fn one_pass() -> Self {
        Self {
            one_pass: true,
            ..Self::default()
        }
    }

    /// An empty merger that keeps what this one keeps.
    pub(crate) fn emptied(&self) -> Self {
        Self {
            one_pass: self.one_pass,
            ..Self::default()
        }
    }

    /// [`Merger::replace`] for every change.
    pub(crate) fn replace_all(
        &mut self,
        changes: Vec<(ObjectRef, Option<Arc<Contribution>>)>,
        claiming: &mut Claiming,
    ) {
        if self.contributions.is_empty() {
            // A merge from nothing (a start, a rebuild) knows how many keys are coming:
            // its tables are sized once instead of growing through every power of two.
            let routes = changes
                .iter()
                .filter_map(|(_, contribution)| contribution.as_ref())
                .map(|contribution| contribution.routes.len())
                .sum();
            self.reserve(changes.len(), routes, claiming);
        }
        for (object, new) in changes {
            self.replace(object, new, claiming);
        }
    }

    /// Sizes the tables for `objects` more contributions claiming `routes` more routes.
    pub(crate) fn reserve(&mut self, objects: usize, routes: usize, claiming: &mut Claiming) {
        self.contributions.reserve(objects);
        self.route_claims.reserve(routes);
        claiming.dirty.routes.reserve(routes);
        // Usually one host an object (an Ingress's or a route's hostnames).
        self.paths_by_host.reserve(objects);
    }

    /// Replaces an object's contribution (`None`: it no longer contributes), noting in
    /// `claiming` the keys to resolve again; nothing is resolved until [`Merger::settle`].
    /// The result does not depend on the order objects are replaced in.
    pub(crate) fn replace(
        &mut self,
        object: ObjectRef,
        new: Option<Arc<Contribution>>,
        claiming: &mut Claiming,
    ) {
        let dirty = &mut claiming.dirty;
        let old = self.contributions.remove(&object);
        fn outcome(contribution: &Option<Arc<Contribution>>) -> Option<&RouteOutcome> {
            contribution.as_ref()?.route_status.as_ref()
        }
        claiming.outcomes_changed |= outcome(&old) != outcome(&new);
        if let Some(old) = old {
            self.unclaim(&old, dirty);
        }
        let own = new
            .as_ref()
            .map(|contribution| contribution.diagnostics.clone())
            .unwrap_or_default();
        set(&mut self.diagnostics.objects, &object, own);
        if let Some(contribution) = new {
            self.claim(&contribution, dirty);
            self.contributions.insert(object, contribution);
        }
    }

    /// Resolves every key the replacements touched, and the users of
    /// `changed_certificates`. Returns whether any route's status outcome changed.
    pub(crate) fn settle(
        &mut self,
        claiming: Claiming,
        changed_certificates: &BTreeSet<CertId>,
        mut certificate: impl FnMut(&CertId) -> Result<TlsCert, String>,
    ) -> bool {
        let Claiming {
            mut dirty,
            outcomes_changed,
        } = claiming;
        dirty.certificates.extend(
            changed_certificates
                .iter()
                .filter(|id| {
                    self.certificate_users.contains_key(*id)
                        || self.tcp_certificate_users.contains_key(*id)
                })
                .cloned(),
        );
        self.resolve(dirty, &mut certificate);
        outcomes_changed
    }

    /// How many objects contribute.
    pub(crate) fn len(&self) -> usize {
        self.contributions.len()
    }

    /// The contributions, the rest of the state dropped.
    pub(crate) fn into_contributions(self) -> FxHashMap<ObjectRef, Arc<Contribution>> {
        self.contributions
    }

    /// The merged hosts, backends, certificates and default backend, into `model`.
    pub(crate) fn fill(&self, model: &mut ProxyModel) {
        model.hosts = self.hosts.clone();
        model.backends = self.backends.clone();
        model.certs = self.certs.clone();
        model.default_backend = self.default_backend.clone();
        model.default_rule = self.default_rule.clone();
        model.passthrough = self.passthrough.clone();
        model.tcp_services = self.tcp_services.clone();
    }

    /// Every conflict and object problem, unsorted.
    pub(crate) fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.all()
    }

    /// What Gateway API status needs of every converted HTTPRoute.
    pub(crate) fn route_outcomes(&self) -> std::collections::BTreeMap<&ObjectRef, &RouteOutcome> {
        self.contributions
            .iter()
            .filter_map(|(object, contribution)| {
                Some((object, contribution.route_status.as_ref()?))
            })
            .collect()
    }

    /// Certificates in use, so their Secrets stay cached.
    pub(crate) fn certificates_in_use(&self) -> impl Iterator<Item = &CertId> {
        self.certificate_users
            .keys()
            .chain(self.tcp_certificate_users.keys())
    }

    fn claim(&mut self, contribution: &Arc<Contribution>, dirty: &mut Dirty) {
        let held = |index: usize| Held {
            contribution: contribution.clone(),
            index,
        };
        for (index, tls) in contribution.tls.iter().enumerate() {
            self.tls_claims.entry(tls.host.clone()).or_default().insert(
                position(contribution, ClaimKind::Tls(index as u32)),
                held(index),
            );
            dirty.tls.insert(tls.host.clone());
            self.host_claims_changed(&tls.host, dirty);
        }
        for (index, claim) in contribution.passthrough.iter().enumerate() {
            self.passthrough_claims
                .entry(claim.host.clone())
                .or_default()
                .insert(
                    position(contribution, ClaimKind::Passthrough(index as u32)),
                    held(index),
                );
            dirty.passthrough.insert(claim.host.clone());
        }
        self.claim_tcp(contribution, dirty);
        if contribution.default_backend.is_some() {
            self.default_claims.insert(
                position(contribution, ClaimKind::DefaultBackend),
                contribution.clone(),
            );
            dirty.default = true;
        }
        for (index, route) in contribution.routes.iter().enumerate() {
            let key = (route.host.clone(), route.path.clone());
            let claims = self.route_claims.entry(key.clone()).or_default();
            if claims.is_empty() {
                // A host's second path finds its host already known: looked up first, the
                // names are copied only for a host new here.
                match self.paths_by_host.get_mut(&route.host) {
                    Some(paths) => {
                        paths.insert(route.path.clone());
                    }
                    None => {
                        let mut paths = SmallSet::default();
                        paths.insert(route.path.clone());
                        self.paths_by_host.insert(route.host.clone(), paths);
                    }
                }
                // Read only to find the routes a wildcard's TLS change makes dirty, and
                // in a merge from nothing every route is dirty already.
                if !self.one_pass
                    && let Some((name, suffix)) = exact_suffix(&route.host)
                {
                    match self.exact_hosts_by_suffix.get_mut(suffix) {
                        Some(names) if names.contains(name) => {}
                        Some(names) => {
                            names.insert(name.clone());
                        }
                        None => {
                            let names = BTreeSet::from([name.clone()]);
                            self.exact_hosts_by_suffix.insert(suffix.to_owned(), names);
                        }
                    }
                }
            }
            claims.insert(
                position(contribution, ClaimKind::Route(index as u32)),
                held(index),
            );
            self.host_claims_changed(&route.host, dirty);
            dirty.routes.insert(key);
        }
    }

    fn unclaim(&mut self, contribution: &Contribution, dirty: &mut Dirty) {
        for (index, tls) in contribution.tls.iter().enumerate() {
            if let Some(claims) = self.tls_claims.get_mut(&tls.host) {
                claims.remove(&position(contribution, ClaimKind::Tls(index as u32)));
                if claims.is_empty() {
                    self.tls_claims.remove(&tls.host);
                }
            }
            dirty.tls.insert(tls.host.clone());
            self.host_claims_changed(&tls.host, dirty);
        }
        for (index, claim) in contribution.passthrough.iter().enumerate() {
            if let Some(claims) = self.passthrough_claims.get_mut(&claim.host) {
                claims.remove(&position(
                    contribution,
                    ClaimKind::Passthrough(index as u32),
                ));
                if claims.is_empty() {
                    self.passthrough_claims.remove(&claim.host);
                }
            }
            dirty.passthrough.insert(claim.host.clone());
        }
        self.unclaim_tcp(contribution, dirty);
        if contribution.default_backend.is_some() {
            self.default_claims
                .remove(&position(contribution, ClaimKind::DefaultBackend));
            dirty.default = true;
        }
        for (index, route) in contribution.routes.iter().enumerate() {
            let key = (route.host.clone(), route.path.clone());
            if let Some(claims) = self.route_claims.get_mut(&key) {
                claims.remove(&position(contribution, ClaimKind::Route(index as u32)));
                if claims.is_empty() {
                    self.route_claims.remove(&key);
                    self.forget_path(&route.host, &route.path);
                }
            }
            self.host_claims_changed(&route.host, dirty);
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
            names.remove(&**name);
            if names.is_empty() {
                self.exact_hosts_by_suffix.remove(suffix);
            }
        }
    }

    fn resolve(
        &mut self,
        mut dirty: Dirty,
        certificate: &mut impl FnMut(&CertId) -> Result<TlsCert, String>,
    ) {
        let tls_hosts = std::mem::take(&mut dirty.tls);
        if self.tls_winners.is_empty() {
            // A merge from nothing: a winner per host, nearly always.
            self.tls_winners.reserve(tls_hosts.len());
        }
        for host in &tls_hosts {
            self.resolve_tls(host, &mut dirty);
        }
        let default_dirty = dirty.default;
        if default_dirty {
            self.resolve_default(&mut dirty);
        }
        let mut routes: Vec<RouteKey> = std::mem::take(&mut dirty.routes).into_iter().collect();
        // In key order, a host's paths are side by side: each host is then updated once.
        crate::parallel::sort_unstable(&mut routes, PARALLEL_FROM);
        // A changed Ingress's new claims take the positions of its old ones: every old use
        // goes before any new one is added. A merge from nothing has none to take back,
        // and hashes no key to find that out.
        if !self.route_winners.is_empty() {
            for key in &routes {
                for (position, id) in self.route_winners.remove(key).into_iter().flatten() {
                    self.remove_use(&id, &position, &mut dirty);
                }
            }
        }
        let keep_winners = !self.one_pass;
        if keep_winners && self.route_winners.is_empty() {
            // A merge from nothing: sized once, not through every power of two.
            self.route_winners.reserve(routes.len());
        }
        if self.backend_uses.is_empty() {
            // About one backend a route, and paths usually share them (an Ingress's
            // paths to one Service): half is a guess that saves the early rehashes,
            // and costs one at most.
            self.backend_uses.reserve(routes.len() / 2);
            dirty.backends.reserve(routes.len() / 2);
        }
        // Resolved on the pool's threads (they read the claims and the TLS winners only)
        // while this thread stores each chunk's resolutions as it comes: every resolution
        // is stored whatever the order, and the routes keep their key order below.
        let route_count = routes.len();
        let mut resolved: Vec<Option<Option<Route>>> = Vec::new();
        resolved.resize_with(routes.len(), || None);
        let claims = &self.route_claims;
        let tls = RouteTls {
            winners: &self.tls_winners,
            wildcards: &self.tls_wildcards,
        };
        let (routes_diagnostics, backend_uses, route_winners) = (
            &mut self.diagnostics.routes,
            &mut self.backend_uses,
            &mut self.route_winners,
        );
        crate::parallel::map_streamed(
            &routes,
            PARALLEL_FROM,
            STREAMED_ROUTES,
            |key| route_resolution(claims, tls, key),
            |index, resolution| {
                let key = &routes[index];
                let RouteResolution {
                    route,
                    uses,
                    diagnostics,
                } = resolution;
                set(routes_diagnostics, key, diagnostics);
                let mut winners = Vec::with_capacity(if keep_winners { uses.len() } else { 0 });
                for (position, id, contribution) in uses {
                    add_use(
                        backend_uses,
                        &id,
                        position.clone(),
                        contribution,
                        &mut dirty,
                    );
                    if keep_winners {
                        winners.push((position, id));
                    }
                }
                // A route's winners are read only to take its uses back when it is
                // resolved again.
                if !winners.is_empty() {
                    route_winners.insert(key.clone(), winners);
                }
                resolved[index] = Some(route);
            },
        );
        // Read as the hosts are settled below, not collected: a merge from nothing would
        // hold every route twice (about 5 MB at 10k services).
        let route_changes =
            (routes.into_iter().zip(resolved)).map(|(key, route)| (key, route.flatten()));
        let passthrough = std::mem::take(&mut dirty.passthrough);
        // As for routes: a changed object's new claims may take the positions of its old
        // ones, so every old use goes before any new one is added.
        for host in &passthrough {
            if let Some((position, Some(id))) = self.passthrough_winners.remove(host) {
                self.remove_use(&id, &position, &mut dirty);
            }
        }
        for host in &passthrough {
            self.resolve_passthrough(host, &mut dirty);
        }
        let tcp_ports = std::mem::take(&mut dirty.tcp);
        for port in &tcp_ports {
            self.forget_tcp_uses(*port, &mut dirty);
        }
        for port in &tcp_ports {
            self.resolve_tcp(*port, &mut dirty);
        }
        let backends: Vec<BackendId> = std::mem::take(&mut dirty.backends).into_iter().collect();
        // Read-only, so a large merge's backends are resolved on every core, as its
        // routes are.
        let this = &*self;
        let resolutions = crate::parallel::map_in_order(&backends, PARALLEL_FROM, |id| {
            this.backend_resolution(id)
        });
        let certificates = std::mem::take(&mut dirty.certificates);
        for id in &certificates {
            self.resolve_certificate(id, certificate, &mut dirty);
        }
        let certificate_hosts = std::mem::take(&mut dirty.host_certificates);
        // The backends and the hosts are stored last, each into a persistent map of its
        // own (one insertion at a time: a serial pass each, ~0.15 s at 100k services), so
        // a large merge stores the two side by side.
        let large = backends.len() + route_count >= PARALLEL_FROM;
        let Merger {
            backends: stored_backends,
            diagnostics,
            hosts,
            tls_winners,
            certs,
            ..
        } = self;
        let store_backends = || {
            settle::backends(
                stored_backends,
                &mut diagnostics.backends,
                backends.into_iter().zip(resolutions),
            );
        };
        let store_hosts = || {
            let tls = settle::HostTls { tls_winners, certs };
            settle::hosts(hosts, &tls, route_changes, certificate_hosts);
        };
        if large {
            rayon::join(store_backends, store_hosts);
        } else {
            store_backends();
            store_hosts();
        }
    }

    /// The TLS winner of a host; a change of it re-resolves the routes it redirects and
    /// the certificates involved.
    fn resolve_tls(&mut self, host: &HostKey, dirty: &mut Dirty) {
        let claims = self.tls_claims.get(host);
        let owner = self.route_owner(host);
        let in_force = |claim: &&Held| tls_in_force(owner, &claim.contribution.object);
        let winner = claims.and_then(|c| c.values().find(in_force)).map(|claim| {
            (
                claim.contribution.object.clone(),
                claim.tls().secret.clone(),
                shared_tls(&claim.tls().options),
            )
        });
        let mut diagnostics = Vec::new();
        if let Some(owner) = owner {
            for claim in claims.into_iter().flat_map(|c| c.values()) {
                if !in_force(&claim) {
                    diagnostics.push(Diagnostic {
                        object: claim.contribution.object.clone(),
                        field: claim.tls().field.clone(),
                        message: format!(
                            "TLS for host {host} is ignored: the host is routed by {}, of another namespace",
                            owner.object
                        ),
                    });
                }
            }
        }
        if let (Some(claims), Some((owner, secret, options))) = (claims, &winner) {
            for claim in claims.values().filter(in_force).skip(1) {
                let tls = claim.tls();
                if claim.contribution.object != *owner
                    && (tls.secret != *secret || tls.options != **options)
                {
                    diagnostics.push(Diagnostic {
                        object: claim.contribution.object.clone(),
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
        if let HostKey::Wildcard(suffix) = host {
            match &winner {
                Some((owner, ..)) => {
                    self.tls_wildcards
                        .insert(suffix.clone(), covered_namespace(owner));
                }
                None => {
                    self.tls_wildcards.remove(suffix);
                }
            }
        }
        // Whether the host (or, for a wildcard, the hosts it covers) has TLS may have
        // changed: their redirects are resolved again. In a one-pass merge (from nothing)
        // every claimed route is to be resolved already.
        let covered = |winner: &Option<TlsWinner>| {
            winner.as_ref().map(|(owner, ..)| covered_namespace(owner))
        };
        if !self.one_pass && covered(&previous) != covered(&winner) {
            let mut hosts = vec![host.clone()];
            if let HostKey::Wildcard(suffix) = host {
                hosts.extend(
                    self.exact_hosts_by_suffix
                        .get(&**suffix)
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
        for (_, secret, _) in previous.iter().chain(winner.iter()) {
            let Some(id) = secret else { continue };
            dirty.certificates.insert(id.clone());
        }
        if let Some((owner, Some(id), _)) = &previous
            && let Some(users) = self.certificate_users.get_mut(id)
        {
            users.remove(&(host.clone(), owner.clone()));
            if users.is_empty() {
                self.certificate_users.remove(id);
            }
        }
        if let Some((owner, Some(id), _)) = &winner {
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
        self.default_rule = new.as_ref().and_then(|(_, _, contribution)| {
            let action = contribution.default_backend.as_ref()?.action.as_ref()?;
            Some(Arc::new(model::GatewayRule {
                conditions: Vec::new(),
                action: (**action).clone(),
                origin: contribution.origin.clone(),
                // What no route takes has no host of its own to redirect.
                https_redirect: None,
            }))
        });
        if let Some((position, id, contribution)) = new {
            add_use(
                &mut self.backend_uses,
                &id,
                position.clone(),
                contribution,
                dirty,
            );
            self.default_winner = Some((position, id));
        }
    }

    /// The oldest default backend claim, and a report for every other one.
    fn default_winner_claim(&self) -> (Option<Use>, Vec<Diagnostic>) {
        let mut claims = self.default_claims.iter();
        let winner = claims.next();
        let mut diagnostics = Vec::new();
        if let Some((_, owner)) = winner {
            for (_, contribution) in claims {
                let Some(claim) = &contribution.default_backend else {
                    continue;
                };
                diagnostics.push(Diagnostic {
                    object: contribution.object.clone(),
                    field: claim.field.clone(),
                    message: format!("the default backend is already set by {}, which is older; this one is ignored", owner.object),
                });
            }
        }
        let new = winner.and_then(|(position, contribution)| {
            let claim = contribution.default_backend.as_ref()?;
            Some((
                position.clone(),
                claim.backend.id.clone(),
                contribution.clone(),
            ))
        });
        (new, diagnostics)
    }

    /// The oldest passthrough claim on an SNI name wins; another object's to another
    /// backend is reported.
    /// Its previous winner's use was removed by the caller.
    fn resolve_passthrough(&mut self, host: &HostKey, dirty: &mut Dirty) {
        let mut diagnostics = Vec::new();
        let mut winner = None;
        if let Some(claims) = self.passthrough_claims.get(host) {
            let mut ordered = claims.iter();
            if let Some((position, held)) = ordered.next() {
                let target =
                    |claim: &Held| claim.passthrough().backend.as_ref().map(|b| b.id.clone());
                for (_, other) in ordered {
                    // Another object asking for the same thing is no conflict.
                    if other.contribution.object != held.contribution.object
                        && target(other) != target(held)
                    {
                        diagnostics.push(Diagnostic {
                            object: other.contribution.object.clone(),
                            field: other.passthrough().field.clone(),
                            message: format!(
                                "TLS passthrough for {host} is already configured by {}, which is older; this one is ignored",
                                held.contribution.object
                            ),
                        });
                    }
                }
                winner = Some((position.clone(), held.clone()));
            }
        }
        // A host another object already served (its routes or its TLS) is not taken
        // over by a younger object's passthrough: that would turn all its HTTPS traffic
        // over to the younger one.
        if let Some((_, held)) = &winner
            && let Some(owner) = self.older_host_owner(host, &held.contribution)
        {
            let claims = self.passthrough_claims.get(host);
            for claim in claims.into_iter().flat_map(Claims::values) {
                diagnostics.push(Diagnostic {
                    object: claim.contribution.object.clone(),
                    field: claim.passthrough().field.clone(),
                    message: format!(
                        "host {host} is already served by {owner}, which is older; TLS passthrough for it is ignored"
                    ),
                });
            }
            winner = None;
        }
        set(&mut self.diagnostics.passthrough, host, diagnostics);
        let Some((position, held)) = winner else {
            self.passthrough.remove(host);
            return;
        };
        let id = held.passthrough().backend.as_ref().map(|b| b.id.clone());
        if let Some(id) = &id {
            add_use(
                &mut self.backend_uses,
                id,
                position.clone(),
                held.contribution.clone(),
                dirty,
            );
        }
        self.passthrough_winners
            .insert(host.clone(), (position, id.clone()));
        let entry = model::Passthrough {
            backend: id,
            origin: held.contribution.origin.clone(),
            access: held.passthrough().access.clone(),
        };
        if self.passthrough.get(host) != Some(&entry) {
            self.passthrough.insert(host.clone(), entry);
        }
    }

    /// The oldest other object than `claimant` that routes a path of `host` or asks for
    /// its TLS, if it is older than `claimant`.
    fn older_host_owner(&self, host: &HostKey, claimant: &Contribution) -> Option<ObjectRef> {
        let other = |claim: &&Held| claim.contribution.object != claimant.object;
        let routes = self
            .paths_by_host
            .get(host)
            .into_iter()
            .flatten()
            .filter_map(|path| self.route_claims.get(&(host.clone(), path.clone())))
            .flat_map(|claims| claims.values().filter(other).take(1));
        // A TLS claim that is not in force serves nothing there.
        let owner = self.route_owner(host);
        let tls = self.tls_claims.get(host).into_iter().flat_map(|claims| {
            (claims.values())
                .filter(other)
                .filter(move |claim| tls_in_force(owner, &claim.contribution.object))
                .take(1)
        });
        routes
            .chain(tls)
            .map(|claim| &claim.contribution)
            .filter(|owner| owner.order < claimant.order)
            .min_by(|a, b| a.order.cmp(&b.order))
            .map(|owner| owner.object.clone())
    }

    /// Marks a host's passthrough for resolving again when its routes or TLS change,
    /// since they decide whether a younger passthrough may take it.
    fn host_claims_changed(&self, host: &HostKey, dirty: &mut Dirty) {
        if self.passthrough_claims.contains_key(host) {
            dirty.passthrough.insert(host.clone());
        }
        // Which TLS claims are in force follows the host's oldest route.
        if self.tls_claims.contains_key(host) {
            dirty.tls.insert(host.clone());
        }
    }

    /// The contribution with the oldest route claim on `host`, whose namespace the host's
    /// Ingress TLS comes from.
    fn route_owner(&self, host: &HostKey) -> Option<&Contribution> {
        (self.paths_by_host.get(host).into_iter().flatten())
            .filter_map(|path| self.route_claims.get(&(host.clone(), path.clone())))
            .filter_map(|claims| claims.values().next())
            .map(|claim| &*claim.contribution)
            .min_by(|a, b| a.order.cmp(&b.order))
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

    /// A backend's value, with the origins of every use. `None`: the backend has no use
    /// left. Each backend key comes from the oldest object that sets it (haproxy-ingress's
    /// rule): the backend is the one built by the use whose object sets every key so
    /// merged, else by the oldest use whose object sets any. Keys set apart that no one use combines, values
    /// that differ from an older object's, and other settings that differ are reported.
    fn backend_resolution(&self, id: &BackendId) -> settle::BackendResolution {
        let uses = self.backend_uses.get(id)?;
        let mut used = Vec::new();
        for ((_, kind), contribution) in uses.iter() {
            let found = match kind {
                ClaimKind::DefaultBackend => contribution
                    .default_backend
                    .as_ref()
                    .map(|claim| (&claim.backend, claim.field.as_str(), "")),
                ClaimKind::Route(index) => {
                    contribution.routes.get(*index as usize).and_then(|route| {
                        let backend = route.backend(id)?;
                        Some((backend, route.field.as_str(), ".backend"))
                    })
                }
                ClaimKind::Passthrough(index) => contribution
                    .passthrough
                    .get(*index as usize)
                    .and_then(|claim| Some((claim.backend.as_ref()?, claim.field.as_str(), ""))),
                ClaimKind::Tcp(index) => contribution.tcp.get(*index as usize).and_then(|claim| {
                    let backend = claim
                        .backends
                        .iter()
                        .filter_map(|(b, _)| b.as_ref())
                        .find(|b| b.id == *id)?;
                    Some((backend, claim.field.as_str(), ""))
                }),
                ClaimKind::Tls(_) => None,
            };
            if let Some((backend, field, suffix)) = found {
                used.push(BackendUse {
                    contribution,
                    backend,
                    field,
                    suffix,
                });
            }
        }
        if used.is_empty() {
            return Some((None, Vec::new()));
        }
        let mut diagnostics = Vec::new();
        // Only Ingresses' backends differ by their keys alone: a Gateway API route's may
        // carry a BackendTLSPolicy's settings, which no key explains.
        let by_keys = used.iter().all(|u| u.contribution.origin.kind == "Ingress");
        let keys = by_keys
            .then(|| merged_backend_keys(&used, &mut diagnostics))
            .flatten();
        // The use built with every merged key (the oldest such), else the oldest use whose
        // object sets any: a newer object's keys never take the place of an older one's
        // (its rate limit, its backend verification), they are reported left out.
        let best = keys.as_ref().map(|keys| {
            let combines = |u: &BackendUse<'_>| {
                u.keys().count() == keys.len()
                    && u.keys()
                        .all(|(k, v)| keys.get(k).is_some_and(|(kept, _)| *kept == v))
            };
            match used.iter().position(combines) {
                Some(index) => (index, true),
                None => (
                    used.iter()
                        .position(|u| u.contribution.backend_keys.is_some())
                        .unwrap_or(0),
                    false,
                ),
            }
        });
        let chosen_index = best.map_or(0, |(index, _)| index);
        let chosen = &used[chosen_index];
        if let (Some(keys), Some((_, false))) = (&keys, best) {
            let applied: Vec<&str> = chosen.keys().map(|(name, _)| name).collect();
            for u in &used {
                let left_out: Vec<&str> = u
                    .keys()
                    .filter(|(name, value)| {
                        !applied.contains(name)
                            && keys.get(name).is_some_and(|(kept, _)| kept == value)
                    })
                    .map(|(name, _)| name)
                    .collect();
                if !left_out.is_empty() {
                    diagnostics.push(u.report(format!(
                        "backend {id}: its keys {} are not applied: the objects that use the backend set its keys apart, and no one of them sets them all, so those of {} apply; set them together on one object or on the Service",
                        left_out.join(", "),
                        chosen.contribution.object
                    )));
                }
            }
        }
        let mut merged = chosen.backend.clone();
        for (index, u) in used.iter().enumerate() {
            // Two paths of one object to one service share its backend; a use whose
            // object sets other keys is accounted for above.
            let explained =
                keys.is_some() && u.contribution.backend_keys != chosen.contribution.backend_keys;
            if !Arc::ptr_eq(u.backend, chosen.backend)
                && !explained
                && !chosen.backend.same_section_settings(u.backend)
            {
                let older = if chosen_index < index {
                    ", which is older"
                } else {
                    ""
                };
                diagnostics.push(u.report(format!(
                    "backend {} is configured differently by {}{older}; its settings are used",
                    u.backend.id, chosen.contribution.object
                )));
            }
        }
        // Every use's origin once, in the uses' order (a few objects, however many uses).
        let mut origins: Vec<&model::Origin> = Vec::new();
        for u in &used {
            if !origins.contains(&&u.contribution.origin) {
                origins.push(&u.contribution.origin);
            }
        }
        if !merged.origins.iter().eq(origins.iter().copied()) {
            Arc::make_mut(&mut merged).origins = origins.into_iter().cloned().collect();
        }
        Some((Some(merged), diagnostics))
    }

    fn resolve_certificate(
        &mut self,
        id: &CertId,
        certificate: &mut impl FnMut(&CertId) -> Result<TlsCert, String>,
        dirty: &mut Dirty,
    ) {
        let users = self.certificate_users.get(id);
        let tcp_user = self
            .tcp_certificate_users
            .get(id)
            .and_then(|ports| ports.values().next());
        let result = (users.is_some() || tcp_user.is_some()).then(|| certificate(id));
        let mut diagnostics = Vec::new();
        if let (None, Some(object), Some(result)) = (users, tcp_user, &result) {
            match result {
                Ok(cert) => {
                    if self.certs.get(id) != Some(cert) {
                        self.certs.insert(id.clone(), cert.clone());
                    }
                }
                Err(why) => {
                    diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field: "spec.tls".to_owned(),
                        message: format!("{why}; the default certificate is served instead"),
                    });
                    self.certs.remove(id);
                }
            }
            set(&mut self.diagnostics.certificates, id, diagnostics);
            return;
        }
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
}

/// Whether a TLS claim on a host by `claimant` is in force. An Ingress's TLS for a host
/// that another namespace routes (by the host's oldest route, `owner`) would give that
/// tenant's host its certificate and its redirect to HTTPS: it is ignored. A host
/// nothing routes takes its TLS from any Ingress (for a default backend's traffic). A
/// Gateway API route's TLS is its Gateway listener's, whose hostnames and allowed routes
/// the Gateway's owner decides.
fn tls_in_force(owner: Option<&Contribution>, claimant: &ObjectRef) -> bool {
    claimant.kind != resources::Kind::Ingress
        || owner.is_none_or(|owner| owner.object.namespace == claimant.namespace)
}

/// A host's TLS options to share: the empty ones, nearly every host's, are one value.
fn shared_tls(options: &TlsOptions) -> Arc<TlsOptions> {
    static EMPTY: std::sync::LazyLock<Arc<TlsOptions>> = std::sync::LazyLock::new(Arc::default);
    if *options == TlsOptions::default() {
        EMPTY.clone()
    } else {
        Arc::new(options.clone())
    }
}

/// `(name, suffix)` of an exact host: the suffix a one-label wildcard covering it names.
fn exact_suffix(host: &HostKey) -> Option<(&Arc<str>, &str)> {
    match host {
        HostKey::Exact(name) => name.split_once('.').map(|(_, suffix)| (name, suffix)),
        _ => None,
    }
}

/// What the claims on a host and path make of it; reads the claims and the TLS
/// winners only, so the keys of a large merge are resolved on every core.
fn route_resolution(
    claims: &FxHashMap<RouteKey, Claims<Held>>,
    tls: RouteTls<'_>,
    key: &RouteKey,
) -> RouteResolution {
    let mut diagnostics = Vec::new();
    let owned = claims
        .get(key)
        .filter(|c| !c.is_empty())
        .map(|claims| oldest_ingress_only(claims, &mut diagnostics));
    let claims = owned.as_deref();
    let mut route = None;
    let mut uses: Vec<Use> = Vec::new();
    if let Some(claims) = claims {
        let mut frontends = claims.values().map(|claim| &claim.route().frontends);
        let first_frontends = frontends.next();
        let one_set = frontends.all(|f| Some(f) == first_frontends);
        let all_plain = one_set && claims.values().all(|claim| claim.route().is_plain());
        let resolved = if all_plain {
            // A plain route uses one backend at most; a first push would make
            // room for four, freed later on another thread.
            uses.reserve_exact(1);
            plain_route(claims, &mut uses, &mut diagnostics)
        } else {
            // Each rule redirects as its own Ingress asks, where its host has TLS.
            let https_redirect = |claim: &Held| {
                let rule = claim.route();
                rule.https_redirect()
                    .filter(|_| tls.covers(&rule.host, &claim.contribution.object.namespace))
            };
            chain_route(claims, &https_redirect, &mut uses, &mut diagnostics)
        };
        if let Some((target, winner)) = resolved {
            let rule = winner.route();
            let namespace = &winner.contribution.object.namespace;
            // A chain's rules redirect each on its own (see `GatewayRule`).
            let https_redirect = rule
                .https_redirect()
                .filter(|_| matches!(target, model::RouteTarget::Backend(_)))
                .filter(|_| tls.covers(&rule.host, namespace));
            let frontends = claims
                .values()
                .map(|claim| claim.route().frontends.clone())
                .reduce(|a, b| a.union(&b))
                .unwrap_or_default();
            route = Some(Route {
                target,
                frontends,
                https_redirect,
                origin: winner.contribution.origin.clone(),
            });
        }
    }
    RouteResolution {
        route,
        uses,
        diagnostics,
    }
}

/// The TLS winners, as a route's resolution reads them.
#[derive(Clone, Copy)]
struct RouteTls<'a> {
    winners: &'a TlsWinners,
    /// The suffixes of the wildcard hosts among `winners`, with the namespace each covers.
    wildcards: &'a FxHashMap<Arc<str>, Option<resources::Name>>,
}

impl RouteTls<'_> {
    /// Whether a route of `namespace` on `host` has TLS: the host's own, or a wildcard's
    /// that covers it. An Ingress's wildcard covers the routes of its own namespace: of
    /// another's, it would redirect a tenant that asked for no TLS to HTTPS.
    fn covers(&self, host: &HostKey, namespace: &resources::Name) -> bool {
        self.winners.contains_key(host)
            || exact_suffix(host).is_some_and(|(_, suffix)| {
                self.wildcards
                    .get(suffix)
                    .is_some_and(|covered| covered.as_ref().is_none_or(|own| own == namespace))
            })
    }
}

/// The namespace whose routes a wildcard TLS host of `owner` covers: an Ingress's own;
/// every namespace's (`None`) for a Gateway API route's, whose TLS is its Gateway
/// listener's (see [`tls_in_force`]).
fn covered_namespace(owner: &ObjectRef) -> Option<resources::Name> {
    (owner.kind == resources::Kind::Ingress).then(|| owner.namespace.clone())
}

/// Notes a use of a backend at `position`; the backend is resolved again.
fn add_use(
    backend_uses: &mut FxHashMap<BackendId, Claims<Arc<Contribution>>>,
    id: &BackendId,
    position: Position,
    contribution: Arc<Contribution>,
    dirty: &mut Dirty,
) {
    backend_uses
        .entry(id.clone())
        .or_default()
        .insert(position, contribution);
    dirty.backends.insert(id.clone());
}

/// One use of a backend: the object, the backend it built, and the field that names it.
struct BackendUse<'a> {
    contribution: &'a Arc<Contribution>,
    backend: &'a Arc<Backend>,
    field: &'a str,
    suffix: &'static str,
}

impl BackendUse<'_> {
    /// The backend keys its object sets.
    fn keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.contribution
            .backend_keys
            .iter()
            .flat_map(|keys| keys.iter())
    }

    fn report(&self, message: String) -> Diagnostic {
        Diagnostic {
            object: self.contribution.object.clone(),
            field: format!("{}{}", self.field, self.suffix),
            message,
        }
    }
}

/// Each backend key from the oldest use whose object sets it, with that object; a use
/// whose object sets another value is reported. `None` when no use's object sets one.
fn merged_backend_keys<'a>(
    used: &[BackendUse<'a>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<std::collections::BTreeMap<&'static str, (&'a str, &'a ObjectRef)>> {
    if used.iter().all(|u| u.contribution.backend_keys.is_none()) {
        return None;
    }
    let mut merged = std::collections::BTreeMap::new();
    for u in used {
        let Some(keys) = &u.contribution.backend_keys else {
            continue;
        };
        for (name, value) in keys.iter() {
            match merged.get(name) {
                None => {
                    merged.insert(name, (value, &u.contribution.object));
                }
                Some((kept, setter)) if *kept != value && *setter != &u.contribution.object => {
                    diagnostics.push(u.report(format!(
                        "backend {}: '{name}' is '{}' here and '{}' on {setter}, which is older; this value is not used",
                        u.backend.id,
                        value.escape_debug(),
                        kept.escape_debug()
                    )));
                }
                Some(_) => {}
            }
        }
    }
    Some(merged)
}
