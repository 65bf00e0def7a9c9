//! One HTTPRoute (or a GRPCRoute, written as one by `grpc`) to its routes, TLS claims and
//! backends, through the Gateways of our GatewayClass it attaches to (`attach`). Pure, and memoized like an Ingress: everything it reads
//! (Gateways, GatewayClasses, Namespaces, ReferenceGrants, Services, endpoints) is looked
//! up through the recorder, so a change to any of it converts the route again.
//!
//! Served so far: HTTP listeners and HTTPS listeners (TLS Terminate) on any port, listener hostnames intersected with route hostnames, `allowedRoutes`
//! (namespaces `Same` / `All` / `Selector`, kinds), `parentRefs` with `sectionName` and
//! `port`, `Exact`, `PathPrefix` and `RegularExpression` path matches with header,
//! query-parameter and method conditions, the core and extended filters of a rule and of
//! a backendRef, weighted Service backends (an invalid one's share answered with 500, 503
//! for a GRPCRoute), cross-namespace references with ReferenceGrants. Everything else is reported on the route and left out (see
//! docs/gateway-api.md).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use model::{Backend, BackendId, CertId, Frontends, HostKey, PathKind};
use resources::gateway::{
    GatewayListeners, HttpRouteRules, HttpRouteRulesFilters, HttpRouteRulesFiltersType,
    HttpRouteRulesMatches, HttpRouteRulesMatchesPathType,
};
use resources::{HttpRoute, Kind, ObjectRef, ParentRef};

use super::{attach, listener, merged, rules};
use crate::contribution::{ClaimedRule, Contribution, MergeOrder, RouteClaim, TlsClaim};
use crate::endpoints::ServiceBackend;
use crate::keys::Keys;
use crate::lookup::Recorder;
use crate::names;
use crate::outcome::{ParentOutcome, Refusal, RouteOutcome};

/// The most backendRefs a rule takes, and the highest weight: the specification's
/// limits, which also keep the sum of a rule's weights within HAProxy's 32-bit `rand()`.
const MAX_BACKEND_REFS: usize = 16;
const MAX_WEIGHT: u32 = 1_000_000;

/// What [`RouteConverter::rule_backends`] finds: each valid backend with how the rule
/// uses it, the weight of the invalid ones, the first problem.
type RuleBackends = (
    Vec<(Arc<Backend>, model::RuleBackend, model::SourceAccess)>,
    u32,
    Option<Refusal>,
);

/// Where a route attaches: a host on some frontends, with the certificate to serve.
#[derive(Debug, Clone, PartialEq)]
struct Attachment {
    host: HostKey,
    frontends: Frontends,
    certificate: Option<CertId>,
    /// The listener's client-certificate validation (`spec.tls.frontend`).
    client_auth: Option<model::ClientAuth>,
    field: String,
}

/// One match of a rule as the converter takes it: an HTTPRoute match (a GRPCRoute's
/// method written as the path it is sent on) with its GRPCRoute precedence, or why the
/// match is left out (the field below the match, and what is wrong).
pub(crate) type MatchInput = Result<(HttpRouteRulesMatches, (usize, usize)), (String, String)>;

/// A [`MatchInput`] borrowed from where it is held.
type BorrowedMatch<'a> = Result<(Cow<'a, HttpRouteRulesMatches>, (usize, usize)), (String, String)>;

/// What sets a GRPCRoute apart when it goes through the HTTPRoute converter.
pub(crate) struct GrpcParts {
    /// Each rule's matches, translated.
    pub(crate) matches: Vec<Vec<MatchInput>>,
}

