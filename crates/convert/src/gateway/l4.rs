//! What TLSRoutes and TCPRoutes share: attaching to the listeners of our Gateways (by
//! parentRef, sectionName, port, allowed kinds and namespaces), and resolving their
//! weighted Service backendRefs. Each kind decides what its attachments serve.

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{Backend, CertId, HostKey};
use resources::{Kind, ParentRef, ServiceBackendPort};

use super::attach;
use super::listener;
use super::merged;
use crate::contribution::Contribution;
use crate::contribution::WeightedBackends;
use crate::endpoints::{self, ServiceBackend};
use crate::keys::Keys;
use crate::lookup::Recorder;
use crate::outcome::{ParentOutcome, Reason, Refusal};

/// How a listener a route attached to serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Serving {
    /// TLS passed through, chosen by SNI on the HTTPS port.
    Passthrough,
    /// TLS terminated on a TCP frontend of the listener's port, with the listener's
    /// certificate (`None`: it does not resolve, the default one is served).
    Terminate(Option<CertId>),
    /// Plain TCP on a frontend of the listener's port.
    Tcp,
}

/// One listener a route attached to, with the names it got there.
#[derive(Debug, Clone)]
pub(crate) struct Attachment {
    /// The parentRef's field, for reports.
    pub(crate) field: String,
    pub(crate) port: u16,
    pub(crate) serving: Serving,
    /// The names (the catch-all when neither the listener nor the route names any).
    pub(crate) hosts: Vec<HostKey>,
}

/// The listeners of our Gateways the route attaches to; every parent of ours gets its
/// outcome. `hostnames` are the route's (none for a TCPRoute).
pub(crate) fn attachments(
    parents: &[ParentRef<'_>],
    hostnames: &[String],
    kind: Kind,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
    outcomes: &mut Vec<ParentOutcome>,
) -> Vec<Attachment> {
    let mut found: Vec<Attachment> = Vec::new();
    let route_namespace = output.object.namespace.clone();
    let port_protocols = lookups.port_protocols();
    for (index, parent_ref) in parents.iter().enumerate() {
        let field = format!("spec.parentRefs[{index}]");
        let Some(parent) = merged::route_parent(lookups, parent_ref, &route_namespace) else {
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
            output.report(field.clone(), refusal.message.clone());
            outcome.refusal = Some(refusal);
            outcomes.push(outcome);
            continue;
        }
        let gateway = &parent.gateway;
        let (mut named, mut matched_listener, mut attached) = (false, false, false);
        for (listener_index, entry) in gateway.declared_by(&parent.parent) {
            let listener = entry.listener.as_ref();
            if parent_ref.section_name.is_some_and(|s| s != listener.name)
                || parent_ref.port.is_some_and(|p| p != listener.port)
            {
                continue;
            }
            named = true;
            let ports = lookups.listener_ports();
            let served = gateway.frontend(listener_index, port_protocols, ports);
            let Ok(port) = u16::try_from(listener.port) else {
                continue;
            };
            let owner = &entry.owner;
            if served.is_err()
                || !attach::allowed(lookups, listener, &owner.namespace, kind, &route_namespace)
            {
                continue;
            }
            matched_listener = true;
            let serving = match listener.protocol.as_str() {
                "TCP" => Serving::Tcp,
                _ if listener::is_passthrough(listener) => Serving::Passthrough,
                _ => Serving::Terminate(
                    listener::certificate_ref(listener, owner, |secret_namespace, name| {
                        listener::grants(
                            lookups.in_namespace(Kind::ReferenceGrant, secret_namespace),
                            (owner.kind.name(), &owner.namespace),
                            ("", "Secret", name),
                        )
                    })
                    .ok(),
                ),
            };
            let mut hosts: Vec<HostKey> = Vec::new();
            if serving == Serving::Tcp {
                hosts.push(HostKey::CatchAll);
            } else {
                for found in attach::hosts_under(hostnames, listener.hostname.as_deref()) {
                    match found {
                        Ok(key) => hosts.push(key),
                        Err((index, why)) => output.report(
                            format!("spec.hostnames[{index}]"),
                            format!("{why}; the hostname is skipped"),
                        ),
                    }
                }
                hosts.retain(|host| !gateway.isolated_from(listener_index, host));
            }
            if hosts.is_empty() {
                continue;
            }
            attached = true;
            outcome.listeners.push(listener.name.clone());
            found.push(Attachment {
                field: field.clone(),
                port,
                serving,
                hosts,
            });
        }
        let refusal = attach::parent_refusal(&attach::ParentFit {
            parent: parent.describe(),
            listeners: match kind {
                Kind::TcpRoute => "TCP listener",
                _ => "TLS listener",
            },
            named,
            matched_listener,
            attached,
            conflict: None,
        });
        if let Some(refusal) = &refusal {
            output.report(field.clone(), refusal.message.clone());
        }
        outcome.refusal = refusal;
        outcomes.push(outcome);
    }
    found
}

/// A Service backendRef of a TLSRoute or TCPRoute, as both spell it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BackendRef<'a> {
    pub(crate) group: Option<&'a str>,
    pub(crate) kind: Option<&'a str>,
    pub(crate) name: &'a str,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) port: Option<i32>,
    pub(crate) weight: Option<i32>,
}

