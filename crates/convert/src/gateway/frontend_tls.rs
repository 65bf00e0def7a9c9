//! A Gateway's `spec.tls.frontend`: the client-certificate validation of its HTTPS
//! listeners (per port, else the default), as the same client authentication the
//! Ingress `auth-tls-*` keys build.

use model::{CaSource, CertId, ClientAuth, ClientCa, ClientVerify};
use resources::Kind;
use resources::gateway::{
    Gateway, GatewayListeners, GatewayTlsFrontendDefaultValidationMode,
    GatewayTlsFrontendPerPortTlsValidationMode,
};

use crate::lookup::Recorder;
use crate::outcome::{Reason, Refusal};

/// One `caCertificateRefs` entry, whichever of the two generated types held it.
struct CaRef<'a> {
    group: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
}

/// The listener's client authentication: `Ok(None)` when none is asked for, `Err` with
/// the reason when its CA cannot be used (the listener's hosts then refuse every
/// request: see [`refused`]).
pub(crate) fn client_auth(
    lookups: &mut Recorder<'_>,
    gateway: &Gateway,
    listener: &GatewayListeners,
) -> Result<Option<ClientAuth>, Refusal> {
    let Some(frontend) = gateway
        .spec
        .tls
        .as_ref()
        .and_then(|tls| tls.frontend.as_ref())
    else {
        return Ok(None);
    };
    let per_port = frontend
        .per_port
        .iter()
        .flatten()
        .find(|entry| entry.port == listener.port);
    let (refs, insecure_fallback): (Vec<CaRef<'_>>, bool) = match per_port {
        Some(entry) => match &entry.tls.validation {
            None => return Ok(None),
            Some(validation) => (
                validation
                    .ca_certificate_refs
                    .iter()
                    .map(|r| CaRef {
                        group: &r.group,
                        kind: &r.kind,
                        name: &r.name,
                        namespace: r.namespace.as_deref(),
                    })
                    .collect(),
                matches!(
                    validation.mode,
                    Some(GatewayTlsFrontendPerPortTlsValidationMode::AllowInsecureFallback)
                ),
            ),
        },
        None => match &frontend.default.validation {
            None => return Ok(None),
            Some(validation) => (
                validation
                    .ca_certificate_refs
                    .iter()
                    .map(|r| CaRef {
                        group: &r.group,
                        kind: &r.kind,
                        name: &r.name,
                        namespace: r.namespace.as_deref(),
                    })
                    .collect(),
                matches!(
                    validation.mode,
                    Some(GatewayTlsFrontendDefaultValidationMode::AllowInsecureFallback)
                ),
            ),
        },
    };
    let verify = if insecure_fallback {
        ClientVerify::OptionalNoCa
    } else {
        ClientVerify::On
    };
    let gateway_namespace = gateway.metadata.namespace.clone().unwrap_or_default();
    let ca = ca_bundle(lookups, &refs, &gateway_namespace)?;
    Ok(Some(ClientAuth {
        ca: Some(ca),
        verify,
        // AllowValidOnly: no connection without a certificate.
        strict: verify == ClientVerify::On,
        error_page: None,
    }))
}

/// The authentication of a listener whose CA cannot be used: every request refused.
pub(crate) fn refused() -> ClientAuth {
    ClientAuth {
        ca: None,
        verify: ClientVerify::On,
        strict: false,
        error_page: None,
    }
}

/// The one CA ConfigMap or Secret the references name, loaded and checked.
fn ca_bundle(
    lookups: &mut Recorder<'_>,
    refs: &[CaRef<'_>],
    gateway_namespace: &str,
) -> Result<ClientCa, Refusal> {
    let invalid = |message: String| Refusal::new(Reason::InvalidCaCertificateRef, message);
    let [reference] = refs else {
        return Err(invalid(format!(
            "{} caCertificateRefs; exactly one is supported (put every CA in its ca.crt)",
            refs.len()
        )));
    };
    // A ConfigMap's `ca.crt` is the Core form; a Secret's (with an optional `ca.crl`), as
    // the Ingress `auth-tls-secret` uses, is this implementation's.
    let (source, kind) = match (reference.group, reference.kind) {
        ("", "ConfigMap") => (CaSource::ConfigMap, "ConfigMap"),
        ("", "Secret") => (CaSource::Secret, "Secret"),
        (group, kind) => {
            return Err(Refusal::new(
                Reason::InvalidCaCertificateKind,
                format!(
                    "caCertificateRefs of kind {} are not supported; reference a ConfigMap or a Secret holding ca.crt",
                    if group.is_empty() {
                        kind.to_owned()
                    } else {
                        format!("{group}/{kind}")
                    }
                ),
            ));
        }
    };
    let namespace = reference.namespace.unwrap_or(gateway_namespace);
    if namespace != gateway_namespace {
        let granted = super::listener::grants(
            lookups.in_namespace(Kind::ReferenceGrant, namespace),
            ("Gateway", gateway_namespace),
            ("", kind, reference.name),
        );
        if !granted {
            return Err(Refusal::new(
                Reason::RefNotPermitted,
                format!(
                    "no ReferenceGrant in namespace {namespace} allows this Gateway to use {kind} {}",
                    reference.name
                ),
            ));
        }
    }
    let id = CertId {
        namespace: namespace.to_owned(),
        name: reference.name.to_owned(),
    };
    match source {
        CaSource::ConfigMap => crate::client_auth::load_configmap_client_ca(lookups, id),
        CaSource::Secret => crate::client_auth::load_client_ca(lookups, id),
    }
    .map_err(invalid)
}
