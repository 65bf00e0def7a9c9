//! TLS passthrough: when some SNI names are passed through, the HTTPS port is bound by a
//! TCP frontend that reads the SNI of the TLS ClientHello, sends those names' connections
//! untouched to their backends, and hands every other connection to the HTTPS frontend
//! (which then listens on a local socket) with the PROXY protocol, so the terminated
//! path still sees the real client address. Without passthrough names none of this is
//! rendered and the HTTPS frontend binds the port itself, as before.
//!
//! The names live in `maps/passthrough.map` (SNI → backend section), which the runtime
//! API changes live; wildcards are looked up as in the hosts map: `*.suffix` (one label,
//! an Ingress's) then `**.suffix` for one to four labels in front (the Gateway API's).

use std::collections::BTreeMap;
use std::fmt::Write;

use model::{HostKey, ProxyModel};

use crate::layout::{PASSTHROUGH_MAP, RUN_DIR, TERMINATE_SOCKET};

/// The TCP frontend on the HTTPS port that sorts connections by SNI.
pub const SNI_FRONTEND: &str = "https_sni";
/// Carries the connections that HAProxy terminates to the HTTPS frontend.
pub const TERMINATE_BACKEND: &str = "_https_terminate";
/// Refuses the connections of a passthrough name whose backend is invalid.
pub const REJECT_BACKEND: &str = "_passthrough_reject";
/// How long the TCP frontend waits for a ClientHello before handing the connection on.
const INSPECT_DELAY: &str = "5s";

/// Whether the HTTPS port reads SNI before terminating TLS.
pub(crate) fn enabled(model: &ProxyModel) -> bool {
    !model.passthrough.is_empty()
}

/// Where the HTTPS frontend listens when the TCP frontend hands connections to it.
pub(crate) fn terminate_address() -> String {
    format!("unix@{RUN_DIR}/{TERMINATE_SOCKET}")
}

/// `maps/passthrough.map`: one line per passthrough name, in key order, then one per
/// exact HTTPS host a passthrough wildcard covers, naming the HTTPS frontend: the exact
/// name is the more specific, and is terminated as its routes say.
pub(crate) fn map_text(model: &ProxyModel) -> String {
    let mut lines: BTreeMap<String, String> = BTreeMap::new();
    for (key, passthrough) in &model.passthrough {
        let value = passthrough
            .backend
            .as_ref()
            .map_or_else(|| REJECT_BACKEND.to_owned(), |id| id.section_name());
        lines.insert(key.map_key().into_owned(), value);
    }
    let wildcards: Vec<&str> = model
        .passthrough
        .keys()
        .filter_map(|key| match key {
            HostKey::Wildcard(suffix) | HostKey::Suffix(suffix) => Some(&**suffix),
            _ => None,
        })
        .collect();
    if !wildcards.is_empty() {
        for (key, host) in &model.hosts {
            let HostKey::Exact(name) = key else { continue };
            let terminated =
                host.cert.is_some() || host.routes.values().any(|route| route.frontends.https);
            let covered = wildcards.iter().any(|suffix| {
                name.strip_suffix(suffix)
                    .is_some_and(|label| label.len() > 1 && label.ends_with('.'))
            });
            if terminated && covered {
                lines
                    .entry(name.to_string())
                    .or_insert_with(|| TERMINATE_BACKEND.to_owned());
            }
        }
    }
    let mut text = String::new();
    for (key, value) in lines {
        let _ = writeln!(text, "{key} {value}");
    }
    text
}

/// Whether the HTTPS frontend serves anything: a host with a certificate or a route on
/// it, an HTTPS listener, or a default backend.
fn terminates_anything(model: &ProxyModel) -> bool {
    model.default_backend.is_some()
        || !model.https_listener_hosts.is_empty()
        || model.hosts.values().any(|host| {
            host.cert.is_some() || host.routes.iter().any(|(_, route)| route.frontends.https)
        })
}

