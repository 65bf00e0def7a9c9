//! One HTTPRoute to its routes, TLS claims and backends, through the Gateways of our
//! GatewayClass it attaches to. Pure, and memoized like an Ingress: everything it reads
//! (Gateways, GatewayClasses, Namespaces, ReferenceGrants, Services, endpoints) is looked
//! up through the recorder, so a change to any of it converts the route again.
//!
//! Served so far: HTTP listeners and HTTPS listeners (TLS Terminate) on any port, listener hostnames intersected with route hostnames, `allowedRoutes`
//! (namespaces `Same` / `All` / `Selector`, kinds), `parentRefs` with `sectionName` and
//! `port`, `Exact`, `PathPrefix` and `RegularExpression` path matches with header,
//! query-parameter and method conditions, the core and extended filters of a rule and of
//! a backendRef, weighted Service backends (an invalid one's share answered with 500), cross-namespace references with
//! ReferenceGrants. Everything else is reported on the route and left out (see
//! docs/gateway-api.md).

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{Backend, BackendId, CertId, Frontends, HostKey, PathKind};
use resources::gateway::{
    GatewayListeners, GatewayListenersAllowedRoutesNamespacesFrom,
    GatewayListenersAllowedRoutesNamespacesSelector, HttpRouteRules, HttpRouteRulesMatches,
    HttpRouteRulesMatchesPathType,
};
use resources::{Gateway, HttpRoute, Kind, Object, ObjectRef, ServiceBackendPort};

use super::api::{GATEWAY_CONTROLLER, GROUP};
use super::{listener, rules};
use crate::contribution::{ClaimedRule, Contribution, MergeOrder, RouteClaim, TlsClaim};
use crate::endpoints::ServiceBackend;
use crate::keys::Keys;
use crate::lookup::Recorder;
use crate::outcome::{ParentOutcome, Reason, Refusal, RouteOutcome};
use crate::{endpoints, names};

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
    field: String,
}

struct RouteConverter<'a, 'b> {
    route: &'a HttpRoute,
    lookups: &'a mut Recorder<'b>,
    output: Contribution,
    backends: BTreeMap<BackendId, ServiceBackend>,
}

/// Converts one HTTPRoute; a route attached to none of our Gateways contributes nothing.
pub(crate) fn convert_http_route(
    object: ObjectRef,
    route: &HttpRoute,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(&route.metadata, &object);
    let mut converter = RouteConverter {
        route,
        lookups,
        output: Contribution::new(object, "HTTPRoute", order),
        backends: BTreeMap::new(),
    };
    let mut outcome = RouteOutcome::default();
    let attachments = converter.attachments(&mut outcome.parents);
    // A route that names a Gateway of ours has its references resolved for status even
    // where it is attached nowhere: ResolvedRefs does not depend on Accepted.
    if !outcome.parents.is_empty() {
        outcome.unresolved = converter.rules(&attachments);
    }
    if !outcome.parents.is_empty() {
        converter.output.route_status = Some(outcome);
    }
    converter.output
}

impl RouteConverter<'_, '_> {
    fn report(&mut self, field: String, message: String) {
        self.output.report(field, message);
    }

    fn namespace(&self) -> String {
        self.output.object.namespace.clone()
    }

