//! Keys of the access logs: where HAProxy sends them, their framing and their format.

use std::net::{IpAddr, SocketAddr};

use model::{HttpLogFormat, LogFormat, LogTag, LogTarget, SyslogFormat, TcpLogFormat};

use super::parse::parse_bool;
use super::{Applied, Key, Scope};

/// `syslog-endpoint`.
pub static SYSLOG_ENDPOINT: Key<LogTarget> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "syslog-endpoint",
    scope: Scope::Global,
    default: "stdout",
    accepted_values: "`stdout`, `none`, or a syslog server's IP address with an optional UDP port (514 when omitted), such as `10.0.0.5`, `10.0.0.5:1514` or `[2001:db8::5]:514`",
    parse: parse_log_target,
    doc: "Where HAProxy sends its access logs, one line per request: `stdout` is the controller's standard output (the controller's own logs go to standard error), a syslog server receives them over UDP, `none` turns them off.",
    applied: Applied::Reload,
    differs: "haproxy-ingress logs nothing unless it is set; portcullis logs to standard output by default, so that the pod's log shows every request, and takes `none` to turn logs off. portcullis takes an IP address, not a host name: HAProxy resolves a name once, at start, and refuses the whole configuration when it cannot.",
};
/// `syslog-format`.
pub static SYSLOG_FORMAT: Key<SyslogFormat> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "syslog-format",
    scope: Scope::Global,
    default: "rfc5424",
    accepted_values: "`rfc5424`, `rfc3164`, `raw`, `short`, `iso`, `timed` or `priority`",
    parse: parse_syslog_format,
    doc: "The syslog framing of each line sent to `syslog-endpoint` (HAProxy's `log ... format`). Lines on standard output are always `raw`: the container runtime adds its own time stamp.",
    applied: Applied::Reload,
    differs: "",
};
/// `syslog-length`.
pub static SYSLOG_LENGTH: Key<u32> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "syslog-length",
    scope: Scope::Global,
    default: "1024",
    accepted_values: "a whole number from `80` to `65535`",
    parse: parse_syslog_length,
    doc: "The longest log line, in bytes; longer lines are cut.",
    applied: Applied::Reload,
    differs: "",
};
/// `syslog-tag`.
pub static SYSLOG_TAG: Key<LogTag> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "syslog-tag",
    scope: Scope::Global,
    default: "ingress",
    accepted_values: "1 to 32 letters, digits, `.`, `_` or `-`, such as `ingress`",
    parse: LogTag::parse,
    doc: "The tag of each syslog line (HAProxy's `log-tag`).",
    applied: Applied::Reload,
    differs: "",
};
/// `http-log-format`.
pub static HTTP_LOG_FORMAT: Key<HttpLogFormat> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "http-log-format",
    scope: Scope::Global,
    default: "",
    accepted_values: "empty (HAProxy's HTTP log format), `json` (one JSON object per request: time, client, frontend, backend, server, method, host, path, query, status, bytes and timings), or a format in HAProxy's `log-format` syntax of printable ASCII without single quotes or backslashes, such as `%ci:%cp [%tr] %ft %b/%s %ST %B %{+Q}r`, whose % variables are HAProxy 2.6's and whose %[...] samples are among `src`, `src_port`, `dst`, `dst_port`, `method`, `status`, `ssl_fc`, `ssl_fc_sni`, `ssl_fc_protocol`, `ssl_fc_cipher`, `fe_name`, `be_name`, `srv_name`, `uuid`, `unique-id`, `hostname`, `capture.req.uri`, `capture.req.method`, `capture.req.ver`, `capture.res.ver`, `var(txn.<name>)` and `var(sess.<name>)` (the request's headers are gone when it is logged; `var(txn.host)` holds its host), each followed by any of the converters `lower`, `upper`, `base64`, `hex`, `json`",
    parse: parse_http_log_format,
    doc: "The format of the HTTP and HTTPS frontends' access log lines.",
    applied: Applied::Reload,
    differs: "haproxy-ingress uses it only when `syslog-endpoint` is set; portcullis logs to standard output by default, so it always applies. `json` is portcullis's own. portcullis accepts the variables and samples listed, so that every accepted format is one HAProxy loads.",
};
/// `https-log-format`.
pub static HTTPS_LOG_FORMAT: Key<TcpLogFormat> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "https-log-format",
    scope: Scope::Global,
    default: "",
    accepted_values: "empty (not logged), `default` (HAProxy's TCP log format), `json` (one JSON object per connection: time, client, frontend, backend, server, SNI, bytes, timings and termination state), or a format as `http-log-format` takes, without the variables only an HTTP proxy has (%r, %HM, %HP, %HPO, %HQ, %HU, %HV, %CC, %CS, %tr, %trg, %trl, %Ta, %Ti, %Tq, %TR and %Tr); `%[var(txn.sni)]` is the SNI the client sent",
    parse: parse_https_log_format,
    doc: "The format of the log lines of the TCP frontend that reads the SNI on the HTTPS port while some names pass through (TLS passthrough): one line per connection, passed through or handed on to the HTTPS frontend (which logs its requests as `http-log-format` says).",
    applied: Applied::Reload,
    differs: "`json` is portcullis's own.",
};
/// `dontlognull`.
pub static DONTLOGNULL: Key<bool> = Key {
    parsed_default: std::sync::OnceLock::new(),
    name: "dontlognull",
    scope: Scope::Global,
    default: "true",
    accepted_values: "`true` or `false` (also `True`, `TRUE`, `t`, `T`, `1` and `False`, `FALSE`, `f`, `F`, `0`, as haproxy-ingress reads them)",
    parse: parse_bool,
    doc: "Leaves out of the access log the connections that sent no request, such as a load balancer's TCP health checks (HAProxy's `option dontlognull`).",
    applied: Applied::Reload,
    differs: "portcullis's own key: haproxy-ingress always sets `option dontlognull`.",
};

