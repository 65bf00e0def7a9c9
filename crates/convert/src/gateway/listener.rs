//! What a Gateway listener is, decided once for routing and for status alike: the
//! frontend that serves it, its certificate, and whether a ReferenceGrant allows a
//! reference across namespaces.

use model::{CertId, Frontends, HostKey};
use resources::Object;
use resources::gateway::{GatewayListeners, GatewayListenersTlsMode};

use std::collections::{BTreeMap, BTreeSet};

use resources::{Kind, ObjectRef};

use super::api::GROUP;
use super::merged::{self, MergedGateway, MergedListener};
use crate::contribution::MergeOrder;
use crate::lookup::Unrecorded;
use crate::options::ListenerPorts;
use crate::outcome::{Reason, Refusal};
use index::Snapshot;

/// The protocols the listeners of every Gateway of ours use on each port: one port is one
/// HAProxy frontend, so listeners sharing a port must agree, whichever Gateway they
/// belong to. On a port of its own, the oldest Gateway using it (with its ListenerSets)
/// decides: a newer Gateway's listener of another protocol conflicts and is not served,
/// where the older one's is, so that one Gateway's owner cannot take another's port
/// away (the rule ListenerSets follow within one Gateway).
/// Computed once per conversion from the snapshot and compared by value with the
/// previous one: what looked it up is converted again only when it differs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PortProtocols {
    /// Every protocol used on each port.
    all: BTreeMap<i32, BTreeSet<String>>,
    /// The protocols the oldest Gateway using each port uses there.
    oldest: BTreeMap<i32, BTreeSet<String>>,
}

impl PortProtocols {
    /// Reads every Gateway of a GatewayClass of ours, with the ListenerSets it admits (a
    /// listener an earlier one of its Gateway takes the place of takes no port).
    pub(crate) fn of_our_gateways(snapshot: &Snapshot, ports: &ListenerPorts) -> Self {
        let mut gateways = https_frontend_gateways(snapshot, ports);
        gateways.sort_by_cached_key(|gateway| {
            MergeOrder::of(
                gateway.gateway.metadata.creation_timestamp.as_ref(),
                &gateway.gateway_ref,
            )
        });
        let mut protocols = Self::default();
        for gateway in gateways {
            let mut own: BTreeMap<i32, BTreeSet<String>> = BTreeMap::new();
            for (index, entry) in gateway.listeners.iter().enumerate() {
                if gateway.yields(index) {
                    continue;
                }
                own.entry(entry.listener.port)
                    .or_default()
                    .insert(protocol_key(&entry.listener));
            }
            for (port, used) in own {
                protocols
                    .all
                    .entry(port)
                    .or_default()
                    .extend(used.iter().cloned());
                protocols.oldest.entry(port).or_insert(used);
            }
        }
        protocols
    }

    /// Whether some listener of ours uses `port`.
    pub(crate) fn uses(&self, port: u16) -> bool {
        self.all.contains_key(&i32::from(port))
    }

    /// Whether some listener uses `port` with a protocol other than `protocol` (as
    /// [`protocol_key`] spells it).
    fn conflict(&self, port: i32, protocol: &str) -> bool {
        Self::other_than(&self.all, port, protocol)
    }

    /// Whether a listener of `protocol` on `port`, a port of its own, cannot be served:
    /// the oldest Gateway using the port uses it with another protocol (itself too, when
    /// its own listeners disagree).
    fn conflict_on_own_port(&self, port: i32, protocol: &str) -> bool {
        Self::other_than(&self.oldest, port, protocol)
    }

    fn other_than(protocols: &BTreeMap<i32, BTreeSet<String>>, port: i32, protocol: &str) -> bool {
        protocols
            .get(&port)
            .is_some_and(|protocols| protocols.iter().any(|other| other != protocol))
    }
}

/// A listener's protocol as far as sharing a port goes: a TLS listener's mode counts,
/// since connections passed through and connections terminated cannot share a port of
/// their own.
pub(crate) fn protocol_key(listener: &GatewayListeners) -> String {
    if listener.protocol == "TLS" && passthrough_mode(listener) {
        "TLS/Passthrough".to_owned()
    } else {
        listener.protocol.clone()
    }
}

/// Whether a TLS listener passes connections through (its mode is Passthrough).
pub(crate) fn is_passthrough(listener: &GatewayListeners) -> bool {
    listener.protocol == "TLS" && passthrough_mode(listener)
}

/// Whether a listener's TLS mode is Passthrough.
fn passthrough_mode(listener: &GatewayListeners) -> bool {
    listener
        .tls
        .as_ref()
        .and_then(|tls| tls.mode.as_ref())
        .is_some_and(|mode| matches!(mode, GatewayListenersTlsMode::Passthrough))
}

