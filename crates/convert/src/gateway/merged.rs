//! A Gateway's listeners as the specification merges them: its own, then those of the
//! ListenerSets its `allowedListeners` admit (oldest first, then by namespace and name).
//! Routing, attachment and status all read this one view, so a ListenerSet's listener is
//! served by exactly the code that serves a Gateway's, and the precedence that settles
//! their conflicts is decided once.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use model::{Frontends, HostKey};
use resources::gateway::{Gateway, GatewayAllowedListenersNamespacesFrom, GatewayListeners};
use resources::{Kind, ListenerSet, Object, ObjectRef, ParentRef};

use super::attach;
use super::listener::{self, PortProtocols};
use crate::contribution::MergeOrder;
use crate::diagnostic::one_line;
use crate::lookup::Reader;
use crate::options::ListenerPorts;
use crate::outcome::{Reason, Refusal};

/// One listener of the merged list.
#[derive(Debug, Clone)]
pub(crate) struct MergedListener<'a> {
    /// The listener, as a Gateway's (a ListenerSet's is mapped field for field).
    pub(crate) listener: Cow<'a, GatewayListeners>,
    /// The Gateway or ListenerSet that declares it: its namespace is the one its
    /// `allowedRoutes` (`Same`) and certificate references are read from, and its kind
    /// the one a ReferenceGrant must name.
    pub(crate) owner: ObjectRef,
    /// Why an earlier listener of the merged list takes its place (it has that one's
    /// port, protocol and hostname; or it is a ListenerSet's, on that one's port with
    /// another protocol): it is not served.
    conflict: Option<Refusal>,
}

/// A Gateway of ours with its merged listeners.
#[derive(Debug, Clone)]
pub(crate) struct MergedGateway<'a> {
    pub(crate) gateway: &'a Arc<Gateway>,
    pub(crate) gateway_ref: ObjectRef,
    /// Its own listeners, then the allowed ListenerSets' in their order.
    pub(crate) listeners: Vec<MergedListener<'a>>,
    /// The ListenerSets naming it that its `allowedListeners` admit, in their order.
    pub(crate) listener_sets: Vec<(ObjectRef, &'a ListenerSet)>,
    /// Why the Gateway itself is not accepted (then it has no listener): its
    /// `infrastructure.parametersRef`, which no kind portcullis reads can satisfy.
    pub(crate) refusal: Option<Refusal>,
}

/// Whether a Gateway's class is one of ours.
pub(crate) fn is_ours<'a>(reader: &mut impl Reader<'a>, gateway: &Gateway) -> bool {
    let class = ObjectRef::new(
        Kind::GatewayClass,
        "",
        gateway.spec.gateway_class_name.as_str(),
    );
    // A class whose parameters portcullis cannot read is not accepted (its status says
    // so), and its Gateways are not served.
    let controller = reader.ports().gateway_controller.as_str();
    matches!(
        reader.object(class),
        Some(Object::GatewayClass(class))
            if class.spec.controller_name == controller && class.spec.parameters_ref.is_none()
    )
}

/// The Gateway `gateway_ref` with its merged listeners, if it exists and its class is ours.
pub(crate) fn our_gateway<'a>(
    reader: &mut impl Reader<'a>,
    gateway_ref: &ObjectRef,
) -> Option<MergedGateway<'a>> {
    let Some(Object::Gateway(gateway)) = reader.object(gateway_ref.clone()) else {
        return None;
    };
    if !is_ours(reader, gateway) {
        return None;
    }
    Some(merge(reader, gateway, gateway_ref.clone()))
}

/// Every Gateway of ours, each with its merged listeners.
pub(crate) fn our_gateways<'a>(
    reader: &mut impl Reader<'a>,
    gateways: impl IntoIterator<Item = &'a Object>,
) -> Vec<MergedGateway<'a>> {
    gateways
        .into_iter()
        .filter_map(|object| match object {
            Object::Gateway(gateway) if is_ours(reader, gateway) => {
                Some(merge(reader, gateway, object.object_ref()))
            }
            _ => None,
        })
        .collect()
}