struct RouteConverter<'a, 'b> {
    route: &'a HttpRoute,
    /// `HttpRoute` or `GrpcRoute`.
    kind: Kind,
    grpc: Option<&'a GrpcParts>,
    lookups: &'a mut Recorder<'b>,
    output: Contribution,
    backends: BTreeMap<BackendId, ServiceBackend>,
    /// The backends as their BackendTLSPolicies make them.
    with_policies: BTreeMap<BackendId, Arc<Backend>>,
    /// Every BackendTLSPolicy targeting one of the route's backends.
    policies: BTreeSet<ObjectRef>,
    /// The fields of the rules and matches left out (or answered with an error), for the
    /// route's `PartiallyInvalid` condition.
    dropped: Vec<String>,
    /// The filters served without their effect, for the route's `Accepted` condition.
    unsupported: Vec<String>,
}

/// Converts one HTTPRoute; a route attached to none of our Gateways contributes nothing.
pub(crate) fn convert_http_route(
    object: ObjectRef,
    route: &HttpRoute,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    convert_route(object, route, None, lookups)
}

/// Converts an HTTPRoute, or a GRPCRoute written as one (`grpc`: what sets it apart).
pub(crate) fn convert_route(
    object: ObjectRef,
    route: &HttpRoute,
    grpc: Option<&GrpcParts>,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(route.metadata.creation_timestamp.as_ref(), &object);
    let kind = object.kind;
    let mut converter = RouteConverter {
        route,
        kind,
        grpc,
        lookups,
        output: Contribution::new(object, kind.name(), order),
        backends: BTreeMap::new(),
        with_policies: BTreeMap::new(),
        policies: BTreeSet::new(),
        dropped: Vec::new(),
        unsupported: Vec::new(),
    };
    let mut outcome = RouteOutcome::at(route.metadata.generation);
    let attachments = converter.attachments(&mut outcome.parents);
    if let Some(why) = resources::unreadable_spec(&route.metadata) {
        if outcome.parents.is_empty() {
            return converter.output;
        }
        return super::read_for_parents_only(why, outcome, converter.output);
    }
    // A route that names a Gateway of ours has its references resolved for status even
    // where it is attached nowhere: ResolvedRefs does not depend on Accepted.
    if !outcome.parents.is_empty() {
        outcome.unresolved = converter.rules(&attachments);
        outcome.policies = std::mem::take(&mut converter.policies);
        outcome.dropped = std::mem::take(&mut converter.dropped);
        outcome.unsupported = std::mem::take(&mut converter.unsupported);
        converter.output.route_status = Some(outcome);
    }
    converter.output
}

impl RouteConverter<'_, '_> {
    fn report(&mut self, field: String, message: String) {
        self.output.report(field, message);
    }

    /// Reports a rule's match that is left out, or answered with an error, for an invalid
    /// part: the route is then partially invalid.
    fn drop_match(&mut self, field: String, message: String) {
        if !self.dropped.contains(&field) {
            self.dropped.push(field.clone());
        }
        self.report(field, message);
    }

    fn namespace(&self) -> String {
        self.output.object.namespace.to_string()
    }

