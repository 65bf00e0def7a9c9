//! An Ingress with `ssl-passthrough`: its hosts' TLS connections go untouched to the
//! backend of the path `/`, chosen by SNI; plain HTTP to those hosts is redirected to
//! HTTPS, or sent to `ssl-passthrough-http-port` of the same Service.

use std::sync::Arc;

use model::{Frontends, HostKey, PathKind};
use resources::{IngressServiceBackend, ServiceBackendPort};

use crate::contribution::{ClaimedRule, Contribution, PassthroughClaim, RouteClaim, TlsClaim};

/// A Service backend of a passthrough host, and what its path `/` does besides
/// forwarding (`None`: nothing).
pub(crate) type ServedRoot = (Arc<model::Backend>, Option<Arc<model::RuleAction>>);
use crate::names;

/// What an Ingress's passthrough needs from its converter.
pub(crate) struct PassthroughHost<'a> {
    pub(crate) host: HostKey,
    /// The rule's field, for reports.
    pub(crate) field: String,
    pub(crate) paths: &'a [resources::HTTPIngressPath],
}

/// The keys' values for the Ingress.
pub(crate) struct PassthroughKeys {
    /// `ssl-passthrough-http-port`.
    pub(crate) http_port: Option<u16>,
    /// `ssl-redirect-code`.
    pub(crate) redirect_code: u16,
}

/// The claims and problems of an Ingress's passthrough hosts, for its contribution.
#[derive(Default)]
pub(crate) struct PassthroughOutput {
    pub(crate) passthrough: Vec<PassthroughClaim>,
    pub(crate) tls: Vec<TlsClaim>,
    pub(crate) routes: Vec<RouteClaim>,
    /// (field, message).
    pub(crate) reports: Vec<(String, String)>,
}

impl PassthroughOutput {
    fn report(&mut self, field: String, message: String) {
        self.reports.push((field, message));
    }

    /// Adds everything to the Ingress's contribution.
    pub(crate) fn into_contribution(self, contribution: &mut Contribution) {
        contribution.passthrough.extend(self.passthrough);
        contribution.tls.extend(self.tls);
        contribution.routes.extend(self.routes);
        for (field, message) in self.reports {
            contribution.report(field, message);
        }
    }
}

/// Claims one rule's host for passthrough. `backend` resolves a Service backend and what
/// its path `/` does besides forwarding, as the Ingress's paths do, reporting its own
/// problems.
pub(crate) fn claim_host(
    output: &mut PassthroughOutput,
    rule: PassthroughHost<'_>,
    keys: &PassthroughKeys,
    mut backend: impl FnMut(&IngressServiceBackend, &str) -> Option<ServedRoot>,
) {
    if rule.host == HostKey::CatchAll {
        output.report(
            format!("{}.host", rule.field),
            "ssl-passthrough needs a host name (the TLS SNI is matched against it); the rule is skipped".to_owned(),
        );
        return;
    }
    let mut served = false;
    for (index, path) in rule.paths.iter().enumerate() {
        let field = format!("{}.http.paths[{index}]", rule.field);
        let text = path.path.as_deref().unwrap_or("/");
        if !matches!(text, "" | "/") {
            output.report(
                field,
                format!(
                    "with ssl-passthrough only the path '/' is served (HAProxy sees no path in a TLS connection it does not decrypt); '{}' is skipped",
                    text.escape_debug()
                ),
            );
            continue;
        }
        if served {
            output.report(
                field,
                "the host's path '/' is already passed through by an earlier path; this one is skipped".to_owned(),
            );
            continue;
        }
        let Some(service) = path.backend.service.as_ref() else {
            output.report(
                format!("{field}.backend"),
                "only service backends are supported; the path is skipped".to_owned(),
            );
            continue;
        };
        let Some((http_backend, action)) = backend(service, &format!("{field}.backend")) else {
            continue;
        };
        served = true;
        // HAProxy sees no request in a connection it does not decrypt: the allow and deny
        // lists apply to the connection's source address, and an authentication cannot
        // be applied at all: the host is refused rather than served without it.
        let authenticated = action.as_ref().is_some_and(|action| action.auth.is_some());
        if authenticated {
            output.report(
                field.clone(),
                "authentication cannot be applied to TLS connections passed through untouched (HAProxy reads no request in them); the host's passthrough connections are refused until its authentication keys are removed".to_owned(),
            );
        }
        let access = action.as_ref().and_then(|action| action.access.clone());
        if access
            .as_ref()
            .is_some_and(|access| access.source_header.is_some())
        {
            output.report(
                field.clone(),
                "allowlist-source-header cannot be read in TLS connections passed through untouched; their lists apply to the connection's source address".to_owned(),
            );
        }
        if http_backend.settings.client_limits.is_active() {
            output.report(
                field.clone(),
                "limit-connections, limit-rps and limit-whitelist count HTTP requests, which TLS connections passed through untouched do not show; they apply to the host's plain-HTTP route only".to_owned(),
            );
        }
        let tls_backend =
            (!authenticated).then(|| Arc::new((*http_backend).clone().for_passthrough()));
        output.passthrough.push(PassthroughClaim {
            host: rule.host.clone(),
            backend: tls_backend,
            access,
            field: field.clone(),
        });
        let Ok(root) = names::path_match(Some("/"), PathKind::Prefix) else {
            continue;
        };
        let http_rule = match keys.http_port {
            Some(port) => {
                let plain = IngressServiceBackend {
                    name: service.name.clone(),
                    port: Some(ServiceBackendPort {
                        number: Some(i32::from(port)),
                        name: None,
                    }),
                };
                let Some((http_backend, action)) = backend(&plain, &format!("{field}.backend"))
                else {
                    continue;
                };
                ClaimedRule::Ingress {
                    backend: http_backend,
                    https_redirect: None,
                    conditions: Vec::new(),
                    action,
                }
            }
            None => {
                // The host has TLS (its backend's): plain HTTP is redirected to it. The
                // claim names no certificate, since HAProxy never presents one for it.
                // The redirect's route names the Service port's HTTP backend, which
                // never receives a request: an HTTP frontend may not name a TCP one.
                output.tls.push(TlsClaim {
                    host: rule.host.clone(),
                    secret: None,
                    options: model::TlsOptions::default(),
                    field: field.clone(),
                });
                ClaimedRule::Ingress {
                    backend: http_backend,
                    https_redirect: Some(keys.redirect_code),
                    conditions: Vec::new(),
                    action: None,
                }
            }
        };
        output.routes.push(RouteClaim {
            host: rule.host.clone(),
            path: root,
            path_text: "/".to_owned(),
            frontends: Frontends::HTTP,
            field,
            rule: http_rule,
        });
    }
}
