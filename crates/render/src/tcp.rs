//! TCP services: a `mode tcp` frontend per port. Without TLS every connection goes to
//! the port's one route; with TLS terminated, HAProxy presents the certificate the
//! client's SNI names and chooses the route by that SNI (exact names, then one-label
//! wildcards, then the Gateway API's wildcards, longest first), the catch-all taking the
//! rest. A route of several weighted backends picks one per connection at random, in
//! proportion to the weights.

use std::fmt::Write;

use model::{HostKey, ProxyModel, TcpRoute, TcpService, TcpTls};

use crate::escape::regex_literal;
use crate::layout::{certificate_file, client_ca_file, client_crl_file};

/// Refuses the connections of a route whose backends are invalid, and of a name no
/// route takes.
pub const TCP_REJECT_BACKEND: &str = "_tcp_reject";

/// The frontend name of a TCP port.
pub fn frontend_name(port: u16) -> String {
    format!("tcp_{port}")
}

/// Every TCP service's frontend, then the support backend they refuse connections with.
pub(crate) fn sections(model: &ProxyModel, address: &str, text: &mut String) {
    for (port, service) in &model.tcp_services {
        frontend(model, *port, service, address, text);
    }
    if !model.tcp_services.is_empty() {
        let _ = write!(
            text,
            "\nbackend {TCP_REJECT_BACKEND}\n    mode tcp\n    tcp-request content reject\n"
        );
    }
}

fn frontend(model: &ProxyModel, port: u16, service: &TcpService, address: &str, text: &mut String) {
    let accept_proxy = if service.accept_proxy {
        " accept-proxy"
    } else {
        ""
    };
    let tls = service
        .tls
        .as_ref()
        .map(|tls| bind_tls(model, tls))
        .unwrap_or_default();
    let _ = write!(
        text,
        "\nfrontend {}\n    mode tcp\n    bind {address}:{port}{accept_proxy}{tls}\n",
        frontend_name(port)
    );
    let logging = &model.global.logging;
    let format = service.log_format.as_ref().unwrap_or(&logging.tcp_format);
    text.push_str(&crate::logging::tcp_frontend_lines(logging, format));
    let mut routes: Vec<(&HostKey, &TcpRoute)> = service.routes.iter().collect();
    routes.sort_by(|(a, _), (b, _)| precedence(a).cmp(&precedence(b)));
    let terminated = service.tls.is_some();
    if terminated {
        // For the log formats, which name the SNI as the passthrough frontend's do.
        text.push_str("    tcp-request content set-var(txn.sni) ssl_fc_sni,lower\n");
    }
    let mut default_backend = TCP_REJECT_BACKEND.to_owned();
    // `tcp-request` rules run before any `use_backend`: they are written first.
    let mut choices = String::new();
    for (index, (key, route)) in routes.into_iter().enumerate() {
        let condition = match key {
            HostKey::CatchAll => String::new(),
            // Names are chosen by the SNI of a handshake HAProxy terminates; a port
            // that does not terminate TLS has only its catch-all.
            _ if !terminated => continue,
            key => sni_condition(key),
        };
        let name = |id: &Option<model::BackendId>| {
            id.as_ref().map_or_else(
                || TCP_REJECT_BACKEND.to_owned(),
                model::BackendId::section_name,
            )
        };
        match route.backends.as_slice() {
            [] => {
                if condition.is_empty() {
                    default_backend = TCP_REJECT_BACKEND.to_owned();
                } else {
                    let _ = writeln!(
                        choices,
                        "    use_backend {TCP_REJECT_BACKEND} if{condition}"
                    );
                }
            }
            [(only, _)] => {
                if condition.is_empty() {
                    default_backend = name(only);
                } else {
                    let _ = writeln!(choices, "    use_backend {} if{condition}", name(only));
                }
            }
            several => {
                let total: u64 = several.iter().map(|(_, weight)| u64::from(*weight)).sum();
                let variable = format!("txn.tcp_pick{index}");
                let _ = writeln!(
                    text,
                    "    tcp-request content set-var({variable}) rand({total})"
                );
                let mut below = 0u64;
                let last = several.len() - 1;
                for (position, (id, weight)) in several.iter().enumerate() {
                    below += u64::from(*weight);
                    if position == last && condition.is_empty() {
                        // The catch-all's last share: every connection left.
                        default_backend = name(id);
                        continue;
                    }
                    let pick = if position == last {
                        String::new()
                    } else {
                        format!(" {{ var({variable}) -m int lt {below} }}")
                    };
                    let _ = writeln!(choices, "    use_backend {} if{condition}{pick}", name(id));
                }
            }
        }
    }
    text.push_str(&choices);
    let _ = writeln!(text, "    default_backend {default_backend}");
}

/// The bind line's TLS options: every certificate (the first one the default), and the
/// client certificate check when asked for.
fn bind_tls(model: &ProxyModel, tls: &TcpTls) -> String {
    let mut options = String::from(" ssl");
    let mut any = false;
    for id in tls.certs.iter().filter(|id| model.certs.contains_key(*id)) {
        let _ = write!(options, " crt {}", certificate_file(id));
        any = true;
    }
    if !any {
        // A port whose certificates did not load still terminates TLS, with the
        // controller's default certificate, rather than passing the bytes through.
        let _ = write!(options, " crt {}", crate::layout::DEFAULT_CERT);
    }
    if let Some(ca) = &tls.client_ca {
        let _ = write!(options, " verify required ca-file {}", client_ca_file(ca));
        if ca.crl.is_some() {
            let _ = write!(options, " crl-file {}", client_crl_file(&ca.secret));
        }
    }
    options
}

/// Where a route's line goes: exact names, then one-label wildcards, then the Gateway
/// API's wildcards from the longest suffix, then the catch-all.
fn precedence(key: &HostKey) -> (u8, std::cmp::Reverse<usize>, &str) {
    match key {
        HostKey::Exact(name) => (0, std::cmp::Reverse(0), name),
        HostKey::Wildcard(suffix) => (1, std::cmp::Reverse(0), suffix),
        HostKey::Suffix(suffix) => (2, std::cmp::Reverse(suffix.len()), suffix),
        HostKey::Regex(pattern) => (3, std::cmp::Reverse(0), pattern),
        HostKey::CatchAll => (4, std::cmp::Reverse(0), ""),
    }
}

/// The condition on the terminated handshake's SNI that a host key matches.
fn sni_condition(key: &HostKey) -> String {
    match key {
        HostKey::Exact(name) => format!(" {{ ssl_fc_sni,lower -m str {name} }}"),
        HostKey::Wildcard(suffix) => format!(
            " {{ ssl_fc_sni,lower -m reg ^[^.]+\\.{}$ }}",
            regex_literal(suffix)
        ),
        HostKey::Suffix(suffix) => format!(
            " {{ ssl_fc_sni,lower -m reg ^([^.]+\\.)+{}$ }}",
            regex_literal(suffix)
        ),
        HostKey::Regex(pattern) => format!(" {{ ssl_fc_sni,lower -m reg -- '{pattern}' }}"),
        HostKey::CatchAll => String::new(),
    }
}