/// The certificate the HTTPS frontend serves to names no host claims: that of the oldest
/// Gateway of ours (then the first of its merged listeners) with an HTTPS listener on the
/// HTTPS frontend's port that has no hostname, since such a listener matches every name
/// (a client that trusts it gets the 404 for an unknown name, not a certificate error).
/// Computed from the snapshot at each conversion, as [`PortProtocols`]: Gateways are few.
pub(crate) fn catch_all_certificate(
    snapshot: &Snapshot,
    gateways: &[MergedGateway<'_>],
    port_protocols: &PortProtocols,
    ports: &ListenerPorts,
) -> Option<CertId> {
    let mut found = Vec::new();
    for gateway in gateways {
        let order = MergeOrder::of(
            gateway.gateway.metadata.creation_timestamp.as_ref(),
            &gateway.gateway_ref,
        );
        for (index, entry) in https_frontend_listeners(gateway, port_protocols, ports) {
            if entry
                .listener
                .hostname
                .as_deref()
                .is_some_and(|h| !h.is_empty())
            {
                continue;
            }
            let owner = &entry.owner;
            let granted = |secret_namespace: &str, name: &str| {
                grants(
                    snapshot.in_namespace(Kind::ReferenceGrant, secret_namespace),
                    (owner.kind.name(), &owner.namespace),
                    ("", "Secret", name),
                )
            };
            if let Ok(certificate) = certificate_ref(&entry.listener, owner, granted) {
                found.push(((order.clone(), index), certificate));
            }
        }
    }
    found.into_iter().min().map(|(_, certificate)| certificate)
}

/// The host names of the HTTPS listeners on the HTTPS frontend, most specific first
/// (exact names, then wildcards by suffix length), when any listener has one; empty
/// otherwise. A request belongs to the first listener whose name matches its host (or
/// to the hostname-less listeners), and one whose `Host` belongs to another listener
/// than its SNI is misdirected.
pub(crate) fn https_listener_hosts(
    gateways: &[MergedGateway<'_>],
    port_protocols: &PortProtocols,
    ports: &ListenerPorts,
) -> Vec<HostKey> {
    let mut hosts: Vec<HostKey> = gateways
        .iter()
        .flat_map(|gateway| https_frontend_listeners(gateway, port_protocols, ports))
        .filter_map(|(_, entry)| entry.listener.hostname.as_deref())
        .filter(|hostname| !hostname.is_empty())
        .filter_map(|hostname| match crate::names::parse_host(hostname) {
            Ok(HostKey::Wildcard(suffix)) => Some(HostKey::Suffix(suffix)),
            Ok(key) => Some(key),
            Err(_) => None,
        })
        .collect();
    let specificity = |key: &HostKey| match key {
        HostKey::Exact(name) => (0, std::cmp::Reverse(name.len())),
        HostKey::Wildcard(suffix) | HostKey::Suffix(suffix) => (1, std::cmp::Reverse(suffix.len())),
        HostKey::Regex(_) | HostKey::CatchAll => (2, std::cmp::Reverse(0)),
    };
    hosts.sort_by(|a, b| specificity(a).cmp(&specificity(b)).then_with(|| a.cmp(b)));
    hosts.dedup();
    hosts
}

/// The ports of the HTTP (`false`) and HTTPS (`true`) listeners of Gateways of ours
/// served by frontends of their own, whether or not a route attaches to them.
pub(crate) fn own_port_listeners(
    gateways: &[MergedGateway<'_>],
    port_protocols: &PortProtocols,
    ports: &ListenerPorts,
) -> BTreeSet<(u16, bool)> {
    gateways
        .iter()
        .flat_map(|gateway| {
            (0..gateway.listeners.len())
                .filter_map(|index| gateway.frontend(index, port_protocols, ports).ok())
        })
        .flat_map(|frontends| {
            let plain = frontends.ports.into_iter().map(|port| (port, false));
            let tls = frontends.tls_ports.into_iter().map(|port| (port, true));
            plain.chain(tls).collect::<Vec<_>>()
        })
        .collect()
}

/// The Gateways of ours, with their merged listeners, read unrecorded: what the
/// listener functions above read, merged once per conversion.
pub(crate) fn https_frontend_gateways<'a>(
    snapshot: &'a Snapshot,
    ports: &'a ListenerPorts,
) -> Vec<MergedGateway<'a>> {
    let mut reader = Unrecorded { snapshot, ports };
    merged::our_gateways(&mut reader, snapshot.of_kind(Kind::Gateway))
}

/// The accepted HTTPS listeners in Terminate mode of a Gateway of ours (its own and its
/// ListenerSets') that the HTTPS frontend serves, with their index in its merged list.
fn https_frontend_listeners<'g, 'a>(
    gateway: &'g MergedGateway<'a>,
    port_protocols: &'g PortProtocols,
    ports: &'g ListenerPorts,
) -> impl Iterator<Item = (usize, &'g MergedListener<'a>)> + 'g {
    gateway
        .listeners
        .iter()
        .enumerate()
        .filter(move |(index, _)| {
            gateway
                .frontend(*index, port_protocols, ports)
                .is_ok_and(|frontends| frontends.https)
        })
}

