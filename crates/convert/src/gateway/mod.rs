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

use crate::contribution::Contribution;
use crate::outcome::RouteOutcome;

/// A route read for its parents alone, its spec holding what portcullis's types do not
/// know (`resources::UNREADABLE_SPEC_ANNOTATION`, `why`): every parent of ours is told,
/// `Accepted=False` with `UnsupportedValue` as the specification asks of a value it does
/// not know, and nothing of it is served. The whole output of the route, its status.
pub(crate) fn read_for_parents_only(
    why: &str,
    mut outcome: RouteOutcome,
    mut output: Contribution,
) -> Contribution {
    let message = format!(
        "the route holds a value portcullis does not know ({why}); it is not served until it is fixed"
    );
    for parent in &mut outcome.parents {
        parent.listeners.clear();
        parent.refusal = Some(Refusal::new(Reason::UnsupportedValue, message.clone()));
    }
    output.routes.clear();
    output.passthrough.clear();
    output.tcp.clear();
    output.diagnostics.clear();
    output.report("spec".to_owned(), message);
    output.route_status = Some(outcome);
    output
}
pub use api::{GATEWAY_CONTROLLER, GROUP};
pub use attach::intersect;
