//! GatewayClass, Gateway and ListenerSet status: each field our desired status sets
//! replaces the current one (conditions keeping their transition times, per listener for
//! the listeners of a Gateway or ListenerSet); fields we do not set are someone else's
//! and stay as they are.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Client;
use resources::Kind;
use resources::gateway::{
    GatewayClassStatus, GatewayStatus, GatewayStatusListeners, ListenerSetStatus,
    ListenerSetStatusListeners,
};
use resources::{Gateway, GatewayClass, ListenerSet};

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use resources::Service;
use resources::gateway::GatewayStatusAddresses;

use super::conditions::with_transition_times;
use super::ingress::{Publish, RECHECK, published_addresses};
use super::kind::{MergeContext, StatusKind, Target};
use super::writer::TargetSource;

/// What the Gateway status writer works from: the status computed for each Gateway of
/// ours, and where the address clients reach them at comes from (`status.addresses`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServedGateways {
    /// The computed status of each Gateway.
    pub gateways: Vec<Target<Gateway>>,
    /// Where the published address comes from (`--publish-service`/`--publish-address`).
    pub publish: Option<Publish>,
    /// The `--publish-service` Service, when a watched namespace holds it.
    pub publish_service: Option<Arc<Service>>,
}

impl TargetSource<Gateway> for ServedGateways {
    const RECHECK: Option<Duration> = Some(RECHECK);

    async fn targets(&self, client: &Client) -> Result<Cow<'_, [Target<Gateway>]>, kube::Error> {
        let Some(publish) = &self.publish else {
            return Ok(Cow::Borrowed(&self.gateways));
        };
        let published = published_addresses(publish, self.publish_service.as_deref(), client)
            .await?
            .into_iter()
            .filter_map(|address| match (address.ip, address.hostname) {
                (Some(ip), _) => Some(("IPAddress", ip)),
                (None, Some(hostname)) => Some(("Hostname", hostname)),
                (None, None) => None,
            })
            .map(|(kind, value)| GatewayStatusAddresses {
                r#type: Some(kind.to_owned()),
                value,
            })
            .collect::<Vec<_>>();
        Ok(Cow::Owned(
            self.gateways
                .iter()
                .map(|gateway| Target {
                    object: gateway.object.clone(),
                    desired: Arc::new(GatewayStatus {
                        addresses: Some(published.clone()),
                        ..(*gateway.desired).clone()
                    }),
                })
                .collect(),
        ))
    }
}

impl StatusKind for GatewayClass {
    const KIND: Kind = Kind::GatewayClass;
    type Status = GatewayClassStatus;
    type Desired = GatewayClassStatus;

    fn status(&self) -> Option<&GatewayClassStatus> {
        self.status.as_ref()
    }

    fn merge(
        current: &GatewayClassStatus,
        desired: &GatewayClassStatus,
        context: &MergeContext<'_>,
    ) -> GatewayClassStatus {
        GatewayClassStatus {
            conditions: merge_conditions(&current.conditions, &desired.conditions, context),
            supported_features: desired
                .supported_features
                .clone()
                .or_else(|| current.supported_features.clone()),
        }
    }
}

impl StatusKind for Gateway {
    const KIND: Kind = Kind::Gateway;
    type Status = GatewayStatus;
    type Desired = GatewayStatus;

    fn status(&self) -> Option<&GatewayStatus> {
        self.status.as_ref()
    }

    fn merge(
        current: &GatewayStatus,
        desired: &GatewayStatus,
        context: &MergeContext<'_>,
    ) -> GatewayStatus {
        let listeners = desired.listeners.as_ref().map(|listeners| {
            listeners
                .iter()
                .map(|listener| merge_listener(current, listener, context))
                .collect()
        });
        GatewayStatus {
            addresses: desired
                .addresses
                .clone()
                .or_else(|| current.addresses.clone()),
            attached_listener_sets: desired
                .attached_listener_sets
                .or(current.attached_listener_sets),
            conditions: merge_conditions(&current.conditions, &desired.conditions, context),
            listeners: listeners.or_else(|| current.listeners.clone()),
        }
    }
}

