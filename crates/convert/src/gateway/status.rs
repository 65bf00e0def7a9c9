//! Gateway API status, as the specification defines it: GatewayClass `Accepted`;
//! Gateway `Accepted` and `Programmed` with per-listener conditions, `attachedRoutes`
//! and `attachedListenerSets`; ListenerSet `Accepted` and `Programmed` with its
//! listeners' conditions; HTTPRoute per-parent `Accepted` and `ResolvedRefs`; BackendTLSPolicy
//! per-ancestor `Accepted` and `ResolvedRefs`. Computed from
//! the routes' memoized outcomes and lookups recorded like any conversion's, so it
//! always agrees with what is served and is computed again exactly when its inputs
//! change.

use std::collections::{BTreeMap, BTreeSet};

use resources::gateway::GatewayListeners;
use resources::{Kind, Object, ObjectRef};
use serde::Serialize;

use super::api::GROUP;
use super::{listener, merged};
use crate::lookup::Recorder;
use crate::outcome::{ConditionStatus, ConditionType, Reason, Refusal, RouteOutcome};

/// One status condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCondition {
    /// `Accepted`, `Programmed`, `ResolvedRefs`, `Conflicted`.
    #[serde(rename = "type")]
    pub kind: ConditionType,
    /// `True` or `False`.
    pub status: ConditionStatus,
    /// The specification's reason.
    pub reason: Reason,
    /// For people.
    pub message: String,
    /// The generation the condition was computed for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn condition(
    kind: ConditionType,
    holds: bool,
    reason: Reason,
    message: impl Into<String>,
    generation: Option<i64>,
) -> StatusCondition {
    StatusCondition {
        kind,
        status: ConditionStatus::of(holds),
        reason,
        message: message.into(),
        observed_generation: generation,
    }
}

/// One parent's status of a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteParentStatus {
    /// The parentRef, resolved.
    pub parent_ref: ParentRef,
    /// Always ours (`--gateway-controller`).
    pub controller_name: String,
    /// `Accepted` and `ResolvedRefs`.
    pub conditions: Vec<StatusCondition>,
}

/// A parentRef as written back in status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentRef {
    /// `gateway.networking.k8s.io`.
    pub group: &'static str,
    /// `Gateway` or `ListenerSet`.
    pub kind: &'static str,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// As given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
    /// As given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// A listener's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerStatus {
    /// Listener name.
    pub name: String,
    /// Routes attached to it.
    pub attached_routes: u32,
    /// Route kinds it takes.
    pub supported_kinds: Vec<BTreeMap<&'static str, &'static str>>,
    /// `Accepted`, `ResolvedRefs`, `Programmed`.
    pub conditions: Vec<StatusCondition>,
}

/// The status of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", untagged)]
pub enum ObjectStatus {
    /// A GatewayClass's.
    Class {
        /// Conditions.
        conditions: Vec<StatusCondition>,
    },
    /// A Gateway's.
    Gateway {
        /// Conditions.
        conditions: Vec<StatusCondition>,
        /// Per listener (its own: a ListenerSet's listeners are in the ListenerSet's).
        listeners: Vec<ListenerStatus>,
        /// The ListenerSets attached to it and accepted.
        #[serde(rename = "attachedListenerSets")]
        attached_listener_sets: u32,
        /// Fields it sets that portcullis does not read (field, why), for `check`: no
        /// condition of the specification says so.
        #[serde(skip)]
        unread: Vec<(String, String)>,
    },
    /// A ListenerSet's.
    ListenerSet {
        /// `Accepted` and `Programmed`.
        conditions: Vec<StatusCondition>,
        /// Per listener.
        listeners: Vec<ListenerStatus>,
    },
    /// An HTTPRoute's.
    Route {
        /// Per parent of ours.
        parents: Vec<RouteParentStatus>,
    },
    /// A BackendTLSPolicy's.
    Policy {
        /// Per Gateway of ours whose routes use a backend it targets.
        ancestors: Vec<PolicyAncestorStatus>,
    },
}

