//! An Ingress with `tcp-service-port`: a TCP service on that port instead of HTTP
//! routes. Each rule's host (with `spec.tls`, chosen by the SNI of the handshake HAProxy
//! terminates) sends its connections to the backend of its path `/`; the rule without a
//! host, or `spec.defaultBackend`, takes the rest.

use std::sync::Arc;

use model::{CertId, HostKey};
use resources::{IngressServiceBackend, IngressSpec};

use crate::contribution::{TcpClaim, TcpPortSettings};
use crate::endpoints::ServiceBackend;
use crate::names;

/// The claims of the Ingress's TCP service and the problems found, as (field, message).
#[derive(Default)]
pub(crate) struct TcpOutput {
    pub(crate) claims: Vec<TcpClaim>,
    pub(crate) reports: Vec<(String, String)>,
}

/// Claims `port` for the Ingress's rules. `backend` resolves a Service backend as the
/// Ingress's paths do, reporting its own problems.
pub(crate) fn claims(
    spec: &IngressSpec,
    port: u16,
    settings: TcpPortSettings,
    namespace: &str,
    mut backend: impl FnMut(&IngressServiceBackend, &str) -> Option<ServiceBackend>,
) -> TcpOutput {
    let mut output = TcpOutput::default();
    let settings = TcpPortSettings {
        tls: spec.tls.as_ref().is_some_and(|tls| !tls.is_empty()),
        ..settings
    };
    // Each TLS host's certificate; an entry without hosts gives the catch-all's.
    let mut certs: Vec<(HostKey, Option<CertId>)> = Vec::new();
    for entry in spec.tls.iter().flatten() {
        let secret = entry
            .secret_name
            .clone()
            .filter(|name| !name.is_empty())
            .map(|name| CertId {
                namespace: namespace.to_owned(),
                name,
            });
        let hosts = entry.hosts.clone().unwrap_or_default();
        if hosts.is_empty() {
            certs.push((HostKey::CatchAll, secret.clone()));
        }
        for host in hosts {
            if let Ok(key) = names::parse_host(&host) {
                certs.push((key, secret.clone()));
            }
        }
    }
    let cert_of = |host: &HostKey| {
        certs
            .iter()
            .find(|(key, _)| key == host)
            .and_then(|(_, cert)| cert.clone())
    };
    let mut targets: Vec<(HostKey, String, &IngressServiceBackend)> = Vec::new();
    if let Some(service) = spec
        .default_backend
        .as_ref()
        .and_then(|b| b.service.as_ref())
    {
        targets.push((HostKey::CatchAll, "spec.defaultBackend".to_owned(), service));
    }
    for (rule_index, rule) in spec.rules.iter().flatten().enumerate() {
        let field = format!("spec.rules[{rule_index}]");
        let host = match rule.host.as_deref().filter(|h| !h.is_empty()) {
            None => HostKey::CatchAll,
            Some(text) => match names::parse_host(text) {
                Ok(key) => key,
                Err(why) => {
                    output.reports.push((
                        format!("{field}.host"),
                        format!("{why}; the rule is skipped"),
                    ));
                    continue;
                }
            },
        };
        if host != HostKey::CatchAll && !settings.tls {
            output.reports.push((
                format!("{field}.host"),
                format!("a TCP service port without spec.tls carries no name to choose connections by, so the host {host} is not served; add spec.tls for HAProxy to terminate TLS and choose by SNI, or use ssl-passthrough"),
            ));
            continue;
        }
        let paths = rule
            .http
            .as_ref()
            .map(|h| h.paths.as_slice())
            .unwrap_or_default();
        let mut chosen = false;
        for (index, path) in paths.iter().enumerate() {
            let path_field = format!("{field}.http.paths[{index}]");
            let text = path.path.as_deref().unwrap_or("/");
            if !matches!(text, "" | "/") || chosen {
                output.reports.push((
                    path_field,
                    format!(
                        "a TCP service has no paths: only one path '/' per host is served; '{}' is skipped",
                        text.escape_debug()
                    ),
                ));
                continue;
            }
            let Some(service) = path.backend.service.as_ref() else {
                output.reports.push((
                    format!("{path_field}.backend"),
                    "only service backends are supported; the path is skipped".to_owned(),
                ));
                continue;
            };
            chosen = true;
            targets.retain(|(known, _, _)| *known != host);
            targets.push((host.clone(), path_field, service));
        }
    }
    for (host, field, service) in targets {
        let backends = match backend(service, &format!("{field}.backend")) {
            Some((backend, _)) => vec![(Some(Arc::new((*backend).clone().for_tcp())), 1)],
            None => Vec::new(),
        };
        output.claims.push(TcpClaim {
            port,
            cert: cert_of(&host),
            host,
            backends,
            port_settings: settings.clone(),
            field,
        });
    }
    output
}
