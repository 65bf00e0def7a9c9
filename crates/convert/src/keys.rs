//! Configuration keys: one typed definition each (name, scope, default, parser, doc),
//! read from the global ConfigMap and, for backend and path scope, from annotations.

use std::collections::BTreeMap;

use model::{Balance, Cidr, ForwardFor, HaproxyDuration, HeaderName};
use resources::ObjectRef;

use crate::Diagnostic;

/// Annotation prefixes, in precedence order; the second one eases migration.
pub const ANNOTATION_PREFIXES: [&str; 2] = ["portcullis.dev/", "haproxy-ingress.github.io/"];

/// Where a key may be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole proxy: global ConfigMap only.
    Global,
    /// One backend: ConfigMap default, overridden by an Ingress annotation.
    Backend,
    /// One path: ConfigMap default, overridden by an Ingress annotation.
    Path,
}

/// One configuration key.
#[derive(Debug)]
pub struct Key<T> {
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
    /// Checks a value.
    fn validate(&self, value: &str) -> Result<(), String>;
}

impl<T> KeyInfo for Key<T> {
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
    fn validate(&self, value: &str) -> Result<(), String> {
        (self.parse)(value).map(drop)
    }
}

impl<T> Key<T> {
    /// The parsed default.
    #[allow(clippy::expect_used)] // defaults are constants; `every_default_parses` checks them
    pub fn default_value(&self) -> T {
        (self.parse)(self.default).expect("key defaults are valid")
    }
}

fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(format!("'{other}' is not true or false")),
    }
}

fn parse_duration(text: &str) -> Result<HaproxyDuration, String> {
    HaproxyDuration::parse(text)
}

/// What [`parse_duration`] accepts.
const DURATION_VALUES: &str = "a whole number followed by us, ms, s, m, h or d (a bare number counts milliseconds), such as `500ms`, `5s` or `1m`; `0`, or from `1ms` to `2147483647ms` (about 24.8 days)";

fn parse_redirect_code(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(code @ (301 | 302 | 303 | 307 | 308)) => Ok(code),
        _ => Err(format!(
            "'{}' is not one of 301, 302, 303, 307, 308",
            text.trim()
        )),
    }
}

fn parse_balance(text: &str) -> Result<Balance, String> {
    Balance::ALL
        .iter()
        .find(|(_, keyword)| *keyword == text.trim())
        .map(|(b, _)| *b)
        .ok_or_else(|| {
            let known: Vec<&str> = Balance::ALL.iter().map(|(_, k)| *k).collect();
            format!("'{}' is not one of {}", text.trim(), known.join(", "))
        })
}

fn parse_max_connections(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{}' is not a whole number from 1 to 1000000",
            text.trim()
        )),
    }
}

/// `ssl-redirect`.
pub const SSL_REDIRECT: Key<bool> = Key {
    name: "ssl-redirect",
    scope: Scope::Path,
    default: "true",
    accepted_values: "`true` or `false`",
    parse: parse_bool,
    doc: "Redirect plain-HTTP requests to HTTPS when the host has TLS.",
};
/// `ssl-redirect-code`.
pub const SSL_REDIRECT_CODE: Key<u16> = Key {
    name: "ssl-redirect-code",
    scope: Scope::Path,
    default: "308",
    accepted_values: "`301`, `302`, `303`, `307` or `308`",
    parse: parse_redirect_code,
    doc: "The status code of the redirect to HTTPS (see `ssl-redirect`).",
};
/// `balance-algorithm`.
pub const BALANCE_ALGORITHM: Key<Balance> = Key {
    name: "balance-algorithm",
    scope: Scope::Backend,
    default: "roundrobin",
    accepted_values: "`roundrobin`, `static-rr`, `leastconn`, `first`, `source`, `uri` or `random`",
    parse: parse_balance,
    doc: "How HAProxy spreads the backend's requests over its servers (HAProxy's `balance`).",
};
/// `timeout-connect`.
pub const TIMEOUT_CONNECT: Key<HaproxyDuration> = Key {
    name: "timeout-connect",
    scope: Scope::Backend,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to connect to a server.",
};
/// `timeout-server`.
pub const TIMEOUT_SERVER: Key<HaproxyDuration> = Key {
    name: "timeout-server",
    scope: Scope::Backend,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the server side.",
};
/// `timeout-client`.
pub const TIMEOUT_CLIENT: Key<HaproxyDuration> = Key {
    name: "timeout-client",
    scope: Scope::Global,
    default: "50s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum inactivity time on the client side.",
};
/// `timeout-http-request`.
pub const TIMEOUT_HTTP_REQUEST: Key<HaproxyDuration> = Key {
    name: "timeout-http-request",
    scope: Scope::Global,
    default: "5s",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to receive a complete HTTP request.",
};
/// `timeout-keep-alive`.
pub const TIMEOUT_KEEP_ALIVE: Key<HaproxyDuration> = Key {
    name: "timeout-keep-alive",
    scope: Scope::Global,
    default: "1m",
    accepted_values: DURATION_VALUES,
    parse: parse_duration,
    doc: "Maximum time to wait for a new request on a kept-alive connection.",
};
/// `max-connections`.
pub const MAX_CONNECTIONS: Key<u32> = Key {
    name: "max-connections",
    scope: Scope::Global,
    default: "2000",
    accepted_values: "a whole number from `1` to `1000000`",
    parse: parse_max_connections,
    doc: "Maximum concurrent connections of the whole proxy (global maxconn).",
};

