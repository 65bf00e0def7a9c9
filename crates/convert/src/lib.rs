//! Converts a snapshot of cluster objects into the proxy model. Pure: no I/O, no clock;
//! the same snapshot and options always give the same model and diagnostics.

pub mod class;
mod diagnostic;
mod endpoints;
pub mod gateway;
pub mod gateway_listener;
mod gateway_rules;
pub mod gateway_status;
mod ingress;
pub mod key_docs;
pub mod keys;
mod lookup;
mod merge;
mod names;
mod small_set;
mod tls;

pub use diagnostic::{Diagnostic, one_line};
pub use names::{parse_host, parse_path};

use std::net::IpAddr;
use std::sync::Arc;

use index::Snapshot;
use keys::GlobalConfig;
use model::{CertId, Global, ProxyModel, Timeouts, TlsCert};
use resources::{Kind, Object, ObjectRef};
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
    /// Ports no Gateway listener may take (the admin endpoint's).
    pub reserved_ports: Vec<u16>,
}

impl ConvertOptions {
    /// The ports Gateway listeners are compared with.
    pub fn listener_ports(&self) -> gateway_listener::ListenerPorts {
        gateway_listener::ListenerPorts {
            http: self.http_port,
            https: self.https_port,
            reserved: self.reserved_ports.clone(),
        }
    }
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

/// An object left out because HAProxy refused the configuration it renders to: the
/// version refused (a changed object is tried again) and what HAProxy said.
#[derive(Debug, Clone, PartialEq)]
pub struct Excluded {
    /// The object as it was when HAProxy refused it.
    pub object: Object,
    /// HAProxy's words.
    pub reason: String,
}

/// Objects left out of the conversion, by reference.
pub type Exclusions = std::collections::BTreeMap<ObjectRef, Excluded>;

/// One Ingress converted: its age, its output and what its conversion looked up; `None`
/// when it is gone or not ours.
type Converted = Option<(
    Arc<merge::Age>,
    Arc<ingress::IngressOutput>,
    Vec<lookup::Dependency>,
)>;

/// Below this many Ingresses, converting on one thread is faster than starting others.
const PARALLEL_FROM: usize = 512;

/// Converts Ingresses, independent of one another, on every core for large batches.
fn convert_all(
    objects: Vec<ObjectRef>,
    snapshot: &Snapshot,
    options: &ConvertOptions,
    global: &GlobalConfig,
    excluded: &FxHashSet<ObjectRef>,
) -> Vec<(ObjectRef, Converted)> {
    let convert_one = |object: ObjectRef| -> (ObjectRef, Converted) {
        if excluded.contains(&object) {
            return (object, None);
        }
        let converted = match snapshot.get(&object) {
            Some(Object::Ingress(ingress)) if class::is_ours(ingress, snapshot, options) => {
                let mut recorder = lookup::Recorder::new(snapshot);
                let output = Arc::new(ingress::convert_ingress(ingress, &mut recorder, global));
                let age = Arc::new(merge_age(&ingress.metadata, &object));
                Some((age, output, recorder.dependencies))
            }
            Some(Object::HttpRoute(route)) => {
                let mut recorder = lookup::Recorder::new(snapshot);
                let output = gateway::convert_http_route(route, &mut recorder, global);
                let age = Arc::new(merge_age(&route.metadata, &object));
                // A route attached to none of our Gateways contributes nothing, but its
                // lookups still say when that may change.
                Some((age, Arc::new(output), recorder.dependencies))
            }
            _ => None,
        };
        (object, converted)
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if objects.len() < PARALLEL_FROM || threads < 2 {
        return objects.into_iter().map(convert_one).collect();
    }
    let chunk = objects.len().div_ceil(threads);
    let mut chunks: Vec<Vec<ObjectRef>> = Vec::with_capacity(threads);
    let mut objects = objects.into_iter();
    loop {
        let part: Vec<ObjectRef> = objects.by_ref().take(chunk).collect();
        if part.is_empty() {
            break;
        }
        chunks.push(part);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|part| scope.spawn(move || part.into_iter().map(convert_one).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            // A panic in a conversion is a bug: it goes on up, nothing is silently dropped.
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect()
    })
}

/// The merge order of an Ingress or a route: creation time, then namespace and name.
fn merge_age(metadata: &resources::ObjectMeta, object: &ObjectRef) -> merge::Age {
    (
        metadata.creation_timestamp.as_ref().map(|t| t.0),
        object.namespace.clone(),
        object.name.clone(),
    )
}

/// Converts a snapshot from scratch (an empty cache).
pub fn convert(snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
    ConvertCache::default().convert(snapshot, options)
}

#[derive(Debug)]
struct CachedIngress {
    dependencies: Vec<lookup::Dependency>,
}

/// Memo of the previous conversion, driven by what changed: the objects that differ from
/// the previous snapshot are found by comparing the two (skipping what they share); an
/// Ingress is converted again only if it changed or one of the objects its conversion
/// looked up did, and the merge resolves again only the keys those Ingresses claimed. A
/// change to the global ConfigMap or an IngressClass converts everything. An empty cache
/// converts everything.
#[derive(Debug, Default)]
pub struct ConvertCache {
    previous: Option<Snapshot>,
    ingresses: FxHashMap<ObjectRef, CachedIngress>,
    dependents: FxHashMap<lookup::Dependency, small_set::SmallSet<ObjectRef>>,
    merger: merge::Merger,
    secrets: FxHashMap<CertId, (Option<Object>, Result<TlsCert, String>)>,
    /// The objects left out by the previous conversion.
    excluded: FxHashSet<ObjectRef>,
    /// The ports Gateway listeners were compared with, for status.
    listener_ports: gateway_listener::ListenerPorts,
}

impl ConvertCache {
    /// Converts a snapshot, reusing what the previous conversion already produced.
    pub fn convert(&mut self, snapshot: &Snapshot, options: &ConvertOptions) -> Conversion {
        self.convert_excluding(snapshot, options, &Exclusions::new())
    }

    /// Converts a snapshot leaving out the `exclusions` that still hold the version
    /// refused (each reported); an exclusion whose object changed or went away no longer
    /// applies. Leaving an object out, or taking it back, converts again only it (and
    /// the keys it claimed), as any change does.
    pub fn convert_excluding(
        &mut self,
        snapshot: &Snapshot,
        options: &ConvertOptions,
        exclusions: &Exclusions,
    ) -> Conversion {
        let mut diagnostics = Vec::new();
        let mut excluded = FxHashSet::default();
        for (object_ref, exclusion) in exclusions {
            let current = snapshot.get(object_ref);
            if current.is_some_and(|current| lookup::same_object(current, &exclusion.object)) {
                excluded.insert(object_ref.clone());
                diagnostics.push(Diagnostic {
                    object: object_ref.clone(),
                    field: "(whole object)".to_owned(),
                    message: format!(
                        "HAProxy refused the configuration this object renders to, so it is left out until it changes: {}",
                        exclusion.reason
                    ),
                });
            }
        }
        let configmap_ref = options.global_configmap.as_ref().map(|(namespace, name)| {
            ObjectRef::new(Kind::ConfigMap, namespace.as_str(), name.as_str())
        });
        let data = match configmap_ref.as_ref().and_then(|r| snapshot.get(r)) {
            Some(Object::ConfigMap(map)) => map.data.as_ref(),
            _ => None,
        };
        let mut global = GlobalConfig::new(data, configmap_ref.as_ref(), &mut diagnostics);
        global.listener_ports = options.listener_ports();
        self.listener_ports = global.listener_ports.clone();

        // Every Ingress reads the global defaults, and whether an Ingress is ours depends on
        // every IngressClass: a change to any of those converts everything.
        let changes = self
            .previous
            .as_ref()
            .map(|previous| snapshot.changes_since(previous))
            .filter(|changes| {
                !changes.iter().any(|c| {
                    c.object_ref.kind == Kind::IngressClass
                        || Some(&c.object_ref) == configmap_ref.as_ref()
                })
            });
        let (affected, changed_secrets) = match changes {
            Some(changes) => {
                let (mut affected, secrets) = self.affected_by(&changes);
                // Objects left out, or taken back, since the previous conversion.
                affected.extend(self.excluded.symmetric_difference(&excluded).cloned());
                affected.sort();
                affected.dedup();
                (affected, secrets)
            }
            None => {
                self.ingresses.clear();
                self.dependents.clear();
                self.merger = merge::Merger::default();
                let all = snapshot
                    .of_kind(Kind::Ingress)
                    .chain(snapshot.of_kind(Kind::HttpRoute))
                    .map(Object::object_ref)
                    .collect();
                (all, std::collections::BTreeSet::new())
            }
        };
        self.previous = Some(snapshot.clone());

        let converted = convert_all(affected, snapshot, options, &global, &excluded);
        self.excluded = excluded;
        let mut updates = Vec::with_capacity(converted.len());
        for (object, result) in converted {
            if let Some(cached) = self.ingresses.remove(&object) {
                for dependency in &cached.dependencies {
                    if let Some(dependents) = self.dependents.get_mut(dependency) {
                        dependents.remove(&object);
                        if dependents.is_empty() {
                            self.dependents.remove(dependency);
                        }
                    }
                }
            }
            let output = result.map(|(age, output, dependencies)| {
                for dependency in &dependencies {
                    self.dependents
                        .entry(dependency.clone())
                        .or_default()
                        .insert(object.clone());
                }
                self.ingresses
                    .insert(object.clone(), CachedIngress { dependencies });
                (age, output)
            });
            updates.push((object, output));
        }
        let mut merger = std::mem::take(&mut self.merger);
        merger.update(updates, &changed_secrets, |id| {
            self.certificate(snapshot, id)
        });

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
                forwarded: model::ForwardedHeaders {
                    forward_for: global.get(&keys::FORWARDFOR),
                    original_header: global.get(&keys::ORIGINAL_FORWARDED_FOR_HDR),
                    real_ip_header: global.get(&keys::REAL_IP_HDR),
                    trusted: global.get(&keys::FORWARDFOR_TRUSTED_CIDRS),
                },
            },
            default_cert: options.fallback_certificate.clone(),
            ..ProxyModel::default()
        };
        merger.fill(&mut model);
        let mut wanted_secrets: FxHashSet<CertId> = merger.certificates_in_use().cloned().collect();
        diagnostics.extend(merger.diagnostics().cloned());
        self.merger = merger;
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
        self.secrets.retain(|id, _| wanted_secrets.contains(id));
        if options.backend_shards == 0 {
            model.global.backend_shards = automatic_shards(model.backends.len());
        }
        diagnostics.sort();
        diagnostics.dedup();
        Conversion { model, diagnostics }
    }