/// Every backendRef of weight above zero with its backend (`None` when it does not
/// resolve: its share of the connections is refused, as the specification asks), in
/// order; and the first reference that does not resolve, for status.
pub(crate) fn weighted_backends(
    refs: &[(String, BackendRef<'_>)],
    route_kind: &str,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> (WeightedBackends, Option<Refusal>) {
    let mut backends = Vec::new();
    let mut unresolved = None;
    for (field, reference) in refs {
        let weight = reference.weight.unwrap_or(1);
        let Ok(weight) = u32::try_from(weight) else {
            output.report(
                format!("{field}.weight"),
                "a weight is from 0 to 1000000; the backendRef is skipped".to_owned(),
            );
            continue;
        };
        if weight == 0 {
            continue;
        }
        match service_backend(reference, route_kind, lookups, output) {
            Ok(backend) => backends.push((Some(backend), weight)),
            Err(refusal) => {
                output.report(
                    field.clone(),
                    format!(
                        "{}; its share of the connections is refused",
                        refusal.message
                    ),
                );
                unresolved.get_or_insert(refusal);
                backends.push((None, weight));
            }
        }
    }
    if refs.is_empty() {
        let refusal = Refusal::new(
            Reason::BackendNotFound,
            "the route has no backendRef; its connections are refused",
        );
        output.report("spec.rules".to_owned(), refusal.message.clone());
        unresolved = Some(refusal);
    }
    (backends, unresolved)
}

/// The backend (in HTTP mode, as the Service's keys make it) a Service backendRef names,
/// with the Service's keys; `built` keeps the backends one route already made. Every
/// route kind's backendRefs are resolved here.
pub(crate) fn service_backend_ref(
    reference: &BackendRef<'_>,
    route_kind: &str,
    lookups: &mut Recorder<'_>,
    built: &mut BTreeMap<model::BackendId, ServiceBackend>,
    output: &mut Contribution,
) -> Result<ServiceBackend, Refusal> {
    if reference.group.is_some_and(|g| !g.is_empty())
        || reference.kind.unwrap_or("Service") != "Service"
    {
        let group = reference.group.filter(|g| !g.is_empty()).unwrap_or("core");
        return Err(Refusal::new(
            Reason::InvalidKind,
            format!(
                "backendRef {} of kind {}/{} is not supported: only Service backends are",
                reference.name.escape_debug(),
                group.escape_debug(),
                reference.kind.unwrap_or("Service").escape_debug()
            ),
        ));
    }
    let port = reference.port.ok_or_else(|| {
        Refusal::new(Reason::BackendNotFound, "a Service backendRef needs a port")
    })?;
    let route_namespace = output.object.namespace.clone();
    let namespace = reference
        .namespace
        .map_or_else(|| route_namespace.clone(), resources::Name::from);
    if namespace != route_namespace
        && !listener::grants(
            lookups.in_namespace(Kind::ReferenceGrant, &namespace),
            (route_kind, &route_namespace),
            ("", "Service", reference.name),
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
    endpoints::service_backend(
        lookups,
        built,
        &namespace,
        reference.name,
        &backend_port,
        keys,
        &output.origin,
        &mut output.diagnostics,
    )
    .map_err(|why| Refusal::new(Reason::BackendNotFound, why))
}

/// The backend a Service backendRef of a TLSRoute or TCPRoute names.
pub(crate) fn service_backend(
    reference: &BackendRef<'_>,
    route_kind: &str,
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> Result<Arc<Backend>, Refusal> {
    service_backend_ref(reference, route_kind, lookups, &mut BTreeMap::new(), output)
        .map(|(backend, _)| backend)
}

/// A route's backendRefs in order, each with its field (`spec.rules[i].backendRefs[j]`):
/// the route kinds' generated types differ, their fields do not.
macro_rules! backend_refs {
    ($rules:expr) => {{
        let mut refs = Vec::new();
        for (rule_index, rule) in $rules.iter().enumerate() {
            for (index, reference) in rule.backend_refs.iter().enumerate() {
                refs.push((
                    format!("spec.rules[{rule_index}].backendRefs[{index}]"),
                    $crate::gateway::l4::BackendRef {
                        group: reference.group.as_deref(),
                        kind: reference.kind.as_deref(),
                        name: &reference.name,
                        namespace: reference.namespace.as_deref(),
                        port: reference.port,
                        weight: reference.weight,
                    },
                ));
            }
        }
        refs
    }};
}
pub(crate) use backend_refs;
