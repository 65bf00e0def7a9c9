//! HAProxy's listeners for observers: the stats page and the Prometheus exporter, on the
//! bind address, outside the access log.

use std::fmt::Write;

use model::Global;

/// The `frontend` sections of the stats page and the exporter, each when enabled.
pub(crate) fn frontends(global: &Global, address: &str) -> String {
    let mut text = String::new();
    if let Some(stats) = &global.observers.stats {
        let _ = write!(
            text,
            "
frontend stats
    bind {address}:{port}
    http-request set-log-level silent
    stats enable
    stats uri /
    stats refresh 10s
",
            port = stats.port
        );
        if let Some(auth) = &stats.auth {
            let _ = writeln!(text, "    stats auth '{}'", auth.as_str());
        }
    }
    if let Some(port) = global.observers.prometheus_port {
        let _ = write!(
            text,
            "
frontend prometheus
    bind {address}:{port}
    http-request set-log-level silent
    http-request use-service prometheus-exporter if {{ path /metrics }}
    http-request return status 404 content-type text/plain string \"metrics are at /metrics\"
"
        );
    }
    text
}