/// The Gateway a ListenerSet names in its `parentRef`, if it is one of ours.
fn parent_gateway_of<'a>(reader: &mut impl Reader<'a>, set: &Object) -> Option<MergedGateway<'a>> {
    let gateway_ref = set.parents().into_iter().next()?;
    our_gateway(reader, &gateway_ref)
}

fn merge<'a>(
    reader: &mut impl Reader<'a>,
    gateway: &'a Arc<Gateway>,
    gateway_ref: ObjectRef,
) -> MergedGateway<'a> {
    // The specification's rule for parameters that cannot be read: the Gateway is not
    // accepted, with `InvalidParameters`. portcullis reads none.
    if let Some(parameters) = gateway
        .spec
        .infrastructure
        .as_ref()
        .and_then(|infrastructure| infrastructure.parameters_ref.as_ref())
    {
        let named = one_line(&format!(
            "{} {} ({})",
            parameters.kind, parameters.name, parameters.group
        ))
        .into_owned();
        return MergedGateway {
            gateway,
            gateway_ref,
            listeners: Vec::new(),
            listener_sets: Vec::new(),
            refusal: Some(Refusal::new(
                Reason::InvalidParameters,
                format!(
                    "infrastructure.parametersRef names {named}, a kind of parameters portcullis does not read; the Gateway is not served"
                ),
            )),
        };
    }
    let mut listeners: Vec<MergedListener<'a>> = gateway
        .spec
        .listeners
        .iter()
        .map(|listener| MergedListener {
            listener: Cow::Borrowed(listener),
            owner: gateway_ref.clone(),
            conflict: None,
        })
        .collect();
    let mut sets: Vec<(MergeOrder, ObjectRef, &'a ListenerSet)> = reader
        .children(Kind::ListenerSet, &gateway_ref)
        .into_iter()
        .filter_map(|object| match object {
            Object::ListenerSet(set) => Some((object.object_ref(), set.as_ref())),
            _ => None,
        })
        .filter(|(set_ref, _)| allows(reader, gateway, &set_ref.namespace))
        .map(|(set_ref, set)| {
            (
                MergeOrder::of(set.metadata.creation_timestamp.as_ref(), &set_ref),
                set_ref,
                set,
            )
        })
        .collect();
    sets.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, set_ref, set) in &sets {
        listeners.extend(set.spec.listeners.iter().map(|listener| MergedListener {
            listener: Cow::Owned(resources::as_gateway_listener(listener)),
            owner: set_ref.clone(),
            conflict: None,
        }));
    }
    let ports = reader.ports();
    settle_conflicts(&mut listeners, ports);
    MergedGateway {
        gateway,
        gateway_ref,
        listeners,
        listener_sets: sets
            .into_iter()
            .map(|(_, set_ref, set)| (set_ref, set))
            .collect(),
        refusal: None,
    }
}

/// Whether a Gateway's `allowedListeners` admit ListenerSets of `namespace` (none unless
/// it says so: `from` defaults to `None`).
fn allows<'a>(reader: &mut impl Reader<'a>, gateway: &Gateway, namespace: &str) -> bool {
    let Some(namespaces) = gateway
        .spec
        .allowed_listeners
        .as_ref()
        .and_then(|allowed| allowed.namespaces.as_ref())
    else {
        return false;
    };
    match namespaces.from {
        None | Some(GatewayAllowedListenersNamespacesFrom::None) => false,
        Some(GatewayAllowedListenersNamespacesFrom::All) => true,
        Some(GatewayAllowedListenersNamespacesFrom::Same) => {
            gateway.metadata.namespace.as_deref() == Some(namespace)
        }
        Some(GatewayAllowedListenersNamespacesFrom::Selector) => {
            let Some(selector) = namespaces.selector.as_ref() else {
                return false;
            };
            let labels = attach::namespace_labels(
                reader.object(ObjectRef::new(Kind::Namespace, "", namespace)),
                namespace,
            );
            attach::selects_labels(
                selector.match_labels.as_ref(),
                selector.match_expressions.iter().flatten().map(|e| {
                    (
                        e.key.as_str(),
                        e.operator.as_str(),
                        e.values.as_deref().unwrap_or_default(),
                    )
                }),
                &labels,
            )
        }
    }
}