    /// Every host this route is served on, merged across the listeners it attaches to.
    fn attachments(&mut self, outcomes: &mut Vec<ParentOutcome>) -> Vec<Attachment> {
        let mut by_host: BTreeMap<HostKey, Attachment> = BTreeMap::new();
        let route = self.route;
        let parents: Vec<ParentRef<'_>> = route
            .spec
            .parent_refs
            .iter()
            .flatten()
            .map(|p| ParentRef {
                group: p.group.as_deref(),
                kind: p.kind.as_deref(),
                namespace: p.namespace.as_deref(),
                name: p.name.as_str(),
                section_name: p.section_name.as_deref(),
                port: p.port,
            })
            .collect();
        let port_protocols = self.lookups.port_protocols();
        let route_namespace = self.namespace();
        for (index, parent_ref) in parents.iter().enumerate() {
            let field = format!("spec.parentRefs[{index}]");
            let Some(parent) = merged::route_parent(self.lookups, parent_ref, &route_namespace)
            else {
                continue;
            };
            let mut outcome = ParentOutcome {
                parent: parent.parent.clone(),
                gateway: parent.gateway.gateway_ref.clone(),
                section_name: parent_ref.section_name.map(str::to_owned),
                port: parent_ref.port,
                listeners: Vec::new(),
                refusal: None,
            };
            if let Some(refusal) = parent.detached() {
                self.report(field.clone(), refusal.message.clone());
                outcome.refusal = Some(refusal);
                outcomes.push(outcome);
                continue;
            }
            let mut named = false;
            let mut matched_listener = false;
            let mut conflict: Option<(String, ObjectRef)> = None;
            let mut found = Vec::new();
            let gateway = &parent.gateway;
            for (index, entry) in gateway.declared_by(&parent.parent) {
                let listener = entry.listener.as_ref();
                if parent_ref.section_name.is_some_and(|s| s != listener.name)
                    || parent_ref.port.is_some_and(|p| p != listener.port)
                {
                    continue;
                }
                named = true;
                let ports = self.lookups.listener_ports();
                let Ok(frontends) = gateway.frontend(index, port_protocols, ports) else {
                    continue;
                };
                if !self.allowed(listener, &entry.owner.namespace) {
                    continue;
                }
                matched_listener = true;
                let certificate = if frontends.any_tls() {
                    self.certificate(&entry.owner, listener)
                } else {
                    None
                };
                // A CA that cannot be used refuses the hosts' requests (the listener's
                // status says why): never served without the validation asked for.
                let client_auth = if frontends.any_tls() {
                    super::frontend_tls::client_auth(self.lookups, gateway.gateway, listener)
                        .unwrap_or_else(|_| Some(super::frontend_tls::refused()))
                } else {
                    None
                };
                let hosts: Vec<HostKey> = self
                    .hostnames(listener.hostname.as_deref())
                    .into_iter()
                    .filter(|host| !gateway.isolated_from(index, host))
                    .collect();
                if !hosts.is_empty()
                    && let Some(older) = attach::older_route_of_other_kind(
                        self.lookups,
                        (self.kind, &self.output.order),
                        (&parent, index),
                        &hosts,
                    )
                {
                    conflict.get_or_insert((listener.name.clone(), older));
                    continue;
                }
                if !hosts.is_empty() {
                    outcome.listeners.push(listener.name.clone());
                }
                for host in hosts {
                    found.push(Attachment {
                        host,
                        frontends: frontends.clone(),
                        certificate: certificate.clone(),
                        client_auth: client_auth.clone(),
                        field: field.clone(),
                    });
                }
            }
            let refusal = attach::parent_refusal(&attach::ParentFit {
                parent: parent.describe(),
                listeners: "listener",
                named,
                matched_listener,
                attached: !found.is_empty(),
                conflict: conflict.as_ref(),
            });
            if let Some(refusal) = &refusal {
                self.report(field.clone(), refusal.message.clone());
            }
            outcome.refusal = refusal;
            outcomes.push(outcome);
            for attachment in found {
                match by_host.get_mut(&attachment.host) {
                    Some(existing) => {
                        existing.frontends = existing.frontends.union(&attachment.frontends);
                        if existing.certificate.is_none() {
                            existing.certificate = attachment.certificate;
                        }
                    }
                    None => {
                        by_host.insert(attachment.host.clone(), attachment);
                    }
                }
            }
        }
        by_host.into_values().collect()
    }

    /// Whether a listener's `allowedRoutes` admits this route (`Same` meaning the
    /// namespace of the Gateway or ListenerSet that declares it).
    fn allowed(&mut self, listener: &GatewayListeners, owner_namespace: &str) -> bool {
        let route_namespace = self.namespace();
        attach::allowed(
            self.lookups,
            listener,
            owner_namespace,
            self.kind,
            &route_namespace,
        )
    }
}

