//! The TCP services' part of the merge: on each port, the oldest claim on a name (or on
//! the catch-all) wins it, and the port's own settings (TLS, PROXY, log format) are its
//! oldest claim's. A port is resolved whole: it holds a few names at most.

use std::collections::BTreeMap;

use model::{BackendId, CertId, HostKey, TcpRoute, TcpService, TcpTls};

use super::Merger;
use super::claims::{Claims, Dirty, Held, position};
use crate::contribution::{ClaimKind, Contribution};
use crate::diagnostic::Diagnostic;

impl Merger {
    pub(super) fn claim_tcp(
        &mut self,
        contribution: &std::sync::Arc<Contribution>,
        dirty: &mut Dirty,
    ) {
        for (index, claim) in contribution.tcp.iter().enumerate() {
            self.tcp_claims
                .entry((claim.port, claim.host.clone()))
                .or_default()
                .insert(
                    position(contribution, ClaimKind::Tcp(index as u32)),
                    Held {
                        contribution: contribution.clone(),
                        index,
                    },
                );
            *self
                .tcp_hosts
                .entry(claim.port)
                .or_default()
                .entry(claim.host.clone())
                .or_default() += 1;
            dirty.tcp.insert(claim.port);
        }
    }

    pub(super) fn unclaim_tcp(&mut self, contribution: &Contribution, dirty: &mut Dirty) {
        for (index, claim) in contribution.tcp.iter().enumerate() {
            let key = (claim.port, claim.host.clone());
            if let Some(claims) = self.tcp_claims.get_mut(&key) {
                claims.remove(&position(contribution, ClaimKind::Tcp(index as u32)));
                if claims.is_empty() {
                    self.tcp_claims.remove(&key);
                }
            }
            if let Some(hosts) = self.tcp_hosts.get_mut(&claim.port) {
                if let Some(count) = hosts.get_mut(&claim.host) {
                    *count -= 1;
                    if *count == 0 {
                        hosts.remove(&claim.host);
                    }
                }
                if hosts.is_empty() {
                    self.tcp_hosts.remove(&claim.port);
                }
            }
            dirty.tcp.insert(claim.port);
        }
    }

    /// Drops the port's previous backend uses; called for every dirty port before any
    /// is resolved, since a changed object's new claims may take its old positions.
    pub(super) fn forget_tcp_uses(&mut self, port: u16, dirty: &mut Dirty) {
        for (position, id) in self.tcp_winners.remove(&port).into_iter().flatten() {
            self.remove_use(&id, &position, dirty);
        }
    }

    pub(super) fn resolve_tcp(&mut self, port: u16, dirty: &mut Dirty) {
        let mut diagnostics = Vec::new();
        let hosts: Vec<HostKey> = self
            .tcp_hosts
            .get(&port)
            .map(|hosts| hosts.keys().cloned().collect())
            .unwrap_or_default();
        // The port's settings are its oldest claim's.
        let owner: Option<Held> = hosts
            .iter()
            .filter_map(|host| self.tcp_claims.get(&(port, host.clone())))
            .filter_map(|claims| claims.iter().next())
            .min_by(|a, b| a.0.cmp(b.0))
            .map(|(_, held)| held.clone());
        let mut service = None;
        let mut uses = Vec::new();
        let mut certs: Vec<CertId> = Vec::new();
        if let Some(owner) = &owner {
            let settings = &owner.tcp().port_settings;
            let mut routes = BTreeMap::new();
            for host in &hosts {
                let Some(claims) = self.tcp_claims.get(&(port, host.clone())) else {
                    continue;
                };
                let winner = winning_claim(claims, owner, &mut diagnostics);
                let Some((position, held)) = winner else {
                    continue;
                };
                let claim = held.tcp();
                if *host != HostKey::CatchAll && !settings.tls {
                    diagnostics.push(Diagnostic {
                        object: held.contribution.object.clone(),
                        field: claim.field.clone(),
                        message: format!("port {port} does not terminate TLS (as {} set it, which is older), so connections cannot be chosen by the name {host}; it is not served", owner.contribution.object),
                    });
                    continue;
                }
                for backend in claim.backends.iter().filter_map(|(b, _)| b.as_ref()) {
                    uses.push((
                        position.clone(),
                        backend.id.clone(),
                        held.contribution.clone(),
                    ));
                }
                if let Some(cert) = &claim.cert
                    && settings.tls
                {
                    if *host == HostKey::CatchAll {
                        certs.insert(0, cert.clone());
                    } else {
                        certs.push(cert.clone());
                    }
                }
                routes.insert(
                    host.clone(),
                    TcpRoute {
                        backends: claim
                            .backends
                            .iter()
                            .map(|(backend, weight)| {
                                (backend.as_ref().map(|b| b.id.clone()), *weight)
                            })
                            .collect(),
                        origin: held.contribution.origin.clone(),
                    },
                );
            }
            let mut seen = std::collections::BTreeSet::new();
            certs.retain(|cert| seen.insert(cert.clone()));
            service = Some(TcpService {
                routes,
                tls: settings.tls.then(|| TcpTls {
                    certs: certs.clone(),
                    client_ca: settings.client_ca.clone(),
                }),
                accept_proxy: settings.accept_proxy,
                log_format: settings.log_format.clone(),
                origin: owner.contribution.origin.clone(),
            });
        }
        let mut winners = Vec::with_capacity(uses.len());
        for (position, id, contribution) in uses {
            super::add_use(
                &mut self.backend_uses,
                &id,
                position.clone(),
                contribution,
                dirty,
            );
            winners.push((position, id));
        }
        if !winners.is_empty() {
            self.tcp_winners.insert(port, winners);
        }
        self.set_tcp_certificates(port, owner.as_ref(), certs, dirty);
        super::claims::set(&mut self.diagnostics.tcp, &port, diagnostics);
        match service {
            Some(service) => {
                if self.tcp_services.get(&port) != Some(&service) {
                    self.tcp_services.insert(port, service);
                }
            }
            None => {
                self.tcp_services.remove(&port);
            }
        }
    }

