//! Frontends of Gateway HTTP listeners on ports other than 80 and 443. Their routes are
//! few, so instead of maps each frontend lists them as conditions, ordered as the maps
//! would decide: exact hosts before wildcards (one label, then any number) before the
//! catch-all; on a host, equal
//! paths (an `Exact` before a `PathPrefix` of the same path) before prefixes, longest
//! first. What a route does from there is what it does on port 80.

use std::collections::BTreeMap;
use std::fmt::Write;

use model::{Host, HostKey, PathKind, RouteTarget};

use crate::escape::regex_literal;
use crate::rules::dispatch_name;

/// Where a line goes among its frontend's lines.
pub(crate) type LineOrder = (u8, String, u8, std::cmp::Reverse<usize>, u8, String);

/// A frontend of its own: its port, and whether it terminates TLS.
pub(crate) type PortFrontend = (u16, bool);

/// One host's lines, per frontend.
pub(crate) type HostPortLines = BTreeMap<PortFrontend, Vec<(LineOrder, String)>>;

pub(crate) fn host_port_lines(key: &HostKey, host: &Host) -> HostPortLines {
    let mut lines = HostPortLines::new();
    // Most hosts are served on ports 80 and 443 alone.
    let other_ports = |route: &model::Route| {
        !route.frontends.ports.is_empty() || !route.frontends.tls_ports.is_empty()
    };
    if !host.routes.iter().any(|(_, route)| other_ports(route)) {
        return lines;
    }
    let (host_rank, host_condition) = match key {
        HostKey::Exact(name) => (0, format!(" {{ var(txn.host) -m str {name} }}")),
        HostKey::Wildcard(suffix) => (
            1,
            format!(
                " {{ var(txn.host) -m reg ^[^.]+\\.{}$ }}",
                regex_literal(suffix)
            ),
        ),
        // One to four labels, as the maps' lookups cover.
        HostKey::Suffix(suffix) => (
            2,
            format!(
                " {{ var(txn.host) -m reg ^([^.]+\\.){{1,4}}{}$ }}",
                regex_literal(suffix)
            ),
        ),
        HostKey::Regex(pattern) => (3, format!(" {{ var(txn.host) -m reg -- '{pattern}' }}")),
        HostKey::CatchAll => (4, String::new()),
    };
    for (path, route) in &host.routes {
        let frontends: Vec<PortFrontend> = route
            .frontends
            .ports
            .iter()
            .map(|port| (*port, false))
            .chain(route.frontends.tls_ports.iter().map(|port| (*port, true)))
            .collect();
        if frontends.is_empty() {
            continue;
        }
        let value = match &route.target {
            RouteTarget::Backend(id) => id.section_name(),
            RouteTarget::Rules(_) => dispatch_name(key, path),
        };
        let kind_rank = u8::from(path.kind != PathKind::Exact);
        // (equality 0 / beginning 1, the compared text, its condition)
        let tests: Vec<(u8, String, String)> = match path.kind {
            PathKind::Exact => vec![(
                0,
                path.path.to_string(),
                format!(" {{ path -m str {} }}", path.path),
            )],
            PathKind::Prefix if path.path.is_empty() => vec![(1, String::new(), String::new())],
            PathKind::Prefix => vec![
                (
                    0,
                    path.path.to_string(),
                    format!(" {{ path -m str {} }}", path.path),
                ),
                (
                    1,
                    format!("{}/", path.path),
                    format!(" {{ path -m beg {}/ }}", path.path),
                ),
            ],
            PathKind::Begin => vec![(
                1,
                path.path.to_string(),
                format!(" {{ path -m beg {} }}", path.path),
            )],
        };
        for (test_rank, compared, path_condition) in tests {
            let mut text = String::new();
            let _ = writeln!(
                text,
                "    http-request set-var(txn.backend) str({value}) if !{{ var(txn.backend) -m found }}{host_condition}{path_condition}"
            );
            let order = (
                host_rank,
                key.map_key().into_owned(),
                test_rank,
                std::cmp::Reverse(compared.len()),
                kind_rank,
                compared,
            );
            for frontend in &frontends {
                lines
                    .entry(*frontend)
                    .or_default()
                    .push((order.clone(), text.clone()));
            }
        }
    }
    lines
}
