//! Storing what a merge resolved into the model's persistent maps: the backends into
//! theirs, the hosts into theirs. The two touch nothing in common, so a large merge
//! stores them side by side.

use std::sync::Arc;

use model::{Backend, BackendId, CertId, HostKey, OrdMap, PathMatch, Route, TlsCert, TlsOptions};
use rustc_hash::{FxHashMap, FxHashSet};

use super::claims::{RouteKey, set};
use super::{TlsWinners, shared_tls};
use crate::diagnostic::Diagnostic;

/// What a backend's uses came to: `None` when it has none left, else the merged backend
/// (`None` when no use names one) and what its uses reported.
pub(super) type BackendResolution = Option<(Option<Arc<Backend>>, Vec<Diagnostic>)>;

/// Stores each backend's resolution. Into an empty map (a merge from nothing) nothing
/// stored is compared first.
pub(super) fn backends(
    stored: &mut OrdMap<BackendId, Arc<Backend>>,
    diagnostics: &mut FxHashMap<BackendId, Vec<Diagnostic>>,
    resolutions: impl Iterator<Item = (BackendId, BackendResolution)>,
) {
    let fresh = stored.is_empty();
    for (id, resolution) in resolutions {
        let Some((merged, found)) = resolution else {
            stored.remove(&id);
            diagnostics.remove(&id);
            continue;
        };
        set(diagnostics, &id, found);
        if let Some(backend) = merged
            && (fresh || stored.get(&id) != Some(&backend))
        {
            stored.insert(id, backend);
        }
    }
}

/// What a host's certificate and TLS options are read from: the TLS winners, and the
/// certificates that loaded.
pub(super) struct HostTls<'a> {
    pub(super) tls_winners: &'a TlsWinners,
    pub(super) certs: &'a OrdMap<CertId, TlsCert>,
}

/// Settles every host whose routes changed (`route_changes`, in key order: a host's
/// paths side by side, so each host is updated once), then every other host whose
/// certificate may have.
pub(super) fn hosts(
    hosts: &mut OrdMap<HostKey, model::Host>,
    tls: &HostTls<'_>,
    route_changes: impl Iterator<Item = (RouteKey, Option<Route>)>,
    mut certificate_hosts: FxHashSet<HostKey>,
) {
    // Into an empty map (a merge from nothing) every host comes once: none is looked up.
    let fresh = hosts.is_empty();
    let mut route_changes = route_changes.peekable();
    while let Some(((host, path), route)) = route_changes.next() {
        let mut paths = vec![(path, route)];
        while let Some(((_, path), route)) = route_changes.next_if(|((next, _), _)| *next == host) {
            paths.push((path, route));
        }
        certificate_hosts.remove(&host);
        settle_host(hosts, fresh, tls, host, paths);
    }
    for host in certificate_hosts {
        settle_host(hosts, fresh, tls, host, Vec::new());
    }
}

/// Sets a host's routes (`None`: the path is no longer routed) and its certificate
/// from its TLS winner, and drops a host left with neither routes nor a certificate.
/// The persistent map is touched only when the host changes; `fresh`: the host is not
/// in it.
fn settle_host(
    hosts: &mut OrdMap<HostKey, model::Host>,
    fresh: bool,
    tls: &HostTls<'_>,
    host: HostKey,
    routes: Vec<(PathMatch, Option<Route>)>,
) {
    let (cert, options) = match tls.tls_winners.get(&host) {
        // The certificates in the model are the ones that loaded.
        Some((_, Some(id), options)) => (
            tls.certs.contains_key(id).then(|| id.clone()),
            options.clone(),
        ),
        Some((_, None, options)) => (None, options.clone()),
        None => (None, shared_tls(&TlsOptions::default())),
    };
    let current = if fresh { None } else { hosts.get(&host) };
    let same_routes = routes
        .iter()
        .all(|(path, route)| current.and_then(|h| h.routes.get(path)) == route.as_ref());
    let same_rest = match current {
        Some(current) => {
            current.cert == cert
                && current.tls == options
                && !(current.routes.is_empty() && cert.is_none() && options.is_empty())
        }
        None => cert.is_none() && options.is_empty(),
    };
    if same_routes && same_rest {
        return;
    }
    let mut settled = current.cloned().unwrap_or_else(|| model::Host {
        routes: model::Routes::default(),
        cert: None,
        tls: options.clone(),
    });
    for (path, route) in routes {
        match route {
            Some(route) => {
                settled.routes.insert(path, route);
            }
            None => {
                settled.routes.remove(&path);
            }
        }
    }
    settled.cert = cert;
    settled.tls = options;
    if settled.routes.is_empty() && settled.cert.is_none() && settled.tls.is_empty() {
        hosts.remove(&host);
    } else {
        hosts.insert(host, settled);
    }
}
