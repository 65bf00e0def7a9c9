//! `portcullis run`: the long-running controller loop.
//!
//! One task owns the index, the applied-file hashes and the HAProxy process; it handles
//! source batches, HAProxy exits, timers and shutdown signals one at a time, so no state
//! is shared. A reconciliation whose files could not be staged, checked or written is
//! tried again after a backoff, with or without a new event.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use haproxy::{Haproxy, LaunchOptions, StateDir};
use index::Index;
use model::{CertId, TlsCert};
use plan::AppliedFiles;
use plan::{Backends, LiveState, LiveUpdate};
use resources::Kind;
use source::{ManifestDir, SourceBatch};
use tokio::sync::mpsc;

use crate::admin::{self, AdminState};
use crate::busy_ports::BusyPorts;
use crate::cli::RunArgs;
use crate::cluster_link::ClusterLink;
use crate::default_cert;
use crate::driver::Driver;
use crate::metrics::{ReconcileOutcome, UpdateMode};
use crate::pipeline::{self, Reconciler};

/// How long the manifest directory must be quiet before a burst of changes is applied.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// Kinds an object left out for HAProxy's refusal may have read its configuration from:
/// a change of one tries every refused object again. Endpoints, Pods and the routed
/// objects themselves change far more often, and none of them alone makes a
/// configuration HAProxy refuses.
const READ_BY_REFUSED: [Kind; 10] = [
    Kind::ConfigMap,
    Kind::Secret,
    Kind::IngressClass,
    Kind::Service,
    Kind::Namespace,
    Kind::GatewayClass,
    Kind::Gateway,
    Kind::ListenerSet,
    Kind::ReferenceGrant,
    Kind::BackendTlsPolicy,
];
/// How long workers may finish their connections at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The wait before the first retry of a reconciliation that could not reach the disk.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between two retries.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// When a reconciliation that could not stage, check or write its files runs again:
/// `FIRST_RETRY` after the first failure, doubling up to `MAX_RETRY`.
#[derive(Debug, Default)]
struct RetryBackoff {
    failures: u32,
    due: Option<tokio::time::Instant>,
}

impl RetryBackoff {
    /// Schedules the next attempt; returns the wait.
    fn failed(&mut self) -> Duration {
        let wait = FIRST_RETRY
            .saturating_mul(1 << self.failures.min(16))
            .min(MAX_RETRY);
        self.failures = self.failures.saturating_add(1);
        self.due = Some(tokio::time::Instant::now() + wait);
        wait
    }

    /// Nothing is left to retry.
    fn succeeded(&mut self) {
        *self = Self::default();
    }
}

/// A reconciliation's status, waiting for HAProxy to serve the files it describes.
#[derive(Debug)]
struct PendingStatus {
    snapshot: Arc<index::Snapshot>,
    served_ingresses: model::OrdSet<resources::ObjectRef>,
    report: Arc<convert::gateway_status::StatusReport>,
}

struct Controller {
    state: StateDir,
    launch_binary: PathBuf,
    driver: Driver,
    reconciler: Reconciler,
    admin: Arc<AdminState>,
    index: Index,
    applied: AppliedFiles,
    manifest_problems: Vec<String>,
    reported: BTreeSet<String>,
    /// Certificates `haproxy -c` refused, by content: left out until they change.
    rejected_certificates: BTreeMap<CertId, TlsCert>,
    /// Objects whose configuration `haproxy -c` refused, by version: left out until they
    /// change, or something they may read does (`refusals_since`).
    rejected_objects: convert::Exclusions,
    /// The snapshot the refusals were last weighed against.
    refusals_since: Option<Arc<index::Snapshot>>,
    /// The Gateway API status last published at `/status`.
    published_status: Option<Arc<convert::gateway_status::StatusReport>>,
    /// The status of the last files written, until HAProxy serves them: only then is it
    /// handed to the cluster writers, so no object reads as programmed before it is.
    status_to_publish: Option<PendingStatus>,
    /// The snapshot whose results the cluster writers were last given.
    published_snapshot: Option<Arc<index::Snapshot>>,
    /// Kubernetes API mode's writers (status, Events); `None` in manifest mode.
    cluster: Option<ClusterLink>,
    retry: RetryBackoff,
    busy_ports: BusyPorts,
    /// Whether the first start may go without a separate check (HAProxy's start checks
    /// the same); false once such a start was refused, so the next ones check first.
    trust_first_start: bool,
}