/// One ancestor's status of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyAncestorStatus {
    /// The Gateway.
    pub ancestor_ref: ParentRef,
    /// Always ours (`--gateway-controller`).
    pub controller_name: String,
    /// `Accepted` and `ResolvedRefs`.
    pub conditions: Vec<StatusCondition>,
}

/// The status of every Gateway API object of ours, by object.
pub type StatusReport = BTreeMap<ObjectRef, ObjectStatus>;

/// The listeners of Gateways and ListenerSets that are not served as written, one
/// problem each (its first failing condition), for `check`: a route's problems are
/// diagnostics already, a listener's are only in its status.
pub fn listener_problems(report: &StatusReport) -> Vec<crate::Diagnostic> {
    let failing = |condition: &&StatusCondition| {
        let holds = condition.status == ConditionStatus::True;
        // `Conflicted` is the one condition whose truth is the problem.
        holds == (condition.kind == ConditionType::Conflicted)
    };
    let mut problems = Vec::new();
    for (object, status) in report {
        if let ObjectStatus::Gateway { unread, .. } = status {
            problems.extend(unread.iter().map(|(field, why)| crate::Diagnostic {
                object: object.clone(),
                field: field.clone(),
                message: why.clone(),
            }));
        }
        // A Gateway refused whole says why in its own conditions.
        if let ObjectStatus::Gateway { conditions, .. } = status
            && let Some(refused) = conditions.iter().find(|c| {
                c.kind == ConditionType::Accepted && c.reason == Reason::InvalidParameters
            })
        {
            problems.push(crate::Diagnostic {
                object: object.clone(),
                field: "spec.infrastructure.parametersRef".to_owned(),
                message: refused.message.clone(),
            });
        }
        let (ObjectStatus::Gateway { listeners, .. } | ObjectStatus::ListenerSet { listeners, .. }) =
            status
        else {
            continue;
        };
        for listener in listeners {
            if let Some(condition) = listener.conditions.iter().find(failing) {
                problems.push(crate::Diagnostic {
                    object: object.clone(),
                    field: format!("listener {}", listener.name),
                    message: format!(
                        "{} ({:?} {:?}: {:?})",
                        condition.message, condition.kind, condition.status, condition.reason
                    ),
                });
            }
        }
    }
    problems
}