/// The route kinds a listener asks for (`allowedRoutes.kinds`), decided once for routing
/// and for status alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RouteKinds {
    /// Whether it takes HTTPRoutes (an HTTP or HTTPS listener that asks for them, or
    /// for no kind in particular).
    pub(crate) http_route: bool,
    /// Whether it takes GRPCRoutes (asked for, or no kinds given).
    pub(crate) grpc_route: bool,
    /// Whether it takes TLSRoutes (a TLS listener that asks for them, or for no kind in
    /// particular).
    pub(crate) tls_route: bool,
    /// Whether it takes TCPRoutes (a TCP listener that asks for them, or for no kind).
    pub(crate) tcp_route: bool,
    /// The kinds it asks for that portcullis does not serve there, as `group/kind`.
    pub(crate) invalid: Vec<String>,
}

impl RouteKinds {
    /// Whether it takes routes of this kind.
    pub(crate) fn takes(&self, kind: Kind) -> bool {
        match kind {
            Kind::HttpRoute => self.http_route,
            Kind::GrpcRoute => self.grpc_route,
            Kind::TlsRoute => self.tls_route,
            Kind::TcpRoute => self.tcp_route,
            _ => false,
        }
    }

    /// The kinds it takes, as `supportedKinds` lists them.
    pub(crate) fn supported(&self) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        if self.http_route {
            kinds.push("HTTPRoute");
        }
        if self.grpc_route {
            kinds.push("GRPCRoute");
        }
        if self.tls_route {
            kinds.push("TLSRoute");
        }
        if self.tcp_route {
            kinds.push("TCPRoute");
        }
        kinds
    }
}

/// The route kinds an HTTP or HTTPS listener serves.
const HTTP_ROUTE_KINDS: [&str; 2] = ["HTTPRoute", "GRPCRoute"];

/// The route kinds a listener asks for; none given means every kind its protocol takes.
pub(crate) fn route_kinds(listener: &GatewayListeners) -> RouteKinds {
    // The kinds a listener of this protocol serves.
    let served: &[&str] = match listener.protocol.as_str() {
        "HTTP" | "HTTPS" => &HTTP_ROUTE_KINDS,
        "TLS" => &["TLSRoute"],
        "TCP" => &["TCPRoute"],
        _ => &[],
    };
    let asked: Vec<(&str, &str)> = listener
        .allowed_routes
        .as_ref()
        .and_then(|allowed| allowed.kinds.as_ref())
        .map(|kinds| {
            kinds
                .iter()
                .map(|k| (k.group.as_deref().unwrap_or(GROUP), k.kind.as_str()))
                .collect()
        })
        .unwrap_or_else(|| served.iter().map(|kind| (GROUP, *kind)).collect());
    let is_served = |kind: &(&str, &str)| kind.0 == GROUP && served.contains(&kind.1);
    let takes = |wanted: &str| served.contains(&wanted) && asked.contains(&(GROUP, wanted));
    RouteKinds {
        http_route: takes("HTTPRoute"),
        grpc_route: takes("GRPCRoute"),
        tls_route: takes("TLSRoute"),
        tcp_route: takes("TCPRoute"),
        invalid: asked
            .iter()
            .filter(|kind| !is_served(kind))
            .map(|(group, kind)| format!("{group}/{kind}"))
            .collect(),
    }
}

