//! One Ingress to its routes, TLS claims and backends. Pure: the output depends only on
//! the Ingress, the lookups it records, and the global configuration, so it can be
//! memoized; combining Ingresses (conflicts, redirects, certificates) is `merge`'s job.

use std::collections::BTreeMap;
use std::sync::Arc;

use model::{Backend, BackendId, Condition, HostKey, RuleAction};
use resources::{Ingress, IngressServiceBackend, Kind, Object, ObjectRef};

use crate::contribution::TcpPortSettings;
use crate::contribution::{
    BackendClaim, ClaimedRule, Contribution, MergeOrder, RouteClaim, TlsClaim,
};
use crate::endpoints::ServiceBackend;
use crate::ingress_keys::PathRule;
use crate::ingress_passthrough::{self, PassthroughHost, PassthroughKeys, PassthroughOutput};
use crate::ingress_tcp;
use crate::keys::{self, Annotations, Keys, Setting};
use crate::lookup::Recorder;
use crate::{auth, endpoints, ingress_keys, names, oauth};

struct Converter<'a, 'b> {
    lookups: &'a mut Recorder<'b>,
    annotations: Annotations,
    output: Contribution,
    backends: BTreeMap<BackendId, ServiceBackend>,
    /// The Ingress's one host and its aliases.
    alias: Option<(HostKey, Vec<HostKey>)>,
    /// The Ingress's paths and their Services, when it asks for `oauth`: where
    /// oauth2-proxy is served.
    oauth_paths: Vec<(String, IngressServiceBackend)>,
}

/// A host's own TLS handshake options.
static HOST_TLS_KEYS: keys::KeyGroup = keys::KeyGroup::new(&[
    &keys::SSL_CIPHERS,
    &keys::SSL_CIPHER_SUITES,
    &keys::TLS_ALPN,
    &keys::SSL_OPTIONS_HOST,
]);

/// A path's header matches: rarely set, so skipped unless a layer sets one.
static HEADER_MATCH_KEYS: keys::KeyGroup =
    keys::KeyGroup::new(&[&keys::HTTP_HEADER_MATCH, &keys::HTTP_HEADER_MATCH_REGEX]);

/// Converts one Ingress of ours.
pub(crate) fn convert_ingress(
    object: ObjectRef,
    ingress: &Ingress,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(ingress.metadata.creation_timestamp.as_ref(), &object);
    let mut output = Contribution::new(object, "Ingress", order);
    let annotations = Annotations::new(
        ingress.metadata.annotations.as_ref(),
        &output.object,
        &mut output.diagnostics,
    );
    let mut converter = Converter {
        lookups,
        annotations,
        output,
        backends: BTreeMap::new(),
        alias: None,
        oauth_paths: Vec::new(),
    };
    converter.class_parameters(ingress);
    converter.output.backend_keys = converter.annotations.backend_keys().map(Arc::new);
    let tcp_port = converter.keys().get(&keys::TCP_SERVICE_PORT);
    if let (Some(spec), Some(port)) = (&ingress.spec, tcp_port) {
        converter.tcp_service(spec, port);
        return converter.output;
    }
    if let Some(spec) = &ingress.spec {
        converter.alias = converter.server_alias(spec);
        converter.tls(spec);
        converter.rules(spec);
        converter.copy_routes_to_alias();
        converter.redirect_from(spec);
    }
    converter.output
}