/// Computes every status through `lookups`. `routes` are the HTTPRoutes' outcomes, by
/// route.
pub(crate) fn report(
    lookups: &mut Recorder<'_>,
    routes: &BTreeMap<&ObjectRef, &RouteOutcome>,
) -> StatusReport {
    let ports = lookups.listener_ports();
    let mut report = StatusReport::new();
    for object in lookups.of_kind(Kind::GatewayClass) {
        let Object::GatewayClass(class) = object else {
            continue;
        };
        if class.spec.controller_name != ports.gateway_controller {
            continue;
        }
        let accepted = match &class.spec.parameters_ref {
            None => condition(
                ConditionType::Accepted,
                true,
                Reason::Accepted,
                "served by portcullis",
                class.metadata.generation,
            ),
            Some(parameters) => condition(
                ConditionType::Accepted,
                false,
                Reason::InvalidParameters,
                crate::diagnostic::one_line(&format!(
                    "parametersRef names {} {}, a kind of parameters portcullis does not read; the class's Gateways are not served",
                    parameters.kind, parameters.name
                ))
                .into_owned(),
                class.metadata.generation,
            ),
        };
        report.insert(
            object.object_ref(),
            ObjectStatus::Class {
                conditions: vec![accepted],
            },
        );
    }
    let mut attached: BTreeMap<(ObjectRef, String), u32> = BTreeMap::new();
    let mut policy_ancestors: BTreeMap<ObjectRef, BTreeSet<ObjectRef>> = BTreeMap::new();
    for (route, outcome) in routes {
        for policy in &outcome.policies {
            policy_ancestors
                .entry(policy.clone())
                .or_default()
                .extend(outcome.parents.iter().map(|p| p.gateway.clone()));
        }
        let generation = outcome.generation;
        let mut parents = Vec::with_capacity(outcome.parents.len());
        for parent in &outcome.parents {
            for listener in &parent.listeners {
                *attached
                    .entry((parent.parent.clone(), listener.clone()))
                    .or_default() += 1;
            }
            let accepted = match &parent.refusal {
                None if outcome.unsupported.is_empty() => condition(
                    ConditionType::Accepted,
                    true,
                    Reason::Accepted,
                    "attached",
                    generation,
                ),
                None => condition(
                    ConditionType::Accepted,
                    true,
                    Reason::Accepted,
                    format!(
                        "attached; served without the filters portcullis does not support (a request mirror): {}",
                        outcome.unsupported.join(", ")
                    ),
                    generation,
                ),
                Some(refusal) => refused(ConditionType::Accepted, refusal, generation),
            };
            let resolved = match &outcome.unresolved {
                None => condition(
                    ConditionType::ResolvedRefs,
                    true,
                    Reason::ResolvedRefs,
                    "every reference resolved",
                    generation,
                ),
                Some(refusal) => refused(ConditionType::ResolvedRefs, refusal, generation),
            };
            let mut conditions = vec![accepted, resolved];
            if let Some(dropped) = dropped_rules(&outcome.dropped) {
                conditions.push(condition(
                    ConditionType::PartiallyInvalid,
                    true,
                    Reason::UnsupportedValue,
                    &dropped,
                    generation,
                ));
            }
            parents.push(RouteParentStatus {
                parent_ref: ParentRef {
                    group: GROUP,
                    kind: parent.parent.kind.name(),
                    namespace: parent.parent.namespace.to_string(),
                    name: parent.parent.name.to_string(),
                    section_name: parent.section_name.clone(),
                    port: parent.port,
                },
                controller_name: ports.gateway_controller.clone(),
                conditions,
            });
        }
        if !parents.is_empty() {
            report.insert((*route).clone(), ObjectStatus::Route { parents });
        }
    }
    for (policy, gateways) in policy_ancestors {
        if let Some(status) = policy_status(lookups, &policy, &gateways) {
            report.insert(policy, status);
        }
    }
    let port_protocols = lookups.port_protocols();
    let objects = lookups.of_kind(Kind::Gateway);
    let gateways = merged::our_gateways(lookups, objects);
    let mut attached_sets: BTreeSet<ObjectRef> = BTreeSet::new();
    for gateway in &gateways {
        let generation = gateway.gateway.metadata.generation;
        let mut by_owner: BTreeMap<&ObjectRef, Vec<ListenerStatus>> = BTreeMap::new();
        for (index, entry) in gateway.listeners.iter().enumerate() {
            let owner_generation = match entry.owner.kind {
                Kind::ListenerSet => gateway
                    .listener_sets
                    .iter()
                    .find(|(set, _)| *set == entry.owner)
                    .and_then(|(_, set)| set.metadata.generation),
                _ => generation,
            };
            let attached_routes = attached
                .get(&(entry.owner.clone(), entry.listener.name.clone()))
                .copied()
                .unwrap_or(0);
            let frontend = gateway.frontend(index, port_protocols, ports);
            let status = listener_status(
                lookups,
                (&entry.owner, gateway.gateway),
                (&entry.listener, frontend),
                attached_routes,
                owner_generation,
            );
            by_owner.entry(&entry.owner).or_default().push(status);
        }
        let mut accepted_sets = 0;
        for (set_ref, set) in &gateway.listener_sets {
            attached_sets.insert(set_ref.clone());
            let listeners = by_owner.remove(set_ref).unwrap_or_default();
            // As a Gateway's: accepted while a listener is served.
            let all_valid = valid_listeners(&listeners) == listeners.len();
            let valid = served_listeners(&listeners);
            let generation = set.metadata.generation;
            let message = format!(
                "{valid} of {} listeners served, attached to Gateway {}/{}",
                listeners.len(),
                gateway.gateway_ref.namespace,
                gateway.gateway_ref.name
            );
            let (accepted, programmed) = if valid > 0 {
                accepted_sets += 1;
                (
                    condition(
                        ConditionType::Accepted,
                        true,
                        if all_valid {
                            Reason::Accepted
                        } else {
                            Reason::ListenersNotValid
                        },
                        message,
                        generation,
                    ),
                    condition(
                        ConditionType::Programmed,
                        true,
                        Reason::Programmed,
                        "its valid listeners are served",
                        generation,
                    ),
                )
            } else {
                (
                    condition(
                        ConditionType::Accepted,
                        false,
                        Reason::ListenersNotValid,
                        message,
                        generation,
                    ),
                    condition(
                        ConditionType::Programmed,
                        false,
                        Reason::ListenersNotValid,
                        "no listener can be served",
                        generation,
                    ),
                )
            };
            report.insert(
                set_ref.clone(),
                ObjectStatus::ListenerSet {
                    conditions: vec![accepted, programmed],
                    listeners,
                },
            );
        }
        let listeners = by_owner.remove(&gateway.gateway_ref).unwrap_or_default();
        // Accepted and programmed while a listener is served; `ListenersNotValid` as soon
        // as one is not entirely valid (the specification's reason, with `True`, for a
        // Gateway some of whose listeners are refused).
        let all_valid = valid_listeners(&listeners) == listeners.len();
        let programmed = served_listeners(&listeners);
        let valid = programmed > 0;
        let addresses_requested = gateway
            .gateway
            .spec
            .addresses
            .as_ref()
            .is_some_and(|addresses| !addresses.is_empty());
        let conditions = match &gateway.refusal {
            Some(refusal) => vec![
                refused(ConditionType::Accepted, refusal, generation),
                condition(
                    ConditionType::Programmed,
                    false,
                    Reason::Invalid,
                    refusal.message.clone(),
                    generation,
                ),
            ],
            None => vec![
                condition(
                    ConditionType::Accepted,
                    valid,
                    if valid && all_valid {
                        Reason::Accepted
                    } else {
                        Reason::ListenersNotValid
                    },
                    format!("{programmed} of {} listeners served", listeners.len()),
                    generation,
                ),
                programmed_condition(valid, addresses_requested, generation),
            ],
        };
        report.insert(
            gateway.gateway_ref.clone(),
            ObjectStatus::Gateway {
                conditions,
                listeners,
                attached_listener_sets: accepted_sets,
                unread: unread_fields(gateway.gateway),
            },
        );
    }
    // ListenerSets naming a Gateway of ours that does not admit them.
    for object in lookups.of_kind(Kind::ListenerSet) {
        let set_ref = object.object_ref();
        let Some(gateway) = object.parents().into_iter().next() else {
            continue;
        };
        if attached_sets.contains(&set_ref) || !gateways.iter().any(|g| g.gateway_ref == gateway) {
            continue;
        }
        let generation = object.metadata().generation;
        let message = format!(
            "Gateway {}/{} does not admit it: its spec.allowedListeners (from: None unless set) leave out namespace {}; none of its listeners is served",
            gateway.namespace, gateway.name, set_ref.namespace
        );
        report.insert(
            set_ref,
            ObjectStatus::ListenerSet {
                conditions: vec![
                    condition(
                        ConditionType::Accepted,
                        false,
                        Reason::NotAllowed,
                        message.clone(),
                        generation,
                    ),
                    condition(
                        ConditionType::Programmed,
                        false,
                        Reason::NotAllowed,
                        message,
                        generation,
                    ),
                ],
                listeners: Vec::new(),
            },
        );
    }
    report
}

