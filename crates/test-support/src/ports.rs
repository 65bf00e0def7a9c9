//! Ports for the servers a test starts (HAProxy frontends, admin endpoints), picked below
//! the kernel's ephemeral range: a port picked there and released can be taken a moment
//! later as the local port of some outgoing connection, and then HAProxy cannot bind it.
//!
//! A port is free when nothing listens on it, but a port handed out is not bound until
//! the server the test starts gets to it; in between, another pick (in this test or in a
//! test running beside it, in another process) could choose it again. So every port
//! handed out is also reserved: an exclusive lock on a file named after it, held until
//! the test's process exits, which the operating system then releases however it exits.

use std::collections::hash_map::RandomState;
use std::fs::{File, OpenOptions};
use std::hash::BuildHasher;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The lowest port handed out; below it lie the well-known and registered services.
const LOWEST_PORT: u16 = 20_000;

/// The reservations this process holds; a lock lasts as long as its file stays open.
static RESERVATIONS: Mutex<Vec<File>> = Mutex::new(Vec::new());

/// A port that was free a moment ago on 127.0.0.1, that no outgoing connection can take
/// and that no other pick (in this process or another) hands out while this process runs.
pub fn free_port() -> u16 {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let ceiling = ephemeral_range_start().max(LOWEST_PORT + 1_000);
    let span = u64::from(ceiling - LOWEST_PORT);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let start = RandomState::new().hash_one((std::process::id(), call));
    let directory = reservation_directory();
    (0..span)
        .filter_map(|step| u16::try_from(u64::from(LOWEST_PORT) + (start + step) % span).ok())
        .find(|&port| reserve(directory.as_ref(), port) && listenable(port))
        .unwrap_or(0)
}

/// Takes the lock of `port` for the rest of this process, or says that someone holds it.
/// Where no lock can be kept (no directory, or a file that cannot be opened), only the
/// listening check protects the port: a pick never fails for want of a lock file.
fn reserve(directory: Option<&PathBuf>, port: u16) -> bool {
    let Some(directory) = directory else {
        return true;
    };
    let Ok(file) = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(directory.join(port.to_string()))
    else {
        return true;
    };
    if file.try_lock().is_err() {
        return false;
    }
    match RESERVATIONS.lock() {
        Ok(mut held) => held.push(file),
        Err(poisoned) => poisoned.into_inner().push(file),
    }
    true
}

fn listenable(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// One directory for every test process of this user on this machine, so that they see
/// each other's locks (another user's directory may not be writable).
fn reservation_directory() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let user = std::fs::metadata("/proc/self").ok()?.uid();
    let directory = std::env::temp_dir().join(format!("portcullis-test-ports-{user}"));
    std::fs::create_dir_all(&directory).ok()?;
    Some(directory)
}

/// Where the kernel starts choosing local ports for outgoing connections.
fn ephemeral_range_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// Waits until something accepts connections on 127.0.0.1:`port`, for a server started
/// as a process of its own; panics (failing the test) after 10 s.
pub fn wait_for_listener(port: u16) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listens on 127.0.0.1:{port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_handed_out_are_never_handed_out_again_while_the_process_runs() {
        let ports: Vec<u16> = (0..2_000).map(|_| free_port()).collect();
        let distinct: std::collections::HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
        assert!(!distinct.contains(&0));
    }

    #[test]
    fn a_lock_file_that_cannot_be_opened_leaves_the_listening_check_alone_deciding() {
        let nowhere = std::env::temp_dir().join("portcullis-no-such-directory/deeper");
        assert!(reserve(Some(&nowhere), 20_001));
        assert!(reserve(None, 20_001));
    }
}
