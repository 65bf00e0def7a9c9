//! A backend's server settings from its keys and its Service port: protocol, TLS (with
//! the Secrets it names), limits, health checks and timeouts.

use model::{
    BackendTimeouts, BackendTls, CertId, HealthCheck, Protocol, SecretPem, ServerOptions, Sni,
    TlsVerify,
};
use resources::ObjectRef;

use crate::diagnostic::Diagnostic;
use crate::keys::{self, BackendProtocol, Keys, SecretName, SniSetting};
use crate::lookup::Recorder;
use crate::tls::{encode_pem, load_certificate, pem_blocks, secret_fields};

/// A backend's server settings, or why its servers must be withheld: TLS that asks for
/// verification it cannot have is not downgraded to no verification.
pub(crate) fn server_options(
    lookups: &mut Recorder<'_>,
    keys: &Keys<'_>,
    service: &ObjectRef,
    app_protocol: Option<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<ServerOptions, ()> {
    let BackendProtocol { protocol, tls } = keys
        .explicit(&keys::BACKEND_PROTOCOL)
        .or_else(|| app_protocol.and_then(from_app_protocol))
        .unwrap_or_else(|| keys.get(&keys::BACKEND_PROTOCOL));
    let tls = if tls || keys.get(&keys::SECURE_BACKENDS) {
        Some(backend_tls(lookups, keys, service, diagnostics)?)
    } else {
        None
    };
    let health = HealthCheck {
        // The deprecated name counts only where the current one is not set.
        interval: keys
            .explicit(&keys::HEALTH_CHECK_INTERVAL)
            .or_else(|| keys.explicit(&keys::BACKEND_CHECK_INTERVAL))
            .unwrap_or_else(|| keys.get(&keys::HEALTH_CHECK_INTERVAL)),
        rise: keys.get(&keys::HEALTH_CHECK_RISE_COUNT),
        fall: keys.get(&keys::HEALTH_CHECK_FALL_COUNT),
        port: keys.get(&keys::HEALTH_CHECK_PORT),
        addr: keys.get(&keys::HEALTH_CHECK_ADDR),
        uri: keys.get(&keys::HEALTH_CHECK_URI),
    };
    Ok(ServerOptions {
        protocol,
        tls,
        maxconn: keys.get(&keys::MAXCONN_SERVER),
        maxqueue: keys.get(&keys::MAXQUEUE_SERVER),
        slowstart: keys.get(&keys::SLOW_START),
        health: Some(health),
        send_proxy: keys.get(&keys::PROXY_PROTOCOL),
        cookie: crate::affinity::cookie_affinity(keys, service, diagnostics),
    })
}

/// The per-client limits of a backend.
pub(crate) fn client_limits(keys: &Keys<'_>) -> model::ClientLimits {
    model::ClientLimits {
        rps: keys.get(&keys::LIMIT_RPS),
        connections: keys.get(&keys::LIMIT_CONNECTIONS),
        exempt: keys.get(&keys::LIMIT_WHITELIST),
        rps_status: keys.get(&keys::LIMIT_REQ_STATUS_CODE),
        connections_status: keys.get(&keys::LIMIT_CONN_STATUS_CODE),
    }
}

/// The timeouts a backend section sets: queue, tunnel and server-fin (the `defaults`
/// section has none of them).
pub(crate) fn timeouts(keys: &Keys<'_>) -> BackendTimeouts {
    BackendTimeouts {
        queue: Some(keys.get(&keys::TIMEOUT_QUEUE)),
        tunnel: Some(keys.get(&keys::TIMEOUT_TUNNEL)),
        server_fin: Some(keys.get(&keys::TIMEOUT_SERVER_FIN)),
    }
}

/// The error pages a backend section sets: only those an annotation gives it, since the
/// `defaults` section holds the ConfigMap's.
pub(crate) fn error_pages(keys: &Keys<'_>) -> std::collections::BTreeMap<u16, model::ErrorPage> {
    keys::HTTP_RESPONSE_KEYS
        .iter()
        .filter(|(_, key)| key.scope == keys::Scope::Backend)
        .filter_map(|(code, key)| Some((*code, keys.annotated(*key)??)))
        .collect()
}

/// The protocol a Service port's `appProtocol` names, if it names one portcullis speaks.
fn from_app_protocol(app_protocol: &str) -> Option<BackendProtocol> {
    let (protocol, tls) = match app_protocol {
        "kubernetes.io/h2c" => (Protocol::Http2, false),
        "http" | "kubernetes.io/ws" => (Protocol::Http1, false),
        "https" | "kubernetes.io/wss" => (Protocol::Http1, true),
        _ => return None,
    };
    Some(BackendProtocol { protocol, tls })
}

fn backend_tls(
    lookups: &mut Recorder<'_>,
    keys: &Keys<'_>,
    service: &ObjectRef,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<BackendTls, ()> {
    // Said on the object that sets the key (an Ingress or the Service), where its owner
    // looks; the Service when the global ConfigMap sets it for every backend.
    let mut report = |key: &'static str, message: String| {
        let (object, field) = keys
            .set_at(key)
            .unwrap_or_else(|| (service.clone(), key.to_owned()));
        diagnostics.push(Diagnostic {
            object,
            field,
            message,
        });
    };
    // A value that is not a Secret name asks for verification as surely as an unusable
    // Secret: falling back to a wider layer's value (none, usually) would send the
    // traffic to servers nothing verified. The key's own report says so.
    if keys.set_invalidly(&keys::SECURE_VERIFY_CA_SECRET) {
        return Err(());
    }
    let verify = match keys.get(&keys::SECURE_VERIFY_CA_SECRET) {
        None => TlsVerify::None,
        Some(name) => {
            let key = keys::SECURE_VERIFY_CA_SECRET.name;
            let ca = secret_id(&name, service)
                .and_then(|secret| load_ca_bundle(lookups, secret))
                .map_err(|why| {
                    report(
                        key,
                        format!("{why}; the backend gets no servers until it can verify them"),
                    );
                })?;
            TlsVerify::Required {
                ca,
                hostname: keys.get(&keys::SECURE_VERIFY_HOSTNAME),
            }
        }
    };
    let client_cert = match keys.get(&keys::SECURE_CRT_SECRET) {
        None => None,
        Some(name) => {
            let key = keys::SECURE_CRT_SECRET.name;
            let cert = secret_id(&name, service)
                .and_then(|secret| {
                    load_certificate(lookups, &secret).map(|cert| SecretPem {
                        secret,
                        pem: cert.pem_bundle,
                    })
                })
                .map_err(|why| {
                    report(
                        key,
                        format!("{why}; the backend gets no servers until it can present it"),
                    );
                })?;
            Some(cert)
        }
    };
    let sni = keys.get(&keys::SECURE_SNI).map(|sni| match sni {
        SniSetting::FromClient => Sni::FromClient,
        SniSetting::FromHost => Sni::FromHost,
        SniSetting::Fixed(name) => Sni::Fixed(name),
    });
    Ok(BackendTls {
        verify,
        sni,
        client_cert,
    })
}

/// The Secret a key names, which must be in the Service's namespace.
pub(crate) fn secret_id(name: &SecretName, service: &ObjectRef) -> Result<CertId, String> {
    let namespace = service.namespace.as_str();
    match name.namespace.as_deref() {
        Some(other) if other != namespace => Err(format!(
            "secret {other}/{} is not in the backend's namespace {namespace}",
            name.name
        )),
        _ => Ok(CertId {
            namespace: namespace.to_owned(),
            name: name.name.clone(),
        }),
    }
}

/// Reads and checks the `ca.crt` of a Secret: X.509 certificates in PEM, nothing else.
pub(crate) fn load_ca_bundle(
    lookups: &mut Recorder<'_>,
    secret: CertId,
) -> Result<SecretPem, String> {
    let fields = secret_fields(lookups, &secret)?;
    let (namespace, name) = (&secret.namespace, &secret.name);
    let bundle = fields
        .get("ca.crt")
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("secret {namespace}/{name} has no ca.crt"))?;
    let blocks = pem_blocks(bundle)
        .map_err(|e| format!("secret {namespace}/{name}: ca.crt is not PEM: {e}"))?;
    if blocks.is_empty() || blocks.iter().any(|p| p.label != "CERTIFICATE") {
        return Err(format!(
            "secret {namespace}/{name}: ca.crt must hold only CERTIFICATE blocks"
        ));
    }
    let mut pem = String::new();
    for block in &blocks {
        block.parse_x509().map_err(|e| {
            format!("secret {namespace}/{name}: ca.crt is not a valid X.509 certificate: {e}")
        })?;
        pem.push_str(&encode_pem(&block.label, &block.contents));
    }
    Ok(SecretPem { secret, pem })
}