fn parse_forward_for(text: &str) -> Result<ForwardFor, String> {
    match text.trim() {
        "add" => Ok(ForwardFor::Add),
        "update" => Ok(ForwardFor::Update),
        "ifmissing" => Ok(ForwardFor::IfMissing),
        "ignore" => Ok(ForwardFor::Ignore),
        other => Err(format!(
            "'{}' is not add, update, ifmissing or ignore",
            other.escape_debug()
        )),
    }
}

/// A header name, or nothing when empty.
fn parse_optional_header(text: &str) -> Result<Option<HeaderName>, String> {
    let text = text.trim();
    if text.is_empty() {
        Ok(None)
    } else {
        HeaderName::parse(text).map(Some)
    }
}

fn parse_cidr_list(text: &str) -> Result<Vec<Cidr>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(Cidr::parse)
        .collect()
}

/// `forwardfor`.
pub const FORWARDFOR: Key<ForwardFor> = Key {
    name: "forwardfor",
    scope: Scope::Global,
    default: "add",
    accepted_values: "`add`, `update`, `ifmissing` or `ignore`",
    parse: parse_forward_for,
    doc: "How X-Forwarded-For reaches backends: `add` replaces the client's header with the client address (the client's is kept in `original-forwarded-for-hdr`); `update` appends the client address to it; `ifmissing` adds the client address only when the request has none; `ignore` passes what the client sent. Under `add`, a proxy in `forwardfor-trusted-cidrs` is treated as under `update`.",
};
/// `original-forwarded-for-hdr`.
pub const ORIGINAL_FORWARDED_FOR_HDR: Key<Option<HeaderName>> = Key {
    name: "original-forwarded-for-hdr",
    scope: Scope::Global,
    default: "X-Original-Forwarded-For",
    accepted_values: "a header name of letters, digits and dashes, such as `X-Original-Forwarded-For`, or empty",
    parse: parse_optional_header,
    doc: "The header in which `forwardfor: add` keeps the client's X-Forwarded-For; empty drops it.",
};
/// `real-ip-hdr`.
pub const REAL_IP_HDR: Key<Option<HeaderName>> = Key {
    name: "real-ip-hdr",
    scope: Scope::Global,
    default: "X-Real-IP",
    accepted_values: "a header name of letters, digits and dashes, such as `X-Real-IP`, or empty",
    parse: parse_optional_header,
    doc: "The header set to the client address, unless a proxy in `forwardfor-trusted-cidrs` sent it already; empty sets none.",
};
/// `forwardfor-trusted-cidrs`.
pub const FORWARDFOR_TRUSTED_CIDRS: Key<Vec<Cidr>> = Key {
    name: "forwardfor-trusted-cidrs",
    scope: Scope::Global,
    default: "",
    accepted_values: "IPv4 or IPv6 addresses or address blocks, separated by commas, such as `10.0.0.0/8, 192.168.1.7, 2001:db8::/32`, or empty",
    parse: parse_cidr_list,
    doc: "The proxies in front of HAProxy, whose forwarded headers are trusted: their X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Port, `real-ip-hdr` and Forwarded headers are kept, and `forwardfor: add` treats their X-Forwarded-For as `update` does. Every other client's such headers are replaced, and its Forwarded header removed.",
};

/// Every key.
pub static ALL_KEYS: &[&dyn KeyInfo] = &[
    &SSL_REDIRECT,
    &SSL_REDIRECT_CODE,
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
];

fn find_key(name: &str) -> Option<&'static dyn KeyInfo> {
    ALL_KEYS.iter().copied().find(|key| key.name() == name)
}

