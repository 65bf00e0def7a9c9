//! One Ingress to its routes, TLS claims and backends. Pure: the output depends only on
//! the Ingress, the lookups it records, and the global configuration, so it can be
//! memoized; combining Ingresses (conflicts, redirects, certificates) is `merge`'s job.

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{Backend, BackendId, HostKey, Origin, PathMatch};
use resources::{Ingress, IngressServiceBackend, Kind, ObjectRef};

use crate::keys::{self, Annotations, GlobalConfig};
use crate::lookup::Recorder;
use crate::{Diagnostic, endpoints, names};

/// A TLS host an Ingress asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TlsClaim {
    pub(crate) host: HostKey,
    /// The TLS Secret; `None` serves the default certificate.
    pub(crate) secret: Option<model::CertId>,
    pub(crate) field: String,
}

/// A path an Ingress routes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleOutput {
    pub(crate) host: HostKey,
    pub(crate) path: PathMatch,
    pub(crate) path_text: String,
    /// Where traffic goes, with weights above 0 (an Ingress names exactly one).
    pub(crate) backends: Vec<(Arc<Backend>, u32)>,
    /// Conditions beyond the path (Gateway API matches).
    pub(crate) conditions: Vec<model::Condition>,
    /// What the rule does (Gateway API), with its backends' weights and header changes;
    /// an Ingress leaves it empty and `backends` above says.
    pub(crate) filters: Arc<model::RuleAction>,
    pub(crate) ssl_redirect: bool,
    pub(crate) redirect_code: u16,
    pub(crate) listeners: model::Listeners,
    pub(crate) field: String,
}

impl RuleOutput {
    /// Whether the rule is a plain path-to-backend mapping, as every Ingress rule is.
    pub(crate) fn is_plain(&self) -> bool {
        self.conditions.is_empty() && self.backends.len() == 1 && self.filters.forwards_only()
    }
}

/// Everything one Ingress contributes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IngressOutput {
    pub(crate) object: ObjectRef,
    pub(crate) origin: Origin,
    pub(crate) tls: Vec<TlsClaim>,
    pub(crate) default_backend: Option<(Arc<Backend>, String)>,
    pub(crate) rules: Vec<RuleOutput>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// What Gateway API status needs (HTTPRoutes only).
    pub(crate) route_outcome: Option<crate::gateway_status::RouteOutcome>,
}

pub(crate) fn ingress_ref(ingress: &Ingress) -> ObjectRef {
    ObjectRef::new(
        Kind::Ingress,
        ingress.metadata.namespace.clone().unwrap_or_default(),
        ingress.metadata.name.clone().unwrap_or_default(),
    )
}

struct Converter<'a, 'b> {
    lookups: &'a mut Recorder<'b>,
    global: &'a GlobalConfig,
    annotations: Annotations,
    output: IngressOutput,
    backends: BTreeMap<BackendId, Arc<Backend>>,
}

/// Converts one Ingress.
pub(crate) fn convert_ingress(
    ingress: &Ingress,
    lookups: &mut Recorder<'_>,
    global: &GlobalConfig,
) -> IngressOutput {
    let object = ingress_ref(ingress);
    let origin = Origin {
        kind: "Ingress",
        namespace: object.namespace.clone(),
        name: object.name.clone(),
    };
    let mut diagnostics = Vec::new();
    let annotations = Annotations::new(
        ingress.metadata.annotations.as_ref(),
        &object,
        &mut diagnostics,
    );
    let output = IngressOutput {
        object,
        origin,
        tls: Vec::new(),
        default_backend: None,
        rules: Vec::new(),
        diagnostics,
        route_outcome: None,
    };
    let mut converter = Converter {
        lookups,
        global,
        annotations,
        output,
        backends: BTreeMap::new(),
    };
    if let Some(spec) = &ingress.spec {
        converter.tls(spec);
        converter.rules(spec);
    }
    converter.output
}

impl Converter<'_, '_> {
    fn report(&mut self, field: String, message: String) {
        self.output.diagnostics.push(Diagnostic {
            object: self.output.object.clone(),
            field,
            message,
        });
    }

