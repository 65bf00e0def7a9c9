//! Gateway API through a real HAProxy: Gateways of our GatewayClass and their listeners
//! (and their ListenerSets'), HTTPRoutes attached by parentRef, hostname intersection,
//! allowedRoutes, matches and their precedence, filters, weights, ReferenceGrants, and the
//! status of it all.

// Test helpers fail loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backend_tls;
mod listener_sets;
mod manifests;
mod misdirected;
mod routing;
mod rules;
mod status;
mod synthetic;

use std::path::Path;

/// Writes a manifest file whole.
fn write(dir: &Path, file: &str, text: &str) {
    test_support::write_manifest(dir, file, text).unwrap();
}

/// Starts portcullis on `manifests`, its state directory `state` in `dir`.
fn start(dir: &Path, manifests: &Path) -> test_support::Portcullis {
    test_support::Portcullis::start(
        env!("CARGO_BIN_EXE_portcullis"),
        manifests,
        &dir.join("state"),
        &[],
    )
    .unwrap()
}