/// The precedence the specification gives the merged list: a listener yields to an
/// earlier one with its port, protocol and hostname, and a ListenerSet's listener also
/// to every earlier listener its port cannot be shared with (see [`sharing`]). (The
/// Gateway's own listeners with different protocols on one port all conflict, as
/// listeners of different Gateways do: see [`listener::frontend`].)
fn settle_conflicts(listeners: &mut [MergedListener<'_>], ports: &ListenerPorts) {
    let mut sharings: BTreeMap<i32, BTreeSet<String>> = BTreeMap::new();
    let mut names: HashMap<(i32, String, Option<String>), (ObjectRef, String)> = HashMap::new();
    let earlier = "an earlier listener of the Gateway (its own, or one of a ListenerSet attached before this one)";
    for entry in listeners.iter_mut() {
        let listener = &entry.listener;
        let sharing = sharing(listener, ports);
        let name = (
            listener.port,
            listener.protocol.clone(),
            listener
                .hostname
                .as_deref()
                .filter(|h| !h.is_empty())
                .map(str::to_ascii_lowercase),
        );
        let other_protocol = entry.owner.kind == Kind::ListenerSet
            && sharings
                .get(&listener.port)
                .is_some_and(|seen| seen.iter().any(|other| *other != sharing));
        if other_protocol {
            entry.conflict = Some(Refusal::new(
                Reason::ProtocolConflict,
                format!(
                    "{earlier} uses port {} with another protocol",
                    listener.port
                ),
            ));
        } else if let Some((owner, other)) = names.get(&name) {
            entry.conflict = Some(Refusal::new(
                Reason::HostnameConflict,
                if *owner == entry.owner {
                    format!(
                        "listener {} has the same port, protocol and hostname",
                        one_line(other)
                    )
                } else {
                    format!("{earlier} has the same port, protocol and hostname")
                },
            ));
        } else {
            sharings.entry(listener.port).or_default().insert(sharing);
            names.insert(name, (entry.owner.clone(), listener.name.clone()));
        }
    }
}

/// What listeners on one port must agree on: their protocol (a TLS listener's mode
/// counting, see [`listener::protocol_key`]), except that the HTTPS frontend's port
/// serves HTTPS listeners and TLS passthrough side by side (it reads SNI first).
fn sharing(listener: &GatewayListeners, ports: &ListenerPorts) -> String {
    let key = listener::protocol_key(listener);
    let https_port = listener.port == 443 || u16::try_from(listener.port) == Ok(ports.https);
    if https_port && matches!(key.as_str(), "HTTPS" | "TLS/Passthrough") {
        "HTTPS frontend".to_owned()
    } else {
        key
    }
}

impl<'a> MergedGateway<'a> {
    /// The listeners `parent` declares (the Gateway's own for the Gateway, a ListenerSet's
    /// for it), with their index in the merged list.
    pub(crate) fn declared_by<'s>(
        &'s self,
        parent: &'s ObjectRef,
    ) -> impl Iterator<Item = (usize, &'s MergedListener<'a>)> + 's {
        self.listeners
            .iter()
            .enumerate()
            .filter(move |(_, entry)| entry.owner == *parent)
    }

    /// Whether `set` is attached to the Gateway (its `allowedListeners` admit it).
    pub(crate) fn attaches(&self, set: &ObjectRef) -> bool {
        self.listener_sets
            .iter()
            .any(|(attached, _)| attached == set)
    }

    /// The frontend that serves the listener at `index`: as [`listener::frontend`] says,
    /// unless an earlier listener takes its place (see [`settle_conflicts`]).
    pub(crate) fn frontend(
        &self,
        index: usize,
        port_protocols: &PortProtocols,
        ports: &ListenerPorts,
    ) -> Result<Frontends, Refusal> {
        let Some(entry) = self.listeners.get(index) else {
            return Err(Refusal::new(Reason::UnsupportedValue, "no such listener"));
        };
        if let Some(conflict) = &entry.conflict {
            return Err(conflict.clone());
        }
        let listener = entry.listener.as_ref();
        listener::frontend(listener, port_protocols, ports)
    }

    /// Whether a request for `host` belongs to another listener than the one at `index`:
    /// one on the same port with a more specific hostname that matches it (listener
    /// isolation: a request belongs to the most specific listener only, so a route
    /// attached to a less specific one does not serve it). Listeners of ListenerSets
    /// count as the Gateway's own; one an earlier listener takes the place of does not.
    pub(crate) fn isolated_from(&self, index: usize, host: &HostKey) -> bool {
        let Some(me) = self.listeners.get(index) else {
            return false;
        };
        let rank = |listener: &GatewayListeners| match listener.hostname.as_deref() {
            None | Some("") => 0,
            Some(name) => match name.strip_prefix("*.") {
                Some(suffix) => 1 + suffix.len(),
                None => usize::MAX,
            },
        };
        let my_rank = rank(&me.listener);
        self.listeners
            .iter()
            .enumerate()
            .any(|(other_index, other)| {
                if other_index == index
                    || other.conflict.is_some()
                    || other.listener.port != me.listener.port
                    || rank(&other.listener) <= my_rank
                {
                    return false;
                }
                let Some(name) = other
                    .listener
                    .hostname
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                else {
                    return false;
                };
                match (name.strip_prefix("*."), host) {
                    (None, HostKey::Exact(exact)) => *name == **exact,
                    (Some(suffix), HostKey::Exact(exact)) => exact.ends_with(&format!(".{suffix}")),
                    (Some(suffix), HostKey::Suffix(covered) | HostKey::Wildcard(covered)) => {
                        &**covered == suffix || covered.ends_with(&format!(".{suffix}"))
                    }
                    _ => false,
                }
            })
    }

    /// Whether an earlier listener takes the place of the one at `index` (for
    /// [`PortProtocols`]: such a listener is not served, so it takes no port).
    pub(crate) fn yields(&self, index: usize) -> bool {
        self.listeners
            .get(index)
            .is_some_and(|entry| entry.conflict.is_some())
    }
}