/// The listeners served: accepted and programmed, whatever else they report (a kind
/// of route they refuse, say).
fn served_listeners(listeners: &[ListenerStatus]) -> usize {
    let holds = |listener: &ListenerStatus, kind: ConditionType| {
        listener
            .conditions
            .iter()
            .any(|c| c.kind == kind && c.status == ConditionStatus::True)
    };
    listeners
        .iter()
        .filter(|l| holds(l, ConditionType::Accepted) && holds(l, ConditionType::Programmed))
        .count()
}

/// How many listeners are valid: every condition holds (but `Conflicted`, which holds
/// when something is wrong).
fn valid_listeners(listeners: &[ListenerStatus]) -> usize {
    listeners
        .iter()
        .filter(|l| {
            l.conditions
                .iter()
                .all(|c| c.status == ConditionStatus::True || c.kind == ConditionType::Conflicted)
        })
        .count()
}

/// A BackendTLSPolicy's status: the same conditions for each Gateway (`ancestors`) whose
/// routes use a Service port it targets.
fn policy_status(
    lookups: &mut Recorder<'_>,
    policy: &ObjectRef,
    ancestors: &BTreeSet<ObjectRef>,
) -> Option<ObjectStatus> {
    let Some(Object::BackendTlsPolicy(object)) = lookups.get(policy.clone()) else {
        return None;
    };
    let generation = object.metadata.generation;
    let found = super::backend_tls::conditions(lookups, object);
    let accepted = match &found.refused {
        None => condition(
            ConditionType::Accepted,
            true,
            Reason::Accepted,
            "applied to the connections to the targeted Service's servers",
            generation,
        ),
        Some(refusal) => refused(ConditionType::Accepted, refusal, generation),
    };
    let resolved = match &found.unresolved {
        None => condition(
            ConditionType::ResolvedRefs,
            true,
            Reason::ResolvedRefs,
            "every CA certificate reference resolved",
            generation,
        ),
        Some(refusal) => refused(ConditionType::ResolvedRefs, refusal, generation),
    };
    let ancestors = ancestors
        .iter()
        .map(|gateway| PolicyAncestorStatus {
            ancestor_ref: ParentRef {
                group: GROUP,
                kind: "Gateway",
                namespace: gateway.namespace.to_string(),
                name: gateway.name.to_string(),
                section_name: None,
                port: None,
            },
            controller_name: lookups.listener_ports().gateway_controller.clone(),
            conditions: vec![accepted.clone(), resolved.clone()],
        })
        .collect();
    Some(ObjectStatus::Policy { ancestors })
}

