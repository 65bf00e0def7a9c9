//! HAProxy's listeners for observers: the stats page, the Prometheus exporter and the
//! health check, on the bind address, outside the access log.

use std::fmt::Write;

use model::Global;

use crate::RenderedFile;

/// The stats page's certificate file, when it is served over TLS.
pub(crate) fn stats_cert(global: &Global) -> Option<(String, RenderedFile)> {
    let cert = global.observers.stats.as_ref()?.cert.as_ref()?;
    Some((
        crate::layout::global_tls_file("stats", &cert.pem_bundle),
        RenderedFile::new(cert.pem_bundle.clone(), true),
    ))
}

/// The TLS files of global keys, by path.
pub(crate) fn global_tls_files(global: &Global) -> Vec<(String, RenderedFile)> {
    stats_cert(global)
        .into_iter()
        .chain(crate::https::dh_params(&global.https))
        .collect()
}

/// The `frontend` sections of the stats page, the exporter and the health check, each
/// when enabled.
pub(crate) fn frontends(global: &Global, address: &str) -> String {
    let mut text = String::new();
    if let Some(stats) = &global.observers.stats {
        let _ = write!(
            text,
            "
frontend stats
    bind {address}:{port}{tls}{accept_proxy}
    http-request set-log-level silent
    stats enable
    stats uri /
    stats refresh 10s
",
            port = stats.port,
            accept_proxy = if stats.accept_proxy {
                " accept-proxy"
            } else {
                ""
            },
            tls =
                stats_cert(global).map_or_else(String::new, |(path, _)| format!(" ssl crt {path}")),
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
    if let Some(port) = global.observers.healthz_port {
        let _ = write!(
            text,
            "
frontend healthz
    bind {address}:{port}
    http-request set-log-level silent
    http-request return status 200 content-type text/plain string \"ok\" if {{ path /healthz }}
    http-request return status 404 content-type text/plain string \"the health check is at /healthz\"
"
        );
    }
    text
}