impl RouteConverter<'_, '_> {
    /// The route's hosts under a listener hostname, as the specification intersects them.
    fn hostnames(&mut self, listener: Option<&str>) -> Vec<HostKey> {
        // Through a copy of the reference, so `self` stays free for `self.report`.
        let route = self.route;
        let route_hosts = route.spec.hostnames.as_deref().unwrap_or_default();
        let mut hosts = Vec::new();
        for found in attach::hosts_under(route_hosts, listener) {
            match found {
                Ok(key) => hosts.push(key),
                Err((index, why)) => self.report(
                    format!("spec.hostnames[{index}]"),
                    format!("{why}; the hostname is skipped"),
                ),
            }
        }
        hosts
    }

    /// The certificate of an HTTPS listener, if its owner (Gateway or ListenerSet) may
    /// use it.
    fn certificate(&mut self, owner: &ObjectRef, listener: &GatewayListeners) -> Option<CertId> {
        let lookups = &mut *self.lookups;
        listener::certificate_ref(listener, owner, |namespace, name| {
            listener::grants(
                lookups.in_namespace(Kind::ReferenceGrant, namespace),
                (owner.kind.name(), &owner.namespace),
                ("", "Secret", name),
            )
        })
        .ok()
    }

    /// Turns the rules into route claims; returns the first unresolved reference.
    fn rules(&mut self, attachments: &[Attachment]) -> Option<Refusal> {
        let mut unresolved = None;
        for attachment in attachments {
            if attachment.certificate.is_some() || attachment.client_auth.is_some() {
                self.output.tls.push(TlsClaim {
                    host: attachment.host.clone(),
                    secret: attachment.certificate.clone(),
                    options: model::TlsOptions {
                        client_auth: attachment.client_auth.clone(),
                        ..model::TlsOptions::default()
                    },
                    field: attachment.field.clone(),
                });
            }
        }
        // Through a copy of the reference, so `self` stays free for `self.report`.
        let route = self.route;
        let rules = route.spec.rules.as_deref().unwrap_or_default();
        let mut names = BTreeSet::new();
        for (rule_index, rule) in rules.iter().enumerate() {
            let field = format!("spec.rules[{rule_index}]");
            if let Some(name) = rule.name.as_deref() {
                // Names nothing routes by; the API server refuses these, and so they are
                // reported here (the rule is served all the same).
                if !resources::is_dns1123_subdomain(name) {
                    self.report(
                        format!("{field}.name"),
                        format!(
                            "'{}' is not a valid rule name (lowercase letters, digits, '-' and '.', at most 253)",
                            name.escape_debug()
                        ),
                    );
                } else if !names.insert(name) {
                    self.report(
                        format!("{field}.name"),
                        format!("another rule of the route is named '{name}' already"),
                    );
                }
            }
            let server_timeout = match rules::server_timeout(rule.timeouts.as_ref()) {
                Ok(timeout) => timeout,
                Err((part, why)) => {
                    self.report(
                        format!("{field}.timeouts.{part}"),
                        format!("{why}; the backend's own timeouts apply"),
                    );
                    None
                }
            };
            let (backends, unavailable_weight, problem) = self.rule_backends(rule, &field);
            let access = self.rule_access(&backends, &field).unless_open();
            if unresolved.is_none() {
                unresolved = problem;
            }
            // Borrowed from the route (or from the GRPCRoute's translation): a copy of
            // every match of every route was a measured share of a cold pass's memory.
            let matches: Vec<BorrowedMatch<'_>> = match self.grpc {
                Some(grpc) => grpc
                    .matches
                    .get(rule_index)
                    .into_iter()
                    .flatten()
                    .map(|found| match found {
                        Ok((matched, precedence)) => Ok((Cow::Borrowed(matched), *precedence)),
                        Err(why) => Err(why.clone()),
                    })
                    .collect(),
                None => rule
                    .matches
                    .iter()
                    .flatten()
                    .map(|matched| Ok((Cow::Borrowed(matched), (0, 0))))
                    .collect(),
            };
            let matches = if matches.is_empty() {
                vec![Ok((Cow::Owned(HttpRouteRulesMatches::default()), (0, 0)))]
            } else {
                matches
            };
            let filters = rule.filters.as_deref().unwrap_or_default();
            // A copy of the request cannot be sent, but the request itself is served as the
            // rule says: a mirror protects nothing that its loss would expose.
            let unmirrored: Vec<HttpRouteRulesFilters>;
            let filters = if filters.iter().any(is_mirror) {
                for (index, _) in filters.iter().enumerate().filter(|(_, f)| is_mirror(f)) {
                    let at = format!("{field}.filters[{index}]");
                    if !self.unsupported.contains(&at) {
                        self.unsupported.push(at.clone());
                    }
                    self.report(
                        at,
                        "filter type RequestMirror is not supported; the requests this rule takes are served without their copy".to_owned(),
                    );
                }
                unmirrored = filters.iter().filter(|f| !is_mirror(f)).cloned().collect();
                &unmirrored[..]
            } else {
                filters
            };
            for (match_index, matched) in matches.into_iter().enumerate() {
                let at = format!("{field}.matches[{match_index}]");
                let (matched, method_precedence) = match matched {
                    Ok(matched) => matched,
                    Err((part, why)) => {
                        self.drop_match(
                            format!("{at}.{part}"),
                            format!("{why}; the match is skipped"),
                        );
                        continue;
                    }
                };
                let matched = &*matched;
                let path = matched.path.as_ref();
                let value = path
                    .and_then(|p| p.value.clone())
                    .unwrap_or_else(|| "/".to_owned());
                let path_type = path.and_then(|p| p.r#type.as_ref());
                let regex = matches!(
                    path_type,
                    Some(HttpRouteRulesMatchesPathType::RegularExpression)
                );
                let kind = match path_type {
                    Some(HttpRouteRulesMatchesPathType::Exact) => PathKind::Exact,
                    _ => PathKind::Prefix,
                };
                // A regular expression is a condition on the catch-all prefix: it is tried
                // where no longer path of the host matches.
                let checked = if regex {
                    rules::path_pattern(&value)
                        .and_then(|_| names::path_match(Some("/"), PathKind::Prefix))
                } else {
                    names::path_match(Some(&value), kind)
                };
                let path_match = match checked {
                    Ok(path_match) => path_match,
                    Err(why) => {
                        self.drop_match(
                            format!("{at}.path"),
                            format!("{why}; the match is skipped"),
                        );
                        continue;
                    }
                };
                let mut conditions = match rules::conditions(matched) {
                    Ok(conditions) => conditions,
                    Err(why) => {
                        self.drop_match(at, format!("{why}; the match is skipped"));
                        continue;
                    }
                };
                if regex {
                    conditions.insert(0, model::Condition::Path(value.clone()));
                }
                let matched_prefix = (kind == PathKind::Prefix && !regex).then_some(value.as_str());
                // A filter that cannot be served is never skipped: what the match takes
                // would reach its backends without it (an authentication, say), or fall
                // through to another rule. It is answered as the specification asks of an
                // ExtensionRef that cannot be resolved.
                let (mut action, refused) = match rules::filters(filters, matched_prefix) {
                    Ok(action) => (action, false),
                    Err((part, why)) => {
                        self.drop_match(
                            format!("{field}.{part}"),
                            format!(
                                "{why}; the requests this match takes are answered with {}",
                                self.unavailable_status()
                            ),
                        );
                        (model::RuleAction::default(), true)
                    }
                };
                action.unavailable_weight = unavailable_weight;
                if self.kind == Kind::GrpcRoute {
                    action.unavailable_answer = model::Unavailable::ServiceUnavailable;
                }
                action.server_timeout = server_timeout.clone();
                action.backends = Vec::with_capacity(backends.len());
                let served = if refused { &[][..] } else { &backends[..] };
                for (_, chosen, _) in served {
                    match rules::for_match(chosen, matched_prefix) {
                        Ok(chosen) => action.backends.push(chosen),
                        Err(why) => {
                            self.report(
                                format!("{at}.path"),
                                format!(
                                    "the filters of the backendRef to Service {}: {why}; its share of the traffic for this match is answered with {}",
                                    chosen.id.service,
                                    self.unavailable_status()
                                ),
                            );
                            action.unavailable_weight =
                                action.unavailable_weight.saturating_add(chosen.weight);
                        }
                    }
                }
                action.access = access.clone();
                if refused {
                    action.unavailable_weight = 1;
                } else if backends.is_empty()
                    && unavailable_weight == 0
                    && action.redirect.is_none()
                {
                    // Nothing to forward to: the specification asks for 500 (503, which
                    // gRPC clients read as UNAVAILABLE, for a GRPCRoute).
                    action.unavailable_weight = 1;
                }
                let action = Arc::new(action);
                let rule_backends: Vec<Arc<Backend>> = served
                    .iter()
                    .map(|(backend, _, _)| backend.clone())
                    .collect();
                for attachment in attachments {
                    self.output.routes.push(RouteClaim {
                        host: attachment.host.clone(),
                        path: path_match.clone(),
                        path_text: value.clone(),
                        frontends: attachment.frontends.clone(),
                        field: at.clone(),
                        rule: ClaimedRule::Gateway {
                            conditions: conditions.clone(),
                            action: action.clone(),
                            backends: rule_backends.clone(),
                            method_precedence,
                        },
                    });
                }
            }
        }
        unresolved
    }

