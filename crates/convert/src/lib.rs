//! Converts a snapshot of cluster objects into the proxy model. Pure: no I/O, no clock;
//! the same snapshot and options always give the same model and diagnostics.

pub mod class;
mod diagnostic;
mod endpoints;
mod ingress;
pub mod keys;
mod lookup;
mod merge;
mod names;
mod tls;

pub use diagnostic::Diagnostic;
pub use names::{parse_host, parse_path};

use std::net::IpAddr;
use std::sync::Arc;

use index::Snapshot;
use keys::GlobalConfig;
use model::{CertId, Global, ProxyModel, Timeouts, TlsCert};
use resources::{Ingress, Kind, Object, ObjectRef};
use rustc_hash::{FxHashMap, FxHashSet};

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
    /// `--backend-shards`; 0 chooses by the number of backends ([`automatic_shards`]).
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

/// The shard count `--backend-shards 0` chooses: about 100 backends per file, rounded up to
/// a power of two (so the layout changes only when the backend count doubles), from 1 to
/// 1024. A single-backend change then rewrites a file of about 100 backends.
pub fn automatic_shards(backends: usize) -> u32 {
    let wanted = (backends / 100).next_power_of_two().clamp(1, 1024);
    u32::try_from(wanted).unwrap_or(1024)
}

/// Converts a snapshot from scratch (an empty cache).
pub fn convert(snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
    ConvertCache::default().convert(snapshot, options)
}

#[derive(Debug)]
struct CachedIngress {
    ingress: Arc<Ingress>,
    dependencies: Vec<lookup::Dependency>,
    output: Arc<ingress::IngressOutput>,
}

/// Memo of the previous conversion: an Ingress's output is reused while the Ingress, every
/// object its conversion looked up, and the global ConfigMap are unchanged; a Secret's
/// certificate while the Secret is unchanged. An empty cache converts everything.
#[derive(Debug, Default)]
pub struct ConvertCache {
    global: Option<Option<Object>>,
    ingresses: FxHashMap<ObjectRef, CachedIngress>,
    secrets: FxHashMap<CertId, (Option<Object>, Result<TlsCert, String>)>,
}