/// Runs until SIGTERM or SIGINT.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    if let Some(clash) = args.config.admin_clash(args.admin_bind) {
        anyhow::bail!("{clash}");
    }
    let mut state = StateDir::open(&args.state_dir).context("opening the state directory")?;
    state.lock().context("locking the state directory")?;
    let sockets = state
        .prepare_sockets()
        .context("preparing the directory of HAProxy's sockets")?;
    let fallback = default_cert::load_or_generate(state.root())?;
    let admin = Arc::new(AdminState::default());
    let server = admin::serve(args.admin_bind, admin.clone()).await?;
    tokio::spawn(async move {
        if let Err(err) = server.await {
            tracing::error!(error = %err, "admin server stopped");
        }
    });
    let applied = state.scan().context("reading the state directory")?;
    let launch = LaunchOptions {
        binary: haproxy_binary(args.haproxy_bin.as_deref())?,
        state_dir: state.root().to_path_buf(),
        sockets,
        share_stdout: true,
    };
    let mut options = pipeline::convert_options(&args.config, fallback);
    // A Gateway listener on the admin endpoint's port would stop HAProxy from binding.
    options.reserved_ports = vec![args.admin_bind.port()];
    let (batches_tx, mut batches) = mpsc::channel(64);
    let cluster = match &args.manifests {
        Some(directory) => {
            let manifests =
                ManifestDir::new(directory).max_file_bytes(args.config.max_manifest_bytes);
            tokio::spawn(async move {
                if let Err(err) = source::watch_manifest_dir(manifests, DEBOUNCE, batches_tx).await
                {
                    tracing::error!(error = %err, "cannot watch the manifest directory");
                }
            });
            None
        }
        None => Some(
            ClusterLink::start(
                &args.cluster,
                &args.config,
                batches_tx,
                admin.metrics.leader.clone(),
            )
            .await?,
        ),
    };
    let mut controller = Controller {
        launch_binary: launch.binary.clone(),
        driver: Driver::new(launch, admin.clone(), args.reload_interval),
        reconciler: Reconciler::new(options.clone()).verify_incremental(args.verify_incremental),
        state,
        admin,
        index: Index::new(),
        applied,
        manifest_problems: Vec::new(),
        reported: BTreeSet::new(),
        rejected_certificates: BTreeMap::new(),
        rejected_objects: convert::Exclusions::new(),
        refusals_since: None,
        published_status: None,
        status_to_publish: None,
        published_snapshot: None,
        cluster,
        retry: RetryBackoff::default(),
        busy_ports: BusyPorts::new(args.config.bind_address),
        trust_first_start: true,
    };
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tracing::info!(
        state_dir = %controller.state.root().display(),
        sockets = ?controller.state.sockets().map(haproxy::Sockets::run_dir),
        "portcullis started"
    );
    let mut heartbeat = tokio::time::interval(admin::HEARTBEAT_INTERVAL);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // Each turn of the loop is progress; the heartbeat tick makes an idle loop turn.
        controller.admin.heartbeat.beat();
        let deadline = controller.driver.next_deadline();
        tokio::select! {
            batch = batches.recv() => {
                let Some(batch) = batch else { anyhow::bail!("the object source stopped") };
                controller.absorb(batch);
                // Coalesce whatever else is already waiting into this reconciliation.
                while let Ok(batch) = batches.try_recv() {
                    controller.absorb(batch);
                }
                controller.reconcile().await?;
            }
            status = wait_for_exit(controller.driver.haproxy_mut()) => {
                tracing::error!(?status, "haproxy exited; restarting it on the last good configuration");
                controller.driver.restart_after_exit().await;
                controller.publish_status_once_served();
            }
            () = sleep_until(deadline) => {
                controller.driver.on_timer().await;
                controller.publish_status_once_served();
            }
            () = sleep_until(controller.busy_ports.recheck_due()) => {
                controller.reconcile().await?;
            }
            () = sleep_until(controller.retry.due) => {
                tracing::info!(attempt = controller.retry.failures + 1, "reconciling again after a failure");
                controller.reconcile().await?;
            }
            _ = heartbeat.tick() => {}
            _ = tokio::signal::ctrl_c() => break,
            _ = terminate.recv() => break,
        }
    }
    tracing::info!("shutting down");
    controller.admin.ready.store(false, Ordering::SeqCst);
    if let Some(cluster) = &controller.cluster {
        cluster.shutdown().await;
    }
    controller.driver.stop(SHUTDOWN_GRACE).await;
    Ok(())
}

