//! Gateway API status, as the specification defines it: GatewayClass `Accepted`;
//! Gateway `Accepted` and `Programmed` with per-listener conditions and
//! `attachedRoutes`; HTTPRoute per-parent `Accepted` and `ResolvedRefs`. Computed from
//! the snapshot and the routes' memoized conversions, so it always agrees with what is
//! served.

use std::collections::BTreeMap;

use index::Snapshot;
use resources::gateway::GatewayListeners;
use resources::{Kind, Object, ObjectRef};
use serde::Serialize;

use crate::gateway::{GATEWAY_CONTROLLER, GROUP};
use crate::gateway_listener;

/// One status condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCondition {
    /// `Accepted`, `Programmed`, `ResolvedRefs`, `Conflicted`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `True` or `False`.
    pub status: &'static str,
    /// The specification's reason.
    pub reason: String,
    /// For people.
    pub message: String,
    /// The generation the condition was computed for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn condition(
    kind: &'static str,
    ok: bool,
    reason: &str,
    message: impl Into<String>,
    generation: Option<i64>,
) -> StatusCondition {
    StatusCondition {
        kind,
        status: if ok { "True" } else { "False" },
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation: generation,
    }
}

/// Why a route did or did not attach to one parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParentOutcome {
    pub(crate) gateway: ObjectRef,
    pub(crate) section_name: Option<String>,
    pub(crate) port: Option<i32>,
    /// Listeners the route attached to (by name); empty: not attached.
    pub(crate) listeners: Vec<String>,
    /// When not attached: the reason and message.
    pub(crate) refusal: Option<(&'static str, String)>,
}

/// What status needs from a route's conversion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RouteOutcome {
    pub(crate) parents: Vec<ParentOutcome>,
    /// The first unresolved reference: reason and message.
    pub(crate) unresolved: Option<(&'static str, String)>,
}

/// One parent's status of a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteParentStatus {
    /// The parentRef, resolved.
    pub parent_ref: ParentRef,
    /// Always ours.
    pub controller_name: &'static str,
    /// `Accepted` and `ResolvedRefs`.
    pub conditions: Vec<StatusCondition>,
}

/// A parentRef as written back in status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentRef {
    /// `gateway.networking.k8s.io`.
    pub group: &'static str,
    /// `Gateway`.
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
        /// Per listener.
        listeners: Vec<ListenerStatus>,
    },
    /// An HTTPRoute's.
    Route {
        /// Per parent of ours.
        parents: Vec<RouteParentStatus>,
    },
}

/// The status of every Gateway API object of ours, by object.
pub type StatusReport = BTreeMap<ObjectRef, ObjectStatus>;

/// Computes every status. `routes` are the HTTPRoutes' outcomes, by route.
pub(crate) fn report(
    snapshot: &Snapshot,
    routes: &BTreeMap<ObjectRef, RouteOutcome>,
    ports: &gateway_listener::ListenerPorts,
) -> StatusReport {
    let mut report = StatusReport::new();
    let mut ours = Vec::new();
    for object in snapshot.of_kind(Kind::GatewayClass) {
        let Object::GatewayClass(class) = object else {
            continue;
        };
        if class.spec.controller_name != GATEWAY_CONTROLLER {
            continue;
        }
        let name = class.metadata.name.clone().unwrap_or_default();
        ours.push(name);
        report.insert(
            object.object_ref(),
            ObjectStatus::Class {
                conditions: vec![condition(
                    "Accepted",
                    true,
                    "Accepted",
                    "served by portcullis",
                    class.metadata.generation,
                )],
            },
        );
    }
    let mut attached: BTreeMap<(ObjectRef, String), u32> = BTreeMap::new();
    for (route, outcome) in routes {
        let generation = snapshot.get(route).and_then(|o| o.metadata().generation);
        let mut parents = Vec::new();
        for parent in &outcome.parents {
            for listener in &parent.listeners {
                *attached
                    .entry((parent.gateway.clone(), listener.clone()))
                    .or_default() += 1;
            }
            let accepted = match &parent.refusal {
                None => condition("Accepted", true, "Accepted", "attached", generation),
                Some((reason, message)) => {
                    condition("Accepted", false, reason, message.clone(), generation)
                }
            };
            let resolved = match &outcome.unresolved {
                None => condition(
                    "ResolvedRefs",
                    true,
                    "ResolvedRefs",
                    "every reference resolved",
                    generation,
                ),
                Some((reason, message)) => {
                    condition("ResolvedRefs", false, reason, message.clone(), generation)
                }
            };
            parents.push(RouteParentStatus {
                parent_ref: ParentRef {
                    group: GROUP,
                    kind: "Gateway",
                    namespace: parent.gateway.namespace.clone(),
                    name: parent.gateway.name.clone(),
                    section_name: parent.section_name.clone(),
                    port: parent.port,
                },
                controller_name: GATEWAY_CONTROLLER,
                conditions: vec![accepted, resolved],
            });
        }
        if !parents.is_empty() {
            report.insert(route.clone(), ObjectStatus::Route { parents });
        }
    }
    for object in snapshot.of_kind(Kind::Gateway) {
        let Object::Gateway(gateway) = object else {
            continue;
        };
        if !ours.contains(&gateway.spec.gateway_class_name) {
            continue;
        }
        let gateway_ref = object.object_ref();
        let generation = gateway.metadata.generation;
        let listeners: Vec<ListenerStatus> = gateway
            .spec
            .listeners
            .iter()
            .map(|listener| {
                let attached_routes = attached
                    .get(&(gateway_ref.clone(), listener.name.clone()))
                    .copied()
                    .unwrap_or(0);
                listener_status(
                    snapshot,
                    &gateway_ref,
                    (listener, &gateway.spec.listeners, ports),
                    attached_routes,
                    generation,
                )
            })
            .collect();
        let programmed = listeners
            .iter()
            .filter(|l| {
                l.conditions
                    .iter()
                    .all(|c| c.status == "True" || c.kind == "Conflicted")
            })
            .count();
        let valid = programmed > 0;
        let conditions = vec![
            condition(
                "Accepted",
                valid,
                if valid {
                    "Accepted"
                } else {
                    "ListenersNotValid"
                },
                format!("{programmed} of {} listeners valid", listeners.len()),
                generation,
            ),
            condition(
                "Programmed",
                valid,
                if valid { "Programmed" } else { "Invalid" },
                if valid {
                    "served by the HTTP and HTTPS frontends"
                } else {
                    "no listener can be served"
                },
                generation,
            ),
        ];
        report.insert(
            gateway_ref,
            ObjectStatus::Gateway {
                conditions,
                listeners,
            },
        );
    }
    report
}