impl Converter<'_, '_> {
    /// The Ingress as a TCP service on `port`, instead of HTTP routes.
    fn tcp_service(&mut self, spec: &resources::IngressSpec, port: u16) {
        let field = self
            .annotations
            .annotation_field(keys::TCP_SERVICE_PORT.name);
        if let Some(why) = crate::tcp_services::port_refusal(self.lookups, port) {
            self.report(field, format!("{why}; the Ingress is not served"));
            return;
        }
        // Client certificates (`auth-tls-secret`): a TCP connection has no answer to give
        // a client without one, so the handshake requires it (`verify required`), and a
        // CA that does not load refuses every connection rather than none.
        let global = self.lookups.global();
        let auth_keys = Keys {
            service: None,
            object: Some(&self.annotations),
            global,
        };
        let client_ca =
            crate::client_auth::tcp_client_ca(self.lookups, &auth_keys, &self.output.object);
        let auth_field = self
            .annotations
            .annotation_field(keys::AUTH_TLS_SECRET.name);
        let has_tls = spec.tls.as_ref().is_some_and(|tls| !tls.is_empty());
        let mut refuse_all = false;
        let client_ca = match client_ca {
            Some(Err(why)) => {
                self.report(
                    auth_field,
                    format!("{why}; every connection to the TCP service port is refused until it is fixed"),
                );
                refuse_all = true;
                None
            }
            Some(Ok(_)) if !has_tls => {
                self.report(
                    auth_field,
                    "client certificates are asked for in a TLS handshake, and the TCP service has no spec.tls; the key has no effect".to_owned(),
                );
                None
            }
            Some(Ok(ca)) => Some(ca),
            None => None,
        };
        let settings = TcpPortSettings {
            tls: false,
            client_ca,
            accept_proxy: self.keys().get(&keys::TCP_SERVICE_PROXY_PROTOCOL),
            log_format: self.keys().get(&keys::TCP_SERVICE_LOG_FORMAT),
        };
        let namespace = self.output.object.namespace.clone();
        let mut output = ingress_tcp::claims(spec, port, settings, &namespace, |service, field| {
            self.backend(Some(service), &field)
        });
        if refuse_all {
            for claim in &mut output.claims {
                claim.backends.clear();
            }
        }
        self.output.tcp.extend(output.claims);
        for (field, message) in output.reports {
            self.report(field, message);
        }
    }

    fn report(&mut self, field: String, message: String) {
        self.output.report(field, message);
    }