async fn wait_for_exit(haproxy: &mut Option<Haproxy>) -> std::io::Result<std::process::ExitStatus> {
    match haproxy {
        Some(haproxy) => haproxy.exited().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn haproxy_binary(configured: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = configured {
        return Ok(path.to_path_buf());
    }
    let from_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file());
    from_path.ok_or_else(|| {
        anyhow::anyhow!("haproxy not found in PATH; install it or pass --haproxy-bin")
    })
}

/// How one attempt at reconciling ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    /// Done: applied, or nothing more can be done until something changes.
    Settled,
    /// HAProxy refused the configuration and objects were left out: try what is left.
    Narrowed,
}

impl Controller {
    fn absorb(&mut self, batch: SourceBatch) {
        for event in batch.events {
            self.index.handle(event);
        }
        self.manifest_problems = batch.problems.iter().map(ToString::to_string).collect();
    }

    /// Reconciles the current objects. When HAProxy refuses the configuration and the
    /// objects behind it are left out, what is left is reconciled again at once, up to
    /// [`pipeline::MAX_NARROWING_ROUNDS`] times.
    async fn reconcile(&mut self) -> Result<(), pipeline::Divergence> {
        for round in 0.. {
            // Each round is progress: a narrowed round may follow a start and a check.
            self.admin.heartbeat.beat();
            if self.reconcile_round(round).await? == Round::Settled {
                break;
            }
        }
        Ok(())
    }

