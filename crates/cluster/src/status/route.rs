//! Route status (and a BackendTLSPolicy's `status.ancestors`, alike): `status.parents`
//! is shared by every controller a route names, so only the entries with our controller
//! name are ours; other controllers' entries are written
//! back as they are. Each route kind's generated parent-status type implements
//! [`RouteParentStatus`], and its kind implements `StatusKind` with [`merge_parents`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use resources::backend_tls_policy::{
    BackendTlsPolicyStatus, BackendTlsPolicyStatusAncestors,
    BackendTlsPolicyStatusAncestorsAncestorRef,
};
use resources::gateway::{
    GrpcRouteStatus, GrpcRouteStatusParents, GrpcRouteStatusParentsParentRef, HttpRouteStatus,
    HttpRouteStatusParents, HttpRouteStatusParentsParentRef, TlsRouteStatus, TlsRouteStatusParents,
    TlsRouteStatusParentsParentRef,
};
use resources::{
    BackendTlsPolicy, GrpcRoute, HttpRoute, Kind, L4ParentRef, L4RouteStatus, L4RouteStatusParents,
    TcpRoute, TlsRoute, UdpRoute,
};

use super::conditions::with_transition_times;
use super::kind::{MergeContext, StatusKind};

/// One entry of a route's `status.parents` (the specification's `RouteParentStatus`;
/// each route kind has its own generated type for it).
pub(crate) trait RouteParentStatus: Clone {
    /// The generated type of the entry's `parentRef`.
    type ParentRef: PartialEq;

    /// The controller the entry belongs to.
    fn controller_name(&self) -> &str;
    /// The parent the entry is about.
    fn parent_ref(&self) -> &Self::ParentRef;
    /// The entry's conditions.
    fn conditions(&self) -> &[Condition];
    /// The entry with these conditions.
    fn with_conditions(&self, conditions: Vec<Condition>) -> Self;
}

/// Other controllers' entries of `current` as they are, then `ours` in their order, each
/// condition keeping its transition time from our current entry for the same parent
/// while its status holds.
pub(crate) fn merge_parents<P: RouteParentStatus>(
    current: &[P],
    ours: &[P],
    context: &MergeContext<'_>,
) -> Vec<P> {
    let is_ours = |entry: &&P| entry.controller_name() == context.controller_name;
    let theirs = current.iter().filter(|entry| !is_ours(entry)).cloned();
    let ours = ours.iter().map(|entry| {
        let before = current
            .iter()
            .filter(is_ours)
            .find(|before| before.parent_ref() == entry.parent_ref())
            .map_or(&[][..], |before| before.conditions());
        entry.with_conditions(with_transition_times(
            entry.conditions(),
            before,
            context.now,
        ))
    });
    theirs.chain(ours).collect()
}

/// A kind whose status lists parent entries that several controllers share. A route
/// that no longer names any of our parents has no desired status of ours, yet may still
/// hold our entries from before: [`SharedParentsKind::no_entries`] is what removes them.
pub trait SharedParentsKind: StatusKind {
    /// Whether the object's status, as last seen, holds an entry of `controller_name`.
    fn has_entry_of(&self, controller_name: &str) -> bool;
    /// Our desired status when we want no entry in it.
    fn no_entries() -> Self::Desired;
}

/// A parent-status entry type's impl: the generated types differ (and a policy's entry
/// names its parent `ancestorRef`), the rules do not.
macro_rules! parent_status {
    ($entry:ident, $parent_ref:ident, $ref_field:ident) => {
        impl RouteParentStatus for $entry {
            type ParentRef = $parent_ref;

            fn controller_name(&self) -> &str {
                &self.controller_name
            }

            fn parent_ref(&self) -> &$parent_ref {
                &self.$ref_field
            }

            fn conditions(&self) -> &[Condition] {
                &self.conditions
            }

            fn with_conditions(&self, conditions: Vec<Condition>) -> Self {
                Self {
                    conditions,
                    ..self.clone()
                }
            }
        }
    };
}

/// A kind whose status is a list of parent entries (`parents`, or a policy's
/// `ancestors`): the desired status holds only our entries, merged with the others'.
macro_rules! status_kind {
    ($kind_type:ty, $kind:expr, $status:ident, $list:ident) => {
        impl StatusKind for $kind_type {
            const KIND: Kind = $kind;
            type Status = $status;
            type Desired = $status;

            fn status(&self) -> Option<&$status> {
                self.status.as_ref()
            }

            fn merge(current: &$status, desired: &$status, context: &MergeContext<'_>) -> $status {
                $status {
                    $list: merge_parents(&current.$list, &desired.$list, context),
                }
            }
        }

        impl SharedParentsKind for $kind_type {
            fn has_entry_of(&self, controller_name: &str) -> bool {
                self.status.as_ref().is_some_and(|status| {
                    status
                        .$list
                        .iter()
                        .any(|entry| entry.controller_name() == controller_name)
                })
            }

            fn no_entries() -> $status {
                $status { $list: Vec::new() }
            }
        }
    };
}

