//! The Gateway API: HTTPRoutes (and GRPCRoutes, through the same converter: `grpc`),
//! TLSRoutes (`tls_route`) and TCPRoutes (`tcp_route`, sharing `l4`) converted through the Gateways of our GatewayClasses
//! (`route`), the listeners they attach to (`listener`; a Gateway's own merged with its
//! ListenerSets' in `merged`), their matches and filters
//! (`rules`), the BackendTLSPolicies of their backends (`backend_tls`), and the status
//! written back (`status`, in the vocabulary of `crate::outcome`).

mod api;
pub(crate) mod attach;
pub(crate) mod backend_tls;
mod cors;
pub(crate) mod frontend_tls;
pub(crate) mod grpc;
pub(crate) mod l4;
pub(crate) mod listener;
pub(crate) mod merged;
pub(crate) mod route;
pub(crate) mod rules;
pub mod status;
pub(crate) mod tcp_route;
pub(crate) mod tls_route;

pub use crate::outcome::{ConditionStatus, ConditionType, Reason, Refusal};
pub use api::{GATEWAY_CONTROLLER, GROUP};
pub use attach::intersect;