    /// The Gateway API status of every object of ours, as of the last conversion (of
    /// `snapshot`).
    pub fn gateway_status(&self, snapshot: &Snapshot) -> gateway_status::StatusReport {
        gateway_status::report(
            snapshot,
            &self.merger.route_outcomes(),
            &self.listener_ports,
        )
    }

    /// The Ingresses a set of changes affects, and the Secrets among the changes.
    fn affected_by(
        &self,
        changes: &[index::Change],
    ) -> (Vec<ObjectRef>, std::collections::BTreeSet<CertId>) {
        let mut affected = std::collections::BTreeSet::new();
        let mut secrets = std::collections::BTreeSet::new();
        for change in changes {
            let object = &change.object_ref;
            match object.kind {
                Kind::Ingress | Kind::HttpRoute => {
                    affected.insert(object.clone());
                }
                Kind::Secret => {
                    secrets.insert(CertId {
                        namespace: object.namespace.clone(),
                        name: object.name.clone(),
                    });
                }
                _ => {}
            }
            let mut keys = vec![
                lookup::Dependency::Object(object.clone()),
                lookup::Dependency::Listing(object.kind, object.namespace.clone()),
            ];
            for version in change.before.iter().chain(change.after.iter()) {
                if let Object::EndpointSlice(slice) = version
                    && let Some(service) = slice
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|labels| labels.get(index::SERVICE_NAME_LABEL))
                {
                    keys.push(lookup::Dependency::Slices(
                        object.namespace.clone(),
                        service.clone(),
                    ));
                }
            }
            for key in keys {
                affected.extend(self.dependents.get(&key).into_iter().flatten().cloned());
            }
        }
        (affected.into_iter().collect(), secrets)
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