    /// The Ingress's host and its aliases (`server-alias`, `server-alias-regex`), when
    /// set; an alias needs an Ingress of exactly one host (which one it names would be a
    /// guess otherwise).
    fn server_alias(&mut self, spec: &resources::IngressSpec) -> Option<(HostKey, Vec<HostKey>)> {
        let wanted: Vec<(&'static str, HostKey)> = [&keys::SERVER_ALIAS, &keys::SERVER_ALIAS_REGEX]
            .into_iter()
            .filter_map(|key| Some((key.name, self.annotations.value(key).flatten()?)))
            .collect();
        let (first_key, _) = wanted.first()?;
        let host = self.single_host(spec, first_key)?;
        let mut aliases = Vec::new();
        for (key, alias) in wanted {
            if alias == host {
                self.report(
                    self.annotations.annotation_field(key),
                    format!("'{alias}' is the Ingress's own host; the alias is ignored"),
                );
            } else {
                aliases.push(alias);
            }
        }
        (!aliases.is_empty()).then_some((host, aliases))
    }

    /// The aliased host's paths, claimed for each alias too: it is routed as the host.
    fn copy_routes_to_alias(&mut self) {
        let Some((host, aliases)) = &self.alias else {
            return;
        };
        let copies: Vec<RouteClaim> = aliases
            .iter()
            .flat_map(|alias| {
                self.output
                    .routes
                    .iter()
                    .filter(|route| route.host == *host)
                    .map(|route| RouteClaim {
                        host: alias.clone(),
                        ..route.clone()
                    })
            })
            .collect();
        self.output.routes.extend(copies);
    }

    /// The Ingress's one host, for a key that needs exactly one: `None` (reported under
    /// `key`) otherwise.
    fn single_host(&mut self, spec: &resources::IngressSpec, key: &str) -> Option<HostKey> {
        let mut hosts: Vec<HostKey> = spec
            .rules
            .iter()
            .flatten()
            .filter_map(|rule| rule.host.as_deref().filter(|h| !h.is_empty()))
            .filter_map(|host| names::parse_host(host).ok())
            .collect();
        hosts.sort();
        hosts.dedup();
        match hosts.as_slice() {
            [host] => Some(host.clone()),
            _ => {
                self.report(
                    self.annotations.annotation_field(key),
                    format!(
                        "{key} needs an Ingress with exactly one host, this one has {}; the key is ignored",
                        hosts.len()
                    ),
                );
                None
            }
        }
    }

    /// `redirect-from` and `redirect-from-regex`: every path of the source hosts
    /// redirects to the Ingress's host, keeping the scheme, the path and the query.
    fn redirect_from(&mut self, spec: &resources::IngressSpec) {
        for key in [&keys::REDIRECT_FROM, &keys::REDIRECT_FROM_REGEX] {
            if let Some(source) = self.annotations.value(key).flatten() {
                self.redirect_host(spec, key.name, source);
            }
        }
    }

    fn redirect_host(&mut self, spec: &resources::IngressSpec, key: &str, source: HostKey) {
        let field = self.annotations.annotation_field(key);
        let Some(target) = self.single_host(spec, key) else {
            return;
        };
        let HostKey::Exact(target_name) = &target else {
            self.report(
                field,
                format!(
                    "'{target}' is a wildcard, which cannot be redirected to; the key is ignored"
                ),
            );
            return;
        };
        if source == target {
            self.report(
                field,
                format!("'{source}' is the Ingress's own host; the key is ignored"),
            );
            return;
        }
        // The redirect answers before any backend; the claim names the host's first one
        // only because every claimed path has a backend.
        let Some(backend) = self
            .output
            .routes
            .iter()
            .find(|route| route.host == target)
            .and_then(|route| route.backends().first().cloned())
        else {
            return;
        };
        let code = self.lookups.global().get(&keys::REDIRECT_FROM_CODE);
        let action = model::RuleAction {
            redirect: Some(Box::new(model::Redirect {
                scheme: None,
                hostname: Some(target_name.to_string()),
                port: None,
                path: None,
                code,
            })),
            ..model::RuleAction::default()
        };
        let Ok(every_path) = names::path_match(Some("/"), model::PathKind::Prefix) else {
            return;
        };
        self.output.routes.push(RouteClaim {
            host: source,
            path: every_path,
            path_text: "/".to_owned(),
            frontends: model::Frontends::BOTH,
            field,
            rule: ClaimedRule::Ingress {
                backend,
                https_redirect: None,
                conditions: Vec::new(),
                action: Some(Arc::new(action)),
            },
        });
    }

    fn tls(&mut self, spec: &resources::IngressSpec) {
        let options = match ingress_keys::host_tls_options(&self.annotations, self.lookups.global())
        {
            Ok(options) => options,
            Err(why) => {
                self.report(
                    self.annotations
                        .annotation_field(keys::SSL_OPTIONS_HOST.name),
                    why,
                );
                model::TlsOptions::default()
            }
        };
        let global = self.lookups.global();
        let layers = keys::Keys {
            service: None,
            object: Some(&self.annotations),
            global,
        };
        let (client_auth, problem) =
            crate::client_auth::client_auth(self.lookups, &layers, &self.output.object);
        if let Some(problem) = problem {
            self.report(
                self.annotations
                    .annotation_field(keys::AUTH_TLS_SECRET.name),
                problem,
            );
        }
        let no_tls_hosts = spec
            .tls
            .iter()
            .flatten()
            .all(|entry| entry.hosts.as_ref().is_none_or(Vec::is_empty));
        if client_auth.is_some() && no_tls_hosts {
            self.report(
                self.annotations.annotation_field(keys::AUTH_TLS_SECRET.name),
                "client certificates are asked for on the hosts of spec.tls, and it lists none; the key has no effect".to_owned(),
            );
        }
        // A host's TLS handshake options belong to the Ingress that lists it under
        // spec.tls: without such an entry they would be dropped silently.
        if no_tls_hosts && self.annotations.sets_any(&HOST_TLS_KEYS) {
            self.report(
                "metadata.annotations".to_owned(),
                "ssl-ciphers, ssl-cipher-suites, tls-alpn and ssl-options-host are taken from the Ingress that lists the host under spec.tls, and this one lists none; they have no effect here".to_owned(),
            );
        }
        let options = model::TlsOptions {
            client_auth,
            ..options
        };
        for (index, entry) in spec.tls.iter().flatten().enumerate() {
            for (host_index, host) in entry.hosts.iter().flatten().enumerate() {
                let field = names::indexed_field("spec.tls", index, "hosts", host_index);
                match names::parse_host(host) {
                    Ok(host) => {
                        let secret =
                            entry
                                .secret_name
                                .clone()
                                .filter(|s| !s.is_empty())
                                .map(|name| model::CertId {
                                    namespace: self.output.object.namespace.to_string(),
                                    name,
                                });
                        // The alias is served as the host: with the same certificate.
                        if let Some((aliased, aliases)) = &self.alias
                            && covers(&host, aliased)
                        {
                            for alias in aliases {
                                self.output.tls.push(TlsClaim {
                                    host: alias.clone(),
                                    secret: secret.clone(),
                                    options: options.clone(),
                                    field: field.clone(),
                                });
                            }
                        }
                        self.output.tls.push(TlsClaim {
                            host,
                            secret,
                            options: options.clone(),
                            field,
                        });
                    }
                    Err(why) => self.report(field, format!("{why}; the entry is skipped")),
                }
            }
        }
    }

    fn rules(&mut self, spec: &resources::IngressSpec) {
        if self.keys().get(&keys::OAUTH) {
            self.oauth_paths = oauth::service_paths(spec);
        }
        if let Some(default) = &spec.default_backend {
            self.default_backend(default);
        }
        let passthrough = self.keys().get(&keys::SSL_PASSTHROUGH);
        let passthrough_keys = PassthroughKeys {
            http_port: self.keys().get(&keys::SSL_PASSTHROUGH_HTTP_PORT),
            redirect_code: self.keys().get(&keys::SSL_REDIRECT_CODE),
        };
        let mut passthrough_output = PassthroughOutput::default();
        let first_route = self.output.routes.len();
        // With app-root set by the Ingress or its class (not the global ConfigMap, which
        // sets it for every Ingress): each host's rules, and whether a path / of it is
        // redirected.
        let app_root_set = self.keys().set_at(keys::APP_ROOT.name);
        let mut app_root_hosts: Vec<(HostKey, bool)> = Vec::new();
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
            if app_root_set.is_some()
                && !passthrough
                && !paths.is_empty()
                && !app_root_hosts.iter().any(|(h, _)| *h == host)
            {
                app_root_hosts.push((host.clone(), false));
            }
            if passthrough {
                let host = PassthroughHost {
                    host,
                    field: format!("spec.rules[{rule_index}]"),
                    paths,
                };
                ingress_passthrough::claim_host(
                    &mut passthrough_output,
                    host,
                    &passthrough_keys,
                    |service, field| {
                        let (backend, service_keys) = self.backend(Some(service), &field)?;
                        let root = ingress_keys::path_rule(
                            Some("/"),
                            "Prefix",
                            &self.keys().with_service(&service_keys),
                        )
                        .ok()?;
                        let action = self.path_action(&backend, &service_keys, &root);
                        Some((backend, action))
                    },
                );
                continue;
            }
            for (path_index, path) in paths.iter().enumerate() {
                let field =
                    names::indexed_field("spec.rules", rule_index, "http.paths", path_index);
                let path_type = if path.path_type.is_empty() {
                    "ImplementationSpecific"
                } else {
                    &path.path_type
                };
                let Some((backend, service_keys)) = self.backend(
                    path.backend.service.as_ref(),
                    &format_args!("{field}.backend"),
                ) else {
                    continue;
                };
                let layers = self.keys().with_service(&service_keys);
                let rule = match ingress_keys::path_rule(path.path.as_deref(), path_type, &layers) {
                    Ok(rule) => rule,
                    Err(why) => {
                        self.report(field, format!("{why}; the path is skipped"));
                        continue;
                    }
                };
                let https_redirect = layers
                    .get(&keys::SSL_REDIRECT)
                    .then(|| layers.get(&keys::SSL_REDIRECT_CODE));
                // An unreadable match leaves the path out (reported with the key).
                let mut header_matches: Vec<Condition> = Vec::new();
                let mut unreadable = false;
                let header_match_keys = if layers.set_any(&HEADER_MATCH_KEYS) {
                    &[&keys::HTTP_HEADER_MATCH, &keys::HTTP_HEADER_MATCH_REGEX][..]
                } else {
                    &[]
                };
                for key in header_match_keys {
                    match layers.setting(key) {
                        Some(Setting::Valid(matches, _)) => {
                            header_matches.extend(matches.into_iter().map(Condition::Header));
                        }
                        Some(Setting::Refused) => unreadable = true,
                        None => {}
                    }
                }
                if unreadable {
                    continue;
                }
                let action = self.path_action(&backend, &service_keys, &rule);
                let app_root = ingress_keys::is_root(&rule)
                    .then(|| self.keys().get(&keys::APP_ROOT))
                    .flatten();
                let path_text = path.path.clone().unwrap_or_else(|| "/".to_owned());
                if let Some(app_root) = app_root {
                    if let Some(seen) = app_root_hosts.iter_mut().find(|(h, _)| *h == host) {
                        seen.1 = true;
                    }
                    let (mut conditions, mut redirect) = ingress_keys::app_root_rule(app_root);
                    conditions.extend(header_matches.iter().cloned());
                    redirect.request_headers = action
                        .as_ref()
                        .map(|a| a.request_headers.clone())
                        .unwrap_or_default();
                    // A refused client is not told where the application lives either.
                    redirect.access = action.as_ref().and_then(|a| a.access.clone());
                    redirect.auth = action.as_ref().and_then(|a| a.auth.clone());
                    self.output.routes.push(RouteClaim {
                        host: host.clone(),
                        path: rule.path.clone(),
                        path_text: path_text.clone(),
                        frontends: model::Frontends::BOTH,
                        field: field.clone(),
                        rule: ClaimedRule::Ingress {
                            backend: backend.clone(),
                            https_redirect,
                            conditions,
                            action: Some(Arc::new(redirect)),
                        },
                    });
                }
                let mut conditions = rule.conditions;
                conditions.extend(header_matches);
                self.output.routes.push(RouteClaim {
                    host: host.clone(),
                    path: rule.path,
                    path_text,
                    frontends: model::Frontends::BOTH,
                    field,
                    rule: ClaimedRule::Ingress {
                        backend,
                        https_redirect,
                        conditions,
                        action,
                    },
                });
            }
        }
        passthrough_output.into_contribution(&mut self.output);
        self.report_routed_twice(first_route);
        if let Some((object, field)) = app_root_set {
            // Said on the object that sets the key: the Ingress, or its class's ConfigMap.
            let ingress = if object == self.output.object {
                "the Ingress".to_owned()
            } else {
                self.output.origin.to_string()
            };
            for (host, redirected) in app_root_hosts {
                if !redirected {
                    self.output.diagnostics.push(crate::diagnostic::Diagnostic {
                        object: object.clone(),
                        field: field.clone(),
                        message: format!("{ingress} routes no path / of host {host} to redirect (app-root redirects the / of the paths of the Ingress that sets it); nothing is redirected there"),
                    });
                }
            }
        }
    }

