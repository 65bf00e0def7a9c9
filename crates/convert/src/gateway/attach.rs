//! Where a route may attach: the listeners' `allowedRoutes`, a route's hostnames under a
//! listener's, and the rule that an HTTPRoute and a GRPCRoute may not share a hostname on
//! a listener (the older one is attached). Shared by both route kinds, and pure: what it
//! reads goes through the recorder.

use std::collections::BTreeMap;

use model::HostKey;
use resources::gateway::{
    GatewayListeners, GatewayListenersAllowedRoutesNamespacesFrom,
    GatewayListenersAllowedRoutesNamespacesSelector,
};
use resources::{Kind, Object, ObjectRef};

use super::listener;
use super::merged::Parent;
use crate::contribution::MergeOrder;
use crate::lookup::Recorder;
use crate::names;
use crate::outcome::{Reason, Refusal};

/// The oldest route of the other kind (an HTTPRoute for a GRPCRoute, a GRPCRoute for
/// an HTTPRoute) that is older than this one and attached to the same listener (the one
/// at `index` of the parent's Gateway's merged list) with a hostname in common: the
/// specification accepts only the older of the two there. Whether that older route is
/// itself accepted is not considered, so a chain of three routes of alternating kinds
/// leaves the two younger ones out.
pub(crate) fn older_route_of_other_kind(
    lookups: &mut Recorder<'_>,
    (kind, order_of_route): (Kind, &MergeOrder),
    (parent, index): (&Parent<'_>, usize),
    hosts: &[HostKey],
) -> Option<ObjectRef> {
    let entry = parent.gateway.listeners.get(index)?;
    let listener = entry.listener.as_ref();
    let other = match kind {
        Kind::GrpcRoute => Kind::HttpRoute,
        _ => Kind::GrpcRoute,
    };
    let mut oldest: Option<(MergeOrder, ObjectRef)> = None;
    for object in lookups.children_of(other, &parent.parent) {
        let other_ref = object.object_ref();
        let order = MergeOrder::of(object.metadata().creation_timestamp, &other_ref);
        if order >= *order_of_route || oldest.as_ref().is_some_and(|(found, _)| *found <= order) {
            continue;
        }
        // A route read for its parents alone is served nowhere: it holds no hostname.
        if spec_unread(object) {
            continue;
        }
        let (selectors, hostnames) = parent_selectors(object);
        let selects = selectors.iter().any(|(parent_ref, section, port)| {
            *parent_ref == parent.parent
                && section.as_ref().is_none_or(|s| *s == listener.name)
                && port.is_none_or(|p| p == listener.port)
        });
        if !selects
            || !allowed(
                lookups,
                listener,
                &entry.owner.namespace,
                other,
                &other_ref.namespace,
            )
        {
            continue;
        }
        // Its hosts on this listener, as its own conversion finds them: a host a more
        // specific listener claims is not attached here.
        let meets = hosts_under(&hostnames, listener.hostname.as_deref())
            .into_iter()
            .flatten()
            .filter(|theirs| !parent.gateway.isolated_from(index, theirs))
            .any(|theirs| hosts.iter().any(|mine| hosts_meet(mine, &theirs)));
        if meets {
            oldest = Some((order, other_ref));
        }
    }
    oldest.map(|(_, route)| route)
}

/// Whether a route was read for its parents alone (its spec holds a value portcullis
/// does not know): it is not served, so it takes nothing from another route.
fn spec_unread(object: &Object) -> bool {
    match object {
        Object::HttpRoute(route) => resources::unreadable_spec(&route.metadata).is_some(),
        Object::GrpcRoute(route) => resources::unreadable_spec(&route.metadata).is_some(),
        _ => false,
    }
}

/// A route's hosts (`route_hosts`) under a listener hostname, as the specification
/// intersects them; a hostname that is not valid gives its index (among those the
/// listener keeps) and why.
pub(crate) fn hosts_under(
    route_hosts: &[String],
    listener: Option<&str>,
) -> Vec<Result<HostKey, (usize, String)>> {
    let listener = listener
        .filter(|h| !h.is_empty())
        .map(str::to_ascii_lowercase);
    let chosen: Vec<String> = match (&listener, route_hosts.is_empty()) {
        (None, true) => return vec![Ok(HostKey::CatchAll)],
        (None, false) => route_hosts.to_vec(),
        (Some(listener), true) => vec![listener.clone()],
        (Some(listener), false) => route_hosts
            .iter()
            .filter_map(|host| intersect(listener, &host.to_ascii_lowercase()))
            .collect(),
    };
    chosen
        .iter()
        .enumerate()
        .map(|(index, host)| match names::parse_host(host) {
            // A Gateway API wildcard covers any number of labels.
            Ok(HostKey::Wildcard(suffix)) => Ok(HostKey::Suffix(suffix)),
            Ok(key) => Ok(key),
            Err(why) => Err((index, why)),
        })
        .collect()
}

/// A parentRef's parent (a Gateway or a ListenerSet), sectionName and port.
type ParentSelector = (ObjectRef, Option<String>, Option<i32>);

/// A route's parentRefs that name a Gateway or a ListenerSet, and its hostnames.
fn parent_selectors(route: &Object) -> (Vec<ParentSelector>, Vec<String>) {
    let hostnames = match route {
        Object::HttpRoute(route) => route.spec.hostnames.clone().unwrap_or_default(),
        Object::GrpcRoute(route) => route.spec.hostnames.clone().unwrap_or_default(),
        _ => return (Vec::new(), Vec::new()),
    };
    let own = route.metadata().namespace.unwrap_or_default();
    let selectors = route
        .parent_refs()
        .into_iter()
        .filter_map(|parent| {
            let kind = parent.served_kind()?;
            Some((
                ObjectRef::new(kind, parent.namespace.unwrap_or(own), parent.name),
                parent.section_name.map(str::to_owned),
                parent.port,
            ))
        })
        .collect();
    (selectors, hostnames)
}

/// Whether two hosts of routes on one listener have a name in common.
fn hosts_meet(a: &HostKey, b: &HostKey) -> bool {
    let under = |name: &str, suffix: &str| name.ends_with(&format!(".{suffix}"));
    match (a, b) {
        (HostKey::CatchAll, _) | (_, HostKey::CatchAll) => true,
        (HostKey::Exact(x), HostKey::Exact(y)) => x == y,
        (HostKey::Exact(name), HostKey::Suffix(suffix) | HostKey::Wildcard(suffix))
        | (HostKey::Suffix(suffix) | HostKey::Wildcard(suffix), HostKey::Exact(name)) => {
            under(name, suffix)
        }
        (HostKey::Suffix(x) | HostKey::Wildcard(x), HostKey::Suffix(y) | HostKey::Wildcard(y)) => {
            x == y || under(x, y) || under(y, x)
        }
        // Host patterns come from Ingress keys only, never from a route's hostnames.
        (HostKey::Regex(_), _) | (_, HostKey::Regex(_)) => false,
    }
}

/// Whether a listener's `allowedRoutes` admits a route of this kind and namespace
/// (`Same` is the namespace of the Gateway or ListenerSet that declares the listener).
pub(crate) fn allowed(
    lookups: &mut Recorder<'_>,
    listener: &GatewayListeners,
    owner_namespace: &str,
    kind: Kind,
    route_namespace: &str,
) -> bool {
    {
        if !listener::route_kinds(listener).takes(kind) {
            return false;
        }
        let allowed = listener.allowed_routes.as_ref();
        let namespaces = allowed.and_then(|a| a.namespaces.as_ref());
        let from = namespaces.and_then(|n| n.from.as_ref());
        match from {
            None | Some(GatewayListenersAllowedRoutesNamespacesFrom::Same) => {
                route_namespace == owner_namespace
            }
            Some(GatewayListenersAllowedRoutesNamespacesFrom::All) => true,
            Some(GatewayListenersAllowedRoutesNamespacesFrom::Selector) => {
                let selector = namespaces.and_then(|n| n.selector.as_ref());
                let labels = namespace_labels(
                    lookups.get(ObjectRef::new(Kind::Namespace, "", route_namespace)),
                    route_namespace,
                );
                selector.is_some_and(|selector| selects(selector, &labels))
            }
        }
    }
}

/// A namespace's labels as a selector sees them: its object's, and the one the API
/// server gives every namespace, `kubernetes.io/metadata.name: <name>` (a manifest may
/// leave it out, or hold no Namespace object at all).
pub(crate) fn namespace_labels(object: Option<&Object>, name: &str) -> BTreeMap<String, String> {
    let mut labels = match object {
        Some(Object::Namespace(namespace)) => namespace.metadata.labels.clone().unwrap_or_default(),
        _ => BTreeMap::new(),
    };
    labels.insert("kubernetes.io/metadata.name".to_owned(), name.to_owned());
    labels
}

/// The intersection of a listener hostname and a route hostname, as the specification
/// defines it: the more specific of the two when one covers the other.
pub fn intersect(listener: &str, route: &str) -> Option<String> {
    let covers = |wildcard: &str, host: &str| {
        wildcard.strip_prefix("*.").is_some_and(|suffix| {
            host.len() > suffix.len() + 1 && host.ends_with(&format!(".{suffix}"))
        })
    };
    if listener == route || covers(listener, route) {
        Some(route.to_owned())
    } else if covers(route, listener) {
        Some(listener.to_owned())
    } else {
        None
    }
}

/// Whether a label selector selects these labels.
fn selects(
    selector: &GatewayListenersAllowedRoutesNamespacesSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    selects_labels(
        selector.match_labels.as_ref(),
        selector
            .match_expressions
            .iter()
            .flatten()
            .map(|expression| {
                (
                    expression.key.as_str(),
                    expression.operator.as_str(),
                    expression.values.as_deref().unwrap_or_default(),
                )
            }),
        labels,
    )
}

/// Whether a label selector (`matchLabels`, and `matchExpressions` as key, operator and
/// values), whichever generated type holds it, selects these labels.
pub(crate) fn selects_labels<'e>(
    match_labels: Option<&BTreeMap<String, String>>,
    mut match_expressions: impl Iterator<Item = (&'e str, &'e str, &'e [String])>,
    labels: &BTreeMap<String, String>,
) -> bool {
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let expressions_ok = match_expressions.all(|(key, operator, values)| {
        let value = labels.get(key);
        match operator {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    labels_ok && expressions_ok
}

/// How a route's parentRef fared, for [`parent_refusal`].
pub(crate) struct ParentFit<'a> {
    /// The parent, as `Gateway namespace/name` or `ListenerSet namespace/name`.
    pub(crate) parent: String,
    /// The listeners the route's kind attaches to, for people ("listener", "TLS listener
    /// in Passthrough mode").
    pub(crate) listeners: &'a str,
    /// Some listener has the parentRef's sectionName and port.
    pub(crate) named: bool,
    /// Some of those accepts the route (kind, namespace).
    pub(crate) matched_listener: bool,
    /// The route got a host on one of them.
    pub(crate) attached: bool,
    /// The listener and the older route of the other kind that holds its hostnames.
    pub(crate) conflict: Option<&'a (String, ObjectRef)>,
}

/// Why a route is not attached to a parent, in the order the specification's reasons
/// take precedence; `None` when it is attached.
pub(crate) fn parent_refusal(fit: &ParentFit<'_>) -> Option<Refusal> {
    let parent = &fit.parent;
    if !fit.named {
        return Some(Refusal::new(
            Reason::NoMatchingParent,
            format!("{parent} has no listener with this sectionName and port"),
        ));
    }
    if !fit.matched_listener {
        return Some(Refusal::new(
            Reason::NotAllowedByListeners,
            format!(
                "no {} of {parent} accepts this route (sectionName, port, allowedRoutes); it is not attached there",
                fit.listeners
            ),
        ));
    }
    if fit.attached {
        return None;
    }
    Some(match fit.conflict {
        Some((listener, older)) => Refusal::new(
            Reason::HostnameConflict,
            format!(
                "a hostname of this route is also one of {older}, which is older and attached to listener {listener} of {parent}; an HTTPRoute and a GRPCRoute may not share a hostname on a listener, so this route is not attached there"
            ),
        ),
        None => Refusal::new(
            Reason::NoMatchingListenerHostname,
            format!(
                "no hostname of this route matches a listener of {parent}; it is not attached there"
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::{intersect, namespace_labels, selects_labels};

    #[test]
    fn a_namespace_carries_the_label_the_api_server_gives_it() {
        let wanted = std::collections::BTreeMap::from([(
            "kubernetes.io/metadata.name".to_owned(),
            "infra".to_owned(),
        )]);
        let labels = namespace_labels(None, "infra");
        assert!(selects_labels(Some(&wanted), std::iter::empty(), &labels));
        assert!(!selects_labels(
            Some(&wanted),
            std::iter::empty(),
            &namespace_labels(None, "apps")
        ));
    }

    #[test]
    fn hostnames_intersect_as_the_specification_says() {
        let cases = [
            (
                "foo.example.com",
                "foo.example.com",
                Some("foo.example.com"),
            ),
            ("*.example.com", "foo.example.com", Some("foo.example.com")),
            (
                "*.example.com",
                "foo.bar.example.com",
                Some("foo.bar.example.com"),
            ),
            ("foo.example.com", "*.example.com", Some("foo.example.com")),
            (
                "*.example.com",
                "*.foo.example.com",
                Some("*.foo.example.com"),
            ),
            (
                "*.foo.example.com",
                "*.example.com",
                Some("*.foo.example.com"),
            ),
            ("*.example.com", "example.com", None),
            ("bar.example.com", "foo.example.com", None),
            ("*.example.com", "*.example.net", None),
        ];
        for (listener, route, expected) in cases {
            assert_eq!(
                intersect(listener, route).as_deref(),
                expected,
                "{listener} ∩ {route}"
            );
        }
    }
}
