//! Keys of HAProxy's listeners for observers (the stats page and the Prometheus
//! exporter), and the ports these and the fronting proxy's take.

use model::{FrontingPort, FrontingProxy, Observers, StatsAuth, StatsPage};
use resources::ObjectRef;

use super::parse::parse_optional_port;
use super::{
    Applied, FRONTING_PROXY_PORT, GlobalConfig, HTTP_PASSTHROUGH, HTTP_PASSTHROUGH_PORT,
    HTTPS_TO_HTTP_PORT, Key, Scope, USE_FORWARDED_PROTO,
};
use crate::diagnostic::Diagnostic;
use crate::options::ConvertOptions;

/// `prometheus-port`.
pub static PROMETHEUS_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "prometheus-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "The port of HAProxy's Prometheus exporter, on the bind address: `/metrics` has the frontends', backends' and servers' request, response, byte, session and timing counters (`haproxy_*`). The exporter takes a scope filter, e.g. `/metrics?scope=frontend&scope=backend`. Empty opens no exporter. The controller's own metrics are on the admin endpoint.",
    applied: Applied::Reload,
    differs: "",
};
/// `stats-port`.
pub static STATS_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "stats-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "The port of HAProxy's statistics page, on the bind address; empty opens no page. See `stats-auth`.",
    applied: Applied::Reload,
    differs: "haproxy-ingress opens the page on port 1936 by default; portcullis only when a port is set, since the page lists every backend and server to whoever reaches the port.",
};
/// `stats-proxy-protocol`.
pub static STATS_PROXY_PROTOCOL: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "stats-proxy-protocol",
    scope: Scope::Global,
    default: "false",
    accepted_values: "`true` or `false`",
    parse: super::parse::parse_bool,
    doc: "`true` when the statistics page is reached through a proxy or load balancer that sends the PROXY protocol (version 1 or 2): every connection to `stats-port` must then start with it.",
    applied: Applied::Reload,
    differs: "",
};
/// `healthz-port`.
pub static HEALTHZ_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "healthz-port",
    scope: Scope::Global,
    default: "",
    accepted_values: "a port from `1` to `65535`, or empty",
    parse: parse_optional_port,
    doc: "A port on the bind address where HAProxy itself answers `/healthz` with 200, whatever the method (any other path 404), for a load balancer's health checks: it answers for as long as HAProxy serves, whatever the controller is doing. Empty opens no such port. The controller's own health is on its admin endpoint (`/healthz`, `/readyz`).",
    applied: Applied::Reload,
    differs: "haproxy-ingress opens it on port 10253 by default; portcullis only when a port is set.",
};
/// `stats-auth`.
pub static STATS_AUTH: Key<Option<StatsAuth>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "stats-auth",
    scope: Scope::Global,
    default: "",
    accepted_values: "`user:password`, the user of letters, digits, dots, underscores or dashes, the password of printable ASCII without spaces, single quotes or backslashes; or empty",
    parse: parse_stats_auth,
    doc: "Basic authentication of the statistics page; empty leaves the page open.",
    applied: Applied::Reload,
    differs: "",
};

/// `stats-ssl-cert`.
pub static STATS_SSL_CERT: Key<Option<super::SecretName>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "stats-ssl-cert",
    scope: Scope::Global,
    default: "",
    accepted_values: "a Secret name such as `stats-tls`, or `namespace/name`; a bare name is in the global ConfigMap's namespace; or empty",
    parse: super::backend_tls::parse_secret_name,
    doc: "A TLS Secret (`tls.crt` and `tls.key`) whose certificate serves the statistics page over HTTPS instead of plain HTTP. A Secret that is missing or invalid is reported and the page is served over plain HTTP, as haproxy-ingress does.",
    applied: Applied::Reload,
    differs: "haproxy-ingress also accepts a `file://` path; portcullis reads only Secrets.",
};

