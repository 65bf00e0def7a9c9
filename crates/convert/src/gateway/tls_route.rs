//! One TLSRoute to the SNI names it passes through, through the TLS listeners in
//! Passthrough mode of the Gateways of ours it attaches to. Pure and memoized like an
//! HTTPRoute: everything it reads goes through the recorder.
//!
//! The route's hostnames are intersected with each listener's as for HTTPRoutes (a
//! wildcard covers one or more labels); each name's connections go untouched to the
//! route's backend. A route whose backend does not resolve has its names' connections
//! refused, as the specification asks, rather than terminated by HAProxy.

use std::sync::Arc;

use model::{Backend, HostKey};
use resources::gateway::TlsRouteRulesBackendRefs;
use resources::{Kind, ObjectRef, ServiceBackendPort, TlsRoute};

use super::api::GROUP;
use super::attach;
use super::listener;
use super::route::our_gateway;
use crate::contribution::{Contribution, MergeOrder, PassthroughClaim};
use crate::endpoints;
use crate::keys::Keys;
use crate::lookup::Recorder;
use crate::outcome::{ParentOutcome, Reason, Refusal, RouteOutcome};

/// Converts one TLSRoute; a route attached to none of our Gateways contributes nothing
/// but its status.
pub(crate) fn convert_tls_route(
    object: ObjectRef,
    route: &TlsRoute,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(&route.metadata, &object);
    let mut output = Contribution::new(object, "TLSRoute", order);
    let mut outcome = RouteOutcome::default();
    let hosts = attachments(route, lookups, &mut output, &mut outcome.parents);
    if outcome.parents.is_empty() {
        return output;
    }
    let (backend, unresolved) = backend(route, lookups, &mut output);
    outcome.unresolved = unresolved;
    for (host, field) in hosts {
        output.passthrough.push(PassthroughClaim {
            host,
            backend: backend.clone(),
            field,
        });
    }
    output.route_status = Some(outcome);
    output
}

/// The SNI names the route is served on, with the parentRef that attached each, merged
/// across its parents; every parent of ours gets its outcome.
fn attachments(
    route: &TlsRoute,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
    outcomes: &mut Vec<ParentOutcome>,
) -> Vec<(HostKey, String)> {
    let mut found_hosts: Vec<(HostKey, String)> = Vec::new();
    let route_namespace = output.object.namespace.clone();
    let port_protocols = lookups.port_protocols();
    let parents = route.spec.parent_refs.clone().unwrap_or_default();
    for (index, parent) in parents.iter().enumerate() {
        let field = format!("spec.parentRefs[{index}]");
        let group = parent.group.as_deref().unwrap_or(GROUP);
        let kind = parent.kind.as_deref().unwrap_or("Gateway");
        if group != GROUP || kind != "Gateway" {
            continue;
        }
        let namespace = parent
            .namespace
            .clone()
            .unwrap_or_else(|| route_namespace.clone());
        let Some(gateway) = our_gateway(lookups, &namespace, &parent.name) else {
            continue;
        };
        let mut outcome = ParentOutcome {
            gateway: ObjectRef::new(Kind::Gateway, namespace.as_str(), parent.name.as_str()),
            section_name: parent.section_name.clone(),
            port: parent.port,
            listeners: Vec::new(),
            refusal: None,
        };
        let (mut named, mut matched_listener) = (false, false);
        let mut found = Vec::new();
        for (listener_index, listener) in gateway.spec.listeners.iter().enumerate() {
            if parent
                .section_name
                .as_ref()
                .is_some_and(|s| *s != listener.name)
                || parent.port.is_some_and(|p| p != listener.port)
            {
                continue;
            }
            named = true;
            let ports = lookups.listener_ports();
            let served = listener::gateway_frontend(
                &gateway.spec.listeners,
                listener_index,
                port_protocols,
                ports,
            );
            if served.is_err()
                || !attach::allowed(
                    lookups,
                    listener,
                    &namespace,
                    Kind::TlsRoute,
                    &route_namespace,
                )
            {
                continue;
            }
            matched_listener = true;
            let mut hosts: Vec<HostKey> = Vec::new();
            for found in attach::hosts_under(&route.spec.hostnames, listener.hostname.as_deref()) {
                match found {
                    Ok(key) => hosts.push(key),
                    Err((index, why)) => output.report(
                        format!("spec.hostnames[{index}]"),
                        format!("{why}; the hostname is skipped"),
                    ),
                }
            }
            let hosts: Vec<HostKey> = hosts
                .into_iter()
                .filter(|host| {
                    !listener::isolated_from(&gateway.spec.listeners, listener_index, host)
                })
                .collect();
            if !hosts.is_empty() {
                outcome.listeners.push(listener.name.clone());
            }
            found.extend(hosts);
        }
        let refusal = attach::parent_refusal(&attach::ParentFit {
            gateway: format!("{namespace}/{}", parent.name),
            listeners: "TLS listener in Passthrough mode",
            named,
            matched_listener,
            attached: !found.is_empty(),
            conflict: None,
        });
        if let Some(refusal) = &refusal {
            output.report(field.clone(), refusal.message.clone());
        }
        outcome.refusal = refusal;
        outcomes.push(outcome);
        for host in found {
            if host == HostKey::CatchAll {
                // Neither the listener nor the route names a host: there is no SNI to
                // choose these connections by.
                output.report(
                    "spec.hostnames".to_owned(),
                    "a TLSRoute on a listener without a hostname needs hostnames (connections are chosen by SNI); nothing is passed through".to_owned(),
                );
                continue;
            }
            if !found_hosts.iter().any(|(known, _)| *known == host) {
                found_hosts.push((host, field.clone()));
            }
        }
    }
    found_hosts
}

