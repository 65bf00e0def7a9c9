//! Kubernetes API mode: the watchers that feed the controller, and the leader-only
//! writers (status of every kind, Events) the controller hands its results to.

use std::sync::Arc;

use anyhow::Context as _;
use cluster::{
    LeaseConfig, Problem, Publish, ServedGateways, ServedIngresses, StatusKind, StatusWriter,
    Target, WatchScope,
};
use convert::Diagnostic;
use convert::gateway_status::{ObjectStatus, StatusReport};
use index::Snapshot;
use model::OrdSet;
use prometheus_client::metrics::gauge::Gauge;
use resources::{
    BackendTlsPolicy, Gateway, GatewayClass, GrpcRoute, HttpRoute, Kind, ListenerSet, Object,
    ObjectRef, Service, TcpRoute, TlsRoute, UdpRoute,
};
use serde_json::Value;
use source::SourceBatch;
use tokio::sync::{mpsc, watch};

use crate::cli::{ClusterArgs, ConfigArgs};

/// Problems waiting to be published; beyond this, new ones are dropped (they are logged).
const PROBLEM_QUEUE: usize = 256;

/// The controller's side of Kubernetes API mode.
pub struct ClusterLink {
    client: kube::Client,
    lease: LeaseConfig,
    leading: watch::Receiver<bool>,
    /// The Ingress status writer and where its address comes from, when one is published.
    ingress_status: Option<(Publish, StatusWriter<ServedIngresses>)>,
    /// The `--publish-service` Service, if any.
    publish_service: Option<ObjectRef>,
    problems: mpsc::Sender<Problem>,
    gateway_status: GatewayStatusWriters,
    /// The Ingresses served when their status input was last computed.
    served_ingresses: OrdSet<ObjectRef>,
}

/// One status writer per Gateway API kind.
#[derive(Debug)]
struct GatewayStatusWriters {
    classes: StatusWriter<Vec<Target<GatewayClass>>>,
    gateways: StatusWriter<ServedGateways>,
    /// The Gateways' computed status, as last handed over.
    last_gateways: Vec<Target<Gateway>>,
    /// Where the Gateways' published address comes from.
    publish: Option<Publish>,
    routes: StatusWriter<Vec<Target<HttpRoute>>>,
    grpc_routes: StatusWriter<Vec<Target<GrpcRoute>>>,
    tls_routes: StatusWriter<Vec<Target<TlsRoute>>>,
    tcp_routes: StatusWriter<Vec<Target<TcpRoute>>>,
    udp_routes: StatusWriter<Vec<Target<UdpRoute>>>,
    backend_tls_policies: StatusWriter<Vec<Target<BackendTlsPolicy>>>,
    listener_sets: StatusWriter<Vec<Target<ListenerSet>>>,
}