/// The frontend that serves a listener. Two listeners (of any Gateway of ours, see
/// [`PortProtocols`]) on one port of their own with different protocols conflict, and
/// neither is served.
pub(crate) fn frontend(
    listener: &GatewayListeners,
    port_protocols: &PortProtocols,
    ports: &ListenerPorts,
) -> Result<Frontends, Refusal> {
    let protocol = listener.protocol.as_str();
    if protocol == "UDP" {
        return Err(Refusal::new(
            Reason::UnsupportedProtocol,
            "protocol UDP is not supported: HAProxy proxies TCP only",
        ));
    }
    if !matches!(protocol, "HTTP" | "HTTPS" | "TLS" | "TCP") {
        return Err(Refusal::new(
            Reason::UnsupportedProtocol,
            format!(
                "protocol {} is not supported",
                crate::diagnostic::one_line(protocol)
            ),
        ));
    }
    let port = u16::try_from(listener.port)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| {
            Refusal::new(
                Reason::PortUnavailable,
                format!("port {} is out of range", listener.port),
            )
        })?;
    if ports.reserved.contains(&port) {
        return Err(Refusal::new(
            Reason::PortUnavailable,
            format!(
                "port {port} is taken by the controller's admin endpoint, or by HAProxy's stats page, exporter, health check or fronting proxy port"
            ),
        ));
    }
    let http_port = port == 80 || port == ports.http;
    let https_port = port == 443 || port == ports.https;
    if !http_port && !https_port && ports.busy.contains(&port) {
        return Err(Refusal::new(
            Reason::PortUnavailable,
            format!("port {port} is in use by another process on this machine"),
        ));
    }
    // On a port of its own, the listeners decide the protocol, and must agree.
    let protocol_key = protocol_key(listener);
    if !http_port
        && !https_port
        && port_protocols.conflict_on_own_port(listener.port, &protocol_key)
    {
        return Err(Refusal::new(
            Reason::ProtocolConflict,
            format!(
                "another listener (of this Gateway, or of an older Gateway of ours) uses port {port} with another protocol"
            ),
        ));
    }
    // The HTTP and HTTPS frontends' protocols are fixed: a listener of the other one
    // there conflicts with the listeners that use it as it is, if any.
    let fixed = |frontend: &str| {
        let reason = if port_protocols.conflict(listener.port, &protocol_key) {
            Reason::ProtocolConflict
        } else {
            Reason::PortUnavailable
        };
        Err(Refusal::new(
            reason,
            format!("port {port} is the {frontend} frontend's"),
        ))
    };
    match protocol {
        "HTTP" if https_port => fixed("HTTPS"),
        "HTTPS" if http_port => fixed("HTTP"),
        "HTTP" if http_port => Ok(Frontends::HTTP),
        "HTTP" => Ok(Frontends::port(port)),
        "TLS" | "TCP" if http_port => fixed("HTTP"),
        "TCP" if https_port => fixed("HTTPS"),
        // A TCP frontend of its own (see `tcp_route`).
        "TCP" => Ok(Frontends::NONE),
        "TLS" if !passthrough_mode(listener) && https_port => Err(Refusal::new(
            Reason::UnsupportedValue,
            format!(
                "a TLS listener in mode Terminate is served on a port of its own, not on the HTTPS frontend's ({}), which serves HTTPS listeners",
                ports.https
            ),
        )),
        // A TCP frontend of its own that terminates TLS (see `tls_route`).
        "TLS" if !passthrough_mode(listener) => Ok(Frontends::NONE),
        // The HTTPS port reads SNI first and passes these names through.
        "TLS" if https_port => Ok(Frontends::NONE),
        "TLS" => Err(Refusal::new(
            Reason::UnsupportedValue,
            format!(
                "TLS passthrough is served on the HTTPS frontend's port ({}) only, not on port {port}",
                ports.https
            ),
        )),
        _ => {
            let terminate = listener
                .tls
                .as_ref()
                .and_then(|tls| tls.mode.as_ref())
                .is_none_or(|mode| matches!(mode, GatewayListenersTlsMode::Terminate));
            if !terminate {
                return Err(Refusal::new(
                    Reason::UnsupportedValue,
                    "an HTTPS listener terminates TLS (mode Terminate); TLS passthrough is a listener of protocol TLS with TLSRoutes".to_owned(),
                ));
            }
            Ok(if https_port {
                Frontends::HTTPS
            } else {
                Frontends::tls_port(port)
            })
        }
    }
}

/// What a frontend serving a listener is, for people.
pub(crate) fn describe(listener: &GatewayListeners, listeners: &Frontends) -> String {
    if listener.protocol == "TCP" {
        format!(
            "served by a TCP frontend of its own on port {}",
            listener.port
        )
    } else if listener.protocol == "TLS" && !passthrough_mode(listener) {
        format!(
            "TLS terminated by a TCP frontend of its own on port {}",
            listener.port
        )
    } else if *listeners == Frontends::NONE {
        "its TLS connections are passed through untouched by SNI on the HTTPS port".to_owned()
    } else if listeners.http {
        "served by the HTTP frontend".to_owned()
    } else if listeners.https {
        "served by the HTTPS frontend".to_owned()
    } else {
        let port = listeners
            .ports
            .iter()
            .chain(&listeners.tls_ports)
            .next()
            .copied()
            .unwrap_or_default();
        format!("served by a frontend of its own on port {port}")
    }
}

