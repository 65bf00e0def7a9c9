//! Kubernetes API mode: the watchers that feed the controller, and the leader-only
//! writers (status of every kind, Events) the controller hands its results to.

mod handover;

use std::sync::Arc;

use anyhow::Context as _;
use cluster::{LeaseConfig, Problem, Publish, WatchScope};
use convert::Diagnostic;
use convert::gateway_status::StatusReport;
use index::Snapshot;
use model::OrdSet;
use prometheus_client::metrics::gauge::Gauge;
use resources::{Kind, Object, ObjectRef};
use source::SourceBatch;
use tokio::sync::{mpsc, watch};

use self::handover::{GatewayStatusWriters, IngressStatus, WriterContext};
use crate::cli::{ClusterArgs, ConfigArgs};

/// The controller's side of Kubernetes API mode.
pub struct ClusterLink {
    client: kube::Client,
    lease: LeaseConfig,
    leading: watch::Receiver<bool>,
    /// The Ingress status writer, when an address is published.
    ingress_status: Option<IngressStatus>,
    /// The `--publish-service` Service, if any.
    publish_service: Option<ObjectRef>,
    /// The problems that hold now: the Events publisher works out which are new.
    problems: watch::Sender<Arc<[Problem]>>,
    gateway_status: GatewayStatusWriters,
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
            default_ssl_certificate: config.default_ssl_certificate.clone(),
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
        let writers = WriterContext {
            client: &client,
            controller_name: &config.gateway_controller,
            leading: &leading,
        };
        let ingress_status = publish
            .clone()
            .map(|publish| IngressStatus::start(&writers, publish));
        let gateway_status = GatewayStatusWriters::start(&writers, publish.clone());
        let (problems, problems_rx) = watch::channel(Arc::from([]));
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
        })
    }

    /// Hands the status writers what a reconciliation found, once HAProxy serves it
    /// (`changes`: since the snapshot they were last given; `None` for the first): the
    /// Ingresses served now (`served`, as the conversion decided), the published Service,
    /// and the Gateway API status.
    pub fn publish_status(
        &mut self,
        snapshot: &Arc<Snapshot>,
        changes: Option<&[index::Change]>,
        served: &OrdSet<ObjectRef>,
        gateway_report: &Arc<StatusReport>,
    ) {
        let publish_service =
            self.publish_service
                .as_ref()
                .and_then(|service| match snapshot.get(service) {
                    Some(Object::Service(service)) => Some(service.clone()),
                    _ => None,
                });
        self.gateway_status
            .update(snapshot, changes, gateway_report, publish_service.clone());
        if let Some(ingress_status) = &mut self.ingress_status {
            ingress_status.update(
                snapshot,
                changes,
                served,
                (self.publish_service.as_ref(), publish_service),
            );
        }
    }

    /// Hands the Events publisher the problems that hold now (published while this
    /// replica leads, those it has not published yet).
    pub fn publish_problems(&self, snapshot: &Snapshot, problems: &[Diagnostic]) {
        let holding: Arc<[Problem]> = problems
            .iter()
            .map(|diagnostic| Problem {
                object: diagnostic.object.clone(),
                uid: snapshot
                    .get(&diagnostic.object)
                    .and_then(|object| object.metadata().uid.map(str::to_owned)),
                field: diagnostic.field.clone(),
                message: diagnostic.message.clone(),
            })
            .collect();
        self.problems.send_replace(holding);
    }

    /// Gives up the lease if this replica holds it, so another takes over at once.
    /// An API server that does not answer delays the exit by one retry period at most;
    /// the lease then expires on its own.
    pub async fn shutdown(&self) {
        if !*self.leading.borrow() {
            return;
        }
        let release = cluster::release(self.client.clone(), &self.lease);
        match tokio::time::timeout(self.lease.retry_period(), release).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::warn!(error = %err, "cannot release the lease"),
            Err(_) => tracing::warn!("cannot release the lease: no answer in time"),
        }
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("portcullis-{}", std::process::id()))
}
