//! Configuration keys: one typed definition each (name, scope, default, parser, doc),
//! read from the global ConfigMap and, for backend and path scope, from annotations.

use std::collections::BTreeMap;

use resources::ObjectRef;

use crate::diagnostic::Diagnostic;
pub use table::KeyGroup;
use table::{KeySet, KeyTable};

mod access;
mod affinity;
mod auth;
mod auth_tls;
mod backend;
mod backend_tls;
mod blue_green;
mod cors;
mod dns;
mod forwarded;
mod headers;
mod health;
mod hsts;
mod limits;
mod logs;
mod observers;
mod parse;
mod passthrough;
mod process;
mod proxy;
mod proxy_protocol;
mod redirect;
mod responses;
mod rewrite;
mod routing;
mod table;
mod tcp;
mod tls;
mod unsupported;

pub use access::{
    ALLOWLIST_SOURCE_HEADER, ALLOWLIST_SOURCE_RANGE, AddressEntries, DENYLIST_SOURCE_RANGE,
    LIMIT_CONN_STATUS_CODE, LIMIT_CONNECTIONS, LIMIT_REQ_STATUS_CODE, LIMIT_RPS, LIMIT_WHITELIST,
    WHITELIST_SOURCE_RANGE,
};
pub use affinity::{
    AFFINITY, COOKIE_KEY, SESSION_COOKIE_DOMAIN, SESSION_COOKIE_DYNAMIC, SESSION_COOKIE_KEYWORDS,
    SESSION_COOKIE_NAME, SESSION_COOKIE_PRESERVE, SESSION_COOKIE_SAME_SITE,
    SESSION_COOKIE_STRATEGY, SESSION_COOKIE_VALUE_STRATEGY,
};
pub use auth::{
    AUTH_HEADERS_FAIL, AUTH_HEADERS_REQUEST, AUTH_HEADERS_SUCCEED, AUTH_METHOD, AUTH_REALM,
    AUTH_SECRET, AUTH_SIGNIN, AUTH_TIMEOUT, AUTH_TYPE, AUTH_URL, AuthUrl, OAUTH, OAUTH_HEADERS,
    OAUTH_URI_PREFIX,
};
pub use auth_tls::{
    AUTH_TLS_CERT_HEADER, AUTH_TLS_ERROR_PAGE, AUTH_TLS_SECRET, AUTH_TLS_STRICT,
    AUTH_TLS_VERIFY_CLIENT, VerifyClient,
};
pub use backend::{BALANCE_ALGORITHM, TIMEOUT_CONNECT, TIMEOUT_SERVER};
pub use backend_tls::{
    BACKEND_PROTOCOL, BackendProtocol, SECURE_BACKENDS, SECURE_CRT_SECRET, SECURE_SNI,
    SECURE_VERIFY_CA_SECRET, SECURE_VERIFY_HOSTNAME, SecretName, SniSetting,
};
pub use blue_green::{
    BLUE_GREEN_BALANCE, BLUE_GREEN_COOKIE, BLUE_GREEN_DEPLOY, BLUE_GREEN_HEADER, BLUE_GREEN_MODE,
    BlueGreenMode, GroupWeight, SelectorPair,
};
pub use cors::{
    CORS_ALLOW_CREDENTIALS, CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_ALLOW_ORIGIN,
    CORS_ALLOW_ORIGIN_REGEX, CORS_ENABLE, CORS_EXPOSE_HEADERS, CORS_MAX_AGE,
};
pub use dns::{
    DNS_ACCEPTED_PAYLOAD_SIZE, DNS_CLUSTER_DOMAIN, DNS_HOLD_OBSOLETE, DNS_HOLD_VALID,
    DNS_RESOLVERS, DNS_TIMEOUT_RETRY, USE_RESOLVER,
};
pub use forwarded::{
    FORWARDFOR, FORWARDFOR_TRUSTED_CIDRS, FRONTING_PROXY_PORT, HTTP_PASSTHROUGH,
    HTTP_PASSTHROUGH_PORT, HTTPS_TO_HTTP_PORT, ORIGINAL_FORWARDED_FOR_HDR, REAL_IP_HDR,
    USE_FORWARDED_PROTO,
};
pub use headers::{
    HEADERS, HeaderList, REQUEST_ADD_HEADERS, REQUEST_DEL_HEADERS, REQUEST_SET_HEADERS,
    RESPONSE_ADD_HEADERS, RESPONSE_DEL_HEADERS, RESPONSE_SET_HEADERS,
};
pub use health::{
    BACKEND_CHECK_INTERVAL, HEALTH_CHECK_ADDR, HEALTH_CHECK_FALL_COUNT, HEALTH_CHECK_INTERVAL,
    HEALTH_CHECK_PORT, HEALTH_CHECK_RISE_COUNT, HEALTH_CHECK_URI,
};
pub use hsts::{HSTS, HSTS_INCLUDE_SUBDOMAINS, HSTS_MAX_AGE, HSTS_PRELOAD};
pub use limits::{
    MAXCONN_SERVER, MAXQUEUE_SERVER, SLOW_START, TIMEOUT_QUEUE, TIMEOUT_SERVER_FIN, TIMEOUT_TUNNEL,
};
pub use logs::{
    DONTLOGNULL, HTTP_LOG_FORMAT, HTTPS_LOG_FORMAT, SYSLOG_ENDPOINT, SYSLOG_FORMAT, SYSLOG_LENGTH,
    SYSLOG_TAG,
};
pub(crate) use observers::own_listeners;
pub use observers::{
    HEALTHZ_PORT, PROMETHEUS_PORT, STATS_AUTH, STATS_PORT, STATS_PROXY_PROTOCOL, STATS_SSL_CERT,
};
pub(crate) use parse::tls_versions_left;
pub use passthrough::{SSL_PASSTHROUGH, SSL_PASSTHROUGH_HTTP_PORT};
pub(crate) use process::close_sessions_window;
pub use process::{
    CLOSE_SESSIONS_DURATION, CloseSessions, NBTHREAD, TIMEOUT_CLIENT_FIN, TIMEOUT_STOP,
    WORKER_MAX_RELOADS,
};
pub use proxy::{MAX_CONNECTIONS, TIMEOUT_CLIENT, TIMEOUT_HTTP_REQUEST, TIMEOUT_KEEP_ALIVE};
pub use proxy_protocol::{PROXY_PROTOCOL, USE_PROXY_PROTOCOL, USE_PROXY_PROTOCOL_TRUSTED_CIDRS};
pub use redirect::{
    APP_ROOT, DEFAULT_BACKEND_REDIRECT, DEFAULT_BACKEND_REDIRECT_CODE, NO_TLS_REDIRECT_LOCATIONS,
    REDIRECT_FROM, REDIRECT_FROM_CODE, REDIRECT_FROM_REGEX, REDIRECT_TO, REDIRECT_TO_CODE,
    SSL_REDIRECT_CODE,
};
pub use responses::{
    HTTP_RESPONSE_400, HTTP_RESPONSE_401, HTTP_RESPONSE_403, HTTP_RESPONSE_404, HTTP_RESPONSE_408,
    HTTP_RESPONSE_413, HTTP_RESPONSE_429, HTTP_RESPONSE_495, HTTP_RESPONSE_496, HTTP_RESPONSE_500,
    HTTP_RESPONSE_501, HTTP_RESPONSE_502, HTTP_RESPONSE_503, HTTP_RESPONSE_504, PROXY_BODY_SIZE,
    SERVER_HEADER,
};
pub use rewrite::{PATH_TYPE, PathType, REWRITE_TARGET};
pub use routing::{
    HTTP_HEADER_MATCH, HTTP_HEADER_MATCH_REGEX, NORMALIZE_PATHS, SERVER_ALIAS, SERVER_ALIAS_REGEX,
    SSL_REDIRECT,
};
pub use tcp::{
    TCP_LOG_FORMAT, TCP_SERVICE_LOG_FORMAT, TCP_SERVICE_PORT, TCP_SERVICE_PROXY_PROTOCOL,
};
pub use tls::{
    SSL_CIPHER_SUITES, SSL_CIPHERS, SSL_DH_PARAM, SSL_OPTIONS, SSL_OPTIONS_HOST, TLS_ALPN,
};
pub use unsupported::{UNSUPPORTED_KEYS, Unsupported};

