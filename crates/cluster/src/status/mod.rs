//! Status written back by the leader, for every kind through one writer: each kind says
//! how its typed status merges ours into what other controllers own, and the writer
//! patches only what differs.

mod conditions;
mod gateway;
mod ingress;
mod kind;
mod route;
#[cfg(test)]
mod testing;
mod writer;

pub use gateway::ServedGateways;
pub use ingress::{Publish, ServedIngresses, from_addresses, from_service};
pub use kind::{MergeContext, StatusKind, Target};
pub use route::SharedParentsKind;
pub use writer::{StatusWriter, TargetSource, WRITES_IN_FLIGHT};