/// The global ConfigMap's data, checked once; values are looked up by key.
#[derive(Debug, Default)]
pub struct GlobalConfig {
    valid: BTreeMap<String, String>,
    /// The ports Gateway listeners are compared with (from the command line).
    pub listener_ports: crate::gateway_listener::ListenerPorts,
}

impl GlobalConfig {
    /// Checks the ConfigMap's data, reporting unknown keys and invalid values (which then
    /// fall back to the default).
    pub fn new(
        data: Option<&BTreeMap<String, String>>,
        origin: Option<&ObjectRef>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut valid = BTreeMap::new();
        for (name, value) in data.into_iter().flatten() {
            let report = |message: String| Diagnostic {
                object: origin
                    .cloned()
                    .unwrap_or_else(|| ObjectRef::new(resources::Kind::ConfigMap, "", "")),
                field: format!("data.{name}"),
                message,
            };
            match find_key(name) {
                None => diagnostics.push(report(format!("unknown configuration key '{name}'"))),
                Some(key) => match key.validate(value) {
                    Ok(()) => {
                        valid.insert(name.clone(), value.clone());
                    }
                    Err(why) => diagnostics.push(report(format!(
                        "invalid value: {why}; the default '{}' is used",
                        key.default_text()
                    ))),
                },
            }
        }
        Self {
            valid,
            listener_ports: crate::gateway_listener::ListenerPorts::default(),
        }
    }

    /// The key's value: the ConfigMap's when set and valid, else the default.
    pub fn get<T>(&self, key: &Key<T>) -> T {
        self.valid
            .get(key.name)
            .and_then(|text| (key.parse)(text).ok())
            .unwrap_or_else(|| key.default_value())
    }
}

/// The annotations of one object that configure keys, checked once.
#[derive(Debug, Default)]
pub struct Annotations {
    valid: BTreeMap<&'static str, String>,
}

impl Annotations {
    /// Reads the keys under our prefixes; reports unknown keys, global keys set as
    /// annotations, and invalid values (which then fall back to the ConfigMap's value).
    pub fn new(
        annotations: Option<&BTreeMap<String, String>>,
        origin: &ObjectRef,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut valid = BTreeMap::new();
        // Our own prefix wins over the migration prefix, whatever the map order.
        for prefix in ANNOTATION_PREFIXES {
            for (annotation, value) in annotations.into_iter().flatten() {
                let Some(name) = annotation.strip_prefix(prefix) else {
                    continue;
                };
                let report = |message: String| Diagnostic {
                    object: origin.clone(),
                    field: format!("metadata.annotations[{annotation}]"),
                    message,
                };
                let Some(key) = find_key(name) else {
                    diagnostics.push(report(format!("unknown configuration key '{name}'")));
                    continue;
                };
                if key.scope() == Scope::Global {
                    diagnostics.push(report(format!(
                        "'{name}' is a global key: set it in the global ConfigMap"
                    )));
                    continue;
                }
                match key.validate(value) {
                    Ok(()) => {
                        valid.entry(key.name()).or_insert_with(|| value.clone());
                    }
                    Err(why) => diagnostics.push(report(format!(
                        "invalid value: {why}; the global value is used"
                    ))),
                }
            }
        }
        Self { valid }
    }

    /// The key's value: the annotation's when set and valid, else the global one.
    pub fn get<T>(&self, key: &Key<T>, global: &GlobalConfig) -> T {
        self.valid
            .get(key.name)
            .and_then(|text| (key.parse)(text).ok())
            .unwrap_or_else(|| global.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

        assert_eq!(annotated.get(&BALANCE_ALGORITHM, &global), Balance::First);
        assert_eq!(annotated.get(&TIMEOUT_SERVER, &global).as_str(), "30s");
        assert_eq!(annotated.get(&TIMEOUT_CONNECT, &global).as_str(), "5s");
        assert!(annotated.get(&SSL_REDIRECT, &global));
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "ConfigMap ops/portcullis: data.no-such-key: unknown configuration key 'no-such-key'",
                "ConfigMap ops/portcullis: data.timeout-connect: invalid value: 'soon' is not a duration such as 5s, 500ms or 1m; the default '5s' is used",
                "Ingress web/app: metadata.annotations[portcullis.dev/max-connections]: 'max-connections' is a global key: set it in the global ConfigMap",
                "Ingress web/app: metadata.annotations[haproxy-ingress.github.io/timeout-server]: invalid value: '7s\\nlisten evil' has unknown unit 's\\nlisten evil' (use us, ms, s, m, h or d); the global value is used",
            ]
        );
    }
}
