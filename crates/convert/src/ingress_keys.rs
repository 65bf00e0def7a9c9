//! What an Ingress's request keys make of one path: its match (`path-type`), and the
//! action of the keys that change the request or the response (`rewrite-target`,
//! `redirect-to`, `app-root`, the header keys, HSTS), and its hosts' TLS options.

use std::sync::Arc;

use model::{
    AddressRule, Backend, BodyLimit, Condition, Cors, CorsOrigins, HeaderEdits, HeaderLists, Hsts,
    HstsRule, ListName, PathChange, PathKind, PathMatch, Redirect, Rewrite, RuleAction,
    RuleBackend, SourceAccess, TlsOptions,
};

use crate::keys::Setting;
use crate::keys::{
    self, AddressEntries, Annotations, GlobalConfig, HeaderList, KeyGroup, Keys, PathType,
};
use crate::names;

/// How an Ingress path is matched: its key in the route maps, and conditions beyond it.
pub(crate) struct PathRule {
    pub(crate) path: PathMatch,
    pub(crate) conditions: Vec<Condition>,
}

/// Reads an Ingress path under `path-type` (which only `ImplementationSpecific` heeds).
pub(crate) fn path_rule(
    path: Option<&str>,
    path_type: &str,
    layers: &Keys<'_>,
) -> Result<PathRule, String> {
    let plain = |kind: &str| {
        names::parse_path(path, kind).map(|path| PathRule {
            path,
            conditions: Vec::new(),
        })
    };
    if path_type != "ImplementationSpecific" {
        return plain(path_type);
    }
    match layers.get(&keys::PATH_TYPE) {
        PathType::Begin => plain(path_type),
        PathType::Prefix => plain("Prefix"),
        PathType::Exact => plain("Exact"),
        // Tried where no longer path of the host matches, as a Gateway API regex is.
        PathType::Regex => {
            let pattern = names::parse_regex(&format!("^{}", path.unwrap_or("/")), false)?;
            Ok(PathRule {
                path: names::path_match(Some("/"), PathKind::Prefix)?,
                conditions: vec![Condition::Path(pattern)],
            })
        }
    }
}

/// The HSTS header the keys ask for (`None`: none).
pub(crate) fn hsts(layers: &Keys<'_>) -> Option<Hsts> {
    layers.get(&keys::HSTS).then(|| Hsts {
        max_age: layers.get(&keys::HSTS_MAX_AGE),
        include_subdomains: layers.get(&keys::HSTS_INCLUDE_SUBDOMAINS),
        preload: layers.get(&keys::HSTS_PRELOAD),
    })
}

/// The HSTS header of the HTTPS frontends, from the global ConfigMap.
pub(crate) fn global_hsts(global: &GlobalConfig) -> Option<Hsts> {
    hsts(&Keys {
        service: None,
        object: None,
        global,
    })
}

/// Replaces haproxy-ingress's header variables with the backend's Service's.
fn header_values(list: HeaderList, backend: &Backend) -> Vec<(String, String)> {
    list.into_iter()
        .map(|(name, value)| {
            let value = value
                .replace("%[namespace]", &backend.id.namespace)
                .replace("%[service]", &backend.id.service);
            (name, value)
        })
        .collect()
}

/// Every key [`path_action`] reads. A test sets each key of every scope to each value its
/// documentation quotes, and fails when one makes an action without being here.
static PATH_ACTION_KEYS: KeyGroup = KeyGroup::new(&[
    &keys::REQUEST_SET_HEADERS,
    &keys::HEADERS,
    &keys::REQUEST_ADD_HEADERS,
    &keys::REQUEST_DEL_HEADERS,
    &keys::RESPONSE_SET_HEADERS,
    &keys::RESPONSE_ADD_HEADERS,
    &keys::RESPONSE_DEL_HEADERS,
    &keys::REWRITE_TARGET,
    &keys::REDIRECT_TO,
    &keys::REDIRECT_TO_CODE,
    &keys::HSTS,
    &keys::HSTS_MAX_AGE,
    &keys::HSTS_INCLUDE_SUBDOMAINS,
    &keys::HSTS_PRELOAD,
    &keys::CORS_ENABLE,
    &keys::CORS_ALLOW_ORIGIN,
    &keys::CORS_ALLOW_ORIGIN_REGEX,
    &keys::CORS_ALLOW_METHODS,
    &keys::CORS_ALLOW_HEADERS,
    &keys::CORS_ALLOW_CREDENTIALS,
    &keys::CORS_EXPOSE_HEADERS,
    &keys::CORS_MAX_AGE,
    &keys::PROXY_BODY_SIZE,
    &keys::ALLOWLIST_SOURCE_RANGE,
    &keys::WHITELIST_SOURCE_RANGE,
    &keys::DENYLIST_SOURCE_RANGE,
    &keys::ALLOWLIST_SOURCE_HEADER,
]);

