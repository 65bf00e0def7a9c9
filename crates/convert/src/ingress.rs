//! Ingress (networking.k8s.io/v1) to hosts, routes, backends and certificates.
//!
//! Ingresses are taken oldest first (creation time, then namespace and name); when two
//! claim the same host and path, or the same TLS host, or the default backend, the oldest
//! wins and the other is reported.

use std::collections::BTreeMap;
use std::sync::Arc;

use index::Snapshot;
use model::{
    Backend, BackendId, CertId, Global, Host, HostKey, Origin, ProxyModel, Route, Timeouts, TlsCert,
};
use resources::{Ingress, IngressServiceBackend, Kind, Object, ObjectRef};

use crate::keys::{self, Annotations, GlobalConfig};
use crate::{ConvertOptions, Diagnostic, class, endpoints, names, tls};

struct Context<'a> {
    snapshot: &'a Snapshot,
    global: GlobalConfig,
    diagnostics: &'a mut Vec<Diagnostic>,
    model: ProxyModel,
    /// Which Ingress created each backend, to name it in conflicts.
    backend_owner: BTreeMap<BackendId, ObjectRef>,
    /// TLS hosts: which Ingress claimed them and the secret it named.
    tls_hosts: BTreeMap<HostKey, (ObjectRef, Option<String>)>,
    certificates: BTreeMap<CertId, Option<TlsCert>>,
    default_backend_owner: Option<ObjectRef>,
}