    /// One attempt at reconciling; `round` counts the attempts before it in this
    /// reconciliation.
    async fn reconcile_round(&mut self, round: u32) -> Result<Round, pipeline::Divergence> {
        let started = Instant::now();
        if self.busy_ports.release_freed() {
            tracing::info!(busy = ?self.busy_ports.busy(), "a port another process held is free");
            self.reconciler
                .set_busy_ports(self.busy_ports.busy().clone());
        }
        let snapshot = self.index.snapshot();
        let admin = self.admin.clone();
        let metrics = &admin.metrics;
        for kind in Kind::ALL {
            let count = i64::try_from(snapshot.count(kind)).unwrap_or(i64::MAX);
            metrics
                .objects
                .get_or_create(&vec![("kind", kind.name().to_owned())])
                .set(count);
        }
        // Forget refusals of objects that changed (beyond a status write, which renders
        // nothing new) or went away: they are tried again. So are all of them when an
        // object of a kind they may read changed (an IngressClass's parameters, a Secret,
        // a Gateway): what was refused may come from there, and such changes are rare.
        if let Some(since) = &self.refusals_since
            && !self.rejected_objects.is_empty()
            && snapshot.changes_since(since).iter().any(|change| {
                READ_BY_REFUSED.contains(&change.object_ref.kind)
                    && !matches!(
                        (&change.before, &change.after),
                        (Some(before), Some(after))
                            if before == after || before.changed_only_in_status(after)
                    )
            })
        {
            self.rejected_objects.clear();
        }
        self.refusals_since = Some(snapshot.clone());
        self.rejected_objects.retain(|object, refused| {
            snapshot
                .get(object)
                .is_some_and(|now| refused.holds_for(now))
        });
        let reconciled = self.reconciler.reconcile_excluding(
            &snapshot,
            &self.rejected_certificates,
            &self.rejected_objects,
        )?;
        // Forget refusals of certificates that changed or went away.
        self.rejected_certificates
            .retain(|id, _| reconciled.excluded_certificates.contains(id));
        let pipeline::Reconciled {
            conversion,
            rendered: desired,
            ..
        } = reconciled;
        if round < pipeline::MAX_NARROWING_ROUNDS && self.busy_ports.find_new(&desired.own_ports) {
            tracing::warn!(
                busy = ?self.busy_ports.busy(),
                "another process holds ports the configuration would bind (Gateway listeners, TCP services, or the global ConfigMap's listeners); those are left out until the ports are free"
            );
            self.reconciler
                .set_busy_ports(self.busy_ports.busy().clone());
            return Ok(Round::Narrowed);
        }
        let problems_changed = self.report(&conversion.diagnostics);
        self.publish_gateway_status(&conversion.gateway_status);
        if let Some(cluster) = &self.cluster
            && problems_changed
        {
            cluster.publish_problems(&snapshot, &conversion.diagnostics);
        }
        // What the status writers are given once HAProxy serves this round's files.
        let status = self.cluster.is_some().then(|| PendingStatus {
            snapshot: snapshot.clone(),
            served_ingresses: conversion.served_ingresses.clone(),
            report: conversion.gateway_status.clone(),
        });
        let reconciled_in = started.elapsed();
        let plan = plan::plan(&self.applied, &desired);
        let backends: Backends = conversion.model.backends.clone();
        let update = self.driver.live_update(&backends, &desired);
        if plan.is_empty() && update.as_ref().is_some_and(LiveUpdate::is_noop) {
            // What HAProxy runs is what the objects give now: a refusal of an earlier
            // round (its cause since taken away) no longer holds.
            self.set_refused(None);
            self.retry.succeeded();
            self.status_to_publish = status;
            self.publish_status_once_served();
            metrics.reconciled(ReconcileOutcome::Noop);
            metrics.updated(UpdateMode::Noop);
            metrics
                .reconcile_seconds
                .observe(started.elapsed().as_secs_f64());
            return Ok(Round::Settled);
        }
        // With nothing live and no last good configuration to keep, HAProxy's own start
        // is the check: a separate one would parse everything twice. When it refuses, the
        // files are checked then, and taken away.
        let unchecked_start =
            self.trust_first_start && self.applied.is_empty() && !self.driver.is_running();
        // Files on disk that nothing has seen pass in this run (a controller stopped during
        // such a first start leaves them) are checked before HAProxy starts on them.
        let unverified_on_disk =
            plan.is_empty() && !self.driver.is_running() && !self.state.has_accepted();
        let check = !unchecked_start
            && (unverified_on_disk
                || (!plan.is_empty() && update.as_ref().is_none_or(LiveUpdate::needs_check)));
        if check {
            let checked = self
                .state
                .check(&self.launch_binary, &desired, &self.applied)
                .await;
            if let Err(err) = checked {
                return Ok(self
                    .refused(err, round, &snapshot, &conversion, &desired)
                    .await);
            }
        }
        if !plan.is_empty() {
            let result = self.state.apply(&plan, &mut self.applied);
            metrics.files_written.inc_by(plan.writes.len() as u64);
            metrics.files_deleted.inc_by(plan.deletes.len() as u64);
            if let Err(err) = result {
                let retry_in = self.retry.failed();
                tracing::error!(error = %err, retry_in_ms = retry_in.as_millis(), "cannot write the configuration");
                metrics.reconciled(ReconcileOutcome::Failed);
                return Ok(Round::Settled);
            }
            tracing::info!(
                written = plan.writes.len(),
                deleted = plan.deletes.len(),
                checked = check,
                reconcile_ms = reconciled_in.as_millis(),
                total_ms = started.elapsed().as_millis(),
                "configuration written"
            );
        }
        self.set_refused(None);
        self.retry.succeeded();
        self.busy_ports.bound(&desired.own_ports);
        let written = LiveState::loaded(backends, &desired);
        let global = &conversion.model.global;
        self.driver
            .set_session_closing(global.close_sessions_window.map(|window| {
                crate::driver::SessionClosing {
                    timeout_stop: global.timeout_stop.to_std(),
                    window,
                }
            }));
        let mode = self.driver.apply(update, written).await;
        if unchecked_start {
            if self.driver.is_running() {
                self.state.accepted(&desired);
            } else if let Some(round) = self
                .refused_at_start(round, &snapshot, &conversion, &desired)
                .await
            {
                return Ok(round);
            }
        }
        self.status_to_publish = status;
        self.publish_status_once_served();
        metrics.updated(mode);
        metrics.reconciled(ReconcileOutcome::Applied);
        metrics
            .reconcile_seconds
            .observe(started.elapsed().as_secs_f64());
        Ok(Round::Settled)
    }

