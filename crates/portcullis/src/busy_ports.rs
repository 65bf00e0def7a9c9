//! Ports another process holds. A Gateway listener's frontend on one would stop HAProxy
//! from starting or reloading, so the ports a configuration would newly bind are tried
//! first; a busy one is left out of the configuration (its listeners report
//! `PortUnavailable`) and tried again every few seconds until it is free.

use std::collections::BTreeSet;
use std::net::{IpAddr, TcpListener};
use std::time::Duration;

use tokio::time::Instant;

/// How often ports found busy are tried again.
pub const RECHECK: Duration = Duration::from_secs(2);

/// The ports found busy, and those the running HAProxy holds.
#[derive(Debug)]
pub struct BusyPorts {
    address: IpAddr,
    busy: BTreeSet<u16>,
    /// The frontends of their own of the configuration HAProxy was last given.
    bound: BTreeSet<u16>,
    recheck: Option<Instant>,
}

impl BusyPorts {
    /// Ports on `address` (`--bind-address`), none found busy yet.
    pub fn new(address: IpAddr) -> Self {
        Self {
            address,
            busy: BTreeSet::new(),
            bound: BTreeSet::new(),
            recheck: None,
        }
    }

    /// The ports found busy.
    pub fn busy(&self) -> &BTreeSet<u16> {
        &self.busy
    }

    /// When the busy ports are to be tried again.
    pub fn recheck_due(&self) -> Option<Instant> {
        self.recheck
    }

    /// Forgets the busy ports that are free now; says whether any was.
    pub fn release_freed(&mut self) -> bool {
        let before = self.busy.len();
        let address = self.address;
        self.busy.retain(|port| held_by_another(address, *port));
        self.schedule();
        self.busy.len() != before
    }

    /// Tries the ports of `wanted` that HAProxy does not hold yet; says whether one was
    /// found busy (and remembers it).
    pub fn find_new(&mut self, wanted: &BTreeSet<u16>) -> bool {
        let address = self.address;
        let found: Vec<u16> = wanted
            .difference(&self.bound)
            .filter(|port| !self.busy.contains(port))
            .copied()
            .filter(|port| held_by_another(address, *port))
            .collect();
        self.busy.extend(&found);
        self.schedule();
        !found.is_empty()
    }

    /// Records the ports of the configuration HAProxy was given.
    pub fn bound(&mut self, ports: &BTreeSet<u16>) {
        self.bound.clone_from(ports);
    }

    fn schedule(&mut self) {
        self.recheck = (!self.busy.is_empty()).then(|| Instant::now() + RECHECK);
    }
}

/// Whether binding the port fails because something else holds it.
fn held_by_another(address: IpAddr, port: u16) -> bool {
    matches!(
        TcpListener::bind((address, port)),
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_held_elsewhere_is_busy_until_released_and_held_ports_are_not_tried() {
        #[allow(clippy::unwrap_used)]
        let holder = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        #[allow(clippy::unwrap_used)]
        let port = holder.local_addr().unwrap().port();
        let mut ports = BusyPorts::new(IpAddr::from([127, 0, 0, 1]));
        ports.bound(&BTreeSet::from([port]));
        assert!(!ports.find_new(&BTreeSet::from([port])), "HAProxy's own");
        ports.bound(&BTreeSet::new());
        assert!(ports.find_new(&BTreeSet::from([port])));
        assert_eq!(ports.busy(), &BTreeSet::from([port]));
        assert!(ports.recheck_due().is_some());
        assert!(!ports.release_freed());
        drop(holder);
        assert!(ports.release_freed());
        assert!(ports.busy().is_empty() && ports.recheck_due().is_none());
    }
}
