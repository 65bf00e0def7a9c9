//! Access log lines: where (global section) and what (defaults section).

use std::fmt::Write;

use model::{HttpLogFormat, LogTarget, Logging, TcpLogFormat};

/// One JSON object per request. Strings that come from the client are escaped (`+E`);
/// numbers are HAProxy's (-1 when a step did not happen).
pub(crate) const JSON_HTTP_LOG_FORMAT: &str = concat!(
    r#"{"time":"%trg","client_ip":"%ci","client_port":%cp,"frontend":"%ft","backend":"%b","server":"%s","#,
    r#""method":"%HM","host":"%{+E}[var(txn.host)]","path":"%{+E}HPO","query":"%{+E}HQ","version":"%HV","#,
    r#""status":%ST,"bytes_received":%U,"bytes_sent":%B,"time_request_ms":%TR,"time_queue_ms":%Tw,"#,
    r#""time_connect_ms":%Tc,"time_response_ms":%Tr,"time_total_ms":%Ta,"termination_state":"%tsc"}"#
);

/// One JSON object per connection of the TLS-passthrough frontend.
pub(crate) const JSON_TCP_LOG_FORMAT: &str = concat!(
    r#"{"time":"%t","client_ip":"%ci","client_port":%cp,"frontend":"%ft","backend":"%b","server":"%s","#,
    r#""sni":"%{+E}[var(txn.sni)]","bytes_received":%U,"bytes_sent":%B,"time_queue_ms":%Tw,"#,
    r#""time_connect_ms":%Tc,"time_total_ms":%Tt,"termination_state":"%ts"}"#
);

/// The lines that say how the TLS-passthrough frontend logs (it inherits `log global`).
pub(crate) fn sni_frontend_lines(logging: &Logging) -> String {
    tcp_frontend_lines(logging, &logging.sni_format)
}

/// The lines that say how a TCP frontend logs, in `format`.
pub(crate) fn tcp_frontend_lines(logging: &Logging, format: &TcpLogFormat) -> String {
    if logging.target == LogTarget::Off {
        return String::new();
    }
    match format {
        // `option tcplog` first: the HTTP format inherited from `defaults` would otherwise
        // be read here too, and HAProxy refuses its HTTP variables in a TCP proxy.
        TcpLogFormat::Off => "    option tcplog\n    no log\n".to_owned(),
        TcpLogFormat::Default => "    option tcplog\n".to_owned(),
        TcpLogFormat::Json => format!("    log-format '{JSON_TCP_LOG_FORMAT}'\n"),
        // Validated: no quote or backslash, only variables a TCP proxy has.
        TcpLogFormat::Custom(format) => format!("    log-format '{format}'\n"),
    }
}

/// The global section's `log` and `log-tag` lines.
pub(crate) fn global_lines(logging: &Logging) -> String {
    let mut text = String::new();
    let length = logging.max_length;
    match logging.target {
        LogTarget::Off => return text,
        // Standard output carries bare lines: the container runtime adds its own framing.
        LogTarget::Stdout => {
            let _ = writeln!(text, "    log stdout len {length} format raw local0 info");
        }
        LogTarget::Syslog(address) => {
            let _ = writeln!(
                text,
                "    log {address} len {length} format {} local0 info",
                logging.syslog_format.keyword()
            );
        }
    }
    let _ = writeln!(text, "    log-tag {}", logging.tag);
    text
}

/// The defaults section's lines: every proxy logs through the global targets.
pub(crate) fn defaults_lines(logging: &Logging) -> String {
    if logging.target == LogTarget::Off {
        return String::new();
    }
    let mut text = String::from("    log global\n");
    match &logging.http_format {
        HttpLogFormat::Default => text.push_str("    option httplog\n"),
        HttpLogFormat::Json => {
            let _ = writeln!(text, "    log-format '{JSON_HTTP_LOG_FORMAT}'");
        }
        // Validated: no quote or backslash, only variables HAProxy knows.
        HttpLogFormat::Custom(format) => {
            let _ = writeln!(text, "    log-format '{format}'");
        }
    }
    if logging.dont_log_null {
        text.push_str("    option dontlognull\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{JSON_HTTP_LOG_FORMAT, JSON_TCP_LOG_FORMAT};

    #[test]
    fn the_json_formats_are_valid_log_formats() {
        assert!(model::LogFormat::parse(JSON_HTTP_LOG_FORMAT).is_ok());
        assert!(model::LogFormat::parse_tcp(JSON_TCP_LOG_FORMAT).is_ok());
    }
}