fn listener_status(
    snapshot: &Snapshot,
    gateway: &ObjectRef,
    (listener, siblings, ports): (
        &GatewayListeners,
        &[GatewayListeners],
        &gateway_listener::ListenerPorts,
    ),
    attached_routes: u32,
    generation: Option<i64>,
) -> ListenerStatus {
    let frontend = gateway_listener::frontend(listener, siblings, ports);
    let conflicted = matches!(&frontend, Err((reason, _)) if *reason == "ProtocolConflict");
    let (accepted, accepted_reason, accepted_message) = match &frontend {
        Ok(listeners) => (true, "Accepted", gateway_listener::describe(listeners)),
        Err((reason, message)) => (false, *reason, message.clone()),
    };
    let (resolved, resolved_reason, resolved_message) = if listener.protocol == "HTTPS" {
        certificate_refs(snapshot, gateway, listener)
    } else {
        (true, "ResolvedRefs", String::from("nothing to resolve"))
    };
    let programmed = accepted && resolved;
    let supported_kinds = if matches!(listener.protocol.as_str(), "HTTP" | "HTTPS") {
        vec![BTreeMap::from([("group", GROUP), ("kind", "HTTPRoute")])]
    } else {
        Vec::new()
    };
    ListenerStatus {
        name: listener.name.clone(),
        attached_routes,
        supported_kinds,
        conditions: vec![
            condition(
                "Accepted",
                accepted,
                accepted_reason,
                accepted_message,
                generation,
            ),
            condition(
                "ResolvedRefs",
                resolved,
                resolved_reason,
                resolved_message,
                generation,
            ),
            condition(
                "Programmed",
                programmed,
                if programmed { "Programmed" } else { "Invalid" },
                if programmed { "live" } else { "not served" },
                generation,
            ),
            condition(
                "Conflicted",
                conflicted,
                if conflicted {
                    "ProtocolConflict"
                } else {
                    "NoConflicts"
                },
                if conflicted {
                    "another listener uses this port with another protocol"
                } else {
                    "no conflict"
                },
                generation,
            ),
        ],
    }
}

/// Whether an HTTPS listener's certificate reference resolves to a usable TLS Secret.
fn certificate_refs(
    snapshot: &Snapshot,
    gateway: &ObjectRef,
    listener: &GatewayListeners,
) -> (bool, &'static str, String) {
    let reference =
        gateway_listener::certificate_ref(listener, &gateway.namespace, |namespace, name| {
            gateway_listener::grants(
                snapshot.in_namespace(Kind::ReferenceGrant, namespace),
                ("Gateway", &gateway.namespace),
                ("", "Secret", name),
            )
        });
    match reference.and_then(|id| {
        crate::tls::load_certificate(snapshot, &id.namespace, &id.name)
            .map_err(|why| ("InvalidCertificateRef", why))
    }) {
        Ok(_) => (true, "ResolvedRefs", "certificate loaded".to_owned()),
        Err((reason, message)) => (false, reason, message),
    }
}