/// `Programmed`: the listeners are served, unless none can be or the Gateway asks for
/// addresses, which portcullis cannot assign (it serves on the addresses its own Service
/// or nodes have, which `status.addresses` gives).
fn programmed_condition(
    valid: bool,
    addresses_requested: bool,
    generation: Option<i64>,
) -> StatusCondition {
    let (reason, message) = match (valid, addresses_requested) {
        (false, _) => (Reason::Invalid, "no listener can be served"),
        (true, true) => (
            Reason::AddressNotAssigned,
            "spec.addresses cannot be assigned: portcullis serves on the addresses of its own Service or nodes (status.addresses); the listeners are served there",
        ),
        (true, false) => (Reason::Programmed, "served by the HTTP and HTTPS frontends"),
    };
    condition(
        ConditionType::Programmed,
        valid && !addresses_requested,
        reason,
        message,
        generation,
    )
}

/// A condition that does not hold, for the reason a refusal gives.
fn refused(kind: ConditionType, refusal: &Refusal, generation: Option<i64>) -> StatusCondition {
    condition(
        kind,
        false,
        refusal.reason,
        refusal.message.clone(),
        generation,
    )
}

/// A listener's status; `owner` is the Gateway or ListenerSet that declares it (its
/// certificate is resolved from there), `gateway_object` the Gateway it is served on.
fn listener_status(
    lookups: &mut Recorder<'_>,
    (owner, gateway_object): (&ObjectRef, &resources::gateway::Gateway),
    (listener, frontend): (&GatewayListeners, Result<model::Frontends, Refusal>),
    attached_routes: u32,
    generation: Option<i64>,
) -> ListenerStatus {
    let conflict = match &frontend {
        Err(refusal)
            if matches!(
                refusal.reason,
                Reason::ProtocolConflict | Reason::HostnameConflict
            ) =>
        {
            Some(refusal.clone())
        }
        _ => None,
    };
    // A client-certificate CA that cannot be used: the specification's `Accepted` `False`
    // (`NoValidCACertificate`); the listener's hosts refuse every request (496).
    let unusable_ca = (listener.protocol == "HTTPS")
        .then(|| super::frontend_tls::client_auth(lookups, gateway_object, listener).err())
        .flatten();
    let accepted = match (&frontend, &unusable_ca) {
        (Ok(_), Some(ca)) => condition(
            ConditionType::Accepted,
            false,
            Reason::NoValidCaCertificate,
            format!(
                "no usable client-certificate CA ({}); every request to this listener's hosts is refused (496)",
                ca.message
            ),
            generation,
        ),
        (Ok(frontends), None) => condition(
            ConditionType::Accepted,
            true,
            Reason::Accepted,
            listener::describe(listener, frontends),
            generation,
        ),
        (Err(refusal), _) => refused(ConditionType::Accepted, refusal, generation),
    };
    let terminates = listener.protocol == "TLS" && !listener::is_passthrough(listener);
    let resolved = if terminates {
        match certificate_refs(lookups, owner, listener) {
            Ok(()) => condition(
                ConditionType::ResolvedRefs,
                true,
                Reason::ResolvedRefs,
                "certificate loaded",
                generation,
            ),
            Err(refusal) => refused(ConditionType::ResolvedRefs, &refusal, generation),
        }
    } else if listener.protocol == "HTTPS" {
        let client_ca = super::frontend_tls::client_auth(lookups, gateway_object, listener);
        match certificate_refs(lookups, owner, listener) {
            Ok(()) => match client_ca {
                Ok(None) => condition(
                    ConditionType::ResolvedRefs,
                    true,
                    Reason::ResolvedRefs,
                    "certificate loaded",
                    generation,
                ),
                Ok(Some(_)) => condition(
                    ConditionType::ResolvedRefs,
                    true,
                    Reason::ResolvedRefs,
                    "certificate and client-certificate CA loaded",
                    generation,
                ),
                Err(refusal) => refused(
                    ConditionType::ResolvedRefs,
                    &Refusal::new(
                        refusal.reason,
                        format!(
                            "{}; every request to this listener's hosts is refused (496) until it is fixed",
                            refusal.message
                        ),
                    ),
                    generation,
                ),
            },
            Err(refusal) => refused(ConditionType::ResolvedRefs, &refusal, generation),
        }
    } else {
        condition(
            ConditionType::ResolvedRefs,
            true,
            Reason::ResolvedRefs,
            "nothing to resolve",
            generation,
        )
    };
    let serves_routes = matches!(listener.protocol.as_str(), "HTTP" | "HTTPS" | "TLS" | "TCP");
    let kinds = listener::route_kinds(listener);
    let supported = kinds.supported();
    let invalid_kinds = kinds.invalid;
    let certificate_ok = resolved.status == ConditionStatus::True;
    let resolved = if certificate_ok && serves_routes && !invalid_kinds.is_empty() {
        condition(
            ConditionType::ResolvedRefs,
            false,
            Reason::InvalidRouteKinds,
            format!(
                "route kinds {} are not served on this listener",
                crate::diagnostic::one_line(&invalid_kinds.join(", "))
            ),
            generation,
        )
    } else {
        resolved
    };
    let programmed =
        accepted.status == ConditionStatus::True && certificate_ok && !supported.is_empty();
    let supported_kinds = supported
        .into_iter()
        .map(|kind| BTreeMap::from([("group", GROUP), ("kind", kind)]))
        .collect();
    ListenerStatus {
        name: listener.name.clone(),
        attached_routes,
        supported_kinds,
        conditions: vec![
            accepted,
            resolved,
            condition(
                ConditionType::Programmed,
                programmed,
                match (&conflict, programmed) {
                    (_, true) => Reason::Programmed,
                    // What keeps it from being served, as the conformance tests read it.
                    (Some(refusal), false) => refusal.reason,
                    (None, false) => Reason::Invalid,
                },
                if programmed { "live" } else { "not served" },
                generation,
            ),
            match conflict {
                Some(refusal) => condition(
                    ConditionType::Conflicted,
                    true,
                    refusal.reason,
                    refusal.message,
                    generation,
                ),
                None => condition(
                    ConditionType::Conflicted,
                    false,
                    Reason::NoConflicts,
                    "no conflict",
                    generation,
                ),
            },
        ],
    }
}