    fn tls(&mut self, spec: &resources::IngressSpec) {
        for (index, entry) in spec.tls.iter().flatten().enumerate() {
            for (host_index, host) in entry.hosts.iter().flatten().enumerate() {
                let field = format!("spec.tls[{index}].hosts[{host_index}]");
                match names::parse_host(host) {
                    Ok(host) => {
                        let secret =
                            entry
                                .secret_name
                                .clone()
                                .filter(|s| !s.is_empty())
                                .map(|name| model::CertId {
                                    namespace: self.output.object.namespace.clone(),
                                    name,
                                });
                        self.output.tls.push(TlsClaim {
                            host,
                            secret,
                            field,
                        });
                    }
                    Err(why) => self.report(field, format!("{why}; the entry is skipped")),
                }
            }
        }
    }

    fn rules(&mut self, spec: &resources::IngressSpec) {
        if let Some(default) = &spec.default_backend {
            let field = "spec.defaultBackend".to_owned();
            if let Some(backend) = self.backend(default.service.as_ref(), &field) {
                self.output.default_backend = Some((backend, field));
            }
        }
        let ssl_redirect = self.annotations.get(&keys::SSL_REDIRECT, self.global);
        let redirect_code = self.annotations.get(&keys::SSL_REDIRECT_CODE, self.global);
        for (rule_index, rule) in spec.rules.iter().flatten().enumerate() {
            let host = match rule.host.as_deref().filter(|h| !h.is_empty()) {
                None => HostKey::CatchAll,
                Some(host) => match names::parse_host(host) {
                    Ok(key) => key,
                    Err(why) => {
                        self.report(
                            format!("spec.rules[{rule_index}].host"),
                            format!("{why}; the rule is skipped"),
                        );
                        continue;
                    }
                },
            };
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
                        self.report(field, format!("{why}; the path is skipped"));
                        continue;
                    }
                };
                let Some(backend) =
                    self.backend(path.backend.service.as_ref(), &format!("{field}.backend"))
                else {
                    continue;
                };
                let path_text = path.path.clone().unwrap_or_else(|| "/".to_owned());
                self.output.rules.push(RuleOutput {
                    host: host.clone(),
                    path: path_match,
                    path_text,
                    backends: vec![(backend, 1)],
                    conditions: Vec::new(),
                    filters: Arc::default(),
                    ssl_redirect,
                    redirect_code,
                    listeners: model::Listeners::BOTH,
                    field,
                });
            }
        }
    }

    /// Resolves a service backend, once per backend of this Ingress.
    fn backend(
        &mut self,
        service: Option<&IngressServiceBackend>,
        field: &str,
    ) -> Option<Arc<Backend>> {
        let Some(service) = service else {
            self.report(
                field.to_owned(),
                "only service backends are supported; the path is skipped".to_owned(),
            );
            return None;
        };
        let port = service.port.clone().unwrap_or_default();
        let named = port.name.as_deref().is_some_and(|n| !n.is_empty());
        if !named && port.number.is_none() {
            self.report(
                field.to_owned(),
                "service.port needs a number or a name; the path is skipped".to_owned(),
            );
            return None;
        }
        let namespace = self.output.object.namespace.clone();
        let (annotations, global) = (&self.annotations, self.global);
        let settings = || endpoints::BackendSettings {
            balance: annotations.get(&keys::BALANCE_ALGORITHM, global),
            timeout_connect: annotations.get(&keys::TIMEOUT_CONNECT, global),
            timeout_server: annotations.get(&keys::TIMEOUT_SERVER, global),
        };
        let built = endpoints::service_backend(
            self.lookups,
            &mut self.backends,
            &namespace,
            &service.name,
            &port,
            settings,
            &self.output.origin,
        );
        match built {
            Ok(backend) => Some(backend),
            Err(why) => {
                self.report(field.to_owned(), format!("{why}; the path is skipped"));
                None
            }
        }
    }
}
