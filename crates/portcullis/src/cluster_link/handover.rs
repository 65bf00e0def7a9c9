//! What the leader's status writers are handed: the served Ingresses and each Gateway
//! API kind's targets, kept between reconciliations so that a newer version of one
//! object (each status write comes back as one) refreshes its target alone.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use cluster::{
    Publish, ServedGateways, ServedIngresses, SharedParentsKind, StatusKind, StatusWriter, Target,
};
use convert::gateway_status::{ObjectStatus, StatusReport};
use index::Snapshot;
use model::OrdSet;
use resources::{
    BackendTlsPolicy, Gateway, GatewayClass, GrpcRoute, HttpRoute, Kind, ListenerSet, Object,
    ObjectRef, Service, TcpRoute, TlsRoute, UdpRoute,
};
use serde_json::Value;
use tokio::sync::watch;

/// What every status writer is started with.
#[derive(Clone, Copy)]
pub(super) struct WriterContext<'a> {
    pub(super) client: &'a kube::Client,
    /// Our controller name, to tell our status entries from other controllers'.
    pub(super) controller_name: &'a str,
    /// Whether this replica leads, and so writes.
    pub(super) leading: &'a watch::Receiver<bool>,
}

impl WriterContext<'_> {
    /// Starts a writer for kind `K` from `initial`.
    fn start<K: StatusKind, S: cluster::TargetSource<K> + PartialEq>(
        &self,
        initial: S,
    ) -> StatusWriter<S> {
        StatusWriter::start(
            self.client.clone(),
            self.controller_name.to_owned(),
            self.leading.clone(),
            initial,
        )
    }
}

/// What a writer was last handed, in order, with where each object's item is: a newer
/// version of one object replaces its item alone.
#[derive(Debug)]
struct Indexed<T> {
    items: Vec<T>,
    at: HashMap<ObjectRef, usize>,
}

impl<T> Default for Indexed<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            at: HashMap::new(),
        }
    }
}

impl<T> FromIterator<(ObjectRef, T)> for Indexed<T> {
    fn from_iter<I: IntoIterator<Item = (ObjectRef, T)>>(items: I) -> Self {
        let mut indexed = Self::default();
        for (object, item) in items {
            indexed.at.insert(object, indexed.items.len());
            indexed.items.push(item);
        }
        indexed
    }
}

impl<T> Indexed<T> {
    /// `object`'s item, if it has one.
    fn get_mut(&mut self, object: &ObjectRef) -> Option<&mut T> {
        let at = *self.at.get(object)?;
        self.items.get_mut(at)
    }
}

/// The Ingress status writer and what it was last handed.
#[derive(Debug)]
pub(super) struct IngressStatus {
    /// Where the published address comes from.
    publish: Publish,
    writer: StatusWriter<ServedIngresses>,
    /// The Ingresses served, as the conversion decided.
    served: OrdSet<ObjectRef>,
    /// Those Ingresses as last handed over.
    ingresses: Indexed<Arc<resources::Ingress>>,
}

impl IngressStatus {
    /// Starts the writer; nothing is served yet.
    pub(super) fn start(writers: &WriterContext<'_>, publish: Publish) -> Self {
        Self {
            writer: writers.start(ServedIngresses::none(publish.clone())),
            publish,
            served: OrdSet::new(),
            ingresses: Indexed::default(),
        }
    }

    /// Hands the writer the Ingresses served now and the published Service. When the
    /// served set and the Service are as last handed over, only the Ingresses that
    /// changed since (`changes`: `None` when not known) take their newer version: each
    /// status write comes back as one.
    pub(super) fn update(
        &mut self,
        snapshot: &Snapshot,
        changes: Option<&[index::Change]>,
        served: &OrdSet<ObjectRef>,
        publish_service: (Option<&ObjectRef>, Option<Arc<Service>>),
    ) {
        let (publish_service_ref, publish_service) = publish_service;
        let Some(changes) = changes.filter(|changes| {
            self.served == *served
                && !changes
                    .iter()
                    .any(|c| publish_service_ref == Some(&c.object_ref))
        }) else {
            self.served = served.clone();
            self.ingresses = served
                .iter()
                .filter_map(|object| match snapshot.get(object) {
                    Some(Object::Ingress(ingress)) => Some((object.clone(), ingress.clone())),
                    _ => None,
                })
                .collect();
            self.hand_over(publish_service);
            return;
        };
        let mut refreshed = false;
        for change in changes {
            let object_ref = &change.object_ref;
            if !self.served.contains(object_ref) {
                continue;
            }
            match (self.ingresses.get_mut(object_ref), snapshot.get(object_ref)) {
                (Some(handed), Some(Object::Ingress(ingress))) => {
                    *handed = ingress.clone();
                    refreshed = true;
                }
                // Served but not in the list as made, or gone: made anew.
                _ => {
                    let publish_service = (publish_service_ref, publish_service);
                    return self.update(snapshot, None, served, publish_service);
                }
            }
        }
        if refreshed {
            self.hand_over(publish_service);
        }
    }