/// A ListenerSet belongs to the one Gateway it names, so its status is all ours.
impl StatusKind for ListenerSet {
    const KIND: Kind = Kind::ListenerSet;
    type Status = ListenerSetStatus;
    type Desired = ListenerSetStatus;

    fn status(&self) -> Option<&ListenerSetStatus> {
        self.status.as_ref()
    }

    fn merge(
        current: &ListenerSetStatus,
        desired: &ListenerSetStatus,
        context: &MergeContext<'_>,
    ) -> ListenerSetStatus {
        let listeners = desired.listeners.as_ref().map(|listeners| {
            listeners
                .iter()
                .map(|listener| {
                    let before = current
                        .listeners
                        .iter()
                        .flatten()
                        .find(|old| old.name == listener.name)
                        .map_or(&[][..], |old| &old.conditions);
                    ListenerSetStatusListeners {
                        conditions: with_transition_times(
                            &listener.conditions,
                            before,
                            context.now,
                        ),
                        ..listener.clone()
                    }
                })
                .collect()
        });
        ListenerSetStatus {
            conditions: merge_conditions(&current.conditions, &desired.conditions, context),
            listeners: listeners.or_else(|| current.listeners.clone()),
        }
    }
}

fn merge_listener(
    current: &GatewayStatus,
    desired: &GatewayStatusListeners,
    context: &MergeContext<'_>,
) -> GatewayStatusListeners {
    let before = current
        .listeners
        .iter()
        .flatten()
        .find(|listener| listener.name == desired.name)
        .map_or(&[][..], |listener| &listener.conditions);
    GatewayStatusListeners {
        conditions: with_transition_times(&desired.conditions, before, context.now),
        ..desired.clone()
    }
}