/// Every `http-response-<code>` key with its code.
pub static HTTP_RESPONSE_KEYS: [(u16, &Key<Option<model::ErrorPage>>); 14] = [
    (400, &HTTP_RESPONSE_400),
    (401, &HTTP_RESPONSE_401),
    (403, &HTTP_RESPONSE_403),
    (404, &HTTP_RESPONSE_404),
    (408, &HTTP_RESPONSE_408),
    (413, &HTTP_RESPONSE_413),
    (429, &HTTP_RESPONSE_429),
    (495, &HTTP_RESPONSE_495),
    (496, &HTTP_RESPONSE_496),
    (500, &HTTP_RESPONSE_500),
    (501, &HTTP_RESPONSE_501),
    (502, &HTTP_RESPONSE_502),
    (503, &HTTP_RESPONSE_503),
    (504, &HTTP_RESPONSE_504),
];

/// Annotation prefixes, in precedence order: our own, then haproxy-ingress's two, so
/// that its users' annotations keep working.
pub const ANNOTATION_PREFIXES: [&str; 3] = [
    "portcullis.dev/",
    "haproxy-ingress.github.io/",
    "ingress.kubernetes.io/",
];

/// Where a key may be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole proxy: global ConfigMap only.
    Global,
    /// One backend: ConfigMap default, overridden by an Ingress annotation, overridden
    /// by an annotation of the backend's Service.
    Backend,
    /// One path: as a backend key, the Service being the path's backend's.
    Path,
    /// The hosts of an Ingress: ConfigMap default, overridden by an Ingress annotation.
    Host,
}

/// One configuration key.
#[derive(Debug)]
pub struct Key<T> {
    /// The default, parsed the first time it is needed: every backend reads dozens of
    /// keys, most of them at their default, and parsing one again each time was a third of
    /// reading keys.
    pub(crate) parsed_default: std::sync::OnceLock<T>,
    /// Name, as in haproxy-ingress.
    pub name: &'static str,
    /// Where it may be set.
    pub scope: Scope,
    /// Default value, in the key's own syntax.
    pub default: &'static str,
    /// The values accepted, in words; each value quoted in backticks must parse.
    pub accepted_values: &'static str,
    /// Parses and validates a value.
    pub parse: fn(&str) -> Result<T, String>,
    /// What it does.
    pub doc: &'static str,
    /// How a change of its value reaches HAProxy.
    pub applied: Applied,
    /// How it differs from haproxy-ingress's key of the same name, and why; empty when
    /// it does not.
    pub differs: &'static str,
}

/// How a change of a key's value reaches HAProxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Over the runtime API, without a reload.
    Live,
    /// By a (seamless) reload.
    Reload,
}

/// What every key offers without its value type: for docs and for spotting unknown keys.
pub trait KeyInfo: Sync {
    /// Name.
    fn name(&self) -> &'static str;
    /// Scope.
    fn scope(&self) -> Scope;
    /// Default, in the key's syntax.
    fn default_text(&self) -> &'static str;
    /// Documentation.
    fn doc(&self) -> &'static str;
    /// The values accepted, in words.
    fn accepted_values(&self) -> &'static str;
    /// How a change reaches HAProxy.
    fn applied(&self) -> Applied;
    /// The difference from haproxy-ingress, if any.
    fn differs(&self) -> &'static str;
    /// Checks a value.
    fn validate(&self, value: &str) -> Result<(), String>;
    /// Parses a value, into the key's type.
    fn parse_value(&self, value: &str) -> Result<Box<dyn std::any::Any + Send + Sync>, String>;
}

impl<T: Send + Sync + 'static> KeyInfo for Key<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn scope(&self) -> Scope {
        self.scope
    }
    fn default_text(&self) -> &'static str {
        self.default
    }
    fn doc(&self) -> &'static str {
        self.doc
    }
    fn accepted_values(&self) -> &'static str {
        self.accepted_values
    }
    fn applied(&self) -> Applied {
        self.applied
    }
    fn differs(&self) -> &'static str {
        self.differs
    }
    fn validate(&self, value: &str) -> Result<(), String> {
        (self.parse)(value).map(drop)
    }
    fn parse_value(&self, value: &str) -> Result<Box<dyn std::any::Any + Send + Sync>, String> {
        (self.parse)(value).map(|parsed| Box::new(parsed) as _)
    }
}