    fn hand_over(&self, publish_service: Option<Arc<Service>>) {
        self.writer.update(ServedIngresses {
            publish: self.publish.clone(),
            ingresses: self.ingresses.items.clone(),
            publish_service,
        });
    }
}

/// One status writer per Gateway API kind.
#[derive(Debug)]
pub(super) struct GatewayStatusWriters {
    /// Our controller name, to find our entries in routes the report no longer covers.
    controller_name: String,
    /// The report the targets below were made from.
    report: Option<Arc<StatusReport>>,
    classes: KindTargets<GatewayClass>,
    gateways: StatusWriter<ServedGateways>,
    /// The Gateways' computed status, as last handed over.
    last_gateways: Indexed<Target<Gateway>>,
    /// Where the Gateways' published address comes from.
    publish: Option<Publish>,
    routes: KindTargets<HttpRoute>,
    grpc_routes: KindTargets<GrpcRoute>,
    tls_routes: KindTargets<TlsRoute>,
    tcp_routes: KindTargets<TcpRoute>,
    udp_routes: KindTargets<UdpRoute>,
    backend_tls_policies: KindTargets<BackendTlsPolicy>,
    listener_sets: KindTargets<ListenerSet>,
}

/// One kind's writer and its targets as last handed over.
#[derive(Debug)]
struct KindTargets<K: StatusKind> {
    writer: StatusWriter<Vec<Target<K>>>,
    targets: Indexed<Target<K>>,
}

impl<K: StatusKind> KindTargets<K> {
    fn start(writers: &WriterContext<'_>) -> Self {
        Self {
            writer: writers.start(Vec::new()),
            targets: Indexed::default(),
        }
    }

    /// Hands the writer `targets`, made anew from a report.
    fn replace(&mut self, targets: Vec<Target<K>>) {
        self.targets = by_object(targets);
        self.hand_over();
    }

    /// A newer version of an object with a target (the same status to write against a
    /// new `resourceVersion`); false when it has none.
    fn refresh(&mut self, object_ref: &ObjectRef, object: &Arc<K>) -> bool {
        refresh(&mut self.targets, object_ref, object)
    }

    /// Hands the writer the targets.
    fn hand_over(&self) {
        self.writer.update(self.targets.items.clone());
    }
}

/// Targets by the object each is for.
fn by_object<K: StatusKind>(targets: Vec<Target<K>>) -> Indexed<Target<K>> {
    targets
        .into_iter()
        .map(|target| (target.object_ref(), target))
        .collect()
}

/// Gives `object_ref`'s target, if it has one, the newer version `object`.
fn refresh<K: StatusKind>(
    targets: &mut Indexed<Target<K>>,
    object_ref: &ObjectRef,
    object: &Arc<K>,
) -> bool {
    let Some(target) = targets.get_mut(object_ref) else {
        return false;
    };
    target.object = object.clone();
    true
}

impl GatewayStatusWriters {
    pub(super) fn start(writers: &WriterContext<'_>, publish: Option<Publish>) -> Self {
        let gateways = ServedGateways {
            publish: publish.clone(),
            ..ServedGateways::default()
        };
        Self {
            controller_name: writers.controller_name.to_owned(),
            report: None,
            classes: KindTargets::start(writers),
            gateways: writers.start(gateways),
            last_gateways: Indexed::default(),
            publish,
            routes: KindTargets::start(writers),
            grpc_routes: KindTargets::start(writers),
            tls_routes: KindTargets::start(writers),
            tcp_routes: KindTargets::start(writers),
            udp_routes: KindTargets::start(writers),
            backend_tls_policies: KindTargets::start(writers),
            listener_sets: KindTargets::start(writers),
        }
    }

