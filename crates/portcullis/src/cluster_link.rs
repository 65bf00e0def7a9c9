//! Kubernetes API mode: the watchers that feed the controller, and the leader-only
//! writers (Ingress status, Events) the controller hands its results to.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context as _;
use cluster::{LeaseConfig, Problem, Publish, ServedIngress, StatusInput, StatusWrite, WatchScope};
use convert::gateway_status::StatusReport;
use convert::{ConvertOptions, Diagnostic};
use index::Snapshot;
use prometheus_client::metrics::gauge::Gauge;
use resources::{Kind, Object, ObjectRef};
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
    status: Option<watch::Sender<Arc<StatusInput>>>,
    /// The `--publish-service` Service, if any.
    publish_service: Option<ObjectRef>,
    problems: mpsc::Sender<Problem>,
    gateway_status: watch::Sender<Arc<Vec<StatusWrite>>>,
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
        let status = publish.map(|publish| {
            let (input_tx, input_rx) = watch::channel(Arc::new(StatusInput::default()));
            tokio::spawn(cluster::write_ingress_status(
                client.clone(),
                publish,
                leading.clone(),
                input_rx,
            ));
            input_tx
        });
        let (gateway_status, gateway_status_rx) = watch::channel(Arc::new(Vec::new()));
        tokio::spawn(cluster::write_gateway_status(
            client.clone(),
            leading.clone(),
            gateway_status_rx,
        ));
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
            status,
            publish_service,
            problems,
            gateway_status,
        })
    }

    /// Hands the writers what a reconciliation found (`changes`: since the previous one;
    /// `None` for the first): the Ingresses served now and the published Service (read
    /// again only when an Ingress, an IngressClass or that Service changed), the Gateway API status when it was computed again (`None`:
    /// unchanged), and the problems that are new.
    pub fn publish(
        &mut self,
        snapshot: &Arc<Snapshot>,
        changes: Option<&[index::Change]>,
        options: &ConvertOptions,
        new_problems: &[&Diagnostic],
        gateway_report: Option<&StatusReport>,
    ) {
        if let Some(report) = gateway_report {
            let writes = gateway_writes(snapshot, report);
            self.gateway_status.send_if_modified(|current| {
                let modified = **current != writes;
                if modified {
                    *current = Arc::new(writes);
                }
                modified
            });
        }
        if let Some(status) = &self.status {
            let relevant = |object: &ObjectRef| {
                matches!(object.kind, Kind::Ingress | Kind::IngressClass)
                    || self.publish_service.as_ref() == Some(object)
            };
            let changed =
                changes.is_none_or(|changes| changes.iter().any(|c| relevant(&c.object_ref)));
            if changed {
                let ingresses = snapshot
                    .of_kind(Kind::Ingress)
                    .filter_map(|object| match object {
                        Object::Ingress(ingress)
                            if convert::class::is_ours(ingress, snapshot, options) =>
                        {
                            Some(ServedIngress::of(ingress))
                        }
                        _ => None,
                    })
                    .collect::<Vec<_>>();
                let publish_service =
                    self.publish_service
                        .as_ref()
                        .and_then(|service| match snapshot.get(service) {
                            Some(Object::Service(service)) => Some(service.clone()),
                            _ => None,
                        });
                let input = StatusInput {
                    ingresses,
                    publish_service,
                };
                status.send_if_modified(|current| {
                    let modified = **current != input;
                    if modified {
                        *current = Arc::new(input);
                    }
                    modified
                });
            }
        }
        for diagnostic in new_problems {
            let uid = snapshot
                .get(&diagnostic.object)
                .and_then(|object| object.metadata().uid.clone());
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

/// The Gateway API status writes a report asks for, compared with the objects now.
fn gateway_writes(snapshot: &Snapshot, report: &StatusReport) -> Vec<StatusWrite> {
    let mut desired = BTreeMap::new();
    let mut current = BTreeMap::new();
    for (object, status) in report {
        let (status_now, version) = match snapshot.get(object) {
            Some(Object::GatewayClass(o)) => (
                serde_json::to_value(&o.status),
                &o.metadata.resource_version,
            ),
            Some(Object::Gateway(o)) => (
                serde_json::to_value(&o.status),
                &o.metadata.resource_version,
            ),
            Some(Object::HttpRoute(o)) => (
                serde_json::to_value(&o.status),
                &o.metadata.resource_version,
            ),
            _ => continue,
        };
        let Ok(wanted) = serde_json::to_value(status) else {
            continue;
        };
        desired.insert(object.clone(), wanted);
        current.insert(
            object.clone(),
            (
                version.clone().unwrap_or_default(),
                status_now.unwrap_or(serde_json::Value::Null),
            ),
        );
    }
    cluster::pending_writes(&desired, &current, convert::gateway::GATEWAY_CONTROLLER)
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("portcullis-{}", std::process::id()))
}
