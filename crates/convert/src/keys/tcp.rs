//! Keys of TCP services: an Ingress whose connections on a port of its own go to its
//! backends as bytes.

use model::TcpLogFormat;

use super::logs::parse_tcp_log_format;
use super::parse::{parse_bool, parse_optional_port};
use super::{Applied, Key, Scope};

/// `tcp-service-port`.
pub static TCP_SERVICE_PORT: Key<Option<u16>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "tcp-service-port",
    scope: Scope::Host,
    default: "",
    accepted_values: "a port number from 1 to 65535, such as `5432`; or empty",
    parse: parse_optional_port,
    doc: "Serves the Ingress as a TCP service on this port of HAProxy, instead of as HTTP routes: a frontend of its own sends each connection's bytes to the backend of the path `/` (or `spec.defaultBackend`). With `spec.tls`, HAProxy terminates TLS on the port, serves each host's certificate by SNI (the first entry's when no host matches) and chooses the backend by the SNI; a rule without a host takes the connections no host matches, and without one they are closed. Without `spec.tls` the port carries one backend: the rule without a host (rules with one are reported, since there is no SNI to choose by). Paths other than `/` are reported and left out. The port may not be one of HAProxy's HTTP ports or a Gateway listener's. Endpoint changes are applied live; a new port reloads HAProxy.",
    applied: Applied::Reload,
    differs: "a host without `spec.tls` is not passed through by the SNI of the ClientHello; use `ssl-passthrough` for that.",
};
/// `tcp-service-proxy-protocol`.
pub static TCP_SERVICE_PROXY_PROTOCOL: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "tcp-service-proxy-protocol",
    scope: Scope::Host,
    default: "false",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "The clients of the Ingress's TCP service port are proxies that send a PROXY protocol header (version 1 or 2), which HAProxy reads (`accept-proxy`); a connection without one is refused. To send one to the servers, use `proxy-protocol`.",
    applied: Applied::Reload,
    differs: "",
};
/// `tcp-service-log-format`.
pub static TCP_SERVICE_LOG_FORMAT: Key<Option<TcpLogFormat>> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "tcp-service-log-format",
    scope: Scope::Host,
    default: "",
    accepted_values: "empty (as `tcp-log-format` says), `default` (HAProxy's TCP log format), `json`, `off` (not logged), or a format as `tcp-log-format` takes",
    parse: parse_service_log_format,
    doc: "The format of the log lines of the Ingress's TCP service port, one per connection.",
    applied: Applied::Reload,
    differs: "",
};
/// `tcp-log-format`.
pub static TCP_LOG_FORMAT: Key<TcpLogFormat> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "tcp-log-format",
    scope: Scope::Global,
    default: "default",
    accepted_values: "empty (not logged), `default` (HAProxy's TCP log format), `json` (one JSON object per connection), or a format as `https-log-format` takes; `%[var(txn.sni)]` is the SNI of a port that terminates TLS",
    parse: parse_tcp_log_format,
    doc: "The format of the log lines of every TCP service port (the `tcp-services` ConfigMap's and the `tcp-service-port` Ingresses'), one per connection, where `tcp-service-log-format` sets none.",
    applied: Applied::Reload,
    differs: "haproxy-ingress logs the ConfigMap's TCP services only when the key is set; portcullis logs them in HAProxy's TCP format by default.",
};

fn parse_service_log_format(text: &str) -> Result<Option<TcpLogFormat>, String> {
    match text.trim() {
        "" => Ok(None),
        "off" => Ok(Some(TcpLogFormat::Off)),
        other => parse_tcp_log_format(other).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_s_log_format_falls_back_to_the_global_one_when_empty() {
        assert_eq!(parse_service_log_format(" "), Ok(None));
        assert_eq!(parse_service_log_format("off"), Ok(Some(TcpLogFormat::Off)));
        assert_eq!(
            parse_service_log_format("default"),
            Ok(Some(TcpLogFormat::Default))
        );
        assert!(parse_service_log_format("%ci %HM").is_err());
        assert_eq!(TCP_LOG_FORMAT.default_value(), TcpLogFormat::Default);
    }
}