    /// Hands each writer the objects of its kind that the report has a status for, and
    /// the Gateways' writer the published Service as last seen. When the report is the
    /// one the targets were made from, only the objects that changed since (`changes`:
    /// `None` when not known) take their newer version: each status write comes back as
    /// one, and making every target again for each would cost the whole report per write.
    pub(super) fn update(
        &mut self,
        snapshot: &Snapshot,
        changes: Option<&[index::Change]>,
        report: &Arc<StatusReport>,
        publish_service: Option<Arc<Service>>,
    ) {
        let same_report = self
            .report
            .as_ref()
            .is_some_and(|made_from| Arc::ptr_eq(made_from, report) || made_from == report);
        let refreshed = match changes {
            Some(changes) if same_report => self.refresh(snapshot, changes),
            _ => false,
        };
        if !refreshed {
            self.replace(snapshot, report);
        }
        self.report = Some(report.clone());
        self.gateways.update(ServedGateways {
            gateways: self.last_gateways.items.clone(),
            publish: self.publish.clone(),
            publish_service,
        });
    }

    /// Gives the targets of the objects in `changes` their newer versions, and hands over
    /// the kinds that changed. False when an object of the report is gone: the report
    /// is then made into targets anew.
    fn refresh(&mut self, snapshot: &Snapshot, changes: &[index::Change]) -> bool {
        let Some(report) = self.report.clone() else {
            return false;
        };
        let mut touched = BTreeSet::new();
        for change in changes {
            let object_ref = &change.object_ref;
            if !report.contains_key(object_ref) {
                // A route the report does not cover may have a target that removes our
                // old entries: a newer version of it must be what that write is against.
                if self.refresh_unreported(snapshot, object_ref) {
                    touched.insert(object_ref.kind);
                }
                continue;
            }
            // New since the targets were made: it has none to refresh.
            if change.before.is_none() {
                return false;
            }
            // Gone, or a kind without a status of ours: the report no longer matches the
            // objects.
            let Some(refreshed) = self.refresh_target(snapshot, object_ref) else {
                return false;
            };
            // The report's status could not be read as the kind's type: it had no target.
            if refreshed {
                touched.insert(object_ref.kind);
            }
        }
        for kind in touched {
            match kind {
                Kind::GatewayClass => self.classes.hand_over(),
                Kind::HttpRoute => self.routes.hand_over(),
                Kind::GrpcRoute => self.grpc_routes.hand_over(),
                Kind::TlsRoute => self.tls_routes.hand_over(),
                Kind::TcpRoute => self.tcp_routes.hand_over(),
                Kind::UdpRoute => self.udp_routes.hand_over(),
                Kind::BackendTlsPolicy => self.backend_tls_policies.hand_over(),
                Kind::ListenerSet => self.listener_sets.hand_over(),
                // The Gateways are handed over by `update` every time.
                _ => {}
            }
        }
        true
    }

    /// Gives the target of an object the report does not cover, if it has one, the
    /// object's version in `snapshot`; says whether it had one.
    fn refresh_unreported(&mut self, snapshot: &Snapshot, object_ref: &ObjectRef) -> bool {
        self.refresh_target(snapshot, object_ref).unwrap_or(false)
    }

    /// Gives `object_ref`'s target, if it has one, the object's version in `snapshot`;
    /// says whether it had one, or `None` when the object is gone or of a kind without a
    /// status of ours.
    fn refresh_target(&mut self, snapshot: &Snapshot, object_ref: &ObjectRef) -> Option<bool> {
        Some(match snapshot.get(object_ref)? {
            Object::GatewayClass(class) => self.classes.refresh(object_ref, class),
            Object::Gateway(gateway) => refresh(&mut self.last_gateways, object_ref, gateway),
            Object::HttpRoute(route) => self.routes.refresh(object_ref, route),
            Object::GrpcRoute(route) => self.grpc_routes.refresh(object_ref, route),
            Object::TlsRoute(route) => self.tls_routes.refresh(object_ref, route),
            Object::TcpRoute(route) => self.tcp_routes.refresh(object_ref, route),
            Object::UdpRoute(route) => self.udp_routes.refresh(object_ref, route),
            Object::BackendTlsPolicy(policy) => {
                self.backend_tls_policies.refresh(object_ref, policy)
            }
            Object::ListenerSet(set) => self.listener_sets.refresh(object_ref, set),
            _ => return None,
        })
    }