/// The observer listeners the ConfigMap asks for, and the fronting proxy's port; one
/// whose port another listener holds (a frontend, the admin endpoint, another of these)
/// is reported and left closed, since HAProxy would fail to start on it. The fronting
/// proxy may share the HTTP port.
pub(crate) fn own_listeners(
    global: &GlobalConfig,
    options: &ConvertOptions,
    configmap: Option<&ObjectRef>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Observers, Option<FrontingProxy>) {
    let mut taken: Vec<(u16, &str)> = vec![
        (options.http_port, "the HTTP frontend (--http-port)"),
        (options.https_port, "the HTTPS frontend (--https-port)"),
    ];
    taken.extend(
        options
            .reserved_ports
            .iter()
            .map(|port| (*port, "the admin endpoint")),
    );
    let mut claim = |key: &Key<Option<u16>>, diagnostics: &mut Vec<Diagnostic>| {
        let port = global.get(key)?;
        // HAProxy could not start, nor reload, on a port another process holds: it is
        // opened once that one lets it go (the controller tries it again).
        let refusal = if options.busy_ports.contains(&port) {
            Some(format!(
                "port {port} is in use by another process on this machine; {} is not opened until it is free",
                key.name
            ))
        } else {
            taken
                .iter()
                .find(|(held, _)| *held == port)
                .map(|(_, holder)| {
                    format!(
                        "port {port} is taken by {holder}; {} is not opened",
                        key.name
                    )
                })
        };
        if let Some(message) = refusal {
            diagnostics.push(Diagnostic {
                object: configmap
                    .cloned()
                    .unwrap_or_else(|| ObjectRef::new(resources::Kind::ConfigMap, "", "")),
                field: format!("data.{}", key.name),
                message,
            });
            return None;
        }
        taken.push((port, key.name));
        Some(port)
    };
    let stats = claim(&STATS_PORT, diagnostics).map(|port| StatsPage {
        port,
        auth: global.get(&STATS_AUTH),
        cert: None,
        accept_proxy: global.get(&STATS_PROXY_PROTOCOL),
    });
    let prometheus_port = claim(&PROMETHEUS_PORT, diagnostics);
    let healthz_port = claim(&HEALTHZ_PORT, diagnostics);
    // haproxy-ingress's names of the key, newest first.
    let fronting_key = [
        &FRONTING_PROXY_PORT,
        &HTTP_PASSTHROUGH_PORT,
        &HTTPS_TO_HTTP_PORT,
    ]
    .into_iter()
    .find(|key| global.get(*key).is_some())
    .unwrap_or(&FRONTING_PROXY_PORT);
    let shared = global.get(fronting_key) == Some(options.http_port)
        || (global.get(fronting_key).is_none() && global.get(&HTTP_PASSTHROUGH));
    let fronting_port = if shared {
        Some(FrontingPort::Shared)
    } else {
        claim(fronting_key, diagnostics).map(FrontingPort::Own)
    };
    let fronting_proxy = fronting_port.map(|port| FrontingProxy {
        port,
        use_forwarded_proto: global.get(&USE_FORWARDED_PROTO),
    });
    (
        Observers {
            stats,
            prometheus_port,
            healthz_port,
        },
        fronting_proxy,
    )
}

fn parse_stats_auth(text: &str) -> Result<Option<StatsAuth>, String> {
    let text = text.trim();
    if text.is_empty() {
        Ok(None)
    } else {
        StatsAuth::parse(text).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_optional_and_in_range() {
        assert_eq!(PROMETHEUS_PORT.default_value(), None);
        assert_eq!(STATS_PORT.default_value(), None);
        assert_eq!(parse_optional_port(" 9101 "), Ok(Some(9101)));
        for bad in ["0", "65536", "-1", "80\nlisten x", "http"] {
            assert_eq!(
                parse_optional_port(bad),
                Err(format!(
                    "'{}' is not a port from 1 to 65535",
                    bad.escape_debug()
                ))
            );
        }
    }

    #[test]
    fn stats_auth_is_optional_and_checked() {
        assert_eq!(STATS_AUTH.default_value(), None);
        assert_eq!(
            parse_stats_auth("admin:pw").map(|a| a.map(|a| a.as_str().to_owned())),
            Ok(Some("admin:pw".to_owned()))
        );
        assert_eq!(
            parse_stats_auth("admin"),
            Err("expected user:password".to_owned())
        );
    }

    #[test]
    fn the_fronting_proxy_port_is_read_under_each_of_its_names() {
        let options = crate::cache::tests::options();
        let fronting = |pairs: &[(&str, &str)]| {
            let data: std::collections::BTreeMap<String, String> = pairs
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect();
            let mut diagnostics = Vec::new();
            let global = GlobalConfig::new(Some(&data), None, &mut diagnostics);
            own_listeners(&global, &options, None, &mut diagnostics)
                .1
                .map(|proxy| proxy.port)
        };
        let http = options.http_port.to_string();
        assert_eq!(fronting(&[]), None);
        assert_eq!(
            fronting(&[("fronting-proxy-port", &http)]),
            Some(FrontingPort::Shared)
        );
        assert_eq!(
            fronting(&[("http-passthrough-port", "8081")]),
            Some(FrontingPort::Own(8081))
        );
        assert_eq!(
            fronting(&[("https-to-http-port", "8082")]),
            Some(FrontingPort::Own(8082))
        );
        // The newest name wins over the older ones.
        assert_eq!(
            fronting(&[
                ("fronting-proxy-port", "8083"),
                ("https-to-http-port", "8082")
            ]),
            Some(FrontingPort::Own(8083))
        );
        assert_eq!(
            fronting(&[("http-passthrough", "true")]),
            Some(FrontingPort::Shared)
        );
        assert_eq!(
            fronting(&[
                ("http-passthrough", "true"),
                ("fronting-proxy-port", "8084")
            ]),
            Some(FrontingPort::Own(8084))
        );
    }
}