impl<T> Key<T> {
    /// The parsed default.
    #[allow(clippy::expect_used)] // defaults are constants; `every_default_parses` checks them
    pub fn default_value(&self) -> T
    where
        T: Clone,
    {
        self.parsed_default
            .get_or_init(|| (self.parse)(self.default).expect("key defaults are valid"))
            .clone()
    }
}

/// What a duration key accepts (HAProxy's time syntax, within its timer range).
const DURATION_VALUES: &str = "a whole number followed by us, ms, s, m, h or d (a bare number counts milliseconds), such as `500ms`, `5s` or `1m`; `0`, or from `1ms` to `2147483647ms` (about 24.8 days)";

/// Every key.
pub static ALL_KEYS: &[&dyn KeyInfo] = &[
    &SSL_REDIRECT,
    &NORMALIZE_PATHS,
    &SSL_REDIRECT_CODE,
    &SSL_PASSTHROUGH,
    &SSL_PASSTHROUGH_HTTP_PORT,
    &TCP_SERVICE_PORT,
    &TCP_SERVICE_PROXY_PROTOCOL,
    &TCP_SERVICE_LOG_FORMAT,
    &TCP_LOG_FORMAT,
    &BALANCE_ALGORITHM,
    &TIMEOUT_CONNECT,
    &TIMEOUT_SERVER,
    &TIMEOUT_CLIENT,
    &TIMEOUT_HTTP_REQUEST,
    &TIMEOUT_KEEP_ALIVE,
    &MAX_CONNECTIONS,
    &FORWARDFOR,
    &ORIGINAL_FORWARDED_FOR_HDR,
    &REAL_IP_HDR,
    &FORWARDFOR_TRUSTED_CIDRS,
    &FRONTING_PROXY_PORT,
    &HTTP_PASSTHROUGH_PORT,
    &HTTP_PASSTHROUGH,
    &HTTPS_TO_HTTP_PORT,
    &USE_FORWARDED_PROTO,
    &NBTHREAD,
    &WORKER_MAX_RELOADS,
    &HEALTHZ_PORT,
    &STATS_PROXY_PROTOCOL,
    &NO_TLS_REDIRECT_LOCATIONS,
    &REDIRECT_TO,
    &HTTP_HEADER_MATCH,
    &HTTP_HEADER_MATCH_REGEX,
    &REDIRECT_TO_CODE,
    &DEFAULT_BACKEND_REDIRECT,
    &DEFAULT_BACKEND_REDIRECT_CODE,
    &APP_ROOT,
    &REWRITE_TARGET,
    &PATH_TYPE,
    &HEADERS,
    &REQUEST_SET_HEADERS,
    &REQUEST_ADD_HEADERS,
    &REQUEST_DEL_HEADERS,
    &RESPONSE_SET_HEADERS,
    &RESPONSE_ADD_HEADERS,
    &RESPONSE_DEL_HEADERS,
    &HSTS,
    &HSTS_MAX_AGE,
    &HSTS_INCLUDE_SUBDOMAINS,
    &HSTS_PRELOAD,
    &SSL_CIPHERS,
    &SSL_CIPHER_SUITES,
    &SSL_OPTIONS,
    &SSL_OPTIONS_HOST,
    &TLS_ALPN,
    &BACKEND_PROTOCOL,
    &SECURE_BACKENDS,
    &SECURE_VERIFY_CA_SECRET,
    &SECURE_CRT_SECRET,
    &SECURE_SNI,
    &SECURE_VERIFY_HOSTNAME,
    &MAXCONN_SERVER,
    &MAXQUEUE_SERVER,
    &TIMEOUT_QUEUE,
    &SLOW_START,
    &TIMEOUT_TUNNEL,
    &TIMEOUT_SERVER_FIN,
    &HEALTH_CHECK_INTERVAL,
    &HEALTH_CHECK_RISE_COUNT,
    &HEALTH_CHECK_FALL_COUNT,
    &HEALTH_CHECK_PORT,
    &HEALTH_CHECK_ADDR,
    &HEALTH_CHECK_URI,
    &BACKEND_CHECK_INTERVAL,
    &TIMEOUT_CLIENT_FIN,
    &TIMEOUT_STOP,
    &CLOSE_SESSIONS_DURATION,
    &SYSLOG_ENDPOINT,
    &SYSLOG_FORMAT,
    &SYSLOG_LENGTH,
    &SYSLOG_TAG,
    &HTTP_LOG_FORMAT,
    &HTTPS_LOG_FORMAT,
    &DONTLOGNULL,
    &PROMETHEUS_PORT,
    &STATS_PORT,
    &STATS_AUTH,
    &HTTP_RESPONSE_400,
    &HTTP_RESPONSE_401,
    &HTTP_RESPONSE_403,
    &HTTP_RESPONSE_404,
    &HTTP_RESPONSE_408,
    &HTTP_RESPONSE_413,
    &HTTP_RESPONSE_429,
    &HTTP_RESPONSE_500,
    &HTTP_RESPONSE_501,
    &HTTP_RESPONSE_502,
    &HTTP_RESPONSE_503,
    &HTTP_RESPONSE_504,
    &SERVER_HEADER,
    &PROXY_BODY_SIZE,
    &AFFINITY,
    &SESSION_COOKIE_NAME,
    &SESSION_COOKIE_STRATEGY,
    &SESSION_COOKIE_KEYWORDS,
    &SESSION_COOKIE_DYNAMIC,
    &SESSION_COOKIE_SAME_SITE,
    &SESSION_COOKIE_DOMAIN,
    &SESSION_COOKIE_PRESERVE,
    &SESSION_COOKIE_VALUE_STRATEGY,
    &COOKIE_KEY,
    &USE_PROXY_PROTOCOL,
    &USE_PROXY_PROTOCOL_TRUSTED_CIDRS,
    &PROXY_PROTOCOL,
    &SERVER_ALIAS,
    &CORS_ENABLE,
    &CORS_ALLOW_ORIGIN,
    &CORS_ALLOW_ORIGIN_REGEX,
    &CORS_ALLOW_METHODS,
    &CORS_ALLOW_HEADERS,
    &CORS_ALLOW_CREDENTIALS,
    &CORS_EXPOSE_HEADERS,
    &CORS_MAX_AGE,
    &AUTH_TLS_SECRET,
    &AUTH_TLS_VERIFY_CLIENT,
    &AUTH_TLS_STRICT,
    &AUTH_TLS_ERROR_PAGE,
    &AUTH_TLS_CERT_HEADER,
    &HTTP_RESPONSE_495,
    &HTTP_RESPONSE_496,
    &SERVER_ALIAS_REGEX,
    &REDIRECT_FROM,
    &REDIRECT_FROM_REGEX,
    &REDIRECT_FROM_CODE,
    &SSL_DH_PARAM,
    &STATS_SSL_CERT,
    &ALLOWLIST_SOURCE_RANGE,
    &WHITELIST_SOURCE_RANGE,
    &DENYLIST_SOURCE_RANGE,
    &ALLOWLIST_SOURCE_HEADER,
    &LIMIT_RPS,
    &LIMIT_CONNECTIONS,
    &LIMIT_WHITELIST,
    &LIMIT_REQ_STATUS_CODE,
    &LIMIT_CONN_STATUS_CODE,
    &BLUE_GREEN_BALANCE,
    &BLUE_GREEN_DEPLOY,
    &BLUE_GREEN_MODE,
    &BLUE_GREEN_HEADER,
    &BLUE_GREEN_COOKIE,
    &DNS_RESOLVERS,
    &DNS_ACCEPTED_PAYLOAD_SIZE,
    &DNS_HOLD_OBSOLETE,
    &DNS_HOLD_VALID,
    &DNS_TIMEOUT_RETRY,
    &DNS_CLUSTER_DOMAIN,
    &USE_RESOLVER,
    &AUTH_TYPE,
    &AUTH_SECRET,
    &OAUTH,
    &OAUTH_URI_PREFIX,
    &OAUTH_HEADERS,
    &AUTH_REALM,
    &AUTH_URL,
    &AUTH_METHOD,
    &AUTH_SIGNIN,
    &AUTH_HEADERS_REQUEST,
    &AUTH_HEADERS_SUCCEED,
    &AUTH_HEADERS_FAIL,
    &AUTH_TIMEOUT,
];