    /// Makes every target anew from `report`.
    fn replace(&mut self, snapshot: &Snapshot, report: &StatusReport) {
        let mut classes = Vec::new();
        let mut gateways = Vec::new();
        let mut routes = Vec::new();
        let mut grpc_routes = Vec::new();
        let mut tls_routes = Vec::new();
        let mut tcp_routes = Vec::new();
        let mut udp_routes = Vec::new();
        let mut policies = Vec::new();
        let mut listener_sets = Vec::new();
        for (object, status) in report {
            match snapshot.get(object) {
                Some(Object::GatewayClass(class)) => classes.extend(target(class, status)),
                Some(Object::Gateway(gateway)) => gateways.extend(target(gateway, status)),
                Some(Object::HttpRoute(route)) => routes.extend(target(route, status)),
                Some(Object::GrpcRoute(route)) => grpc_routes.extend(target(route, status)),
                Some(Object::TlsRoute(route)) => tls_routes.extend(target(route, status)),
                Some(Object::TcpRoute(route)) => tcp_routes.extend(target(route, status)),
                Some(Object::UdpRoute(route)) => udp_routes.extend(target(route, status)),
                Some(Object::BackendTlsPolicy(policy)) => {
                    policies.extend(target(policy, status));
                }
                Some(Object::ListenerSet(set)) => listener_sets.extend(target(set, status)),
                _ => {}
            }
        }
        let ours = self.controller_name.as_str();
        // The objects of one kind the report has no status for, holding entries of ours.
        macro_rules! unreported_of {
            ($variant:ident) => {
                unreported(snapshot, report, ours, |object| match object {
                    Object::$variant(object) => Some(object),
                    _ => None,
                })
            };
        }
        routes.extend(unreported_of!(HttpRoute));
        grpc_routes.extend(unreported_of!(GrpcRoute));
        tls_routes.extend(unreported_of!(TlsRoute));
        tcp_routes.extend(unreported_of!(TcpRoute));
        udp_routes.extend(unreported_of!(UdpRoute));
        policies.extend(unreported_of!(BackendTlsPolicy));
        self.classes.replace(classes);
        self.routes.replace(routes);
        self.grpc_routes.replace(grpc_routes);
        self.tls_routes.replace(tls_routes);
        self.tcp_routes.replace(tcp_routes);
        self.udp_routes.replace(udp_routes);
        self.backend_tls_policies.replace(policies);
        self.listener_sets.replace(listener_sets);
        self.last_gateways = by_object(gateways);
    }
}

/// Targets that take our entries out of the objects of kind `K` the report has no status
/// for: a route that now names only other controllers' Gateways, or none, or a policy
/// whose Service no Gateway of ours uses. Nothing else would ever write them again.
fn unreported<'a, K: SharedParentsKind>(
    snapshot: &'a Snapshot,
    report: &'a StatusReport,
    controller_name: &'a str,
    typed: fn(&Object) -> Option<&Arc<K>>,
) -> impl Iterator<Item = Target<K>> + 'a {
    snapshot
        .of_kind(K::KIND)
        .filter_map(typed)
        .filter(move |object| object.has_entry_of(controller_name))
        .map(|object| Target {
            object: object.clone(),
            desired: Arc::new(K::no_entries()),
        })
        .filter(|target| !report.contains_key(&target.object_ref()))
}

fn target<K: StatusKind>(object: &Arc<K>, status: &ObjectStatus) -> Option<Target<K>> {
    match typed_status::<K>(status) {
        Ok(desired) => Some(Target {
            object: object.clone(),
            desired: Arc::new(desired),
        }),
        Err(err) => {
            tracing::warn!(kind = K::KIND.name(), error = %err, "cannot read the computed status");
            None
        }
    }
}

