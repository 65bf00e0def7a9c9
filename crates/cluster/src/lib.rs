//! Everything that talks to a Kubernetes API server: the watchers that feed the index,
//! leader election, status and Events.

#![forbid(unsafe_code)]

mod access;
mod connect;
mod delivered;
mod events;
mod lease;
mod lenient;
mod status;
mod watch;

pub use access::{API_ACCESS, Access, Grant};
pub use connect::{ConnectError, connect};
pub use events::{Problem, api_version, publish_events};
pub use lease::{LeaseConfig, elect, release};
pub use status::{
    MergeContext, Publish, ServedGateways, ServedIngresses, SharedParentsKind, StatusKind,
    StatusWriter, Target, TargetSource, WRITES_IN_FLIGHT, from_addresses, from_service,
};
pub use watch::{USABLE_SECRETS, WatchScope, watch_cluster};