pub(crate) fn convert_ingresses(
    snapshot: &Snapshot,
    options: &ConvertOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> ProxyModel {
    let configmap = options
        .global_configmap
        .as_ref()
        .and_then(|(namespace, name)| {
            match snapshot.get(&ObjectRef::new(
                Kind::ConfigMap,
                namespace.as_str(),
                name.as_str(),
            )) {
                Some(Object::ConfigMap(map)) => Some(map.clone()),
                _ => None,
            }
        });
    let configmap_ref = options
        .global_configmap
        .as_ref()
        .map(|(ns, name)| ObjectRef::new(Kind::ConfigMap, ns.as_str(), name.as_str()));
    let global = GlobalConfig::new(
        configmap.as_ref().and_then(|c| c.data.as_ref()),
        configmap_ref.as_ref(),
        diagnostics,
    );
    let model = ProxyModel {
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
    let mut context = Context {
        snapshot,
        global,
        diagnostics,
        model,
        backend_owner: BTreeMap::new(),
        tls_hosts: BTreeMap::new(),
        certificates: BTreeMap::new(),
        default_backend_owner: None,
    };
    if let Some((namespace, name)) = &options.default_ssl_certificate {
        match tls::load_certificate(snapshot, namespace, name) {
            Ok(cert) => context.model.default_cert = cert,
            Err(why) => context.diagnostics.push(Diagnostic {
                object: ObjectRef::new(Kind::Secret, namespace.as_str(), name.as_str()),
                field: "--default-ssl-certificate".to_owned(),
                message: format!("{why}; a generated self-signed certificate is served instead"),
            }),
        }
    }

    let mut ingresses: Vec<&Arc<Ingress>> = snapshot
        .of_kind(Kind::Ingress)
        .filter_map(|o| match o {
            Object::Ingress(ingress) => Some(ingress),
            _ => None,
        })
        .filter(|ingress| class::is_ours(ingress, snapshot, options))
        .collect();
    ingresses.sort_by(|a, b| {
        let key = |i: &Ingress| {
            (
                i.metadata.creation_timestamp.as_ref().map(|t| t.0),
                i.metadata.namespace.clone(),
                i.metadata.name.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    // TLS first: whether a host has TLS decides its routes' redirects.
    for ingress in &ingresses {
        collect_tls(&mut context, ingress);
    }
    for ingress in &ingresses {
        convert_rules(&mut context, ingress);
    }
    assign_certificates(&mut context);
    context.model
}

fn ingress_ref(ingress: &Ingress) -> ObjectRef {
    ObjectRef::new(
        Kind::Ingress,
        ingress.metadata.namespace.clone().unwrap_or_default(),
        ingress.metadata.name.clone().unwrap_or_default(),
    )
}

fn collect_tls(context: &mut Context<'_>, ingress: &Ingress) {
    let object = ingress_ref(ingress);
    let Some(spec) = &ingress.spec else { return };
    for (index, entry) in spec.tls.iter().flatten().enumerate() {
        for (host_index, host) in entry.hosts.iter().flatten().enumerate() {
            let field = format!("spec.tls[{index}].hosts[{host_index}]");
            let host_key = match names::parse_host(host) {
                Ok(key) => key,
                Err(why) => {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field,
                        message: format!("{why}; the entry is skipped"),
                    });
                    continue;
                }
            };
            let secret = entry.secret_name.clone().filter(|s| !s.is_empty());
            match context.tls_hosts.get(&host_key) {
                Some((owner, owner_secret)) if owner != &object && owner_secret != &secret => {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field,
                        message: format!("TLS for host {host_key} is already configured by {owner}, which is older; this entry is ignored"),
                    });
                }
                Some(_) => {}
                None => {
                    context.tls_hosts.insert(host_key, (object.clone(), secret));
                }
            }
        }
    }
}

/// Whether a host has TLS: listed itself, or covered by a listed wildcard.
fn has_tls(context: &Context<'_>, host: &HostKey) -> bool {
    if context.tls_hosts.contains_key(host) {
        return true;
    }
    match host {
        HostKey::Exact(name) => name.split_once('.').is_some_and(|(_, suffix)| {
            context
                .tls_hosts
                .contains_key(&HostKey::Wildcard(suffix.to_owned()))
        }),
        _ => false,
    }
}

fn convert_rules(context: &mut Context<'_>, ingress: &Ingress) {
    let object = ingress_ref(ingress);
    let origin = Origin {
        kind: "Ingress",
        namespace: object.namespace.clone(),
        name: object.name.clone(),
    };
    let annotations = Annotations::new(
        ingress.metadata.annotations.as_ref(),
        &object,
        context.diagnostics,
    );
    let Some(spec) = &ingress.spec else { return };

    if let Some(default) = &spec.default_backend {
        let field = "spec.defaultBackend".to_owned();
        match &context.default_backend_owner {
            Some(owner) => context.diagnostics.push(Diagnostic {
                object: object.clone(),
                field,
                message: format!("the default backend is already set by {owner}, which is older; this one is ignored"),
            }),
            None => {
                if let Some(id) = backend_for(context, &object, &origin, &annotations, default.service.as_ref(), &field) {
                    context.model.default_backend = Some(id);
                    context.default_backend_owner = Some(object.clone());
                }
            }
        }
    }

    for (rule_index, rule) in spec.rules.iter().flatten().enumerate() {
        let host_key = match rule.host.as_deref().filter(|h| !h.is_empty()) {
            None => HostKey::CatchAll,
            Some(host) => match names::parse_host(host) {
                Ok(key) => key,
                Err(why) => {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field: format!("spec.rules[{rule_index}].host"),
                        message: format!("{why}; the rule is skipped"),
                    });
                    continue;
                }
            },
        };
        let redirect =
            has_tls(context, &host_key) && annotations.get(&keys::SSL_REDIRECT, &context.global);
        let https_redirect =
            redirect.then(|| annotations.get(&keys::SSL_REDIRECT_CODE, &context.global));
        let paths = rule
            .http
            .as_ref()
            .map(|h| h.paths.as_slice())
            .unwrap_or_default();
        for (path_index, path) in paths.iter().enumerate() {
            let field = format!("spec.rules[{rule_index}].http.paths[{path_index}]");
            let path_type = if path.path_type.is_empty() {
                "ImplementationSpecific"
            } else {
                &path.path_type
            };
            let path_match = match names::parse_path(path.path.as_deref(), path_type) {
                Ok(path_match) => path_match,
                Err(why) => {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field,
                        message: format!("{why}; the path is skipped"),
                    });
                    continue;
                }
            };
            let backend_field = format!("{field}.backend");
            let Some(backend) = backend_for(
                context,
                &object,
                &origin,
                &annotations,
                path.backend.service.as_ref(),
                &backend_field,
            ) else {
                continue;
            };
            let host = context.model.hosts.entry(host_key.clone()).or_default();
            if let Some(existing) = host.routes.get(&path_match) {
                if existing.origin != origin {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field,
                        message: format!(
                            "host {host_key} path '{}' is already routed by Ingress {}/{}, which is older; this path is ignored",
                            path.path.as_deref().unwrap_or("/"),
                            existing.origin.namespace,
                            existing.origin.name
                        ),
                    });
                }
                continue;
            }
            host.routes.insert(
                path_match,
                Route {
                    backend,
                    https_redirect,
                    origin: origin.clone(),
                },
            );
        }
    }
}