/// What a path does beyond forwarding to `backend`; `None` when it only forwards.
/// `problems` gets `(key, message)` for a key that does not apply to the path.
pub(crate) fn path_action(
    layers: &Keys<'_>,
    backend: &Arc<Backend>,
    rule: &PathRule,
    problems: &mut Vec<(&'static str, String)>,
) -> Option<Arc<RuleAction>> {
    // Nearly every path sets none of these keys, and reading each of them from every
    // layer, with the action built and dropped, was about 3,400 instructions a path. At
    // their defaults a path only forwards (a test holds this).
    if !layers.set_any(&PATH_ACTION_KEYS) {
        return None;
    }
    read_path_action(layers, backend, rule, problems)
}

/// [`path_action`], every key read.
fn read_path_action(
    layers: &Keys<'_>,
    backend: &Arc<Backend>,
    rule: &PathRule,
    problems: &mut Vec<(&'static str, String)>,
) -> Option<Arc<RuleAction>> {
    let mut request_set = layers.get(&keys::REQUEST_SET_HEADERS);
    if request_set.is_empty() {
        request_set = layers.get(&keys::HEADERS);
    }
    let mut action = RuleAction {
        request_headers: HeaderEdits::new(HeaderLists {
            set: header_values(request_set, backend),
            add: header_values(layers.get(&keys::REQUEST_ADD_HEADERS), backend),
            remove: layers.get(&keys::REQUEST_DEL_HEADERS),
        }),
        response_headers: HeaderEdits::new(HeaderLists {
            set: header_values(layers.get(&keys::RESPONSE_SET_HEADERS), backend),
            add: header_values(layers.get(&keys::RESPONSE_ADD_HEADERS), backend),
            remove: layers.get(&keys::RESPONSE_DEL_HEADERS),
        }),
        backends: vec![RuleBackend::plain(backend.id.clone(), 1)],
        ..RuleAction::default()
    };
    if let Some(target) = layers.get(&keys::REWRITE_TARGET) {
        if rule.conditions.is_empty() {
            let matched = rule.path.path.trim_end_matches('/').to_owned();
            let change = if rule.path.kind == PathKind::Begin {
                PathChange::Begins {
                    matched,
                    replacement: target,
                }
            } else {
                PathChange::Prefix {
                    matched,
                    replacement: target,
                }
            };
            action.rewrite = Some(Box::new(Rewrite {
                hostname: None,
                path: Some(change),
            }));
        } else {
            problems.push((
                keys::REWRITE_TARGET.name,
                "a regex path is not rewritten; the key is ignored".to_owned(),
            ));
        }
    }
    if let Some(redirect) = layers.get(&keys::REDIRECT_TO) {
        action.redirect = Some(Box::new(Redirect {
            code: layers.get(&keys::REDIRECT_TO_CODE),
            ..redirect
        }));
        action.rewrite = None;
    }
    let wanted = hsts(layers);
    if wanted != global_hsts(layers.global) {
        action.hsts = wanted.map_or(HstsRule::Off, HstsRule::On);
    }
    action.cors = cors(layers).map(Box::new);
    let body_limit = layers.get(&keys::PROXY_BODY_SIZE);
    if body_limit != layers.global.get(&keys::PROXY_BODY_SIZE) {
        action.body_limit = body_limit.map_or(BodyLimit::Unlimited, BodyLimit::Bytes);
    }
    action.access = source_access(layers).unless_open();
    (!action.forwards_only()).then(|| Arc::new(action))
}

/// The CORS policy the keys ask for (`None`: none).
pub(crate) fn cors(layers: &Keys<'_>) -> Option<Cors> {
    if !layers.get(&keys::CORS_ENABLE) {
        return None;
    }
    let regex = layers.get(&keys::CORS_ALLOW_ORIGIN_REGEX);
    let origins = match layers.get(&keys::CORS_ALLOW_ORIGIN) {
        None if regex.is_empty() => CorsOrigins::Any,
        listed => CorsOrigins::Listed {
            exact: listed.unwrap_or_default(),
            regex,
        },
    };
    Some(Cors {
        origins,
        allow_methods: layers.get(&keys::CORS_ALLOW_METHODS),
        allow_headers: layers.get(&keys::CORS_ALLOW_HEADERS),
        allow_credentials: layers.get(&keys::CORS_ALLOW_CREDENTIALS),
        expose_headers: layers.get(&keys::CORS_EXPOSE_HEADERS),
        max_age: layers.get(&keys::CORS_MAX_AGE),
    })
}

/// Which clients a path serves, from the allow and deny lists (`whitelist-source-range`
/// stands in for an unset `allowlist-source-range`). A list set to an invalid value
/// refuses everyone: the path is never served without the protection asked for.
pub(crate) fn source_access(layers: &Keys<'_>) -> SourceAccess {
    let allow = layers
        .setting(&keys::ALLOWLIST_SOURCE_RANGE)
        .map(|setting| (setting, keys::ALLOWLIST_SOURCE_RANGE.name))
        .or_else(|| {
            layers
                .setting(&keys::WHITELIST_SOURCE_RANGE)
                .map(|setting| (setting, keys::WHITELIST_SOURCE_RANGE.name))
        });
    let deny = layers
        .setting(&keys::DENYLIST_SOURCE_RANGE)
        .map(|setting| (setting, keys::DENYLIST_SOURCE_RANGE.name));
    let mut access = SourceAccess::default();
    let mut rule = |setting: Option<(Setting<AddressEntries>, &str)>| match setting {
        None => None,
        Some((Setting::Refused, _)) => {
            access.refuse_all = true;
            None
        }
        Some((Setting::Valid(entries, origin), key)) => {
            (!entries.ranges.is_empty() || !entries.exceptions.is_empty()).then(|| {
                AddressRule::new(
                    ListName::of(key, &origin),
                    entries.ranges,
                    entries.exceptions,
                )
            })
        }
    };
    let allow = rule(allow);
    let deny = rule(deny);
    if access.refuse_all {
        return access;
    }
    access.allow = allow;
    access.deny = deny;
    if !access.is_open() {
        access.source_header = layers.get(&keys::ALLOWLIST_SOURCE_HEADER);
    }
    access
}

/// The path's action with its authentication: a path that only forwards gets an action
/// of its own once it asks for authentication.
pub(crate) fn with_auth(
    action: Option<Arc<RuleAction>>,
    auth: Option<Arc<model::PathAuth>>,
    backend: &Backend,
) -> Option<Arc<RuleAction>> {
    let Some(auth) = auth else {
        return action;
    };
    let base = action.map_or_else(
        || RuleAction {
            backends: vec![RuleBackend::plain(backend.id.clone(), 1)],
            ..RuleAction::default()
        },
        |action| (*action).clone(),
    );
    Some(Arc::new(RuleAction {
        auth: Some(auth),
        ..base
    }))
}

/// Whether a path is the root (`/` of any type), which `app-root` redirects.
pub(crate) fn is_root(rule: &PathRule) -> bool {
    rule.conditions.is_empty() && matches!(&*rule.path.path, "" | "/")
}

/// The rule `app-root` adds in front of a root path: `/` itself is redirected.
pub(crate) fn app_root_rule(app_root: String) -> (Vec<Condition>, RuleAction) {
    let action = RuleAction {
        redirect: Some(Box::new(Redirect {
            scheme: None,
            hostname: None,
            port: None,
            path: Some(PathChange::Full(app_root)),
            code: 302,
        })),
        ..RuleAction::default()
    };
    (vec![Condition::Path("^/$".to_owned())], action)
}

/// The TLS options an Ingress's annotations set for its hosts, checked against the
/// proxy-wide ones; a combination that leaves no TLS version is reported and dropped.
pub(crate) fn host_tls_options(
    annotations: &Annotations,
    global: &GlobalConfig,
) -> Result<TlsOptions, String> {
    let host_options = annotations.value(&keys::SSL_OPTIONS_HOST);
    let options = TlsOptions {
        ciphers: annotations.value(&keys::SSL_CIPHERS).flatten(),
        cipher_suites: annotations.value(&keys::SSL_CIPHER_SUITES).flatten(),
        alpn: annotations.value(&keys::TLS_ALPN),
        options: host_options.map(|o| o.options).unwrap_or_default(),
        client_auth: None,
    };
    // Only `ssl-options-host` can leave no version: a proxy-wide `ssl-options` that
    // does fails to parse, and its default is used instead.
    if options.options.is_empty() {
        return Ok(options);
    }
    let proxy_wide = global.get(&keys::SSL_OPTIONS);
    if keys::tls_versions_left(&proxy_wide, Some(&options)) {
        Ok(options)
    } else {
        Err(format!(
            "'{}' with the global ssl-options leaves no TLS version enabled; the host's options are ignored",
            keys::SSL_OPTIONS_HOST.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use model::{BackendId, BackendMode, BackendSettings};

    use super::*;

    fn backend(layers: &Keys<'_>) -> Arc<Backend> {
        Arc::new(Backend {
            id: BackendId {
                namespace: "shop".into(),
                service: "web".into(),
                port: "80".into(),
                mode: BackendMode::Http,
            },
            servers: Vec::new(),
            server_options: Arc::default(),
            settings: Arc::new(BackendSettings {
                balance: layers.get(&keys::BALANCE_ALGORITHM),
                selector: None,
                named: None,
                timeouts: crate::backend_settings::timeouts(layers),
                timeout_connect: layers.get(&keys::TIMEOUT_CONNECT),
                timeout_server: layers.get(&keys::TIMEOUT_SERVER),
                client_cert_header: layers.get(&keys::AUTH_TLS_CERT_HEADER),
                error_pages: crate::backend_settings::error_pages(layers),
                client_limits: crate::backend_settings::client_limits(layers),
            }),
            origins: Vec::new(),
        })
    }

    /// Every key of every scope, set alone in each layer to each value its documentation
    /// quotes and to one it refuses: the action read key by key and the one skipped
    /// when no layer sets an action key agree, and a key that makes an action is one
    /// `path_action` knows it reads.
    #[test]
    fn a_path_whose_layers_set_no_action_key_only_forwards() {
        let no_keys = GlobalConfig::new(None, None, &mut Vec::new());
        let backend = backend(&Keys {
            service: None,
            object: None,
            global: &no_keys,
        });
        let mut actions = 0;
        keys::every_key_set_alone(|layers, key, case| {
            for path_type in ["Prefix", "Exact", "ImplementationSpecific"] {
                let Ok(rule) = path_rule(Some("/app/"), path_type, layers) else {
                    continue;
                };
                let (mut read_problems, mut problems) = (Vec::new(), Vec::new());
                let read = read_path_action(layers, &backend, &rule, &mut read_problems);
                let action = path_action(layers, &backend, &rule, &mut problems);
                let case = format!("{case}, {path_type}");
                assert_eq!((&action, &problems), (&read, &read_problems), "{case}");
                if read.is_some() || !read_problems.is_empty() {
                    actions += 1;
                    assert!(PATH_ACTION_KEYS.holds(key), "{case} makes an action");
                }
            }
        });
        // The sweep reaches actions: headers, rewrites, redirects, HSTS, CORS, limits and
        // allow-lists each make some.
        assert!(actions > 100, "{actions}");
    }
}