    /// Records which certificates the port serves, so that they are loaded (and their
    /// changes followed). The ones it served before are the port's previous value's:
    /// called before the port's new value replaces it.
    fn set_tcp_certificates(
        &mut self,
        port: u16,
        owner: Option<&Held>,
        certs: Vec<CertId>,
        dirty: &mut Dirty,
    ) {
        let before = self
            .tcp_services
            .get(&port)
            .and_then(|service| service.tls.as_ref())
            .map(|tls| tls.certs.clone())
            .unwrap_or_default();
        for id in &before {
            if let Some(users) = self.tcp_certificate_users.get_mut(id) {
                users.remove(&port);
                if users.is_empty() {
                    self.tcp_certificate_users.remove(id);
                }
            }
            dirty.certificates.insert(id.clone());
        }
        let Some(owner) = owner else { return };
        for id in &certs {
            self.tcp_certificate_users
                .entry(id.clone())
                .or_default()
                .insert(port, owner.contribution.object.clone());
            dirty.certificates.insert(id.clone());
        }
    }
}

/// The oldest claim on a name, each other object's claim to other backends reported,
/// and a claim whose port settings differ from the port's owner's reported too.
fn winning_claim(
    claims: &Claims<Held>,
    owner: &Held,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(super::claims::Position, Held)> {
    let mut ordered = claims.iter();
    let (position, winner) = ordered.next()?;
    let targets = |held: &Held| -> Vec<(Option<BackendId>, u32)> {
        held.tcp()
            .backends
            .iter()
            .map(|(backend, weight)| (backend.as_ref().map(|b| b.id.clone()), *weight))
            .collect()
    };
    for (_, other) in ordered {
        if other.contribution.object != winner.contribution.object
            && targets(other) != targets(winner)
        {
            let claim = other.tcp();
            diagnostics.push(Diagnostic {
                object: other.contribution.object.clone(),
                field: claim.field.clone(),
                message: format!(
                    "{} is already served by {}, which is older; this one is ignored",
                    port_and_name(claim.port, &claim.host),
                    winner.contribution.object
                ),
            });
        }
    }
    for (_, held) in claims.iter() {
        let claim = held.tcp();
        if held.contribution.object != owner.contribution.object
            && claim.port_settings != owner.tcp().port_settings
        {
            diagnostics.push(Diagnostic {
                object: held.contribution.object.clone(),
                field: claim.field.clone(),
                message: format!(
                    "the settings of TCP port {} (TLS, PROXY protocol, log format) are those of {}, which is older; this object's differ and are ignored",
                    claim.port, owner.contribution.object
                ),
            });
        }
    }
    Some((position.clone(), winner.clone()))
}

/// A port, or a name on it, as messages say it.
fn port_and_name(port: u16, host: &HostKey) -> String {
    match host {
        HostKey::CatchAll => format!("TCP port {port}"),
        host => format!("the name {host} on TCP port {port}"),
    }
}