/// Whether an HTTPS listener's certificate reference resolves to a usable TLS Secret
/// that its owner (Gateway or ListenerSet) may use.
fn certificate_refs(
    lookups: &mut Recorder<'_>,
    owner: &ObjectRef,
    listener: &GatewayListeners,
) -> Result<(), Refusal> {
    let id = listener::certificate_ref(listener, owner, |namespace, name| {
        listener::grants(
            lookups.in_namespace(Kind::ReferenceGrant, namespace),
            (owner.kind.name(), &owner.namespace),
            ("", "Secret", name),
        )
    })?;
    crate::tls::load_certificate(lookups, &id)
        .map(drop)
        .map_err(|why| Refusal::new(Reason::InvalidCertificateRef, why))
}

/// The message of a route's `PartiallyInvalid` condition, which the specification starts
/// with "Dropped Rule"; `None` when nothing was left out.
fn dropped_rules(fields: &[String]) -> Option<String> {
    const NAMED: usize = 8;
    let (first, more) = fields.split_first()?;
    let mut message = format!("Dropped Rule(s): {first}");
    for field in more.iter().take(NAMED - 1) {
        message.push_str(", ");
        message.push_str(field);
    }
    if fields.len() > NAMED {
        message.push_str(&format!(" and {} more", fields.len() - NAMED));
    }
    message.push_str(" (invalid; the diagnostics say why; the rest of the route is served)");
    Some(message)
}