fn merge_conditions(
    current: &Option<Vec<Condition>>,
    desired: &Option<Vec<Condition>>,
    context: &MergeContext<'_>,
) -> Option<Vec<Condition>> {
    match desired {
        Some(desired) => Some(with_transition_times(
            desired,
            current.as_deref().unwrap_or_default(),
            context.now,
        )),
        None => current.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::kind::Target;
    use crate::status::testing::{EARLIER, NOW, UNSET, at_now, condition, metadata};
    use resources::gateway::{
        GatewayClassSpec, GatewayClassStatusSupportedFeatures, GatewaySpec, GatewayStatusAddresses,
    };
    use std::sync::Arc;

    fn class(
        status: Option<GatewayClassStatus>,
        desired: GatewayClassStatus,
    ) -> Target<GatewayClass> {
        let mut object = GatewayClass::new("portcullis", GatewayClassSpec::default());
        object.metadata = metadata("portcullis", "1");
        object.metadata.namespace = None;
        object.status = status;
        Target {
            object: Arc::new(object),
            desired: Arc::new(desired),
        }
    }

    fn accepted(status: &str, at: &str) -> Option<Vec<Condition>> {
        Some(vec![condition("Accepted", status, at)])
    }

    #[test]
    fn a_class_gets_our_conditions_keeps_their_times_while_they_hold_and_keeps_what_is_not_ours() {
        let features = Some(vec![GatewayClassStatusSupportedFeatures {
            name: "HTTPRoute".into(),
        }]);
        let desired = GatewayClassStatus {
            conditions: accepted("True", UNSET),
            supported_features: None,
        };

        // No status yet: ours is written, transitioned now.
        let new = class(None, desired.clone());
        let written = at_now(|context| new.status_to_write(context));
        assert_eq!(written.and_then(|s| s.conditions), accepted("True", NOW));

        // The same, transitioned earlier, beside someone else's field: nothing to write.
        let current = GatewayClassStatus {
            conditions: accepted("True", EARLIER),
            supported_features: features.clone(),
        };
        let unchanged = class(Some(current.clone()), desired);
        assert_eq!(at_now(|context| unchanged.status_to_write(context)), None);

        // The condition flips: written with a new time, the other field kept.
        let flipped = GatewayClassStatus {
            conditions: accepted("False", UNSET),
            supported_features: None,
        };
        let changed = class(Some(current), flipped);
        assert_eq!(
            at_now(|context| changed.status_to_write(context)),
            Some(GatewayClassStatus {
                conditions: accepted("False", NOW),
                supported_features: features,
            })
        );
    }

    fn listener(name: &str, attached: i32, status: &str, at: &str) -> GatewayStatusListeners {
        GatewayStatusListeners {
            attached_routes: attached,
            conditions: vec![condition("Programmed", status, at)],
            name: name.into(),
            supported_kinds: None,
        }
    }

    fn gateway(status: GatewayStatus, desired: GatewayStatus) -> Target<Gateway> {
        let mut object = Gateway::new("edge", GatewaySpec::default());
        object.metadata = metadata("edge", "1");
        object.status = Some(status);
        Target {
            object: Arc::new(object),
            desired: Arc::new(desired),
        }
    }

    #[test]
    fn a_gateway_keeps_listener_condition_times_by_listener_and_keeps_addresses_it_does_not_set() {
        let addresses = Some(vec![GatewayStatusAddresses {
            r#type: Some("IPAddress".into()),
            value: "192.0.2.1".into(),
        }]);
        let current = GatewayStatus {
            addresses: addresses.clone(),
            conditions: accepted("True", EARLIER),
            listeners: Some(vec![
                listener("http", 1, "True", EARLIER),
                listener("https", 0, "True", EARLIER),
            ]),
            ..GatewayStatus::default()
        };
        let desired = |https: &str, attached: i32| GatewayStatus {
            conditions: accepted("True", UNSET),
            listeners: Some(vec![
                listener("https", 0, https, UNSET),
                listener("http", attached, "True", UNSET),
            ]),
            ..GatewayStatus::default()
        };

        let reordered = gateway(current.clone(), desired("True", 1));
        let written = at_now(|context| reordered.status_to_write(context));
        let listeners = written.and_then(|s| s.listeners).unwrap_or_default();
        assert_eq!(
            listeners,
            [
                listener("https", 0, "True", EARLIER),
                listener("http", 1, "True", EARLIER)
            ],
            "the listeners' order is ours; each keeps its times"
        );

        let same = GatewayStatus {
            listeners: Some(vec![
                listener("https", 0, "True", EARLIER),
                listener("http", 1, "True", EARLIER),
            ]),
            ..current
        };
        assert_eq!(
            at_now(|context| gateway(same.clone(), desired("True", 1)).status_to_write(context)),
            None
        );

        let changed = at_now(|context| gateway(same, desired("False", 2)).status_to_write(context));
        assert_eq!(
            changed,
            Some(GatewayStatus {
                addresses,
                conditions: accepted("True", EARLIER),
                listeners: Some(vec![
                    listener("https", 0, "False", NOW),
                    listener("http", 2, "True", EARLIER),
                ]),
                ..GatewayStatus::default()
            })
        );
    }

    #[test]
    fn a_listener_set_keeps_condition_times_by_listener_and_drops_listeners_it_no_longer_has() {
        let entry = |name: &str, status: &str, at: &str| ListenerSetStatusListeners {
            attached_routes: 1,
            conditions: vec![condition("Programmed", status, at)],
            name: name.into(),
            supported_kinds: None,
        };
        let mut object = ListenerSet::new("extra", Default::default());
        object.metadata = metadata("extra", "1");
        object.status = Some(ListenerSetStatus {
            conditions: accepted("True", EARLIER),
            listeners: Some(vec![
                entry("web", "True", EARLIER),
                entry("gone", "True", EARLIER),
            ]),
        });
        let target = |desired: ListenerSetStatus| Target {
            object: Arc::new(object.clone()),
            desired: Arc::new(desired),
        };
        let unchanged = ListenerSetStatus {
            conditions: accepted("True", UNSET),
            listeners: Some(vec![
                entry("web", "True", UNSET),
                entry("gone", "True", UNSET),
            ]),
        };
        assert_eq!(
            at_now(|context| target(unchanged).status_to_write(context)),
            None
        );
        let changed = ListenerSetStatus {
            conditions: accepted("False", UNSET),
            listeners: Some(vec![entry("web", "True", UNSET)]),
        };
        assert_eq!(
            at_now(|context| target(changed).status_to_write(context)),
            Some(ListenerSetStatus {
                conditions: accepted("False", NOW),
                listeners: Some(vec![entry("web", "True", EARLIER)]),
            })
        );
    }
}