/// What to say about a name that is no key of ours.
fn unknown_key(name: &str) -> String {
    match unsupported::why(name) {
        Some(why) => format!("'{name}' is not supported: {why}"),
        None => format!("unknown configuration key '{name}'"),
    }
}

/// ingress-nginx's annotation prefix: not read, since its keys mean other things (and
/// take other values) than haproxy-ingress's, but said once per object, so that a
/// migration does not lose them silently.
const INGRESS_NGINX_PREFIX: &str = "nginx.ingress.kubernetes.io/";

/// One line naming an object's ingress-nginx annotations, if it has any: which have a
/// portcullis key of the same name (to set under one of our prefixes, after checking its
/// meaning) and which do not.
fn ingress_nginx_note(annotations: Option<&BTreeMap<String, String>>) -> Option<String> {
    let names: Vec<&str> = annotations
        .into_iter()
        .flatten()
        .filter_map(|(annotation, _)| annotation.strip_prefix(INGRESS_NGINX_PREFIX))
        .collect();
    if names.is_empty() {
        return None;
    }
    let (ours, others): (Vec<&str>, Vec<&str>) =
        names.iter().partition(|name| find_key(name).is_some());
    let list = |names: &[&str]| {
        const SHOWN: usize = 8;
        let mut text = names
            .iter()
            .take(SHOWN)
            .map(|name| format!("'{}'", name.escape_debug()))
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > SHOWN {
            text += &format!(" and {} more", names.len() - SHOWN);
        }
        text
    };
    let mut message = format!(
        "{} ingress-nginx annotation(s) ({INGRESS_NGINX_PREFIX}) are not read",
        names.len()
    );
    if !ours.is_empty() {
        message += &format!(
            "; {} name(s) a portcullis key (set under portcullis.dev/ or haproxy-ingress.github.io/ once its meaning in docs/configuration.md is the one wanted)",
            list(&ours)
        );
    }
    if !others.is_empty() {
        message += &format!("; {} have no portcullis key", list(&others));
    }
    Some(message)
}

/// What to say about a deprecated key that is set, if it is one.
fn deprecation(name: &str) -> Option<String> {
    access::DEPRECATED
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(old, new)| {
            format!("'{old}' is deprecated: use '{new}' (this one is ignored when that one is set)")
        })
}

/// Whether an invalid value of the key refuses clients rather than falling back.
fn fails_closed(name: &str) -> bool {
    [
        &access::FAIL_CLOSED[..],
        &auth_tls::FAIL_CLOSED,
        &backend_tls::FAIL_CLOSED,
        &routing::FAIL_CLOSED,
    ]
    .iter()
    .any(|keys| keys.contains(&name))
}

/// What happens to a key's invalid value: `fallback` names what is used instead.
fn invalid_message(name: &str, why: &str, fallback: &str) -> String {
    if auth::FAIL_CLOSED.contains(&name) {
        format!(
            "invalid value: {why}; the paths it applies to answer 403 to every request until it is fixed"
        )
    } else if backend_tls::FAIL_CLOSED.contains(&name) {
        format!(
            "invalid value: {why}; the backend gets no servers until it is fixed (when it speaks TLS to them)"
        )
    } else if routing::FAIL_CLOSED.contains(&name) {
        format!(
            "invalid value: {why}; the paths it applies to are left out until it is fixed (served without the match, they would take requests it keeps away)"
        )
    } else if auth_tls::FAIL_CLOSED.contains(&name) {
        format!(
            "invalid value: {why}; requests to the Ingress's TLS hosts are answered 496 (and connections to a TCP service port it sets refused) until it is fixed"
        )
    } else if fails_closed(name) {
        format!(
            "invalid value: {why}; every client of the paths it applies to is refused (403) until it is fixed"
        )
    } else {
        format!("invalid value: {why}; {fallback}")
    }
}

/// Where a fail-closed key's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting<T> {
    /// A valid value, and the object that set it (`ConfigMap` for the global one).
    Valid(T, String),
    /// The most specific layer that sets the key holds an invalid value.
    Refused,
}