    /// HAProxy did not start on files written without a check: they are checked now. If
    /// the check passes (`None`), something else kept HAProxy from starting and the driver
    /// tries again as after any failed start; otherwise the files are taken away (there
    /// was no last good configuration before them, and there is none now) and the refusal
    /// is handled as a check's.
    async fn refused_at_start(
        &mut self,
        round: u32,
        snapshot: &index::Snapshot,
        conversion: &convert::Conversion,
        desired: &render::RenderedConfig,
    ) -> Option<Round> {
        self.trust_first_start = false;
        tracing::warn!("haproxy did not start on the configuration; checking it");
        let checked = self
            .state
            .check(&self.launch_binary, desired, &self.applied)
            .await;
        let Err(err) = checked else {
            return None;
        };
        let withdrawn = plan::plan(&self.applied, &render::RenderedConfig::default());
        let removed = self.state.apply(&withdrawn, &mut self.applied);
        self.admin
            .metrics
            .files_deleted
            .inc_by(withdrawn.deletes.len() as u64);
        self.driver.withdraw().await;
        // Nothing holds the Gateway listeners' ports now.
        self.busy_ports.bound(&BTreeSet::new());
        if let Err(removal) = removed {
            // The refused files are still there: the next attempt checks before it starts.
            let retry_in = self.retry.failed();
            tracing::error!(error = %removal, refusal = %err, retry_in_ms = retry_in.as_millis(), "cannot remove the configuration haproxy did not start on");
            self.admin.metrics.reconciled(ReconcileOutcome::Failed);
            return Some(Round::Settled);
        }
        Some(
            self.refused(err, round, snapshot, conversion, desired)
                .await,
        )
    }

    /// Handles a check that did not pass: HAProxy's refusal narrowed to objects, which are
    /// left out for the next round; or, when it cannot be judged or explained, the last
    /// good configuration kept.
    async fn refused(
        &mut self,
        err: haproxy::CheckError,
        round: u32,
        snapshot: &index::Snapshot,
        conversion: &convert::Conversion,
        desired: &render::RenderedConfig,
    ) -> Round {
        let admin = self.admin.clone();
        let metrics = &admin.metrics;
        let haproxy::CheckError::Rejected(failure) = err else {
            // Not judged (staging failed, haproxy could not run or hung): again later.
            let retry_in = self.retry.failed();
            tracing::error!(error = %err, retry_in_ms = retry_in.as_millis(), "cannot check the configuration; the last good one stays live");
            metrics.reconciled(ReconcileOutcome::Failed);
            return Round::Settled;
        };
        metrics.configs_rejected.inc();
        let table = render::OriginTable::new(&conversion.model, desired);
        let narrowed = pipeline::narrow(
            &failure.output,
            &self.state.root().join(haproxy::STAGING_DIR),
            &table,
        );
        if round < pipeline::MAX_NARROWING_ROUNDS && self.leave_out(snapshot, conversion, &narrowed)
        {
            let objects: Vec<String> = narrowed
                .objects
                .keys()
                .map(|origin| convert::one_line(&origin.to_string()).into_owned())
                .chain(narrowed.certificates.keys().map(|id| {
                    convert::one_line(&format!("Secret {}/{}", id.namespace, id.name)).into_owned()
                }))
                .collect();
            tracing::error!(
                ?objects,
                "{failure}; these objects are left out and the rest is applied"
            );
            // Everything HAProxy named is left out at once; what is left is checked again
            // in this same reconciliation.
            return Round::Narrowed;
        }
        tracing::error!(
            unexplained = ?narrowed.unexplained,
            "{failure}; no object explains it, so the last good configuration stays live"
        );
        let mut problems = conversion.diagnostics.clone();
        problems.extend(pipeline::unexplained_problem(
            &narrowed,
            self.reconciler.options(),
        ));
        self.report(&problems);
        self.set_refused(Some(format!(
            "HAProxy refuses the configuration the current objects give, and no object explains it: {}",
            narrowed.unexplained.join("; ")
        )));
        // Serve the last good configuration rather than nothing.
        self.driver
            .start_on_last_good(!self.applied.is_empty())
            .await;
        // Only a change of the objects can help: nothing to retry.
        self.retry.succeeded();
        metrics.reconciled(ReconcileOutcome::Rejected);
        Round::Settled
    }

