//! Routing maps (`host#path` → backend) and the certificate list.
//!
//! Per frontend: an exact map (Exact paths, and each Prefix path itself) and a prefix map
//! (`Prefix /foo` as `/foo/`, ImplementationSpecific as written). HAProxy looks exact
//! first, then the longest prefix (`map_beg` uses a prefix tree), which yields the Ingress
//! rule "longest path wins, Exact before Prefix on the same path".

use std::collections::BTreeMap;

use model::{HostKey, PathKind, ProxyModel, Route};

/// Map of known host keys (exact and wildcard).
pub const HOSTS_MAP: &str = "maps/hosts.map";

/// Map value that makes the HTTP frontend redirect to HTTPS with the given code.
pub fn redirect_marker(code: u16) -> String {
    format!("_redirect_{code}")
}

/// The maps of one frontend.
pub fn frontend_maps(frontend: &str) -> (String, String) {
    (
        format!("maps/{frontend}-exact.map"),
        format!("maps/{frontend}-prefix.map"),
    )
}

pub(crate) fn map_files(model: &ProxyModel) -> Vec<(String, String)> {
    let hosts: Vec<String> = model
        .hosts
        .iter()
        .filter(|(key, host)| **key != HostKey::CatchAll && !host.routes.is_empty())
        .map(|(key, _)| key.map_key())
        .collect();
    let mut files = vec![(
        HOSTS_MAP.to_owned(),
        lines(hosts.iter().map(|h| (h.clone(), h.clone()))),
    )];
    for (frontend, plain_http) in [("http", true), ("https", false)] {
        let value = |route: &Route| match route.https_redirect {
            Some(code) if plain_http => redirect_marker(code),
            _ => route.backend.section_name(),
        };
        let mut exact = BTreeMap::new();
        let mut prefix = BTreeMap::new();
        for (host_key, host) in &model.hosts {
            let host = &host.routes;
            let host_text = host_key.map_key();
            for (path, route) in host {
                let key = format!("{host_text}#{}", path.path);
                match path.kind {
                    PathKind::Exact => {
                        exact.insert(key, value(route));
                    }
                    PathKind::Prefix => {
                        // An Exact rule on the same path wins.
                        if !path.path.is_empty() {
                            exact.entry(key.clone()).or_insert_with(|| value(route));
                        }
                        prefix
                            .entry(format!("{key}/"))
                            .or_insert_with(|| value(route));
                    }
                    PathKind::Begin => {
                        prefix.entry(key).or_insert_with(|| value(route));
                    }
                }
            }
        }
        let (exact_name, prefix_name) = frontend_maps(frontend);
        files.push((exact_name, lines(exact.into_iter())));
        files.push((prefix_name, lines(prefix.into_iter())));
    }
    files
}

fn lines(entries: impl Iterator<Item = (String, String)>) -> String {
    let mut text = String::new();
    for (key, value) in entries {
        text.push_str(&key);
        text.push(' ');
        text.push_str(&value);
        text.push('\n');
    }
    text
}

/// `certs/crt-list.txt`: one line per SNI name, so no line outgrows HAProxy's 64 KiB
/// limit however many hosts share a certificate (HAProxy loads each file once).
pub(crate) fn crt_list(model: &ProxyModel) -> String {
    let mut lines: Vec<(&model::CertId, String)> = Vec::new();
    for (host_key, host) in &model.hosts {
        if let Some(cert) = host.cert.as_ref().filter(|c| model.certs.contains_key(*c)) {
            lines.push((cert, host_key.map_key()));
        }
    }
    lines.sort();
    let mut text = String::new();
    for (cert, host) in lines {
        text.push_str(&format!("certs/{} {host}\n", cert.file_name()));
    }
    text
}