/// What a route's parentRef names, when it is ours: a Gateway of ours, or a ListenerSet
/// whose parent Gateway is ours.
#[derive(Debug)]
pub(crate) struct Parent<'a> {
    /// The Gateway or ListenerSet the parentRef names.
    pub(crate) parent: ObjectRef,
    /// Its Gateway, with the merged listeners.
    pub(crate) gateway: MergedGateway<'a>,
}

impl Parent<'_> {
    /// The parent, for people: `Gateway ns/name` or `ListenerSet ns/name`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {}/{}",
            self.parent.kind.name(),
            self.parent.namespace,
            self.parent.name
        )
    }

    /// Why a parent takes no route: its Gateway is not accepted, or (a ListenerSet) its
    /// Gateway does not admit it.
    pub(crate) fn detached(&self) -> Option<Refusal> {
        if let Some(refusal) = &self.gateway.refusal {
            return Some(Refusal::new(
                Reason::NoMatchingParent,
                format!(
                    "Gateway {}/{} is not accepted ({}), so none of its listeners accepts this route",
                    self.gateway.gateway_ref.namespace,
                    self.gateway.gateway_ref.name,
                    refusal.message
                ),
            ));
        }
        (self.parent.kind == Kind::ListenerSet && !self.gateway.attaches(&self.parent)).then(
            || {
                Refusal::new(
                    Reason::NotAllowedByListeners,
                    format!(
                        "{} is not attached to Gateway {}/{}: the Gateway's allowedListeners do not admit it, so none of its listeners accepts this route",
                        self.describe(),
                        self.gateway.gateway_ref.namespace,
                        self.gateway.gateway_ref.name
                    ),
                )
            },
        )
    }
}

/// The parent a route's parentRef names (its namespace defaulting to the route's), if
/// it is ours.
pub(crate) fn route_parent<'a>(
    reader: &mut impl Reader<'a>,
    parent: &ParentRef<'_>,
    route_namespace: &str,
) -> Option<Parent<'a>> {
    let kind = parent.served_kind()?;
    let parent_ref = ObjectRef::new(
        kind,
        parent.namespace.unwrap_or(route_namespace),
        parent.name,
    );
    let gateway = match kind {
        Kind::ListenerSet => {
            let set = reader.object(parent_ref.clone())?;
            parent_gateway_of(reader, set)?
        }
        _ => our_gateway(reader, &parent_ref)?,
    };
    Some(Parent {
        parent: parent_ref,
        gateway,
    })
}