fn find_key(name: &str) -> Option<&'static dyn KeyInfo> {
    ALL_KEYS.iter().copied().find(|key| key.name() == name)
}

/// The key `name` names, unless it names none or a global one (set in the global
/// ConfigMap only): those are reported, the second with `why_here` after the advice.
fn non_global_key(
    name: &str,
    why_here: &str,
    report: &impl Fn(String) -> Diagnostic,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<&'static dyn KeyInfo> {
    let Some(key) = find_key(name) else {
        diagnostics.push(report(unknown_key(name)));
        return None;
    };
    if key.scope() == Scope::Global {
        diagnostics.push(report(format!(
            "'{name}' is a global key: set it in the global ConfigMap{why_here}"
        )));
        return None;
    }
    Some(key)
}

/// The global ConfigMap's data, checked once; values are looked up by key.
#[derive(Debug, Default)]
pub struct GlobalConfig {
    valid: KeyTable,
    /// Fail-closed keys set to an invalid value.
    refused: KeySet,
    /// Keys set to a value that does not parse.
    invalid: KeySet,
}

impl GlobalConfig {
    /// Checks the ConfigMap's data, reporting unknown keys and invalid values (which then
    /// fall back to the default).
    pub fn new(
        data: Option<&BTreeMap<String, String>>,
        origin: Option<&ObjectRef>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut valid = KeyTable::default();
        let mut refused = KeySet::default();
        let mut invalid = KeySet::default();
        for (name, value) in data.into_iter().flatten() {
            let report = |message: String| Diagnostic {
                object: origin
                    .cloned()
                    .unwrap_or_else(|| ObjectRef::new(resources::Kind::ConfigMap, "", "")),
                field: format!("data.{name}"),
                message,
            };
            let Some(key) = find_key(name) else {
                diagnostics.push(report(unknown_key(name)));
                continue;
            };
            if let Some(message) = deprecation(name) {
                diagnostics.push(report(message));
            }
            match key.parse_value(value) {
                Ok(parsed) => valid.set_once(key.name(), parsed),
                Err(why) => {
                    invalid.insert(key.name());
                    if fails_closed(key.name()) {
                        refused.insert(key.name());
                    }
                    diagnostics.push(report(invalid_message(
                        name,
                        &why,
                        &format!("the default '{}' is used", key.default_text()),
                    )));
                }
            }
        }
        Self {
            valid,
            refused,
            invalid,
        }
    }

    /// The key's value: the ConfigMap's when set and valid, else the default.
    pub fn get<T: Clone + 'static>(&self, key: &Key<T>) -> T {
        self.value(key).unwrap_or_else(|| key.default_value())
    }

    /// The ConfigMap's value, when set and valid.
    pub fn value<T: Clone + 'static>(&self, key: &Key<T>) -> Option<T> {
        self.valid.get(key.name)
    }

    /// Whether it sets any key of `group`, to any value (valid or not).
    pub fn sets_any(&self, group: &KeyGroup) -> bool {
        self.valid.sets_any(group) || self.refused.names_any(group) || self.invalid.names_any(group)
    }
}