    /// Every host this route is served on, merged across the listeners it attaches to.
    fn attachments(&mut self, outcomes: &mut Vec<ParentOutcome>) -> Vec<Attachment> {
        let mut by_host: BTreeMap<HostKey, Attachment> = BTreeMap::new();
        let parents = self.route.spec.parent_refs.clone().unwrap_or_default();
        let port_protocols = self.lookups.port_protocols();
        for (index, parent) in parents.iter().enumerate() {
            let field = format!("spec.parentRefs[{index}]");
            let group = parent.group.as_deref().unwrap_or(GROUP);
            let kind = parent.kind.as_deref().unwrap_or("Gateway");
            if group != GROUP || kind != "Gateway" {
                continue;
            }
            let namespace = parent.namespace.clone().unwrap_or_else(|| self.namespace());
            let Some(gateway) = self.our_gateway(&namespace, &parent.name) else {
                continue;
            };
            let mut outcome = ParentOutcome {
                gateway: ObjectRef::new(Kind::Gateway, namespace.as_str(), parent.name.as_str()),
                section_name: parent.section_name.clone(),
                port: parent.port,
                listeners: Vec::new(),
                refusal: None,
            };
            let mut named = false;
            let mut matched_listener = false;
            let mut found = Vec::new();
            for (index, listener) in gateway.spec.listeners.iter().enumerate() {
                if parent
                    .section_name
                    .as_ref()
                    .is_some_and(|s| *s != listener.name)
                    || parent.port.is_some_and(|p| p != listener.port)
                {
                    continue;
                }
                named = true;
                let ports = self.lookups.listener_ports();
                let Ok(frontends) = listener::gateway_frontend(
                    &gateway.spec.listeners,
                    index,
                    port_protocols,
                    ports,
                ) else {
                    continue;
                };
                if !self.allowed(listener, &namespace) {
                    continue;
                }
                matched_listener = true;
                let certificate = if frontends.any_tls() {
                    self.certificate(&gateway, listener)
                } else {
                    None
                };
                let hosts: Vec<HostKey> = self
                    .hostnames(listener.hostname.as_deref())
                    .into_iter()
                    .filter(|host| !listener::isolated_from(&gateway.spec.listeners, index, host))
                    .collect();
                if !hosts.is_empty() {
                    outcome.listeners.push(listener.name.clone());
                }
                for host in hosts {
                    found.push(Attachment {
                        host,
                        frontends: frontends.clone(),
                        certificate: certificate.clone(),
                        field: field.clone(),
                    });
                }
            }
            let refusal = if !named {
                Some(Refusal::new(
                    Reason::NoMatchingParent,
                    format!(
                        "Gateway {namespace}/{} has no listener with this sectionName and port",
                        parent.name
                    ),
                ))
            } else if !matched_listener {
                Some(Refusal::new(
                    Reason::NotAllowedByListeners,
                    format!(
                        "no listener of Gateway {namespace}/{} accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                        parent.name
                    ),
                ))
            } else if found.is_empty() {
                Some(Refusal::new(
                    Reason::NoMatchingListenerHostname,
                    format!(
                        "no hostname of this route matches a listener of Gateway {namespace}/{}; it is not attached there",
                        parent.name
                    ),
                ))
            } else {
                None
            };
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

    /// The Gateway a parentRef names, if its class is ours.
    fn our_gateway(&mut self, namespace: &str, name: &str) -> Option<Arc<Gateway>> {
        our_gateway(self.lookups, namespace, name)
    }

    /// Whether a listener's `allowedRoutes` admits this route.
    fn allowed(&mut self, listener: &GatewayListeners, gateway_namespace: &str) -> bool {
        listener::route_kinds(listener).http_route
            && admits_namespace(self.lookups, listener, gateway_namespace, &self.namespace())
    }

    /// The route's hosts under a listener hostname, as the specification intersects them.
    fn hostnames(&mut self, listener: Option<&str>) -> Vec<HostKey> {
        let route_hosts = self.route.spec.hostnames.clone().unwrap_or_default();
        route_hostnames(&route_hosts, listener, &mut self.output)
    }

    /// The certificate of an HTTPS listener, if it may be used.
    fn certificate(&mut self, gateway: &Gateway, listener: &GatewayListeners) -> Option<CertId> {
        let gateway_namespace = gateway.metadata.namespace.clone().unwrap_or_default();
        let lookups = &mut *self.lookups;
        listener::certificate_ref(listener, &gateway_namespace, |namespace, name| {
            listener::grants(
                lookups.in_namespace(Kind::ReferenceGrant, namespace),
                ("Gateway", &gateway_namespace),
                ("", "Secret", name),
            )
        })
        .ok()
    }

    /// Whether a ReferenceGrant in `target_namespace` lets `from` (kind, namespace) refer
    /// to `to` (group, kind, name).
    fn granted(
        &mut self,
        target_namespace: &str,
        from: (&str, &str),
        to: (&str, &str, &str),
    ) -> bool {
        let grants = self
            .lookups
            .in_namespace(Kind::ReferenceGrant, target_namespace);
        listener::grants(grants, from, to)
    }

    /// Turns the rules into route claims; returns the first unresolved reference.
    fn rules(&mut self, attachments: &[Attachment]) -> Option<Refusal> {
        let mut unresolved = None;
        for attachment in attachments {
            if let Some(certificate) = &attachment.certificate {
                self.output.tls.push(TlsClaim {
                    host: attachment.host.clone(),
                    secret: Some(certificate.clone()),
                    options: model::TlsOptions::default(),
                    field: attachment.field.clone(),
                });
            }
        }
        let rules = self.route.spec.rules.clone().unwrap_or_default();
        for (rule_index, rule) in rules.iter().enumerate() {
            let field = format!("spec.rules[{rule_index}]");
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
            let access = self.rule_access(&backends, &field);
            if unresolved.is_none() {
                unresolved = problem;
            }
            let matches = rule.matches.clone().unwrap_or_default();
            let matches = if matches.is_empty() {
                vec![HttpRouteRulesMatches::default()]
            } else {
                matches
            };
            for (match_index, matched) in matches.iter().enumerate() {
                let at = format!("{field}.matches[{match_index}]");
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
                    rules::url_path(&value).and_then(|value| names::path_match(Some(&value), kind))
                };
                let path_match = match checked {
                    Ok(path_match) => path_match,
                    Err(why) => {
                        self.report(format!("{at}.path"), format!("{why}; the match is skipped"));
                        continue;
                    }
                };
                let mut conditions = match rules::conditions(matched) {
                    Ok(conditions) => conditions,
                    Err(why) => {
                        self.report(at, format!("{why}; the match is skipped"));
                        continue;
                    }
                };
                if regex {
                    conditions.insert(0, model::Condition::Path(value.clone()));
                }
                let matched_prefix = (kind == PathKind::Prefix && !regex).then_some(value.as_str());
                let filters = rule.filters.clone().unwrap_or_default();
                let mut action = match rules::filters(&filters, matched_prefix) {
                    Ok(action) => action,
                    Err((part, why)) => {
                        self.report(
                            format!("{field}.{part}"),
                            format!("{why}; the rule is skipped for this match"),
                        );
                        continue;
                    }
                };
                action.unavailable_weight = unavailable_weight;
                action.server_timeout = server_timeout.clone();
                action.backends = Vec::with_capacity(backends.len());
                for (_, chosen, _) in &backends {
                    match rules::for_match(chosen, matched_prefix) {
                        Ok(chosen) => action.backends.push(chosen),
                        Err(why) => {
                            self.report(
                                format!("{at}.path"),
                                format!(
                                    "the filters of the backendRef to Service {}: {why}; its share of the traffic for this match is answered with 500",
                                    chosen.id.service
                                ),
                            );
                            action.unavailable_weight =
                                action.unavailable_weight.saturating_add(chosen.weight);
                        }
                    }
                }
                action.access = access.clone();
                if backends.is_empty() && unavailable_weight == 0 && action.redirect.is_none() {
                    // Nothing to forward to: the specification asks for 500.
                    action.unavailable_weight = 1;
                }
                let action = Arc::new(action);
                let rule_backends: Vec<Arc<Backend>> = backends
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
            let weight = u32::try_from(reference.weight.unwrap_or(1)).unwrap_or(0);
            if weight == 0 {
                continue;
            }
            if weight > MAX_WEIGHT {
                self.report(
                    format!("{at}.weight"),
                    format!("{weight} is above {MAX_WEIGHT}, the specification's limit; its share of the traffic is answered with 500"),
                );
                unavailable = unavailable.saturating_add(MAX_WEIGHT);
                continue;
            }
            let filters = reference.filters.clone().unwrap_or_default();
            let edits = match rules::backend_filters(&filters) {
                Ok(edits) => edits,
                Err((part, why)) => {
                    self.report(
                        format!("{at}.{part}"),
                        format!("{why}; this backend's share of the traffic is answered with 500"),
                    );
                    unavailable = unavailable.saturating_add(weight);
                    continue;
                }
            };
            match self.backend(reference) {
                Ok((backend, service_keys)) => {
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
                            "{}; its share of the traffic is answered with 500",
                            refusal.message
                        ),
                    );
                    unavailable = unavailable.saturating_add(weight);
                    problem.get_or_insert(refusal);
                }
            }
        }
        (backends, unavailable, problem)
    }