/// The fields of a Gateway portcullis does not read, with what that means.
fn unread_fields(gateway: &resources::gateway::Gateway) -> Vec<(String, String)> {
    let client_certificate = gateway
        .spec
        .tls
        .as_ref()
        .and_then(|tls| tls.backend.as_ref())
        .and_then(|backend| backend.client_certificate_ref.as_ref());
    client_certificate
        .map(|_| {
            (
                "spec.tls.backend.clientCertificateRef".to_owned(),
                "not supported: backends see no client certificate from this Gateway's routes"
                    .to_owned(),
            )
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod dropped_tests {
    #[test]
    fn the_partially_invalid_message_starts_as_the_specification_asks_and_stays_short() {
        assert_eq!(super::dropped_rules(&[]), None);
        let one = super::dropped_rules(&["spec.rules[1].matches[0].path".to_owned()]);
        assert_eq!(
            one.as_deref(),
            Some(
                "Dropped Rule(s): spec.rules[1].matches[0].path (invalid; the diagnostics say why; the rest of the route is served)"
            )
        );
        let many: Vec<String> = (0..20).map(|i| format!("spec.rules[{i}]")).collect();
        let message = super::dropped_rules(&many).unwrap_or_default();
        assert!(
            message.starts_with("Dropped Rule(s): spec.rules[0], spec.rules[1],"),
            "{message}"
        );
        assert!(message.contains("spec.rules[7] and 12 more"), "{message}");
    }
}
