//! What a Gateway listener is, decided once for routing and for status alike: the
//! frontend that serves it, its certificate, and whether a ReferenceGrant allows a
//! reference across namespaces.

use model::{CertId, Listeners};
use resources::Object;
use resources::gateway::{GatewayListeners, GatewayListenersTlsMode};

use crate::gateway::GROUP;

/// Why a listener or reference cannot be served: a status reason, and a message.
pub(crate) type Refusal = (&'static str, String);

/// The frontend that serves a listener.
pub(crate) fn frontend(listener: &GatewayListeners) -> Result<Listeners, Refusal> {
    let protocol = listener.protocol.as_str();
    if !matches!(protocol, "HTTP" | "HTTPS") {
        return Err((
            "UnsupportedProtocol",
            format!("protocol {protocol} is not supported"),
        ));
    }
    let port = u16::try_from(listener.port)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| {
            (
                "PortUnavailable",
                format!("port {} is out of range", listener.port),
            )
        })?;
    match (protocol, port) {
        ("HTTP", 443) | ("HTTPS", 80) => Err((
            "PortUnavailable",
            format!("port {port} belongs to the other protocol's frontend"),
        )),
        ("HTTP", 80) => Ok(Listeners::HTTP),
        ("HTTP", port) => Ok(Listeners::port(port)),
        (_, port) => {
            let terminate = listener
                .tls
                .as_ref()
                .and_then(|tls| tls.mode.as_ref())
                .is_none_or(|mode| matches!(mode, GatewayListenersTlsMode::Terminate));
            if !terminate {
                return Err((
                    "UnsupportedValue",
                    "only TLS mode Terminate is supported".to_owned(),
                ));
            }
            Ok(if port == 443 {
                Listeners::HTTPS
            } else {
                Listeners::tls_port(port)
            })
        }
    }
}

/// What a frontend serving a listener is, for people.
pub(crate) fn describe(listeners: &Listeners) -> String {
    if listeners.http {
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

/// The Secret an HTTPS listener names. `granted(namespace, name)` says whether a
/// ReferenceGrant lets the Gateway use a Secret in another namespace.
pub(crate) fn certificate_ref(
    listener: &GatewayListeners,
    gateway_namespace: &str,
    granted: impl FnOnce(&str, &str) -> bool,
) -> Result<CertId, Refusal> {
    let Some(reference) = listener
        .tls
        .as_ref()
        .and_then(|tls| tls.certificate_refs.as_ref())
        .and_then(|refs| refs.first())
    else {
        return Err((
            "InvalidCertificateRef",
            "an HTTPS listener needs a certificateRef".to_owned(),
        ));
    };
    if reference.group.as_deref().is_some_and(|g| !g.is_empty())
        || reference.kind.as_deref().unwrap_or("Secret") != "Secret"
    {
        return Err((
            "InvalidCertificateRef",
            "only Secrets can hold certificates".to_owned(),
        ));
    }
    let namespace = reference
        .namespace
        .clone()
        .unwrap_or_else(|| gateway_namespace.to_owned());
    if namespace != gateway_namespace && !granted(&namespace, &reference.name) {
        return Err((
            "RefNotPermitted",
            format!(
                "no ReferenceGrant in namespace {namespace} allows this Gateway to use Secret {}",
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