parent_status!(
    HttpRouteStatusParents,
    HttpRouteStatusParentsParentRef,
    parent_ref
);
status_kind!(HttpRoute, Kind::HttpRoute, HttpRouteStatus, parents);
parent_status!(
    GrpcRouteStatusParents,
    GrpcRouteStatusParentsParentRef,
    parent_ref
);
status_kind!(GrpcRoute, Kind::GrpcRoute, GrpcRouteStatus, parents);
parent_status!(
    TlsRouteStatusParents,
    TlsRouteStatusParentsParentRef,
    parent_ref
);
status_kind!(TlsRoute, Kind::TlsRoute, TlsRouteStatus, parents);
// TCPRoute and UDPRoute share one status type.
parent_status!(L4RouteStatusParents, L4ParentRef, parent_ref);
status_kind!(TcpRoute, Kind::TcpRoute, L4RouteStatus, parents);
status_kind!(UdpRoute, Kind::UdpRoute, L4RouteStatus, parents);
// A BackendTLSPolicy's `status.ancestors` is shared by every controller whose Gateways
// use the targeted Service, exactly as a route's `status.parents`.
parent_status!(
    BackendTlsPolicyStatusAncestors,
    BackendTlsPolicyStatusAncestorsAncestorRef,
    ancestor_ref
);
status_kind!(
    BackendTlsPolicy,
    Kind::BackendTlsPolicy,
    BackendTlsPolicyStatus,
    ancestors
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::kind::Target;
    use crate::status::testing::{EARLIER, NOW, UNSET, US, at_now, condition, metadata};
    use resources::gateway::HttpRouteSpec;
    use std::sync::Arc;

    fn route(
        parents: Vec<HttpRouteStatusParents>,
        ours: Vec<HttpRouteStatusParents>,
    ) -> Target<HttpRoute> {
        let mut object = HttpRoute::new("web", HttpRouteSpec::default());
        object.metadata = metadata("web", "1");
        object.status = Some(HttpRouteStatus { parents });
        Target {
            object: Arc::new(object),
            desired: Arc::new(HttpRouteStatus { parents: ours }),
        }
    }

    fn parent(
        gateway: &str,
        controller: &str,
        conditions: Vec<Condition>,
    ) -> HttpRouteStatusParents {
        HttpRouteStatusParents {
            conditions,
            controller_name: controller.into(),
            parent_ref: HttpRouteStatusParentsParentRef {
                name: gateway.into(),
                ..HttpRouteStatusParentsParentRef::default()
            },
        }
    }

    fn accepted(status: &str, at: &str) -> Vec<Condition> {
        vec![
            condition("Accepted", status, at),
            condition("ResolvedRefs", "True", at),
        ]
    }

    #[test]
    fn only_differences_are_written_and_other_controllers_entries_are_kept() {
        let theirs = parent("other", "example.com/them", accepted("False", EARLIER));
        let ours = parent("gw", US, accepted("True", UNSET));

        // Nothing written yet: ours is added after theirs, transitioned now.
        let fresh = route(vec![theirs.clone()], vec![ours.clone()]);
        let written = at_now(|context| fresh.status_to_write(context));
        assert_eq!(
            written.map(|status| status.parents),
            Some(vec![
                theirs.clone(),
                parent("gw", US, accepted("True", NOW))
            ])
        );

        // Written already (at some earlier time): nothing to do.
        let stored = parent("gw", US, accepted("True", EARLIER));
        let settled = route(vec![theirs.clone(), stored.clone()], vec![ours]);
        assert_eq!(at_now(|context| settled.status_to_write(context)), None);

        // One condition flips: it gets a new time, the other keeps its own, theirs stays.
        let flipped = route(
            vec![theirs.clone(), stored],
            vec![parent("gw", US, accepted("False", UNSET))],
        );
        let written = at_now(|context| flipped.status_to_write(context));
        let expected = parent(
            "gw",
            US,
            vec![
                condition("Accepted", "False", NOW),
                condition("ResolvedRefs", "True", EARLIER),
            ],
        );
        assert_eq!(
            written.map(|status| status.parents),
            Some(vec![theirs, expected])
        );
    }

    #[test]
    fn ours_are_told_apart_by_controller_name_and_matched_by_parent() {
        // Another controller's entry for the same parent is not ours: its times are not
        // taken, and it is kept beside ours.
        let theirs = parent("gw", "example.com/them", accepted("True", EARLIER));
        let stale_ours = parent("old", US, accepted("True", EARLIER));
        let target = route(
            vec![stale_ours, theirs.clone()],
            vec![parent("gw", US, accepted("True", UNSET))],
        );
        let written = at_now(|context| target.status_to_write(context));
        assert_eq!(
            written.map(|status| status.parents),
            Some(vec![theirs, parent("gw", US, accepted("True", NOW))]),
            "our entry for a parent we no longer want is replaced"
        );
    }

    #[test]
    fn a_route_that_names_none_of_our_parents_loses_our_entries_and_keeps_theirs() {
        let theirs = parent("other", "example.com/them", accepted("True", EARLIER));
        let stale_ours = parent("gw", US, accepted("True", EARLIER));
        let mut target = route(vec![stale_ours, theirs.clone()], Vec::new());
        target.desired = Arc::new(HttpRoute::no_entries());
        assert!(target.object.has_entry_of(US));
        assert!(!target.object.has_entry_of("example.com/nobody"));
        let written = at_now(|context| target.status_to_write(context));
        assert_eq!(written.map(|status| status.parents), Some(vec![theirs]));

        // Once written, there is nothing left of ours to remove.
        let pruned = route(
            vec![parent(
                "other",
                "example.com/them",
                accepted("True", EARLIER),
            )],
            Vec::new(),
        );
        assert!(!pruned.object.has_entry_of(US));
        assert_eq!(at_now(|context| pruned.status_to_write(context)), None);
    }
}