/// The annotations of one object that configure keys, checked once.
#[derive(Debug, Default)]
pub struct Annotations {
    valid: KeyTable,
    /// Fail-closed keys set to an invalid value.
    refused: KeySet,
    /// The object; named (`Kind namespace/name`) only where a setting is traced to it,
    /// which few keys are.
    origin: Option<ObjectRef>,
    /// Keys set to a value that does not parse.
    invalid: KeySet,
    /// Keys that come from the object's IngressClass's parameters, and that ConfigMap:
    /// a setting traced to one names the ConfigMap, not the object.
    from_class: Option<(KeySet, ObjectRef)>,
    /// The backend keys it sets and their text, valid or not: what a merge of the
    /// backends Ingresses share compares (see [`BackendKeys`]).
    backend_keys: Vec<(&'static str, Box<str>)>,
    /// The annotation prefix each key was first read under (an index into
    /// [`ANNOTATION_PREFIXES`]), so that a report names the annotation as written.
    prefixes: Box<[(&'static str, u8)]>,
}

/// The backend keys one object sets (its annotations and its IngressClass's
/// parameters), by name, with their text. A backend that several Ingresses use takes each
/// key from the oldest that sets it, as haproxy-ingress does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendKeys(Vec<(&'static str, Box<str>)>);

impl BackendKeys {
    /// The keys and their text, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.0.iter().map(|(name, text)| (*name, &**text))
    }
}

impl Annotations {
    /// Reads the keys under our prefixes; reports unknown keys, global keys set as
    /// annotations, and invalid values (which then fall back to the ConfigMap's value).
    pub fn new(
        annotations: Option<&BTreeMap<String, String>>,
        origin: &ObjectRef,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut valid = KeyTable::default();
        let mut refused = KeySet::default();
        let mut invalid = KeySet::default();
        let mut backend_keys = Vec::new();
        let mut prefixes = Vec::new();
        // Our own prefix wins over the migration prefix, whatever the map order.
        for (prefix_index, prefix) in (0_u8..).zip(ANNOTATION_PREFIXES) {
            for (annotation, value) in annotations.into_iter().flatten() {
                let Some(name) = annotation.strip_prefix(prefix) else {
                    continue;
                };
                let report = |message: String| Diagnostic {
                    object: origin.clone(),
                    field: format!("metadata.annotations[{annotation}]"),
                    message,
                };
                let Some(key) = non_global_key(name, "", &report, diagnostics) else {
                    continue;
                };
                // A Service's keys are its backend's and its paths': a host's are the
                // Ingress's, which lists the host.
                if key.scope() == Scope::Host && origin.kind == resources::Kind::Service {
                    diagnostics.push(report(format!(
                        "'{name}' is a host key: set it on the Ingress of the host (a Service's annotations set backend and path keys); it is ignored here"
                    )));
                    continue;
                }
                if let Some(message) = deprecation(name) {
                    diagnostics.push(report(message));
                }
                // Under a less preferred prefix, a key already read is checked only.
                let read = valid.contains(key.name()) || refused.contains(key.name());
                if !prefixes.iter().any(|(name, _)| *name == key.name()) {
                    prefixes.push((key.name(), prefix_index));
                }
                if !read
                    && key.scope() == Scope::Backend
                    && !backend_keys.iter().any(|(name, _)| *name == key.name())
                {
                    backend_keys.push((key.name(), value.as_str().into()));
                }
                match key.parse_value(value) {
                    Ok(parsed) => {
                        if !read {
                            valid.set_once(key.name(), parsed);
                        }
                    }
                    Err(why) => {
                        invalid.insert(key.name());
                        if fails_closed(key.name()) && !read {
                            refused.insert(key.name());
                        }
                        diagnostics.push(report(invalid_message(
                            name,
                            &why,
                            "the global value is used",
                        )));
                    }
                }
            }
        }
        if let Some(message) = ingress_nginx_note(annotations) {
            diagnostics.push(Diagnostic {
                object: origin.clone(),
                field: "metadata.annotations".to_owned(),
                message,
            });
        }
        Self {
            valid,
            refused,
            invalid,
            origin: Some(origin.clone()),
            from_class: None,
            backend_keys,
            prefixes: prefixes.into_boxed_slice(),
        }
    }

    /// The field of the annotation that sets the key `name`, as written (with its
    /// prefix): what a report about the key names.
    pub(crate) fn annotation_field(&self, name: &str) -> String {
        format!("metadata.annotations[{}]", self.annotation_of(name))
    }

    /// The annotation that sets the key `name`, as written (with its prefix; our own
    /// when the object does not set it).
    fn annotation_of(&self, name: &str) -> String {
        let prefix = self
            .prefixes
            .iter()
            .find(|(key, _)| *key == name)
            .and_then(|(_, index)| ANNOTATION_PREFIXES.get(usize::from(*index)))
            .unwrap_or(&ANNOTATION_PREFIXES[0]);
        format!("{prefix}{name}")
    }

    /// The backend keys it sets, when it sets any.
    pub fn backend_keys(&self) -> Option<BackendKeys> {
        let mut keys = self.backend_keys.clone();
        keys.sort_unstable_by_key(|(name, _)| *name);
        (!keys.is_empty()).then_some(BackendKeys(keys))
    }

    /// Adds the keys of the object's IngressClass's parameters (a ConfigMap's data, keys
    /// without a prefix) under its own annotations: a key the object sets, validly or
    /// not, keeps the object's value (haproxy-ingress's precedence). Reports, on the
    /// ConfigMap, unknown keys, global keys and invalid values.
    pub fn under_class_parameters(
        mut self,
        data: Option<&BTreeMap<String, String>>,
        configmap: &ObjectRef,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut from_class = KeySet::default();
        for (name, value) in data.into_iter().flatten() {
            let report = |message: String| Diagnostic {
                object: configmap.clone(),
                field: format!("data.{name}"),
                message,
            };
            let why_here = " (an IngressClass's parameters set host, backend and path keys); it is ignored here";
            let Some(key) = non_global_key(name, why_here, &report, diagnostics) else {
                continue;
            };
            if let Some(message) = deprecation(name) {
                diagnostics.push(report(message));
            }
            let own = self.valid.contains(key.name())
                || self.refused.contains(key.name())
                || self.invalid.contains(key.name());
            if !own && key.scope() == Scope::Backend {
                self.backend_keys.push((key.name(), value.as_str().into()));
            }
            match key.parse_value(value) {
                Ok(parsed) => {
                    if !own {
                        self.valid.set_once(key.name(), parsed);
                        from_class.insert(key.name());
                    }
                }
                Err(why) => {
                    if !own {
                        self.invalid.insert(key.name());
                        if fails_closed(key.name()) {
                            self.refused.insert(key.name());
                        }
                        from_class.insert(key.name());
                    }
                    diagnostics.push(report(invalid_message(
                        name,
                        &why,
                        "the global value is used",
                    )));
                }
            }
        }
        self.from_class = Some((from_class, configmap.clone()));
        self
    }

    /// The object a key's setting is traced to: the IngressClass's ConfigMap for a key
    /// that comes from it, else the object.
    fn origin_of(&self, name: &'static str) -> Option<&ObjectRef> {
        match &self.from_class {
            Some((keys, configmap)) if keys.contains(name) => Some(configmap),
            _ => self.origin.as_ref(),
        }
    }

    /// The key's value: the annotation's when set and valid, else the global one.
    pub fn get<T: Clone + 'static>(&self, key: &Key<T>, global: &GlobalConfig) -> T {
        self.value(key).unwrap_or_else(|| global.get(key))
    }

    /// The annotation's value, when set and valid.
    pub fn value<T: Clone + 'static>(&self, key: &Key<T>) -> Option<T> {
        self.valid.get(key.name)
    }

    /// Whether it sets any key of `group`, to any value (valid or not).
    pub fn sets_any(&self, group: &KeyGroup) -> bool {
        self.valid.sets_any(group) || self.refused.names_any(group) || self.invalid.names_any(group)
    }
}

/// Where a backend or path key's value comes from, most specific first: the backend's
/// Service's annotations, the object's annotations, then the global ConfigMap and the
/// default (haproxy-ingress's precedence).
#[derive(Debug, Clone, Copy)]
pub struct Keys<'a> {
    /// The annotations of the backend's Service, once it is known.
    pub service: Option<&'a Annotations>,
    /// The annotations of the Ingress (an HTTPRoute has none of its own).
    pub object: Option<&'a Annotations>,
    /// The global ConfigMap.
    pub global: &'a GlobalConfig,
}

impl<'a> Keys<'a> {
    /// Where the most specific layer that sets the key validly has it: the object (the
    /// Service, the Ingress, or its IngressClass's ConfigMap) and the field, for a
    /// report on what that value does; `None` when only the global ConfigMap or the
    /// default gives it.
    pub fn set_at(&self, name: &'static str) -> Option<(ObjectRef, String)> {
        let annotations = [self.service, self.object]
            .into_iter()
            .flatten()
            .find(|annotations| annotations.valid.contains(name))?;
        let origin = annotations.origin_of(name)?;
        let field = if origin.kind == resources::Kind::ConfigMap {
            format!("data.{name}")
        } else {
            format!("metadata.annotations[{}]", annotations.annotation_of(name))
        };
        Some((origin.clone(), field))
    }