/// convert's status of an object, in the Gateway API's generated types. This is the one
/// place the two meet; it goes once convert produces the generated types itself.
fn typed_status<K: StatusKind>(status: &ObjectStatus) -> Result<K::Desired, serde_json::Error> {
    /// Gives every condition the `lastTransitionTime` the generated type requires. Its
    /// value does not matter: the writer's merge sets it from the object's current
    /// condition or to the time of the write.
    fn stamp_transition_times(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if key == "conditions"
                        && let Value::Array(conditions) = field
                    {
                        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
                            condition
                                .entry("lastTransitionTime")
                                .or_insert_with(|| Value::from("1970-01-01T00:00:00Z"));
                        }
                    } else {
                        stamp_transition_times(field);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(stamp_transition_times),
            _ => {}
        }
    }

    let mut value = serde_json::to_value(status)?;
    stamp_transition_times(&mut value);
    serde_json::from_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use convert::gateway::{ConditionStatus, ConditionType, Reason};
    use convert::gateway_status::{ListenerStatus, ParentRef, RouteParentStatus, StatusCondition};
    use resources::gateway::{
        GatewayClassStatus, GatewayStatus, GatewayStatusListenersSupportedKinds, HttpRouteStatus,
        ListenerSetStatus,
    };
    use std::collections::BTreeMap;

    fn accepted() -> StatusCondition {
        StatusCondition {
            kind: ConditionType::Accepted,
            status: ConditionStatus::True,
            reason: Reason::Accepted,
            message: "attached".into(),
            observed_generation: Some(2),
        }
    }

    fn route_status(message: &str) -> ObjectStatus {
        ObjectStatus::Route {
            parents: vec![RouteParentStatus {
                parent_ref: ParentRef {
                    group: "gateway.networking.k8s.io",
                    kind: "Gateway",
                    namespace: "default".into(),
                    name: "edge".into(),
                    section_name: None,
                    port: None,
                },
                controller_name: convert::gateway::GATEWAY_CONTROLLER.to_owned(),
                conditions: vec![StatusCondition {
                    message: message.into(),
                    ..accepted()
                }],
            }],
        }
    }

    fn route(name: &str, version: &str) -> Object {
        let mut route = HttpRoute::new(name, Default::default());
        route.metadata.namespace = Some("default".into());
        route.metadata.resource_version = Some(version.into());
        Object::HttpRoute(Arc::new(route))
    }

    /// The routes' targets as handed to their writer.
    fn handed(writers: &GatewayStatusWriters) -> Vec<(String, String, HttpRouteStatus)> {
        writers
            .routes
            .targets
            .items
            .iter()
            .map(|target| {
                let name = target.object.metadata.name.clone().unwrap_or_default();
                (
                    name,
                    target.resource_version().to_owned(),
                    (*target.desired).clone(),
                )
            })
            .collect()
    }

    /// A client of an address nothing answers on, and a leadership never won: the
    /// writers are handed targets and write nothing.
    fn unreachable_and_not_leading() -> (kube::Client, watch::Sender<bool>, watch::Receiver<bool>) {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let (leading, not_leading) = watch::channel(false);
        (client, leading, not_leading)
    }

    #[tokio::test]
    async fn a_newer_version_of_an_object_refreshes_its_target_alone_as_a_full_hand_over_would() {
        let (client, _leading, not_leading) = unreachable_and_not_leading();
        let writers = WriterContext {
            client: &client,
            controller_name: "test",
            leading: &not_leading,
        };
        let start = || GatewayStatusWriters::start(&writers, None);
        let mut index = index::Index::new();
        for name in ["a", "b"] {
            index.handle(index::SourceEvent::Apply(route(name, "1")));
        }
        let report = Arc::new(StatusReport::from([
            (
                ObjectRef::new(Kind::HttpRoute, "default", "a"),
                route_status("a"),
            ),
            (
                ObjectRef::new(Kind::HttpRoute, "default", "b"),
                route_status("b"),
            ),
        ]));
        let mut writers = start();
        let first = index.snapshot();
        writers.update(&first, None, &report, None);
        let desired_of_a = writers.routes.targets.items[0].desired.clone();

        // Our write comes back as version 2 of `a`: the same report, one object newer.
        index.handle(index::SourceEvent::Apply(route("a", "2")));
        let second = index.snapshot();
        let changes = second.changes_since(&first);
        writers.update(&second, Some(&changes), &report, None);
        let mut from_nothing = start();
        from_nothing.update(&second, None, &report, None);
        assert_eq!(handed(&writers), handed(&from_nothing));
        assert_eq!(handed(&writers)[0].1, "2");
        assert!(Arc::ptr_eq(
            &writers.routes.targets.items[0].desired,
            &desired_of_a
        ));

        // A report that changed is made into targets anew.
        let moved = Arc::new(StatusReport::from([(
            ObjectRef::new(Kind::HttpRoute, "default", "b"),
            route_status("moved"),
        )]));
        writers.update(&second, Some(&[]), &moved, None);
        let mut from_nothing = start();
        from_nothing.update(&second, None, &moved, None);
        assert_eq!(handed(&writers), handed(&from_nothing));
        assert_eq!(handed(&writers).len(), 1);

        // An object of the report that is gone: anew as well.
        index.handle(index::SourceEvent::Delete(ObjectRef::new(
            Kind::HttpRoute,
            "default",
            "b",
        )));
        let third = index.snapshot();
        let changes = third.changes_since(&second);
        writers.update(&third, Some(&changes), &moved, None);
        assert_eq!(handed(&writers), []);
    }

    #[tokio::test]
    async fn a_route_the_report_no_longer_covers_is_handed_over_to_lose_our_entries_only() {
        let (client, _leading, not_leading) = unreachable_and_not_leading();
        let writers = WriterContext {
            client: &client,
            controller_name: "test",
            leading: &not_leading,
        };
        let with_entry_of = |name: &str, version: &str, controller: &str| {
            let Object::HttpRoute(route) = route(name, version) else {
                unreachable!()
            };
            let mut route = (*route).clone();
            route.status = Some(HttpRouteStatus {
                parents: vec![resources::gateway::HttpRouteStatusParents {
                    conditions: Vec::new(),
                    controller_name: controller.into(),
                    parent_ref: Default::default(),
                }],
            });
            Object::HttpRoute(Arc::new(route))
        };
        let mut index = index::Index::new();
        // `moved` was ours and now names another controller's Gateway; `foreign` never
        // was ours.
        index.handle(index::SourceEvent::Apply(with_entry_of(
            "moved", "1", "test",
        )));
        index.handle(index::SourceEvent::Apply(with_entry_of(
            "foreign",
            "1",
            "example.com/them",
        )));
        let empty = Arc::new(StatusReport::new());
        let mut status = GatewayStatusWriters::start(&writers, None);
        let first = index.snapshot();
        status.update(&first, None, &empty, None);
        let no_entries = HttpRouteStatus {
            parents: Vec::new(),
        };
        assert_eq!(
            handed(&status),
            [("moved".into(), "1".into(), no_entries.clone())]
        );

        // Edited before our write: the write is against the newer version.
        index.handle(index::SourceEvent::Apply(with_entry_of(
            "moved", "2", "test",
        )));
        let second = index.snapshot();
        let changes = second.changes_since(&first);
        status.update(&second, Some(&changes), &empty, None);
        assert_eq!(handed(&status), [("moved".into(), "2".into(), no_entries)]);

        // Our write comes back without our entry: nothing is left to write, and a report
        // made anew has no target for it.
        index.handle(index::SourceEvent::Apply(route("moved", "3")));
        let third = index.snapshot();
        let mut from_nothing = GatewayStatusWriters::start(&writers, None);
        from_nothing.update(&third, None, &empty, None);
        assert_eq!(handed(&from_nothing), []);
    }

    fn ingress(name: &str, version: &str) -> Object {
        let mut ingress = resources::Ingress::default();
        ingress.metadata.name = Some(name.into());
        ingress.metadata.namespace = Some("default".into());
        ingress.metadata.resource_version = Some(version.into());
        Object::Ingress(Arc::new(ingress))
    }

    #[tokio::test]
    async fn a_newer_version_of_a_served_ingress_is_handed_over_alone_as_a_full_hand_over_would() {
        let (client, _leading, not_leading) = unreachable_and_not_leading();
        let publish = Publish::Addresses(vec!["10.0.0.1".into()]);
        let writers = WriterContext {
            client: &client,
            controller_name: "test",
            leading: &not_leading,
        };
        let start = || IngressStatus::start(&writers, publish.clone());
        let versions = |status: &IngressStatus| -> Vec<(String, String)> {
            (status.ingresses.items.iter())
                .map(|i| {
                    (
                        i.metadata.name.clone().unwrap(),
                        i.metadata.resource_version.clone().unwrap(),
                    )
                })
                .collect()
        };
        let mut index = index::Index::new();
        for name in ["a", "b"] {
            index.handle(index::SourceEvent::Apply(ingress(name, "1")));
        }
        let served: OrdSet<ObjectRef> = ["a", "b"]
            .into_iter()
            .map(|name| ObjectRef::new(Kind::Ingress, "default", name))
            .collect();
        let mut status = start();
        let first = index.snapshot();
        status.update(&first, None, &served, (None, None));
        let b_before = status.ingresses.items[1].clone();

        // Our write comes back as version 2 of `a`.
        index.handle(index::SourceEvent::Apply(ingress("a", "2")));
        let second = index.snapshot();
        let changes = second.changes_since(&first);
        status.update(&second, Some(&changes), &served, (None, None));
        let mut from_nothing = start();
        from_nothing.update(&second, None, &served, (None, None));
        assert_eq!(versions(&status), versions(&from_nothing));
        assert_eq!(versions(&status)[0], ("a".into(), "2".into()));
        assert!(Arc::ptr_eq(&status.ingresses.items[1], &b_before));

        // Served no more: made anew.
        let only_b: OrdSet<ObjectRef> =
            served.without(&ObjectRef::new(Kind::Ingress, "default", "a"));
        status.update(&second, Some(&[]), &only_b, (None, None));
        assert_eq!(versions(&status), [("b".into(), "1".into())]);
    }

    #[test]
    fn converts_statuses_read_as_the_gateway_api_types_with_every_field_kept() {
        let mut route = route_status("attached");
        if let ObjectStatus::Route { parents } = &mut route {
            parents[0].parent_ref.section_name = Some("http".into());
            parents[0].parent_ref.port = Some(80);
        }
        let typed: HttpRouteStatus = typed_status::<HttpRoute>(&route).unwrap();
        let parent = &typed.parents[0];
        assert_eq!(parent.controller_name, convert::gateway::GATEWAY_CONTROLLER);
        assert_eq!(parent.parent_ref.namespace.as_deref(), Some("default"));
        assert_eq!(parent.parent_ref.section_name.as_deref(), Some("http"));
        assert_eq!(parent.parent_ref.port, Some(80));
        let condition = &parent.conditions[0];
        assert_eq!(
            (condition.type_.as_str(), condition.status.as_str()),
            ("Accepted", "True")
        );
        assert_eq!(condition.message, "attached");
        assert_eq!(condition.observed_generation, Some(2));

        let gateway = ObjectStatus::Gateway {
            conditions: vec![accepted()],
            listeners: vec![ListenerStatus {
                name: "http".into(),
                attached_routes: 3,
                supported_kinds: vec![BTreeMap::from([
                    ("group", "gateway.networking.k8s.io"),
                    ("kind", "HTTPRoute"),
                ])],
                conditions: vec![accepted()],
            }],
            attached_listener_sets: 2,
            unread: Vec::new(),
        };
        let typed: GatewayStatus = typed_status::<Gateway>(&gateway).unwrap();
        assert_eq!(typed.attached_listener_sets, Some(2));
        let listener = &typed.listeners.unwrap_or_default()[0];
        assert_eq!(listener.attached_routes, 3);
        assert_eq!(
            listener.supported_kinds,
            Some(vec![GatewayStatusListenersSupportedKinds {
                group: Some("gateway.networking.k8s.io".into()),
                kind: "HTTPRoute".into(),
            }])
        );
        assert_eq!(listener.conditions[0].type_, "Accepted");
        assert_eq!(typed.conditions.map(|c| c.len()), Some(1));

        let set = ObjectStatus::ListenerSet {
            conditions: vec![accepted()],
            listeners: vec![ListenerStatus {
                name: "extra".into(),
                attached_routes: 1,
                supported_kinds: Vec::new(),
                conditions: vec![accepted()],
            }],
        };
        let typed: ListenerSetStatus = typed_status::<ListenerSet>(&set).unwrap();
        let listener = &typed.listeners.unwrap_or_default()[0];
        assert_eq!(
            (listener.name.as_str(), listener.attached_routes),
            ("extra", 1)
        );
        assert_eq!(
            typed.conditions.map(|c| c[0].reason.clone()),
            Some("Accepted".into())
        );

        let class = ObjectStatus::Class {
            conditions: vec![accepted()],
        };
        let typed: GatewayClassStatus = typed_status::<GatewayClass>(&class).unwrap();
        assert_eq!(
            typed.conditions.map(|c| c[0].reason.clone()),
            Some("Accepted".into())
        );
    }
}
