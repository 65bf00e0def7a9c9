//! Converts a snapshot of cluster objects into the proxy model. Pure: no I/O, no clock;
//! the same snapshot and options always give the same model and diagnostics.

pub mod class;
mod diagnostic;
mod endpoints;
mod ingress;
pub mod keys;
mod names;
mod tls;

pub use diagnostic::Diagnostic;
pub use names::{parse_host, parse_path};

use std::net::IpAddr;

use index::Snapshot;
use model::{ProxyModel, TlsCert};

/// Settings that come from the command line rather than from objects.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// `--ingress-class`.
    pub ingress_class: String,
    /// `--watch-ingress-without-class`.
    pub watch_ingress_without_class: bool,
    /// `--configmap`: namespace and name of the global ConfigMap.
    pub global_configmap: Option<(String, String)>,
    /// `--default-ssl-certificate`: namespace and name of a TLS Secret.
    pub default_ssl_certificate: Option<(String, String)>,
    /// Served when no default certificate is configured, or it is unusable.
    pub fallback_certificate: TlsCert,
    /// `--bind-address`.
    pub bind_address: IpAddr,
    /// `--http-port`.
    pub http_port: u16,
    /// `--https-port`.
    pub https_port: u16,
    /// `--backend-shards`.
    pub backend_shards: u32,
}

/// A converted snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    /// What HAProxy should serve.
    pub model: ProxyModel,
    /// Every problem found, sorted.
    pub diagnostics: Vec<Diagnostic>,
}

/// Converts a snapshot.
pub fn convert(snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
    let mut diagnostics = Vec::new();
    let model = ingress::convert_ingresses(snapshot, options, &mut diagnostics);
    diagnostics.sort();
    diagnostics.dedup();
    Conversion { model, diagnostics }
}

/// Removes certificates HAProxy refused to load (same Secret, same content), so their
/// hosts fall back to the default certificate and nothing else is held back. Returns the
/// ones removed.
pub fn exclude_certificates(
    conversion: &mut Conversion,
    rejected: &std::collections::BTreeMap<model::CertId, TlsCert>,
) -> std::collections::BTreeSet<model::CertId> {
    let refused: Vec<model::CertId> = conversion
        .model
        .certs
        .iter()
        .filter(|(id, cert)| rejected.get(id) == Some(cert))
        .map(|(id, _)| id.clone())
        .collect();
    for id in &refused {
        conversion.model.certs.remove(id);
        for host in conversion.model.hosts.values_mut() {
            if host.cert.as_ref() == Some(id) {
                host.cert = None;
            }
        }
        conversion.diagnostics.push(Diagnostic {
            object: resources::ObjectRef::new(resources::Kind::Secret, id.namespace.as_str(), id.name.as_str()),
            field: "data".to_owned(),
            message: "haproxy cannot load this certificate and key (do they match?); the default certificate is served instead".to_owned(),
        });
    }
    conversion.diagnostics.sort();
    refused.into_iter().collect()
}