fn parse_log_target(text: &str) -> Result<LogTarget, String> {
    let text = text.trim();
    match text {
        "stdout" => return Ok(LogTarget::Stdout),
        "none" => return Ok(LogTarget::Off),
        _ => {}
    }
    let address = text
        .parse::<SocketAddr>()
        .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 514)))
        .map_err(|_| {
            format!(
                "'{}' is not stdout, none, or an IP address with an optional port",
                text.escape_debug()
            )
        })?;
    if address.port() == 0 {
        return Err(format!("'{text}' has port 0"));
    }
    Ok(LogTarget::Syslog(address))
}

fn parse_syslog_format(text: &str) -> Result<SyslogFormat, String> {
    SyslogFormat::ALL
        .iter()
        .find(|(_, keyword)| *keyword == text.trim())
        .map(|(format, _)| *format)
        .ok_or_else(|| {
            let known: Vec<&str> = SyslogFormat::ALL.iter().map(|(_, k)| *k).collect();
            format!(
                "'{}' is not one of {}",
                text.trim().escape_debug(),
                known.join(", ")
            )
        })
}

fn parse_syslog_length(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(length) if (80..=65_535).contains(&length) => Ok(length),
        _ => Err(format!(
            "'{}' is not a whole number from 80 to 65535",
            text.trim().escape_debug()
        )),
    }
}

/// A TCP frontend's log format: empty is not logged.
pub(super) fn parse_tcp_log_format(text: &str) -> Result<TcpLogFormat, String> {
    parse_https_log_format(text)
}

fn parse_https_log_format(text: &str) -> Result<TcpLogFormat, String> {
    match text.trim() {
        "" => Ok(TcpLogFormat::Off),
        "default" => Ok(TcpLogFormat::Default),
        "json" => Ok(TcpLogFormat::Json),
        _ => LogFormat::parse_tcp(text.trim()).map(TcpLogFormat::Custom),
    }
}