    /// Reports each path this Ingress routes a second time (the same host, path and
    /// conditions, as `Prefix` `/img` and `/img/` are): only the first is served, as
    /// when another Ingress routes it already.
    fn report_routed_twice(&mut self, from: usize) {
        let Some(routes) = self.output.routes.get(from..) else {
            return;
        };
        fn key(route: &RouteClaim) -> (&HostKey, &model::PathMatch, &[model::Condition]) {
            (&route.host, &route.path, route.conditions())
        }
        // Nearly every Ingress has a path or two: two are compared as they are.
        let order: Vec<usize> = match routes.len() {
            0 | 1 => return,
            2 if key(&routes[0]) != key(&routes[1]) => return,
            2 => vec![0, 1],
            _ => {
                let mut order: Vec<usize> = (0..routes.len()).collect();
                order.sort_by(|&a, &b| key(&routes[a]).cmp(&key(&routes[b])).then(a.cmp(&b)));
                order
            }
        };
        // In `order`, equal claims are next to each other, the first listed first: each
        // later one is reported against it, once per path (app-root makes a path claim
        // twice).
        let mut reports: Vec<(String, String)> = Vec::new();
        let mut first = order[0];
        for &at in &order[1..] {
            let (served, again) = (&routes[first], &routes[at]);
            if key(served) != key(again) {
                first = at;
                continue;
            }
            if again.field == served.field || reports.iter().any(|(field, _)| *field == again.field)
            {
                continue;
            }
            reports.push((
                again.field.clone(),
                format!(
                    "host {} path '{}' is already routed by {} of this Ingress; this path is ignored",
                    again.host, again.path_text, served.field
                ),
            ));
        }
        for (field, message) in reports {
            self.report(field, message);
        }
    }

