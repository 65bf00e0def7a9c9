//! Combines the Ingresses' outputs into one model. Ingresses come oldest first; when two
//! claim the same host and path, TLS host, backend settings or default backend, the
//! oldest wins and the other is reported.

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{BackendId, CertId, HostKey, ProxyModel, Route, TlsCert};
use resources::ObjectRef;

use crate::Diagnostic;
use crate::ingress::IngressOutput;

/// Adds the outputs (oldest first) to `model`; `certificate` loads a TLS Secret.
pub(crate) fn merge(
    model: &mut ProxyModel,
    outputs: &[Arc<IngressOutput>],
    diagnostics: &mut Vec<Diagnostic>,
    mut certificate: impl FnMut(&CertId) -> Result<TlsCert, String>,
) {
    let mut tls_hosts: BTreeMap<&HostKey, (&ObjectRef, &Option<String>)> = BTreeMap::new();
    for output in outputs {
        diagnostics.extend(output.diagnostics.iter().cloned());
        for claim in &output.tls {
            match tls_hosts.get(&claim.host) {
                Some((owner, secret)) if **owner != output.object && **secret != claim.secret => diagnostics.push(Diagnostic {
                    object: output.object.clone(),
                    field: claim.field.clone(),
                    message: format!("TLS for host {} is already configured by {owner}, which is older; this entry is ignored", claim.host),
                }),
                Some(_) => {}
                None => {
                    tls_hosts.insert(&claim.host, (&output.object, &claim.secret));
                }
            }
        }
    }
    let has_tls = |host: &HostKey| {
        tls_hosts.contains_key(host)
            || matches!(host, HostKey::Exact(name) if name.split_once('.').is_some_and(|(_, suffix)| tls_hosts.contains_key(&HostKey::Wildcard(suffix.to_owned()))))
    };

    let mut backend_owner: BTreeMap<BackendId, &ObjectRef> = BTreeMap::new();
    let mut default_owner: Option<&ObjectRef> = None;
    for output in outputs {
        // `field` is formatted only when there is something to report.
        let mut add_backend = |backend: &model::Backend,
                               field: &dyn Fn() -> String,
                               diagnostics: &mut Vec<Diagnostic>| {
            match model.backends.get_mut(&backend.id) {
                None => {
                    backend_owner.insert(backend.id.clone(), &output.object);
                    model.backends.insert(backend.id.clone(), backend.clone());
                }
                Some(existing) => {
                    let same_settings = existing.balance == backend.balance
                        && existing.timeout_connect == backend.timeout_connect
                        && existing.timeout_server == backend.timeout_server;
                    if !same_settings {
                        let owner = backend_owner
                            .get(&backend.id)
                            .map(ToString::to_string)
                            .unwrap_or_default();
                        diagnostics.push(Diagnostic {
                        object: output.object.clone(),
                        field: field(),
                        message: format!("backend {} is configured differently by {owner}, which is older; its settings are used", backend.id),
                    });
                    }
                    if !existing.origins.contains(&output.origin) {
                        existing.origins.push(output.origin.clone());
                    }
                }
            }
        };
        if let Some((backend, field)) = &output.default_backend {
            match default_owner {
                Some(owner) => diagnostics.push(Diagnostic {
                    object: output.object.clone(),
                    field: field.clone(),
                    message: format!("the default backend is already set by {owner}, which is older; this one is ignored"),
                }),
                None => {
                    add_backend(backend, &|| field.clone(), diagnostics);
                    model.default_backend = Some(backend.id.clone());
                    default_owner = Some(&output.object);
                }
            }
        }
        for rule in &output.rules {
            let host = match model.hosts.get_mut(&rule.host) {
                Some(host) => host,
                None => model.hosts.entry(rule.host.clone()).or_default(),
            };
            if let Some(existing) = host.routes.get(&rule.path) {
                if existing.origin != output.origin {
                    diagnostics.push(Diagnostic {
                        object: output.object.clone(),
                        field: rule.field.clone(),
                        message: format!(
                            "host {} path '{}' is already routed by Ingress {}/{}, which is older; this path is ignored",
                            rule.host, rule.path_text, existing.origin.namespace, existing.origin.name
                        ),
                    });
                }
                continue;
            }
            let https_redirect =
                (rule.ssl_redirect && has_tls(&rule.host)).then_some(rule.redirect_code);
            host.routes.insert(
                rule.path.clone(),
                Route {
                    backend: rule.backend.id.clone(),
                    https_redirect,
                    origin: output.origin.clone(),
                },
            );
            add_backend(
                &rule.backend,
                &|| format!("{}.backend", rule.field),
                diagnostics,
            );
        }
    }

    let mut loaded: BTreeMap<CertId, Option<TlsCert>> = BTreeMap::new();
    for (host, (object, secret)) in tls_hosts {
        let Some(secret) = secret else { continue };
        let id = CertId {
            namespace: object.namespace.clone(),
            name: secret.clone(),
        };
        let cert = loaded
            .entry(id.clone())
            .or_insert_with(|| match certificate(&id) {
                Ok(cert) => Some(cert),
                Err(why) => {
                    diagnostics.push(Diagnostic {
                        object: object.clone(),
                        field: "spec.tls".to_owned(),
                        message: format!("{why}; the default certificate is served for its hosts"),
                    });
                    None
                }
            });
        if let Some(cert) = cert {
            model.certs.insert(id.clone(), cert.clone());
            model.hosts.entry(host.clone()).or_default().cert = Some(id);
        }
    }
}