impl std::fmt::Debug for ClusterLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterLink")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl ClusterLink {
    /// Connects, and starts the watchers (feeding `batches`), the election and the writers.
    pub async fn start(
        args: &ClusterArgs,
        config: &ConfigArgs,
        batches: mpsc::Sender<SourceBatch>,
        leader_gauge: Gauge,
    ) -> anyhow::Result<Self> {
        let client = cluster::connect(args.kubeconfig.as_deref())
            .await
            .context("connecting to the Kubernetes API server")?;
        let scope = WatchScope {
            namespaces: args.watch_namespaces.clone(),
            configmap: config.configmap.clone(),
            tcp_services_configmap: config.tcp_services_configmap.clone(),
            gateway_api: args.watch_gateway_api,
        };
        tokio::spawn(cluster::watch_cluster(client.clone(), scope, batches));

        let identity = args.identity.clone().unwrap_or_else(host_name);
        let lease = LeaseConfig {
            namespace: args.election_namespace.clone(),
            name: args.election_id.clone(),
            identity: identity.clone(),
            duration: args.lease_duration,
        };
        let (leading_tx, leading) = watch::channel(false);
        tokio::spawn(cluster::elect(client.clone(), lease.clone(), leading_tx));
        let mut leadership = leading.clone();
        tokio::spawn(async move {
            loop {
                leader_gauge.set(i64::from(*leadership.borrow_and_update()));
                if leadership.changed().await.is_err() {
                    return;
                }
            }
        });

        let publish = match (&args.publish_service, args.publish_address.is_empty()) {
            (Some((namespace, name)), _) => Some(Publish::Service {
                namespace: namespace.clone(),
                name: name.clone(),
            }),
            (None, false) => Some(Publish::Addresses(args.publish_address.clone())),
            (None, true) => None,
        };
        let publish_service = args
            .publish_service
            .as_ref()
            .map(|(namespace, name)| ObjectRef::new(Kind::Service, namespace, name));
        let controller_name = convert::gateway::GATEWAY_CONTROLLER.to_owned();
        let ingress_status = publish.clone().map(|publish| {
            let writer = StatusWriter::start(
                client.clone(),
                controller_name.clone(),
                leading.clone(),
                ServedIngresses::none(publish.clone()),
            );
            (publish, writer)
        });
        let gateway_status =
            GatewayStatusWriters::start(&client, &controller_name, &leading, publish.clone());
        let (problems, problems_rx) = mpsc::channel(PROBLEM_QUEUE);
        tokio::spawn(cluster::publish_events(
            client.clone(),
            identity,
            leading.clone(),
            problems_rx,
        ));
        Ok(Self {
            client,
            lease,
            leading,
            ingress_status,
            publish_service,
            problems,
            gateway_status,
            served_ingresses: OrdSet::new(),
        })
    }

    /// Hands the status writers what a reconciliation found, once HAProxy serves it
    /// (`changes`: since the snapshot they were last given; `None` for the first): the
    /// Ingresses served now (`served`, as the conversion decided) and the published
    /// Service, read again only when that set, one of its Ingresses or that Service
    /// changed; and the Gateway API status when it was computed again (`None`: unchanged).
    pub fn publish_status(
        &mut self,
        snapshot: &Arc<Snapshot>,
        changes: Option<&[index::Change]>,
        served: &OrdSet<ObjectRef>,
        gateway_report: Option<&StatusReport>,
    ) {
        let publish_service =
            self.publish_service
                .as_ref()
                .and_then(|service| match snapshot.get(service) {
                    Some(Object::Service(service)) => Some(service.clone()),
                    _ => None,
                });
        let publish_service_changed = changes.is_none_or(|changes| {
            changes
                .iter()
                .any(|c| self.publish_service.as_ref() == Some(&c.object_ref))
        });
        if gateway_report.is_some() || publish_service_changed {
            self.gateway_status
                .update(snapshot, gateway_report, publish_service.clone());
        }
        if let Some((publish, writer)) = &self.ingress_status {
            let relevant = |object: &ObjectRef| {
                served.contains(object) || self.publish_service.as_ref() == Some(object)
            };
            let changed = self.served_ingresses != *served
                || changes.is_none_or(|changes| changes.iter().any(|c| relevant(&c.object_ref)));
            if changed {
                self.served_ingresses = served.clone();
                let ingresses = served
                    .iter()
                    .filter_map(|object| match snapshot.get(object) {
                        Some(Object::Ingress(ingress)) => Some(ingress.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                writer.update(ServedIngresses {
                    publish: publish.clone(),
                    ingresses,
                    publish_service: publish_service.clone(),
                });
            }
        }
    }

    /// Publishes the problems that are new as Events (while this replica leads).
    pub fn publish_problems(&self, snapshot: &Snapshot, new_problems: &[&Diagnostic]) {
        for diagnostic in new_problems {
            let uid = snapshot
                .get(&diagnostic.object)
                .and_then(|object| object.metadata().uid.map(str::to_owned));
            let problem = Problem {
                object: diagnostic.object.clone(),
                uid,
                field: diagnostic.field.clone(),
                message: diagnostic.message.clone(),
            };
            if self.problems.try_send(problem).is_err() {
                tracing::debug!("event queue full; problem not published");
            }
        }
    }

    /// Gives up the lease if this replica holds it, so another takes over at once.
    pub async fn shutdown(&self) {
        if *self.leading.borrow()
            && let Err(err) = cluster::release(self.client.clone(), &self.lease).await
        {
            tracing::warn!(error = %err, "cannot release the lease");
        }
    }
}

impl GatewayStatusWriters {
    fn start(
        client: &kube::Client,
        controller_name: &str,
        leading: &watch::Receiver<bool>,
        publish: Option<Publish>,
    ) -> Self {
        let name = || controller_name.to_owned();
        let gateways = ServedGateways {
            publish: publish.clone(),
            ..ServedGateways::default()
        };
        Self {
            classes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            gateways: StatusWriter::start(client.clone(), name(), leading.clone(), gateways),
            last_gateways: Vec::new(),
            publish,
            routes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            grpc_routes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            tls_routes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            tcp_routes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            udp_routes: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
            backend_tls_policies: StatusWriter::start(
                client.clone(),
                name(),
                leading.clone(),
                Vec::new(),
            ),
            listener_sets: StatusWriter::start(client.clone(), name(), leading.clone(), Vec::new()),
        }
    }

    /// Hands each writer the objects of its kind that the report (`None`: unchanged)
    /// has a status for, and the Gateways' writer the published Service as last seen.
    fn update(
        &mut self,
        snapshot: &Snapshot,
        report: Option<&StatusReport>,
        publish_service: Option<Arc<Service>>,
    ) {
        if let Some(report) = report {
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
            self.classes.update(classes);
            self.routes.update(routes);
            self.grpc_routes.update(grpc_routes);
            self.tls_routes.update(tls_routes);
            self.tcp_routes.update(tcp_routes);
            self.udp_routes.update(udp_routes);
            self.backend_tls_policies.update(policies);
            self.listener_sets.update(listener_sets);
            self.last_gateways = gateways;
        }
        self.gateways.update(ServedGateways {
            gateways: self.last_gateways.clone(),
            publish: self.publish.clone(),
            publish_service,
        });
    }
}

fn target<K: StatusKind>(object: &Arc<K>, status: &ObjectStatus) -> Option<Target<K>> {
    match typed_status::<K>(status) {
        Ok(desired) => Some(Target {
            object: object.clone(),
            desired,
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

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("portcullis-{}", std::process::id()))
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

    #[test]
    fn converts_statuses_read_as_the_gateway_api_types_with_every_field_kept() {
        let route = ObjectStatus::Route {
            parents: vec![RouteParentStatus {
                parent_ref: ParentRef {
                    group: "gateway.networking.k8s.io",
                    kind: "Gateway",
                    namespace: "default".into(),
                    name: "edge".into(),
                    section_name: Some("http".into()),
                    port: Some(80),
                },
                controller_name: convert::gateway::GATEWAY_CONTROLLER,
                conditions: vec![accepted()],
            }],
        };
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