    /// The key's value from the most specific layer that sets it validly.
    pub fn get<T: Clone + 'static>(&self, key: &Key<T>) -> T {
        [self.service, self.object]
            .into_iter()
            .flatten()
            .find_map(|annotations| annotations.value(key))
            .unwrap_or_else(|| self.global.get(key))
    }

    /// The value of the most specific annotation that sets the key validly, without the
    /// global ConfigMap's: for settings the `defaults` section already holds.
    pub fn annotated<T: Clone + 'static>(&self, key: &Key<T>) -> Option<T> {
        [self.service, self.object]
            .into_iter()
            .flatten()
            .find_map(|annotations| annotations.value(key))
    }

    /// The value of the most specific layer that sets the key validly, if any does;
    /// `None` when only the default applies.
    pub fn explicit<T: Clone + 'static>(&self, key: &Key<T>) -> Option<T> {
        self.annotated(key).or_else(|| self.global.value(key))
    }

    /// A fail-closed key's value from the most specific layer that sets it, valid or
    /// not, with the object that set it; `None` when no layer sets it.
    pub fn setting<T: Clone + 'static>(&self, key: &Key<T>) -> Option<Setting<T>> {
        for annotations in [self.service, self.object].into_iter().flatten() {
            if annotations.refused.contains(key.name) {
                return Some(Setting::Refused);
            }
            if let Some(value) = annotations.value(key) {
                let origin = annotations.origin_of(key.name).map(ToString::to_string);
                return Some(Setting::Valid(value, origin.unwrap_or_default()));
            }
        }
        if self.global.refused.contains(key.name) {
            return Some(Setting::Refused);
        }
        self.global
            .value(key)
            .map(|value| Setting::Valid(value, "ConfigMap".to_owned()))
    }

    /// Whether the most specific layer that sets the key sets it to a value that does not
    /// parse: for keys whose fallback would weaken a protection (an unreadable `auth-url`
    /// must not leave its path open).
    pub fn set_invalidly<T: Clone + 'static>(&self, key: &Key<T>) -> bool {
        for annotations in [self.service, self.object].into_iter().flatten() {
            if annotations.value(key).is_some() {
                return false;
            }
            if annotations.invalid.contains(key.name) {
                return true;
            }
        }
        self.global.value(key).is_none() && self.global.invalid.contains(key.name)
    }

    /// Whether any layer sets a key of `group`, to any value (valid or not): when none
    /// does, every key of it reads as its default, and none as set invalidly.
    pub fn set_any(&self, group: &KeyGroup) -> bool {
        [self.service, self.object]
            .into_iter()
            .flatten()
            .any(|annotations| annotations.sets_any(group))
            || self.global.sets_any(group)
    }

    /// The same layers, under a Service's annotations.
    pub fn with_service(self, service: &'a Annotations) -> Self {
        Self {
            service: Some(service),
            ..self
        }
    }
}

