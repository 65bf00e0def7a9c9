//! Everything that talks to a Kubernetes API server: the watchers that feed the index,
//! leader election, Ingress status and Events.

mod access;
mod connect;
mod events;
mod gateway_status;
mod lease;
mod status;
mod watch;

pub use access::{API_ACCESS, Access, Grant};
pub use connect::{ConnectError, connect};
pub use events::{Problem, api_version, publish_events};
pub use gateway_status::{StatusWrite, pending_writes, write_gateway_status};
pub use lease::{LeaseConfig, elect, release};
pub use status::{
    Publish, ServedIngress, StatusInput, from_addresses, from_service, outdated,
    write_ingress_status,
};
pub use watch::{TLS_SECRETS, WatchScope, watch_cluster};