    /// Which clients a rule serves: what its backends' Services (and the ConfigMap) ask
    /// for. Services that ask for different lists refuse everyone: the lists are checked
    /// before a backend is picked, and no choice between them would be the one asked for.
    fn rule_access(
        &mut self,
        backends: &[(Arc<Backend>, model::RuleBackend, model::SourceAccess)],
        field: &str,
    ) -> model::SourceAccess {
        let mut wanted = backends.iter().map(|(_, _, access)| access);
        let Some(first) = wanted.next() else {
            return model::SourceAccess::default();
        };
        if wanted.all(|access| access == first) {
            return first.clone();
        }
        self.report(
            format!("{field}.backendRefs"),
            "the backends' Services set different source allow or deny lists; every client of the rule is refused (403)".to_owned(),
        );
        model::SourceAccess {
            refuse_all: true,
            ..model::SourceAccess::default()
        }
    }

    /// A rule's valid backends with their weights (above 0), the total weight of the
    /// invalid ones (whose share of the traffic is answered with 500), and the first
    /// problem, for status.
    fn rule_backends(&mut self, rule: &HttpRouteRules, field: &str) -> RuleBackends {
        let mut backends = Vec::new();
        let mut unavailable = 0u32;
        let mut problem = None;
        for (index, reference) in rule.backend_refs.iter().flatten().enumerate() {
            let at = format!("{field}.backendRefs[{index}]");
            if index >= MAX_BACKEND_REFS {
                self.report(
                    at,
                    format!("a rule takes at most {MAX_BACKEND_REFS} backendRefs (the specification's limit); this one is ignored"),
                );
                continue;
            }
            let Ok(weight) = u32::try_from(reference.weight.unwrap_or(1)) else {
                self.report(
                    format!("{at}.weight"),
                    format!(
                        "{} is below 0, the specification's limit; the backendRef is skipped, as one of weight 0 is",
                        reference.weight.unwrap_or_default()
                    ),
                );
                continue;
            };
            if weight == 0 {
                continue;
            }
            // A share answered with an error for an invalid part: the route is partially
            // invalid, as where a match is.
            if weight > MAX_WEIGHT {
                self.drop_match(
                    format!("{at}.weight"),
                    format!("{weight} is above {MAX_WEIGHT}, the specification's limit; its share of the traffic is answered with {}", self.unavailable_status()),
                );
                unavailable = unavailable.saturating_add(MAX_WEIGHT);
                continue;
            }
            let filters = reference.filters.as_deref().unwrap_or_default();
            let edits = match rules::backend_filters(filters) {
                Ok(edits) => edits,
                Err((part, why)) => {
                    self.drop_match(
                        format!("{at}.{part}"),
                        format!(
                            "{why}; this backend's share of the traffic is answered with {}",
                            self.unavailable_status()
                        ),
                    );
                    unavailable = unavailable.saturating_add(weight);
                    continue;
                }
            };
            match self.backend(reference) {
                Ok((backend, service_keys)) => {
                    let backend = self.for_kind(backend);
                    let chosen = model::RuleBackend {
                        id: backend.id.clone(),
                        weight,
                        request_headers: edits.request,
                        response_headers: edits.response,
                        redirect: edits.redirect,
                        rewrite: edits.rewrite,
                    };
                    // A route has no annotations: its Service's lists apply, then the
                    // ConfigMap's.
                    let access = crate::ingress_keys::source_access(&Keys {
                        service: Some(&service_keys),
                        object: None,
                        global: self.lookups.global(),
                    });
                    backends.push((backend, chosen, access));
                }
                Err(refusal) => {
                    self.report(
                        at,
                        format!(
                            "{}; its share of the traffic is answered with {}",
                            refusal.message,
                            self.unavailable_status()
                        ),
                    );
                    unavailable = unavailable.saturating_add(weight);
                    problem.get_or_insert(refusal);
                }
            }
        }
        (backends, unavailable, problem)
    }

