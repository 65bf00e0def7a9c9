//! One TLSRoute, through the TLS listeners of the Gateways of ours it attaches to.
//! Pure and memoized like an HTTPRoute: everything it reads goes through the recorder.
//!
//! The route's hostnames are intersected with each listener's as for HTTPRoutes (a
//! wildcard covers one or more labels). On a listener in Passthrough mode each name's
//! connections go untouched to the route's backend, chosen by SNI on the HTTPS port; a
//! route whose backend does not resolve has its names' connections refused, as the
//! specification asks, rather than terminated by HAProxy. On a listener in Terminate
//! mode (a port of its own) HAProxy terminates TLS with the listener's certificate and
//! sends each name's bytes to the route's backends, split by weight.

use std::sync::Arc;

use model::{Backend, HostKey};
use resources::ObjectRef;
use resources::TlsRoute;

use super::l4::{self, Attachment, BackendRef, Serving};
use crate::contribution::WeightedBackends;
use crate::contribution::{Contribution, MergeOrder, PassthroughClaim, TcpClaim, TcpPortSettings};
use crate::lookup::Recorder;
use crate::outcome::{Reason, Refusal, RouteOutcome};

/// Converts one TLSRoute; a route attached to none of our Gateways contributes nothing
/// but its status.
pub(crate) fn convert_tls_route(
    object: ObjectRef,
    route: &Arc<TlsRoute>,
    lookups: &mut Recorder<'_>,
) -> Contribution {
    let order = MergeOrder::of(route.metadata.creation_timestamp.as_ref(), &object);
    let mut output = Contribution::new(object, "TLSRoute", order);
    let mut outcome = RouteOutcome::at(route.metadata.generation);
    let parents = resources::Object::TlsRoute(route.clone());
    let attached = l4::attachments(
        &parents.parent_refs(),
        &route.spec.hostnames,
        resources::Kind::TlsRoute,
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
    let passthrough = attached.iter().any(|a| a.serving == Serving::Passthrough);
    let terminated = attached.iter().any(|a| a.serving != Serving::Passthrough);
    if passthrough {
        let (backend, unresolved) = passthrough_backend(&refs, lookups, &mut output);
        outcome.unresolved = unresolved;
        claim_passthrough(&attached, &backend, &mut output);
    }
    if terminated {
        let (backends, unresolved) = l4::weighted_backends(&refs, "TLSRoute", lookups, &mut output);
        if outcome.unresolved.is_none() {
            outcome.unresolved = unresolved;
        }
        // A BackendTLSPolicy on a backend's Service port re-encrypts toward it.
        let mut policies = std::collections::BTreeSet::new();
        let backends: WeightedBackends = backends
            .into_iter()
            .map(|(backend, weight)| {
                let backend = backend.map(|b| {
                    let tcp = Arc::new((*b).clone().for_tcp());
                    super::backend_tls::apply(lookups, tcp, &mut policies)
                });
                (backend, weight)
            })
            .collect();
        outcome.policies = policies;
        for attachment in attached
            .iter()
            .filter(|a| a.serving != Serving::Passthrough)
        {
            let Serving::Terminate(cert) = &attachment.serving else {
                continue;
            };
            for host in &attachment.hosts {
                output.tcp.push(TcpClaim {
                    port: attachment.port,
                    host: host.clone(),
                    backends: backends.clone(),
                    cert: cert.clone(),
                    port_settings: TcpPortSettings {
                        tls: true,
                        ..TcpPortSettings::default()
                    },
                    field: attachment.field.clone(),
                });
            }
        }
    }
    output.route_status = Some(outcome);
    output
}

/// The passthrough names' claims, each name once.
fn claim_passthrough(
    attached: &[Attachment],
    backend: &Option<Arc<Backend>>,
    output: &mut Contribution,
) {
    let mut claimed: Vec<HostKey> = Vec::new();
    for attachment in attached
        .iter()
        .filter(|a| a.serving == Serving::Passthrough)
    {
        for host in &attachment.hosts {
            if *host == HostKey::CatchAll {
                // Neither the listener nor the route names a host: there is no SNI to
                // choose these connections by.
                output.report(
                    "spec.hostnames".to_owned(),
                    "a TLSRoute on a Passthrough listener without a hostname needs hostnames (connections are chosen by SNI); nothing is passed through".to_owned(),
                );
                continue;
            }
            if claimed.contains(host) {
                continue;
            }
            claimed.push(host.clone());
            output.passthrough.push(PassthroughClaim {
                host: host.clone(),
                backend: backend.clone(),
                access: None,
                field: attachment.field.clone(),
            });
        }
    }
}

/// The passthrough backend: the first backendRef with a weight above zero (one Service
/// takes a name's connections there); `None` with the reason when it does not resolve,
/// and its connections are refused.
fn passthrough_backend(
    refs: &[(String, BackendRef<'_>)],
    lookups: &mut Recorder<'_>,
    output: &mut Contribution,
) -> (Option<Arc<Backend>>, Option<Refusal>) {
    let mut weighted = refs.iter().filter(|(_, r)| r.weight != Some(0));
    let Some((field, reference)) = weighted.next() else {
        let refusal = Refusal::new(
            Reason::BackendNotFound,
            "the route has no backendRef with a weight above 0; its connections are refused",
        );
        output.report("spec.rules".to_owned(), refusal.message.clone());
        return (None, Some(refusal));
    };
    for (other, _) in weighted {
        output.report(
            other.clone(),
            "a passed-through name's connections go to one backend: the first backendRef is served, this one is ignored".to_owned(),
        );
    }
    match l4::service_backend(reference, "TLSRoute", lookups, output) {
        Ok(backend) => (Some(Arc::new((*backend).clone().for_passthrough())), None),
        Err(refusal) => {
            output.report(
                field.clone(),
                format!("{}; its connections are refused", refusal.message),
            );
            (None, Some(refusal))
        }
    }
}