    /// Leaves out what a refused configuration was narrowed to: the certificates HAProxy
    /// named (their hosts get the default certificate) and the objects behind the lines
    /// it named; each is then reported by the conversion's diagnostics, with HAProxy's
    /// words. Says whether anything new was left out.
    fn leave_out(
        &mut self,
        snapshot: &index::Snapshot,
        conversion: &convert::Conversion,
        narrowed: &pipeline::Narrowed,
    ) -> bool {
        pipeline::leave_out(
            snapshot,
            conversion,
            narrowed,
            &mut self.rejected_certificates,
            &mut self.rejected_objects,
        )
    }

    /// Says at `/syncz` why the current objects are not what HAProxy serves.
    fn set_refused(&self, why: Option<String>) {
        self.admin.metrics.refused.set(i64::from(why.is_some()));
        if let Ok(mut refused) = self.admin.refused.lock() {
            *refused = why;
        }
    }

    /// Hands the status waiting for HAProxy to the cluster writers once HAProxy serves
    /// the files it was computed with. A newer reconciliation's status replaces one still
    /// waiting.
    fn publish_status_once_served(&mut self) {
        if !self.driver.serves_written() {
            return;
        }
        let Some(cluster) = self.cluster.as_mut() else {
            return;
        };
        let Some(status) = self.status_to_publish.take() else {
            return;
        };
        let snapshot = status.snapshot;
        // What changed since the snapshot the writers last saw: a status replaced while it
        // waited never reached them, so the conversion's previous snapshot is not it.
        let changes = self
            .published_snapshot
            .replace(snapshot.clone())
            .map(|before| snapshot.changes_since(&before));
        cluster.publish_status(
            &snapshot,
            changes.as_deref(),
            &status.served_ingresses,
            &status.report,
        );
    }

    /// Makes the Gateway API status available at `/status` (the conversion recomputes it
    /// only when something it looked up changed, and hands back the same one otherwise).
    /// It is the status as computed, at once: the cluster's objects get it once HAProxy
    /// serves it.
    fn publish_gateway_status(&mut self, report: &Arc<convert::gateway_status::StatusReport>) {
        if self
            .published_status
            .as_ref()
            .is_some_and(|published| Arc::ptr_eq(published, report) || published == report)
        {
            return;
        }
        self.published_status = Some(report.clone());
        if let Ok(mut current) = self.admin.gateway_status.lock() {
            *current = report.clone();
        }
    }

    /// Logs each problem once, when it appears; the gauge shows how many there are now.
    /// Says whether the problems that hold are not those of the last call.
    fn report(&mut self, diagnostics: &[convert::Diagnostic]) -> bool {
        let mut current: BTreeSet<String> = self.manifest_problems.iter().cloned().collect();
        for diagnostic in diagnostics {
            current.insert(diagnostic.to_string());
        }
        for problem in current.difference(&self.reported) {
            tracing::warn!("{problem}");
        }
        self.admin
            .metrics
            .config_errors
            .set(i64::try_from(current.len()).unwrap_or(i64::MAX));
        let changed = self.reported != current;
        self.reported = current;
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_from_one_second_to_thirty_and_start_over_after_a_success() {
        let mut retry = RetryBackoff::default();
        let waits: Vec<u64> = (0..8).map(|_| retry.failed().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        let due = retry.due.map(|due| due - tokio::time::Instant::now());
        assert!(
            due.is_some_and(|due| due > Duration::from_secs(29)),
            "{due:?}"
        );
        retry.succeeded();
        assert_eq!(retry.due, None);
        assert_eq!(retry.failed(), Duration::from_secs(1));
    }
}