    /// The Ingress's `spec.defaultBackend`, with what its path keys (and its Service's)
    /// do to every request it takes, as to the requests of a path `/` (haproxy-ingress
    /// makes it that path of its default host): its authentication and allow lists
    /// protect it as they protect the Ingress's paths.
    fn default_backend(&mut self, default: &resources::IngressBackend) {
        let field = "spec.defaultBackend".to_owned();
        let Some((backend, service_keys)) = self.backend(default.service.as_ref(), &field) else {
            return;
        };
        let layers = self.keys().with_service(&service_keys);
        let root = match ingress_keys::path_rule(Some("/"), "Prefix", &layers) {
            Ok(root) => root,
            Err(why) => {
                self.report(field, format!("{why}; the default backend is not served"));
                return;
            }
        };
        let action = self.path_action(&backend, &service_keys, &root);
        self.output.default_backend = Some(BackendClaim {
            backend,
            field,
            action,
        });
    }

    /// What a path of `backend` does besides forwarding (its access lists, header
    /// changes, rewrite, authentication...), its keys' problems reported.
    fn path_action(
        &mut self,
        backend: &Arc<Backend>,
        service_keys: &Annotations,
        rule: &PathRule,
    ) -> Option<Arc<RuleAction>> {
        let layers = self.keys().with_service(service_keys);
        let mut problems = Vec::new();
        let action = ingress_keys::path_action(&layers, backend, rule, &mut problems);
        // Only an Ingress that asks for `oauth` itself (or through the ConfigMap) knows
        // where oauth2-proxy is; a Service's `oauth` alone finds no such path, and fails
        // closed.
        let oauth = if self.oauth_paths.is_empty() {
            auth::OauthTarget::Missing
        } else {
            let prefix = self
                .keys()
                .with_service(service_keys)
                .get(&keys::OAUTH_URI_PREFIX);
            oauth::target(
                &self.oauth_paths,
                &prefix,
                &rule.path.path,
                &self.output.object.namespace,
                self.lookups,
            )
        };
        let auth_layers = Keys {
            service: Some(service_keys),
            object: Some(&self.annotations),
            global: self.lookups.global(),
        };
        let auth = auth::path_auth(
            &auth_layers,
            self.lookups,
            &self.output.object.namespace,
            &oauth,
            &mut problems,
        );
        let action = ingress_keys::with_auth(action, auth, backend);
        for (key, message) in problems {
            self.report(self.annotations.annotation_field(key), message);
        }
        action
    }

