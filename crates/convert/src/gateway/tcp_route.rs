//! One TCPRoute, through the TCP listeners of the Gateways of ours it attaches to: the
//! listener's port gets a TCP frontend whose connections go to the route's backends,
//! split by weight (a backend that does not resolve has its share refused). Of several
//! routes on one listener the oldest is served, as the specification asks; a UDPRoute is
//! reported, since HAProxy does not proxy UDP.

use std::sync::Arc;

use model::HostKey;
use resources::{Kind, Object, ObjectRef, TcpRoute, UdpRoute};

use super::l4;
use crate::contribution::WeightedBackends;
use crate::contribution::{Contribution, MergeOrder, TcpClaim, TcpPortSettings};
use crate::lookup::Recorder;
use crate::outcome::{Reason, Refusal, RouteOutcome};

/// Converts one TCPRoute; a route attached to none of our Gateways contributes nothing
/// but its status.
pub(crate) fn convert_tcp_route(
    object: ObjectRef,
    route: &Arc<TcpRoute>,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(route.metadata.creation_timestamp.as_ref(), &object);
    let mut output = Contribution::new(object, "TCPRoute", order);
    let mut outcome = RouteOutcome::at(route.metadata.generation);
    let parents = Object::TcpRoute(route.clone());
    let attached = l4::attachments(
        &parents.parent_refs(),
        &[],
        Kind::TcpRoute,
        lookups,
        &mut output,
        &mut outcome.parents,
    );
    if outcome.parents.is_empty() {
        return output;
    }
    if let Some(why) = resources::unreadable_spec(&route.metadata) {
        return super::read_for_parents_only(why, outcome, output);
    }
    let refs = l4::backend_refs!(route.spec.rules);
    let (backends, unresolved) = l4::weighted_backends(&refs, "TCPRoute", lookups, &mut output);
    outcome.unresolved = unresolved;
    let backends: WeightedBackends = backends
        .into_iter()
        .map(|(backend, weight)| (backend.map(|b| Arc::new((*b).clone().for_tcp())), weight))
        .collect();
    for attachment in &attached {
        output.tcp.push(TcpClaim {
            port: attachment.port,
            host: HostKey::CatchAll,
            backends: backends.clone(),
            cert: None,
            port_settings: TcpPortSettings::default(),
            field: attachment.field.clone(),
        });
    }
    output.route_status = Some(outcome);
    output
}

/// A UDPRoute naming a Gateway of ours: not attached (HAProxy cannot proxy UDP), which
/// its status says for every such parent.
pub(crate) fn convert_udp_route(
    object: ObjectRef,
    route: &Arc<UdpRoute>,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(route.metadata.creation_timestamp.as_ref(), &object);
    let mut output = Contribution::new(object, "UDPRoute", order);
    let mut outcome = RouteOutcome::at(route.metadata.generation);
    let parents = Object::UdpRoute(route.clone());
    // No listener of ours takes UDPRoutes (a UDP listener is refused): every parent of
    // ours is told why.
    l4::attachments(
        &parents.parent_refs(),
        &[],
        Kind::UdpRoute,
        lookups,
        &mut output,
        &mut outcome.parents,
    );
    if outcome.parents.is_empty() {
        return output;
    }
    if let Some(why) = resources::unreadable_spec(&route.metadata) {
        return super::read_for_parents_only(why, outcome, output);
    }
    for parent in &mut outcome.parents {
        parent.refusal = Some(Refusal::new(
            Reason::NotAllowedByListeners,
            "UDPRoutes are not served: HAProxy proxies TCP only",
        ));
    }
    // Its references are resolved all the same (ResolvedRefs does not depend on
    // Accepted); what a served route's problems would say of its connections does not
    // apply, and goes with the attachment's.
    let refs = l4::backend_refs!(route.spec.rules);
    let (_, unresolved) = l4::weighted_backends(&refs, "UDPRoute", lookups, &mut output);
    outcome.unresolved = unresolved;
    output.diagnostics.clear();
    output.report(
        "spec".to_owned(),
        "UDPRoutes are not served: HAProxy proxies TCP only; the route is not attached".to_owned(),
    );
    output.route_status = Some(outcome);
    output
}