/// Resolves a service backend to a model backend, creating it on first use.
fn backend_for(
    context: &mut Context<'_>,
    object: &ObjectRef,
    origin: &Origin,
    annotations: &Annotations,
    service: Option<&IngressServiceBackend>,
    field: &str,
) -> Option<BackendId> {
    let report = |message: String| Diagnostic {
        object: object.clone(),
        field: field.to_owned(),
        message,
    };
    let Some(service) = service else {
        context.diagnostics.push(report(
            "only service backends are supported; the path is skipped".to_owned(),
        ));
        return None;
    };
    let port = service.port.clone().unwrap_or_default();
    let port_text = match (&port.name, port.number) {
        (Some(name), _) if !name.is_empty() => name.clone(),
        (_, Some(number)) => number.to_string(),
        _ => {
            context.diagnostics.push(report(
                "service.port needs a number or a name; the path is skipped".to_owned(),
            ));
            return None;
        }
    };
    let servers =
        match endpoints::resolve_servers(context.snapshot, &object.namespace, &service.name, &port)
        {
            Ok(servers) => servers,
            Err(why) => {
                context
                    .diagnostics
                    .push(report(format!("{why}; the path is skipped")));
                return None;
            }
        };
    let id = BackendId {
        namespace: object.namespace.clone(),
        service: service.name.clone(),
        port: port_text,
    };
    let wanted = Backend {
        id: id.clone(),
        servers,
        balance: annotations.get(&keys::BALANCE_ALGORITHM, &context.global),
        timeout_connect: annotations.get(&keys::TIMEOUT_CONNECT, &context.global),
        timeout_server: annotations.get(&keys::TIMEOUT_SERVER, &context.global),
        origins: vec![origin.clone()],
    };
    match context.model.backends.get_mut(&id) {
        None => {
            context.backend_owner.insert(id.clone(), object.clone());
            context.model.backends.insert(id.clone(), wanted);
        }
        Some(existing) => {
            let same_settings = existing.balance == wanted.balance
                && existing.timeout_connect == wanted.timeout_connect
                && existing.timeout_server == wanted.timeout_server;
            if !same_settings {
                let owner = context
                    .backend_owner
                    .get(&id)
                    .map(ToString::to_string)
                    .unwrap_or_default();
                context.diagnostics.push(report(format!(
                    "backend {id} is configured differently by {owner}, which is older; its settings are used"
                )));
            }
            if !existing.origins.contains(origin) {
                existing.origins.push(origin.clone());
            }
        }
    }
    Some(id)
}

fn assign_certificates(context: &mut Context<'_>) {
    let tls_hosts = std::mem::take(&mut context.tls_hosts);
    for (host_key, (object, secret)) in &tls_hosts {
        let Some(secret) = secret else { continue };
        let id = CertId {
            namespace: object.namespace.clone(),
            name: secret.clone(),
        };
        if !context.certificates.contains_key(&id) {
            let loaded = match tls::load_certificate(context.snapshot, &id.namespace, &id.name) {
                Ok(cert) => Some(cert),
                Err(why) => {
                    context.diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field: "spec.tls".to_owned(),
                        message: format!("{why}; the default certificate is served for its hosts"),
                    });
                    None
                }
            };
            context.certificates.insert(id.clone(), loaded);
        }
        if let Some(Some(cert)) = context.certificates.get(&id) {
            context.model.certs.insert(id.clone(), cert.clone());
            let host: &mut Host = context.model.hosts.entry(host_key.clone()).or_default();
            host.cert = Some(id);
        }
    }
    context.tls_hosts = tls_hosts;
}
