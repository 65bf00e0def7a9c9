//! Ports for the servers a test starts (HAProxy frontends, admin endpoints), picked below
//! the kernel's ephemeral range: a port picked there and released can be taken a moment
//! later as the local port of some outgoing connection, and then HAProxy cannot bind it.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};

/// The lowest port handed out; below it lie the well-known and registered services.
const LOWEST_PORT: u16 = 20_000;

/// A port that was free a moment ago on 127.0.0.1 and that no outgoing connection can
/// take, chosen at random so that tests running side by side rarely try the same one.
pub fn free_port() -> u16 {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let ceiling = ephemeral_range_start().max(LOWEST_PORT + 1_000);
    let span = u64::from(ceiling - LOWEST_PORT);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let start = RandomState::new().hash_one((std::process::id(), call));
    (0..span)
        .filter_map(|step| u16::try_from(u64::from(LOWEST_PORT) + (start + step) % span).ok())
        .find(|&port| TcpListener::bind(("127.0.0.1", port)).is_ok())
        .unwrap_or(0)
}

/// Where the kernel starts choosing local ports for outgoing connections.
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}