fn parse_http_log_format(text: &str) -> Result<HttpLogFormat, String> {
    match text.trim() {
        "" => Ok(HttpLogFormat::Default),
        "json" => Ok(HttpLogFormat::Json),
        // Spaces are part of a format: only the line's own ends are trimmed.
        _ => LogFormat::parse(text.trim()).map(HttpLogFormat::Custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syslog_endpoint_takes_stdout_none_or_an_address() {
        assert_eq!(SYSLOG_ENDPOINT.default_value(), LogTarget::Stdout);
        assert_eq!(parse_log_target("none"), Ok(LogTarget::Off));
        assert_eq!(
            parse_log_target("10.0.0.5"),
            Ok(LogTarget::Syslog(SocketAddr::from(([10, 0, 0, 5], 514))))
        );
        assert_eq!(
            parse_log_target(" [2001:db8::5]:1514 "),
            Ok(LogTarget::Syslog("[2001:db8::5]:1514".parse().unwrap()))
        );
        assert_eq!(
            parse_log_target("syslog.logging:514"),
            Err(
                "'syslog.logging:514' is not stdout, none, or an IP address with an optional port"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_log_target("10.0.0.5:0"),
            Err("'10.0.0.5:0' has port 0".to_owned())
        );
    }

    #[test]
    fn syslog_format_length_and_tag_are_checked() {
        assert_eq!(SYSLOG_FORMAT.default_value(), SyslogFormat::Rfc5424);
        assert_eq!(parse_syslog_format("rfc3164"), Ok(SyslogFormat::Rfc3164));
        assert_eq!(
            parse_syslog_format("json"),
            Err(
                "'json' is not one of rfc5424, rfc3164, raw, short, iso, timed, priority"
                    .to_owned()
            )
        );
        assert_eq!(SYSLOG_LENGTH.default_value(), 1024);
        assert_eq!(parse_syslog_length("65535"), Ok(65_535));
        assert_eq!(
            parse_syslog_length("79"),
            Err("'79' is not a whole number from 80 to 65535".to_owned())
        );
        assert_eq!(SYSLOG_TAG.default_value().to_string(), "ingress");
        assert!((SYSLOG_TAG.parse)("a b").is_err());
    }

    #[test]
    fn https_log_format_is_off_by_default_and_takes_tcp_variables_only() {
        assert_eq!(HTTPS_LOG_FORMAT.default_value(), TcpLogFormat::Off);
        assert_eq!(parse_https_log_format("default"), Ok(TcpLogFormat::Default));
        assert_eq!(parse_https_log_format(" json "), Ok(TcpLogFormat::Json));
        assert!(matches!(
            parse_https_log_format("%ci %ft %b %[var(txn.sni)]"),
            Ok(TcpLogFormat::Custom(format)) if format.as_str() == "%ci %ft %b %[var(txn.sni)]"
        ));
        assert_eq!(
            parse_https_log_format("%ci %HM"),
            Err("'%ci %HM' uses '%HM', which needs HTTP: this format is a TCP proxy's".to_owned())
        );
    }

    #[test]
    fn http_log_format_takes_json_or_a_checked_format() {
        assert_eq!(HTTP_LOG_FORMAT.default_value(), HttpLogFormat::Default);
        assert_eq!(parse_http_log_format("json"), Ok(HttpLogFormat::Json));
        assert!(matches!(
            parse_http_log_format("%ci %ST %[var(txn.host)]\n"),
            Ok(HttpLogFormat::Custom(format)) if format.as_str() == "%ci %ST %[var(txn.host)]"
        ));
        let error = parse_http_log_format("%ci'\nglobal").unwrap_err();
        assert!(error.contains("without quotes"), "{error}");
        assert!(DONTLOGNULL.default_value());
        assert_eq!(
            (DONTLOGNULL.parse)("no"),
            Err("'no' is not true or false".to_owned())
        );
    }
}