    /// The backend a Service backendRef names.
    fn backend(
        &mut self,
        reference: &resources::gateway::HttpRouteRulesBackendRefs,
    ) -> Result<ServiceBackend, Refusal> {
        if reference
            .group
            .as_deref()
            .is_some_and(|group| !group.is_empty())
            || reference.kind.as_deref().unwrap_or("Service") != "Service"
        {
            return Err(Refusal::new(
                Reason::InvalidKind,
                "only Service backends are supported",
            ));
        }
        let port = reference.port.ok_or_else(|| {
            Refusal::new(Reason::BackendNotFound, "a Service backendRef needs a port")
        })?;
        let namespace = reference
            .namespace
            .clone()
            .unwrap_or_else(|| self.namespace());
        let route_namespace = self.namespace();
        if namespace != route_namespace
            && !self.granted(
                &namespace,
                ("HTTPRoute", &route_namespace),
                ("", "Service", &reference.name),
            )
        {
            return Err(Refusal::new(
                Reason::RefNotPermitted,
                format!(
                    "no ReferenceGrant in namespace {namespace} allows this route to use Service {}",
                    reference.name
                ),
            ));
        }
        let backend_port = ServiceBackendPort {
            number: Some(port),
            name: None,
        };
        // A route has no annotations of its own: its Service's and the ConfigMap's apply.
        let keys = Keys {
            service: None,
            object: None,
            global: self.lookups.global(),
        };
        endpoints::service_backend(
            self.lookups,
            &mut self.backends,
            &namespace,
            &reference.name,
            &backend_port,
            keys,
            &self.output.origin,
            &mut self.output.diagnostics,
        )
        .map_err(|why| Refusal::new(Reason::BackendNotFound, why))
    }
}