    /// The status answered for the traffic of an invalid backend: 500 for an HTTPRoute,
    /// 503 (gRPC's UNAVAILABLE) for a GRPCRoute.
    fn unavailable_status(&self) -> u16 {
        if self.kind == Kind::GrpcRoute {
            503
        } else {
            500
        }
    }

    /// A backend as this route's kind needs it: a GRPCRoute's servers speak HTTP/2 (in
    /// clear text unless `backend-protocol` or the Service port's `appProtocol` asks
    /// for TLS), in a section of their own when the Service port's do not already, so
    /// that an HTTPRoute or Ingress to the same port keeps HTTP/1.
    fn for_kind(&self, backend: Arc<Backend>) -> Arc<Backend> {
        if self.kind != Kind::GrpcRoute || backend.server_options.protocol == model::Protocol::Http2
        {
            return backend;
        }
        Arc::new(Arc::unwrap_or_clone(backend).for_grpc())
    }

    /// The backend a Service backendRef names.
    fn backend(
        &mut self,
        reference: &resources::gateway::HttpRouteRulesBackendRefs,
    ) -> Result<ServiceBackend, Refusal> {
        let reference = super::l4::BackendRef {
            group: reference.group.as_deref(),
            kind: reference.kind.as_deref(),
            name: &reference.name,
            namespace: reference.namespace.as_deref(),
            port: reference.port,
            weight: reference.weight,
        };
        let (backend, service_keys) = super::l4::service_backend_ref(
            &reference,
            self.kind.name(),
            self.lookups,
            &mut self.backends,
            &mut self.output,
        )?;
        Ok((self.with_policies(backend), service_keys))
    }

    /// The backend as the BackendTLSPolicy of its Service port makes it.
    fn with_policies(&mut self, backend: Arc<Backend>) -> Arc<Backend> {
        if let Some(done) = self.with_policies.get(&backend.id) {
            return done.clone();
        }
        let id = backend.id.clone();
        let done = super::backend_tls::apply(self.lookups, backend, &mut self.policies);
        self.with_policies.insert(id, done.clone());
        done
    }
}

fn is_mirror(filter: &HttpRouteRulesFilters) -> bool {
    matches!(filter.r#type, HttpRouteRulesFiltersType::RequestMirror)
}
