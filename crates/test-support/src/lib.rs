//! Test helpers: in-process echo backends on 127.0.0.1, raw HTTP and HTTPS clients that
//! report what a user would see, a harness that runs portcullis and stops it by pid, and
//! manifest snippets.

#![forbid(unsafe_code)]

mod client;
mod echo;
#[allow(
    clippy::panic,
    reason = "a test asking the fake for a kind it does not serve is a wrong test, and fails loudly"
)]
mod fake_api;
mod harness;
mod holding;
mod keepalive;
mod manifests;
mod ports;
mod synthetic;

pub use client::{
    Handshake, Response, TlsResponse, answer, exchange, http_get, http_request, https_get,
    https_request, tls_handshake,
};
pub use echo::{EchoServer, TlsEchoServer};
pub use fake_api::{ApiRequest, FakeApiServer};
pub use harness::{Portcullis, kill_hard, managed_files, process_runs};
pub use holding::HoldingBackend;
pub use keepalive::KeepAliveClient;
pub use manifests::{
    ClientPki, ServerPki, backend, ca_configmap, ca_crl_secret, ca_secret, client_pki, self_signed,
    self_signed_ed25519, server_pki, tls_secret, write_manifest,
};
pub use ports::{free_port, wait_for_listener};
pub use synthetic::SyntheticCluster;