/// Calls `check` with layers that set one key alone, for every key of every scope, in
/// each layer (a Service's annotations, an object's, the global ConfigMap), to each value
/// its documentation quotes, its default, and a value no key accepts; with a text naming
/// the case. For tests that a step skipping its keys when no layer sets one agrees with
/// the step reading them.
#[cfg(test)]
pub(crate) fn every_key_set_alone(mut check: impl FnMut(&Keys<'_>, &dyn KeyInfo, &str)) {
    let mut diagnostics = Vec::new();
    let no_keys = GlobalConfig::new(None, None, &mut diagnostics);
    let origin = ObjectRef::new(resources::Kind::Ingress, "shop", "web");
    for key in ALL_KEYS {
        let quoted = key.accepted_values().split('`').skip(1).step_by(2);
        for value in quoted.chain([key.default_text(), "~not a value~"]) {
            let data = BTreeMap::from([(key.name().to_owned(), value.to_owned())]);
            let global = GlobalConfig::new(Some(&data), None, &mut diagnostics);
            let annotated =
                BTreeMap::from([(format!("portcullis.dev/{}", key.name()), value.to_owned())]);
            let annotations = Annotations::new(Some(&annotated), &origin, &mut diagnostics);
            let layered = [
                ("an object's annotation", None, Some(&annotations), &no_keys),
                ("a Service's annotation", Some(&annotations), None, &no_keys),
                ("the global ConfigMap", None, None, &global),
            ];
            for (layer, service, object, global) in layered {
                let layers = Keys {
                    service,
                    object,
                    global,
                };
                check(
                    &layers,
                    *key,
                    &format!("{} = `{value}` in {layer}", key.name()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ingress_nginx_annotations_are_named_once_per_object_and_not_read() {
        let object = ObjectRef::new(resources::Kind::Ingress, "web", "app");
        let map: BTreeMap<String, String> = [
            ("nginx.ingress.kubernetes.io/ssl-redirect", "false"),
            ("nginx.ingress.kubernetes.io/proxy-body-size", "8m"),
            (
                "nginx.ingress.kubernetes.io/configuration-snippet",
                "more_set_headers x",
            ),
            ("haproxy-ingress.github.io/timeout-server", "5s"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let mut diagnostics = Vec::new();
        let annotations = Annotations::new(Some(&map), &object, &mut diagnostics);
        let messages: Vec<String> = diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.field, d.message))
            .collect();
        assert_eq!(
            messages,
            [
                "metadata.annotations: 3 ingress-nginx annotation(s) (nginx.ingress.kubernetes.io/) are not read; 'proxy-body-size', 'ssl-redirect' name(s) a portcullis key (set under portcullis.dev/ or haproxy-ingress.github.io/ once its meaning in docs/configuration.md is the one wanted); 'configuration-snippet' have no portcullis key"
            ]
        );
        assert_eq!(annotations.value(&SSL_REDIRECT), None, "not read");
        assert!(annotations.value(&TIMEOUT_SERVER).is_some());
        assert_eq!(ingress_nginx_note(None), None);
    }

    #[test]
    fn our_prefix_beats_haproxy_ingress_s_two_and_a_service_beats_the_object() {
        let object = ObjectRef::new(resources::Kind::Ingress, "web", "app");
        let service = ObjectRef::new(resources::Kind::Service, "web", "app");
        let read = |pairs: &[(&str, &str)], origin: &ObjectRef| {
            let map: BTreeMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            Annotations::new(Some(&map), origin, &mut Vec::new())
        };
        let on_object = read(
            &[
                ("ingress.kubernetes.io/timeout-server", "1s"),
                ("haproxy-ingress.github.io/timeout-server", "2s"),
                ("ingress.kubernetes.io/timeout-connect", "3s"),
                ("portcullis.dev/balance-algorithm", "source"),
            ],
            &object,
        );
        let on_service = read(
            &[("ingress.kubernetes.io/balance-algorithm", "first")],
            &service,
        );
        let global = GlobalConfig::default();
        let keys = Keys {
            service: None,
            object: Some(&on_object),
            global: &global,
        };
        assert_eq!(keys.get(&TIMEOUT_SERVER).as_str(), "2s");
        assert_eq!(keys.get(&TIMEOUT_CONNECT).as_str(), "3s");
        assert_eq!(keys.get(&BALANCE_ALGORITHM), model::Balance::Source);
        let keys = keys.with_service(&on_service);
        assert_eq!(keys.get(&BALANCE_ALGORITHM), model::Balance::First);
        assert_eq!(keys.get(&TIMEOUT_SERVER).as_str(), "2s");
    }

    #[test]
    fn unsupported_deprecated_and_fail_closed_keys_are_reported_as_such() {
        let mut diagnostics = Vec::new();
        let configmap = ObjectRef::new(resources::Kind::ConfigMap, "ops", "portcullis");
        let data: BTreeMap<String, String> = [
            ("allowlist-source-range", "10.0.0.0/8"),
            ("modsecurity-endpoints", "10.0.0.1:12345"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let global = GlobalConfig::new(Some(&data), Some(&configmap), &mut diagnostics);
        let ingress = ObjectRef::new(resources::Kind::Ingress, "web", "app");
        let read = |pairs: &[(&str, &str)], diagnostics: &mut Vec<Diagnostic>| {
            let map: BTreeMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            Annotations::new(Some(&map), &ingress, diagnostics)
        };
        let annotated = read(
            &[
                ("ingress.kubernetes.io/waf", "modsecurity"),
                ("portcullis.dev/allowlist-source-range", "10.0.0.0/8, nope"),
                (
                    "haproxy-ingress.github.io/whitelist-source-range",
                    "192.168.0.0/16",
                ),
            ],
            &mut diagnostics,
        );
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "ConfigMap ops/portcullis: data.modsecurity-endpoints: 'modsecurity-endpoints' is not supported: portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored",
                "Ingress web/app: metadata.annotations[portcullis.dev/allowlist-source-range]: invalid value: 'nope' is not an IP address (1 of 2 entries invalid); every client of the paths it applies to is refused (403) until it is fixed",
                "Ingress web/app: metadata.annotations[haproxy-ingress.github.io/whitelist-source-range]: 'whitelist-source-range' is deprecated: use 'allowlist-source-range' (this one is ignored when that one is set)",
                "Ingress web/app: metadata.annotations[ingress.kubernetes.io/waf]: 'waf' is not supported: portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored",
            ]
        );
        let keys = Keys {
            service: None,
            object: Some(&annotated),
            global: &global,
        };
        // The Ingress's bad value is not replaced by the ConfigMap's good one.
        assert_eq!(
            keys.setting(&ALLOWLIST_SOURCE_RANGE),
            Some(Setting::Refused)
        );
        let unset = Annotations::default();
        let keys = Keys {
            object: Some(&unset),
            ..keys
        };
        assert!(matches!(
            keys.setting(&ALLOWLIST_SOURCE_RANGE),
            Some(Setting::Valid(_, origin)) if origin == "ConfigMap"
        ));
        assert_eq!(keys.setting(&DENYLIST_SOURCE_RANGE), None);
    }

    #[test]
    fn every_default_parses() {
        for key in ALL_KEYS {
            assert_eq!(key.validate(key.default_text()), Ok(()), "{}", key.name());
        }
    }

    #[test]
    fn annotation_beats_configmap_beats_default_and_bad_values_are_reported() {
        let mut diagnostics = Vec::new();
        let configmap = ObjectRef::new(resources::Kind::ConfigMap, "ops", "portcullis");
        let data: BTreeMap<String, String> = [
            ("timeout-server", "30s"),
            ("timeout-connect", "soon"),
            ("balance-algorithm", "leastconn"),
            ("no-such-key", "1"),
            ("waf", "modsecurity"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let global = GlobalConfig::new(Some(&data), Some(&configmap), &mut diagnostics);
        let ingress = ObjectRef::new(resources::Kind::Ingress, "web", "app");
        let annotations: BTreeMap<String, String> = [
            ("haproxy-ingress.github.io/balance-algorithm", "source"),
            ("portcullis.dev/balance-algorithm", "first"),
            (
                "haproxy-ingress.github.io/timeout-server",
                "7s\nlisten evil",
            ),
            ("portcullis.dev/max-connections", "5"),
            ("kubernetes.io/ingress.class", "other"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let annotated = Annotations::new(Some(&annotations), &ingress, &mut diagnostics);

        assert_eq!(
            annotated.get(&BALANCE_ALGORITHM, &global),
            model::Balance::First
        );
        assert_eq!(annotated.get(&TIMEOUT_SERVER, &global).as_str(), "30s");
        assert_eq!(annotated.get(&TIMEOUT_CONNECT, &global).as_str(), "5s");
        assert!(annotated.get(&SSL_REDIRECT, &global));
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "ConfigMap ops/portcullis: data.no-such-key: unknown configuration key 'no-such-key'",
                "ConfigMap ops/portcullis: data.timeout-connect: invalid value: 'soon' is not a duration such as 5s, 500ms or 1m; the default '5s' is used",
                "ConfigMap ops/portcullis: data.waf: 'waf' is not supported: portcullis has no web application firewall (no ModSecurity or Coraza agent over SPOE): requests are not inspected, and the key is ignored",
                "Ingress web/app: metadata.annotations[portcullis.dev/max-connections]: 'max-connections' is a global key: set it in the global ConfigMap",
                "Ingress web/app: metadata.annotations[haproxy-ingress.github.io/timeout-server]: invalid value: '7s\\nlisten evil' has unknown unit 's\\nlisten evil' (use us, ms, s, m, h or d); the global value is used",
            ]
        );
    }
}