/// The Gateway `namespace/name`, if its class is ours.
pub(crate) fn our_gateway(
    lookups: &mut Recorder<'_>,
    namespace: &str,
    name: &str,
) -> Option<Arc<Gateway>> {
    let Some(Object::Gateway(gateway)) =
        lookups.get(ObjectRef::new(Kind::Gateway, namespace, name))
    else {
        return None;
    };
    let class = ObjectRef::new(
        Kind::GatewayClass,
        "",
        gateway.spec.gateway_class_name.as_str(),
    );
    match lookups.get(class) {
        Some(Object::GatewayClass(class)) if class.spec.controller_name == GATEWAY_CONTROLLER => {
            Some(gateway.clone())
        }
        _ => None,
    }
}

/// Whether a listener's `allowedRoutes.namespaces` admits a route of `route_namespace`.
pub(crate) fn admits_namespace(
    lookups: &mut Recorder<'_>,
    listener: &GatewayListeners,
    gateway_namespace: &str,
    route_namespace: &str,
) -> bool {
    let allowed = listener.allowed_routes.as_ref();
    let namespaces = allowed.and_then(|a| a.namespaces.as_ref());
    let from = namespaces.and_then(|n| n.from.as_ref());
    match from {
        None | Some(GatewayListenersAllowedRoutesNamespacesFrom::Same) => {
            route_namespace == gateway_namespace
        }
        Some(GatewayListenersAllowedRoutesNamespacesFrom::All) => true,
        Some(GatewayListenersAllowedRoutesNamespacesFrom::Selector) => {
            let selector = namespaces.and_then(|n| n.selector.as_ref());
            let labels = match lookups.get(ObjectRef::new(Kind::Namespace, "", route_namespace)) {
                Some(Object::Namespace(namespace)) => {
                    namespace.metadata.labels.clone().unwrap_or_default()
                }
                _ => BTreeMap::new(),
            };
            selector.is_some_and(|selector| selects(selector, &labels))
        }
    }
}