impl ConvertCache {
    /// Converts a snapshot, reusing what the previous conversion already produced.
    pub fn convert(&mut self, snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
        let mut diagnostics = Vec::new();
        let configmap_ref = options.global_configmap.as_ref().map(|(namespace, name)| {
            ObjectRef::new(Kind::ConfigMap, namespace.as_str(), name.as_str())
        });
        let configmap = configmap_ref
            .as_ref()
            .and_then(|r| snapshot.get(r))
            .cloned();
        let data = match &configmap {
            Some(Object::ConfigMap(map)) => map.data.as_ref(),
            _ => None,
        };
        let global = GlobalConfig::new(data, configmap_ref.as_ref(), &mut diagnostics);
        // Every Ingress reads the global defaults.
        let same_global = match (&self.global, &configmap) {
            (Some(Some(before)), Some(now)) => lookup::same_object(before, now),
            (Some(None), None) => true,
            _ => false,
        };
        if !same_global {
            self.ingresses.clear();
        }
        self.global = Some(configmap);

        let mut ingresses: Vec<&Arc<Ingress>> = snapshot
            .of_kind(Kind::Ingress)
            .filter_map(|o| match o {
                Object::Ingress(ingress) => Some(ingress),
                _ => None,
            })
            .filter(|ingress| class::is_ours(ingress, snapshot, options))
            .collect();
        // Oldest first; the key borrows, so sorting allocates nothing.
        fn age_key(
            ingress: &Ingress,
        ) -> (
            Option<resources::jiff::Timestamp>,
            Option<&str>,
            Option<&str>,
        ) {
            let meta = &ingress.metadata;
            (
                meta.creation_timestamp.as_ref().map(|t| t.0),
                meta.namespace.as_deref(),
                meta.name.as_deref(),
            )
        }
        ingresses.sort_by(|a, b| age_key(a).cmp(&age_key(b)));
        let mut outputs = Vec::with_capacity(ingresses.len());
        for ingress in ingresses {
            let object = ingress::ingress_ref(ingress);
            let reusable = self.ingresses.get(&object).filter(|cached| {
                (Arc::ptr_eq(&cached.ingress, ingress) || cached.ingress == *ingress)
                    && cached.dependencies.iter().all(|d| d.holds(snapshot))
            });
            let output = match reusable {
                Some(cached) => cached.output.clone(),
                None => {
                    let mut recorder = lookup::Recorder::new(snapshot);
                    let output =
                        Arc::new(ingress::convert_ingress(ingress, &mut recorder, &global));
                    let cached = CachedIngress {
                        ingress: ingress.clone(),
                        dependencies: recorder.dependencies,
                        output: output.clone(),
                    };
                    self.ingresses.insert(object, cached);
                    output
                }
            };
            outputs.push(output);
        }
        if self.ingresses.len() > outputs.len() {
            let current: FxHashSet<&ObjectRef> = outputs.iter().map(|o| &o.object).collect();
            self.ingresses.retain(|object, _| current.contains(object));
        }

        let mut model = ProxyModel {
            global: Global {
                bind_address: options.bind_address,
                http_port: options.http_port,
                https_port: options.https_port,
                max_connections: global.get(&keys::MAX_CONNECTIONS),
                timeouts: Timeouts {
                    client: global.get(&keys::TIMEOUT_CLIENT),
                    http_request: global.get(&keys::TIMEOUT_HTTP_REQUEST),
                    keep_alive: global.get(&keys::TIMEOUT_KEEP_ALIVE),
                },
                backend_shards: options.backend_shards.max(1),
            },
            default_cert: options.fallback_certificate.clone(),
            ..ProxyModel::default()
        };
        let mut wanted_secrets = FxHashSet::default();
        if let Some((namespace, name)) = &options.default_ssl_certificate {
            let id = CertId {
                namespace: namespace.clone(),
                name: name.clone(),
            };
            match self.certificate(snapshot, &id) {
                Ok(cert) => model.default_cert = cert,
                Err(why) => diagnostics.push(Diagnostic {
                    object: ObjectRef::new(Kind::Secret, namespace.as_str(), name.as_str()),
                    field: "--default-ssl-certificate".to_owned(),
                    message: format!(
                        "{why}; a generated self-signed certificate is served instead"
                    ),
                }),
            }
            wanted_secrets.insert(id);
        }
        merge::merge(&mut model, &outputs, &mut diagnostics, |id| {
            wanted_secrets.insert(id.clone());
            self.certificate(snapshot, id)
        });
        self.secrets.retain(|id, _| wanted_secrets.contains(id));
        if options.backend_shards == 0 {
            model.global.backend_shards = automatic_shards(model.backends.len());
        }
        diagnostics.sort();
        diagnostics.dedup();
        Conversion { model, diagnostics }
    }

    fn certificate(&mut self, snapshot: &Snapshot, id: &CertId) -> Result<TlsCert, String> {
        let secret = snapshot.get(&ObjectRef::new(
            Kind::Secret,
            id.namespace.as_str(),
            id.name.as_str(),
        ));
        if let Some((seen, result)) = self.secrets.get(id) {
            let unchanged = match (seen, secret) {
                (Some(seen), Some(now)) => lookup::same_object(seen, now),
                (None, None) => true,
                _ => false,
            };
            if unchanged {
                return result.clone();
            }
        }
        let result = tls::load_certificate(snapshot, &id.namespace, &id.name);
        self.secrets
            .insert(id.clone(), (secret.cloned(), result.clone()));
        result
    }
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
        let served: Vec<model::HostKey> = conversion
            .model
            .hosts
            .iter()
            .filter(|(_, host)| host.cert.as_ref() == Some(id))
            .map(|(key, _)| key.clone())
            .collect();
        for key in served {
            if let Some(host) = conversion.model.hosts.get_mut(&key) {
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