/// The Secret an HTTPS (or TLS Terminate) listener names, relative to its `owner` (the
/// Gateway or ListenerSet that declares it). `granted(namespace, name)` says whether a
/// ReferenceGrant lets the owner use a Secret in another namespace.
pub(crate) fn certificate_ref(
    listener: &GatewayListeners,
    owner: &ObjectRef,
    granted: impl FnOnce(&str, &str) -> bool,
) -> Result<CertId, Refusal> {
    let Some(reference) = listener
        .tls
        .as_ref()
        .and_then(|tls| tls.certificate_refs.as_ref())
        .and_then(|refs| refs.first())
    else {
        return Err(Refusal::new(
            Reason::InvalidCertificateRef,
            "an HTTPS listener needs a certificateRef".to_owned(),
        ));
    };
    if reference.group.as_deref().is_some_and(|g| !g.is_empty())
        || reference.kind.as_deref().unwrap_or("Secret") != "Secret"
    {
        return Err(Refusal::new(
            Reason::InvalidCertificateRef,
            "only Secrets can hold certificates".to_owned(),
        ));
    }
    let namespace = reference
        .namespace
        .clone()
        .unwrap_or_else(|| owner.namespace.to_string());
    if namespace != owner.namespace && !granted(&namespace, &reference.name) {
        return Err(Refusal::new(
            Reason::RefNotPermitted,
            format!(
                "no ReferenceGrant in namespace {namespace} allows this {} to use Secret {}",
                owner.kind.name(),
                reference.name
            ),
        ));
    }
    Ok(CertId {
        namespace,
        name: reference.name.clone(),
    })
}

/// Whether one of `grants` (the ReferenceGrants of the target's namespace) lets `from`
/// (kind, namespace) refer to `to` (group, kind, name).
pub(crate) fn grants<'a>(
    grants: impl IntoIterator<Item = &'a Object>,
    from: (&str, &str),
    to: (&str, &str, &str),
) -> bool {
    grants.into_iter().any(|object| {
        let Object::ReferenceGrant(grant) = object else {
            return false;
        };
        let from_ok = grant
            .spec
            .from
            .iter()
            .any(|f| f.group == GROUP && f.kind == from.0 && f.namespace == from.1);
        let to_ok = grant.spec.to.iter().any(|t| {
            t.group == to.0 && t.kind == to.1 && t.name.as_deref().is_none_or(|name| name == to.2)
        });
        from_ok && to_ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(protocol: &str, port: i32) -> GatewayListeners {
        GatewayListeners {
            name: format!("{protocol}-{port}"),
            protocol: protocol.to_owned(),
            port,
            ..GatewayListeners::default()
        }
    }

    #[test]
    fn listener_ports_are_compared_with_the_configured_ones_and_each_other() {
        let ports = ListenerPorts {
            http: 8080,
            https: 8443,
            reserved: vec![10254],
            busy: BTreeSet::from([9100]),
            ..ListenerPorts::default()
        };
        let protocols = |listeners: &[GatewayListeners]| {
            let mut protocols = PortProtocols::default();
            for listener in listeners {
                for map in [&mut protocols.all, &mut protocols.oldest] {
                    map.entry(listener.port)
                        .or_default()
                        .insert(protocol_key(listener));
                }
            }
            protocols
        };
        let served =
            |l: &GatewayListeners| frontend(l, &protocols(std::slice::from_ref(l)), &ports);
        assert_eq!(served(&listener("HTTP", 8080)), Ok(Frontends::HTTP));
        assert_eq!(served(&listener("HTTP", 80)), Ok(Frontends::HTTP));
        assert_eq!(served(&listener("HTTPS", 8443)), Ok(Frontends::HTTPS));
        assert_eq!(served(&listener("HTTP", 9000)), Ok(Frontends::port(9000)));
        for refused in [
            listener("HTTP", 8443),
            listener("HTTPS", 8080),
            listener("HTTP", 10254),
            listener("HTTP", 0),
            listener("HTTP", 70000),
            listener("HTTP", 9100),
        ] {
            assert_eq!(
                served(&refused).map_err(|refusal| refusal.reason),
                Err(Reason::PortUnavailable),
                "{refused:?}"
            );
        }
        let pair = [listener("HTTP", 9000), listener("HTTPS", 9000)];
        for one in &pair {
            assert_eq!(
                frontend(one, &protocols(&pair), &ports).map_err(|refusal| refusal.reason),
                Err(Reason::ProtocolConflict)
            );
        }
    }
}