/// A route's `hostnames` under a listener hostname, as the specification intersects
/// them; a hostname that is not one is reported on `output`.
pub(crate) fn route_hostnames(
    route_hosts: &[String],
    listener: Option<&str>,
    output: &mut Contribution,
) -> Vec<HostKey> {
    let listener = listener
        .filter(|h| !h.is_empty())
        .map(str::to_ascii_lowercase);
    let chosen: Vec<String> = match (&listener, route_hosts.is_empty()) {
        (None, true) => return vec![HostKey::CatchAll],
        (None, false) => route_hosts.to_vec(),
        (Some(listener), true) => vec![listener.clone()],
        (Some(listener), false) => route_hosts
            .iter()
            .filter_map(|host| intersect(listener, &host.to_ascii_lowercase()))
            .collect(),
    };
    let mut hosts = Vec::new();
    for (index, host) in chosen.iter().enumerate() {
        match names::parse_host(host) {
            // A Gateway API wildcard covers any number of labels.
            Ok(HostKey::Wildcard(suffix)) => hosts.push(HostKey::Suffix(suffix)),
            Ok(key) => hosts.push(key),
            Err(why) => output.report(
                format!("spec.hostnames[{index}]"),
                format!("{why}; the hostname is skipped"),
            ),
        }
    }
    hosts
}

/// The intersection of a listener hostname and a route hostname, as the specification
/// defines it: the more specific of the two when one covers the other.
pub fn intersect(listener: &str, route: &str) -> Option<String> {
    let covers = |wildcard: &str, host: &str| {
        wildcard.strip_prefix("*.").is_some_and(|suffix| {
            host.len() > suffix.len() + 1 && host.ends_with(&format!(".{suffix}"))
        })
    };
    if listener == route || covers(listener, route) {
        Some(route.to_owned())
    } else if covers(route, listener) {
        Some(listener.to_owned())
    } else {
        None
    }
}

/// Whether a label selector selects these labels.
fn selects(
    selector: &GatewayListenersAllowedRoutesNamespacesSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    let labels_ok = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let expressions_ok = selector
        .match_expressions
        .iter()
        .flatten()
        .all(|expression| {
            let values = expression.values.clone().unwrap_or_default();
            let value = labels.get(&expression.key);
            match expression.operator.as_str() {
                "In" => value.is_some_and(|v| values.contains(v)),
                "NotIn" => value.is_none_or(|v| !values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        });
    labels_ok && expressions_ok
}

#[cfg(test)]
mod tests {
    use super::intersect;

    #[test]
    fn hostnames_intersect_as_the_specification_says() {
        let cases = [
            (
                "foo.example.com",
                "foo.example.com",
                Some("foo.example.com"),
            ),
            ("*.example.com", "foo.example.com", Some("foo.example.com")),
            (
                "*.example.com",
                "foo.bar.example.com",
                Some("foo.bar.example.com"),
            ),
            ("foo.example.com", "*.example.com", Some("foo.example.com")),
            (
                "*.example.com",
                "*.foo.example.com",
                Some("*.foo.example.com"),
            ),
            (
                "*.foo.example.com",
                "*.example.com",
                Some("*.foo.example.com"),
            ),
            ("*.example.com", "example.com", None),
            ("bar.example.com", "foo.example.com", None),
            ("*.example.com", "*.example.net", None),
        ];
        for (listener, route, expected) in cases {
            assert_eq!(
                intersect(listener, route).as_deref(),
                expected,
                "{listener} ∩ {route}"
            );
        }
    }
}