/// The route's backend, in passthrough mode: the first backendRef of the first rule
/// with a weight above zero (one Service takes a name's connections); `None` with the
/// reason when it does not resolve, and its connections are refused.
fn backend(
    route: &TlsRoute,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> (Option<Arc<Backend>>, Option<Refusal>) {
    let mut chosen = None;
    for (rule_index, rule) in route.spec.rules.iter().enumerate() {
        for (index, reference) in rule.backend_refs.iter().enumerate() {
            let field = format!("spec.rules[{rule_index}].backendRefs[{index}]");
            if reference.weight == Some(0) {
                continue;
            }
            if chosen.is_some() {
                output.report(
                    field,
                    "a TLS name's connections go to one backend: the first backendRef is served, this one is ignored".to_owned(),
                );
                continue;
            }
            chosen = Some((field, reference));
        }
    }
    let Some((field, reference)) = chosen else {
        let refusal = Refusal::new(
            Reason::BackendNotFound,
            "the route has no backendRef with a weight above 0; its connections are refused",
        );
        output.report("spec.rules".to_owned(), refusal.message.clone());
        return (None, Some(refusal));
    };
    match service_backend(reference, lookups, output) {
        Ok(backend) => (Some(Arc::new((*backend).clone().for_passthrough())), None),
        Err(refusal) => {
            output.report(
                field,
                format!("{}; its connections are refused", refusal.message),
            );
            (None, Some(refusal))
        }
    }
}

/// The backend a Service backendRef names.
fn service_backend(
    reference: &TlsRouteRulesBackendRefs,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> Result<Arc<Backend>, Refusal> {
    if reference.group.as_deref().is_some_and(|g| !g.is_empty())
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
    let route_namespace = output.object.namespace.clone();
    let namespace = reference
        .namespace
        .clone()
        .unwrap_or_else(|| route_namespace.clone());
    if namespace != route_namespace
        && !listener::grants(
            lookups.in_namespace(Kind::ReferenceGrant, &namespace),
            ("TLSRoute", &route_namespace),
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
        global: lookups.global(),
    };
    let mut built = std::collections::BTreeMap::new();
    endpoints::service_backend(
        lookups,
        &mut built,
        &namespace,
        &reference.name,
        &backend_port,
        keys,
        &output.origin,
        &mut output.diagnostics,
    )
    .map(|(backend, _)| backend)
    .map_err(|why| Refusal::new(Reason::BackendNotFound, why))
}