    /// Reads the keys of the Ingress's IngressClass's `spec.parameters` (a ConfigMap in
    /// the controller's namespace) under its own annotations, as haproxy-ingress does;
    /// parameters that cannot be read are reported.
    fn class_parameters(&mut self, ingress: &Ingress) {
        let Some(class_name) = ingress
            .spec
            .as_ref()
            .and_then(|spec| spec.ingress_class_name.as_deref())
            .filter(|name| !name.is_empty())
        else {
            return;
        };
        let Some(Object::IngressClass(class)) =
            self.lookups
                .get(ObjectRef::new(Kind::IngressClass, "", class_name))
        else {
            return;
        };
        let Some(parameters) = class
            .spec
            .as_ref()
            .and_then(|spec| spec.parameters.as_ref())
        else {
            return;
        };
        let controller_namespace = self
            .lookups
            .options()
            .global_configmap
            .as_ref()
            .map(|(namespace, _)| namespace.as_str());
        let configmap = match crate::class::parameters_configmap(parameters, controller_namespace) {
            Ok(configmap) => configmap,
            Err(why) => {
                let message = format!("IngressClass {class_name}: {why}; its keys are not applied");
                self.report("spec.ingressClassName".to_owned(), message);
                return;
            }
        };
        match self.lookups.get(configmap.clone()) {
            Some(Object::ConfigMap(map)) => {
                self.annotations = std::mem::take(&mut self.annotations).under_class_parameters(
                    map.data.as_ref(),
                    &configmap,
                    &mut self.output.diagnostics,
                );
            }
            _ => {
                let message = format!(
                    "IngressClass {class_name} names ConfigMap {}/{} as its parameters, which does not exist; its keys are not applied",
                    configmap.namespace, configmap.name
                );
                self.report("spec.ingressClassName".to_owned(), message);
            }
        }
    }