/// Whether the passthrough map depends on the hosts (a wildcard may cover one).
pub(crate) fn reads_hosts(model: &ProxyModel) -> bool {
    model
        .passthrough
        .keys()
        .any(|key| matches!(key, HostKey::Wildcard(_) | HostKey::Suffix(_)))
}

/// The TCP frontend and its two support backends. `bind` is the HTTPS port's address
/// with its options (the PROXY protocol from clients, when configured).
pub(crate) fn sections(model: &ProxyModel, bind: &str, text: &mut String) {
    let global = &model.global;
    let _ = write!(
        text,
        "\nfrontend {SNI_FRONTEND}\n    mode tcp\n    bind {bind}\n{}",
        crate::proxy_protocol::frontend_lines(&global.accept_proxy),
    );
    text.push_str(&crate::logging::sni_frontend_lines(&global.logging));
    let _ = writeln!(text, "    tcp-request inspect-delay {INSPECT_DELAY}");
    // Waits for a whole ClientHello (or the delay); a connection without SNI, or not
    // TLS at all, goes on to the HTTPS frontend.
    text.push_str(
        "    tcp-request content set-var(txn.sni) req.ssl_sni,lower if { req.ssl_hello_type 1 }\n",
    );
    let _ = writeln!(
        text,
        "    tcp-request content set-var(txn.passthrough) var(txn.sni),map_str({PASSTHROUGH_MAP}) if {{ var(txn.sni) -m found }}"
    );
    // Exact names first, then a one-label wildcard, then the Gateway API's wildcards
    // from the longest suffix to the shortest.
    let mut lookups = vec![("[^.]*".to_owned(), "*")];
    for labels in 1..=4 {
        lookups.push((vec!["[^.]*"; labels].join("[.]"), "**"));
    }
    for (pattern, marker) in lookups {
        let _ = writeln!(
            text,
            "    tcp-request content set-var(txn.passthrough) var(txn.sni),regsub(^{pattern},{marker}),map_str({PASSTHROUGH_MAP}) if {{ var(txn.sni) -m found }} !{{ var(txn.passthrough) -m found }}"
        );
    }
    text.push_str(&access_lines(model).0);
    // What no passthrough name takes goes to the HTTPS frontend, unless that serves
    // nothing at all: then it is refused, as the Gateway API asks of a name no route of a
    // passthrough listener has, rather than answered with a certificate and a 404.
    let unmatched = if terminates_anything(model) {
        TERMINATE_BACKEND
    } else {
        REJECT_BACKEND
    };
    let _ = write!(
        text,
        "    use_backend %[var(txn.passthrough)] if {{ var(txn.passthrough) -m found }}
    default_backend {unmatched}

backend {TERMINATE_BACKEND}
    mode tcp
    server https {} send-proxy-v2

backend {REJECT_BACKEND}
    mode tcp
    tcp-request content reject
",
        terminate_address()
    );
}

/// The lines refusing the connections a passthrough name's allow and deny lists do not
/// serve, by the connection's source address, and the list files they name.
pub(crate) fn access_lines(model: &ProxyModel) -> (String, BTreeMap<String, String>) {
    let mut text = String::new();
    let mut files = BTreeMap::new();
    for (key, passthrough) in &model.passthrough {
        let Some(access) = passthrough.access.as_deref().filter(|a| !a.is_open()) else {
            continue;
        };
        // The name the SNI found: an exact one, or a one-label wildcard where no exact
        // name (passed through or terminated) is the SNI itself.
        let selector = match key {
            HostKey::Exact(name) => format!("{{ var(txn.sni) -m str {name} }}"),
            HostKey::Wildcard(_) => format!(
                "!{{ var(txn.sni),map_str({PASSTHROUGH_MAP}) -m found }} {{ var(txn.sni),regsub(^[^.]*,*) -m str {} }}",
                key.map_key()
            ),
            // Only an Ingress sets lists, and its names are exact or one-label wildcards.
            _ => continue,
        };
        crate::access::connection_lines(access, &selector, &mut text, &mut files);
    }
    (text, files)
}
