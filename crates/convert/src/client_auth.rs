//! An Ingress's client-certificate authentication (`auth-tls-*`) for its TLS hosts: the
//! CA Secret read and checked, or the reason it cannot be, which then refuses the hosts'
//! requests rather than serving them unauthenticated.

use model::{ClientAuth, ClientCa, ClientVerify, PathChange, Redirect};
use resources::ObjectRef;

use crate::backend_settings::{load_ca_bundle, secret_id};
use crate::keys::{self, Keys, SecretName, VerifyClient};
use crate::lookup::Recorder;
use crate::tls::{encode_pem, pem_blocks, secret_fields};

/// The hosts' client authentication, `None` when none is asked for; `Err` carries the
/// problem to report (with the authentication, fail-closed, still returned).
pub(crate) fn client_auth(
    lookups: &mut Recorder<'_>,
    keys: &Keys<'_>,
    ingress: &ObjectRef,
) -> (Option<ClientAuth>, Option<String>) {
    let Some(secret) = asked_secret(keys) else {
        return (None, None);
    };
    let verify = match keys.get(&keys::AUTH_TLS_VERIFY_CLIENT) {
        Some(VerifyClient::Off) => return (None, None),
        Some(VerifyClient::Verify(verify)) => verify,
        None => ClientVerify::On,
    };
    let loaded =
        secret.map(|secret| secret_id(&secret, ingress).and_then(|id| load_client_ca(lookups, id)));
    let (ca, problem) = match loaded {
        Some(Ok(ca)) => (Some(ca), None),
        // Reported with the key.
        None => (None, None),
        Some(Err(why)) => (
            None,
            Some(format!(
                "{why}; requests to the Ingress's TLS hosts are answered 496 until it is fixed"
            )),
        ),
    };
    let auth = ClientAuth {
        ca,
        verify,
        strict: keys.get(&keys::AUTH_TLS_STRICT) && verify == ClientVerify::On,
        error_page: keys.get(&keys::AUTH_TLS_ERROR_PAGE).map(|page| url(&page)),
    };
    (Some(auth), problem)
}

/// The CA a TCP service port checks client certificates against (`auth-tls-secret`):
/// `None` without the key (or with `auth-tls-verify-client: off`), else the CA or why it
/// does not load. A TCP connection has no answer for a client without a certificate, so
/// the port always requires one.
pub(crate) fn tcp_client_ca(
    lookups: &mut Recorder<'_>,
    keys: &Keys<'_>,
    ingress: &ObjectRef,
) -> Option<Result<ClientCa, String>> {
    let secret = asked_secret(keys)?;
    if matches!(
        keys.get(&keys::AUTH_TLS_VERIFY_CLIENT),
        Some(VerifyClient::Off)
    ) {
        return None;
    }
    Some(match secret {
        Some(secret) => secret_id(&secret, ingress).and_then(|id| load_client_ca(lookups, id)),
        // As for a host: refused, not served without the certificate asked for.
        None => Err("its value is invalid".to_owned()),
    })
}

/// The Secret `auth-tls-secret` names: `None` when no layer sets it, `Some(None)` when
/// the most specific layer that sets it holds a value that is not a Secret name. That
/// asks for authentication as surely as an unusable Secret does: falling back to a wider
/// layer's value (none, usually) would serve clients without the certificate asked for.
fn asked_secret(keys: &Keys<'_>) -> Option<Option<SecretName>> {
    if keys.set_invalidly(&keys::AUTH_TLS_SECRET) {
        return Some(None);
    }
    keys.get(&keys::AUTH_TLS_SECRET).map(Some)
}

/// `ca.crt` (every certificate a CA) and the optional `ca.crl`.
pub(crate) fn load_client_ca(
    lookups: &mut Recorder<'_>,
    id: model::CertId,
) -> Result<ClientCa, String> {
    let bundle = load_ca_bundle(lookups, id.clone())?;
    let (namespace, name) = (&id.namespace, &id.name);
    only_authorities(&bundle.pem, &format!("secret {namespace}/{name}"))?;
    let fields = secret_fields(lookups, &id)?;
    let crl = match fields.get("ca.crl").filter(|v| !v.is_empty()) {
        None => None,
        Some(bytes) => {
            let blocks = pem_blocks(bytes)
                .map_err(|e| format!("secret {namespace}/{name}: ca.crl is not PEM: {e}"))?;
            if blocks.is_empty() || blocks.iter().any(|b| b.label != "X509 CRL") {
                return Err(format!(
                    "secret {namespace}/{name}: ca.crl must hold only X509 CRL blocks"
                ));
            }
            let mut pem = String::new();
            for block in &blocks {
                x509_parser::parse_x509_crl(&block.contents).map_err(|e| {
                    format!("secret {namespace}/{name}: ca.crl is not a valid CRL: {e}")
                })?;
                pem.push_str(&encode_pem(&block.label, &block.contents));
            }
            Some(pem)
        }
    };
    Ok(ClientCa {
        secret: id,
        source: model::CaSource::Secret,
        ca: bundle.pem,
        crl,
    })
}

/// The `ca.crt` of a ConfigMap (a Gateway's `frontendValidation`): every certificate a
/// CA; a ConfigMap holds no revocation list.
pub(crate) fn load_configmap_client_ca(
    lookups: &mut Recorder<'_>,
    id: model::CertId,
) -> Result<ClientCa, String> {
    let pem = crate::gateway::backend_tls::configmap_ca(lookups, &id.namespace, &id.name)?;
    only_authorities(&pem, &format!("ConfigMap {}/{}", id.namespace, id.name))?;
    Ok(ClientCa {
        secret: id,
        source: model::CaSource::ConfigMap,
        ca: pem,
        crl: None,
    })
}

/// Every certificate of a checked PEM bundle is a CA; `object` names where it came from.
fn only_authorities(pem: &str, object: &str) -> Result<(), String> {
    for block in pem_blocks(pem.as_bytes())? {
        let certificate = block
            .parse_x509()
            .map_err(|e| format!("{object}: ca.crt: {e}"))?;
        if !certificate.is_ca() {
            return Err(format!(
                "{object}: ca.crt holds a certificate that is not a CA ({})",
                certificate.subject()
            ));
        }
    }
    Ok(())
}

/// A checked redirect target as its URL.
fn url(page: &Redirect) -> String {
    let mut url = format!(
        "{}://{}",
        page.scheme.as_deref().unwrap_or("https"),
        page.hostname.as_deref().unwrap_or_default()
    );
    if let Some(port) = page.port {
        url.push_str(&format!(":{port}"));
    }
    match &page.path {
        Some(PathChange::Full(path)) => url.push_str(path),
        _ => url.push('/'),
    }
    url
}