    /// This Ingress's keys: its annotations over the global ConfigMap.
    fn keys(&mut self) -> Keys<'_> {
        Keys {
            service: None,
            object: Some(&self.annotations),
            global: self.lookups.global(),
        }
    }

    /// Resolves a service backend, once per backend of this Ingress.
    fn backend(
        &mut self,
        service: Option<&IngressServiceBackend>,
        // Written out only for a report: one is made per path of every Ingress.
        field: &dyn std::fmt::Display,
    ) -> Option<ServiceBackend> {
        let Some(service) = service else {
            self.report(
                field.to_string(),
                "only service backends are supported; the path is skipped".to_owned(),
            );
            return None;
        };
        let port = service.port.clone().unwrap_or_default();
        let named = port.name.as_deref().is_some_and(|n| !n.is_empty());
        if !named && port.number.is_none() {
            self.report(
                field.to_string(),
                "service.port needs a number or a name; the path is skipped".to_owned(),
            );
            return None;
        }
        let namespace = self.output.object.namespace.clone();
        let layers = Keys {
            service: None,
            object: Some(&self.annotations),
            global: self.lookups.global(),
        };
        let built = endpoints::service_backend(
            self.lookups,
            &mut self.backends,
            &namespace,
            &service.name,
            &port,
            layers,
            &self.output.origin,
            &mut self.output.diagnostics,
        );
        match built {
            Ok(backend) => Some(backend),
            Err(why) => {
                self.report(field.to_string(), format!("{why}; the path is skipped"));
                None
            }
        }
    }
}

/// Whether a TLS host gives `host` its certificate: the same name, or a wildcard that
/// covers its first label.
fn covers(tls_host: &HostKey, host: &HostKey) -> bool {
    match (tls_host, host) {
        (HostKey::Wildcard(suffix), HostKey::Exact(name)) => name
            .split_once('.')
            .is_some_and(|(_, rest)| rest == &**suffix),
        _ => tls_host == host,
    }
}
