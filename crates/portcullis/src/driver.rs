//! Keeps the running HAProxy in step with the written files: live updates over the runtime
//! API, coalesced and rate-limited reloads (retried until they succeed), deferred deletion
//! of servers that still had connections, and restarts.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use haproxy::{Haproxy, LaunchOptions, RuntimeApi};
use plan::{LiveState, LiveUpdate, ReloadReason};
use tokio::time::Instant;

use crate::admin::AdminState;

/// Longest wait between two attempts of a failing reload.
const MAX_RELOAD_BACKOFF: Duration = Duration::from_secs(30);
/// How long to wait before trying again to start HAProxy after a failure.
const START_RETRY: Duration = Duration::from_secs(5);
/// How often servers left in maintenance with connections are tried again.
const DRAIN_RETRY: Duration = Duration::from_millis(500);

/// A reload that is due.
#[derive(Debug, Clone)]
struct PendingReload {
    reasons: BTreeSet<ReloadReason>,
    not_before: Instant,
}

/// The HAProxy process and what it runs.
#[derive(Debug)]
pub struct Driver {
    launch: LaunchOptions,
    runtime: RuntimeApi,
    admin: Arc<AdminState>,
    reload_interval: Duration,
    haproxy: Option<Haproxy>,
    /// What HAProxy loads from the files on disk.
    written: Option<LiveState>,
    /// What HAProxy runs; `None` when unknown (a runtime command failed).
    live: Option<LiveState>,
    pending: Option<PendingReload>,
    last_reload: Option<Instant>,
    failed_reloads: u32,
    /// When servers left draining must be gone, or HAProxy reloads.
    drain_deadline: Option<Instant>,
    next_drain_retry: Option<Instant>,
    /// When to try starting HAProxy again after it failed to start.
    next_start: Option<Instant>,
}

impl Driver {
    /// A driver with no HAProxy running yet.
    pub fn new(launch: LaunchOptions, admin: Arc<AdminState>, reload_interval: Duration) -> Self {
        let runtime = RuntimeApi::new(launch.sockets.admin());
        Self {
            launch,
            runtime,
            admin,
            reload_interval,
            haproxy: None,
            written: None,
            live: None,
            pending: None,
            last_reload: None,
            failed_reloads: 0,
            drain_deadline: None,
            next_drain_retry: None,
            next_start: None,
        }
    }

    /// How to bring HAProxy to `written`; `None` when HAProxy is not running (it will be
    /// started on the files).
    pub fn live_update(
        &self,
        backends: &plan::Backends,
        desired: &render::RenderedConfig,
    ) -> Option<LiveUpdate> {
        self.haproxy.as_ref()?;
        Some(match &self.live {
            Some(live) => plan::live_update(live, backends, desired),
            None => LiveUpdate {
                commands: Vec::new(),
                reload: BTreeSet::from([ReloadReason::RuntimeApiFailed]),
                next: LiveState::default(),
            },
        })
    }

    /// Brings HAProxy to the files just written: starts it, or applies `update` live and
    /// schedules the reload it still needs. Returns how the update was applied.
    pub async fn apply(&mut self, update: Option<LiveUpdate>, written: LiveState) -> &'static str {
        self.written = Some(written);
        let Some(update) = update else {
            self.ensure_running().await;
            return "start";
        };
        let mut reasons = update.reload;
        if !update.commands.is_empty() {
            let started = Instant::now();
            match self.runtime.apply(&update.commands).await {
                Ok(applied) => {
                    self.admin
                        .metrics
                        .runtime_commands
                        .inc_by(applied.transcript.len() as u64);
                    let mut next = update.next;
                    for server in &applied.deleted {
                        next.draining.remove(server);
                    }
                    self.live = Some(next);
                    tracing::info!(
                        commands = update.commands.len(),
                        exchanges = applied.transcript.len(),
                        elapsed_ms = started.elapsed().as_millis(),
                        "applied live"
                    );
                }
                Err(err) => {
                    self.admin.metrics.runtime_failures.inc();
                    tracing::warn!(error = %err, "live update failed; reloading instead");
                    self.live = None;
                    reasons.insert(ReloadReason::RuntimeApiFailed);
                }
            }
        } else if self.live.is_some() {
            self.live = Some(update.next);
        }
        if self.drain_expired() {
            reasons.insert(ReloadReason::DrainTimeout);
        }
        self.schedule(reasons)
    }

    /// Starts HAProxy on the files already in the state directory, when it is not
    /// running and `files_present`: the current objects cannot be served, and the last
    /// configuration that passed serves rather than nothing. What it runs is not the
    /// model's, so the next change that can be applied reloads.
    pub async fn start_on_last_good(&mut self, files_present: bool) {
        if self.haproxy.is_some() || !files_present {
            return;
        }
        tracing::warn!("starting haproxy on the last good configuration in the state directory");
        self.written = Some(LiveState::default());
        self.ensure_running().await;
        self.live = None;
    }

    /// The next time [`Driver::on_timer`] has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        let reload = self.pending.as_ref().map(|p| p.not_before);
        [reload, self.next_drain_retry, self.next_start]
            .into_iter()
            .flatten()
            .min()
    }

    /// Retries server deletions and runs the due reload.
    pub async fn on_timer(&mut self) {
        let now = Instant::now();
        if self.next_start.is_some_and(|at| at <= now) {
            self.next_start = None;
            self.ensure_running().await;
        }
        if self.next_drain_retry.is_some_and(|at| at <= now) {
            self.retry_drained().await;
        }
        if self.pending.as_ref().is_some_and(|p| p.not_before <= now) {
            self.reload().await;
        }
    }

    /// HAProxy's master exited: forget what it ran and start it again on the files.
    pub async fn restart_after_exit(&mut self) {
        self.haproxy = None;
        self.live = None;
        self.pending = None;
        self.admin.ready.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(1)).await;
        self.ensure_running().await;
    }

    /// The running HAProxy, to wait for its exit.
    pub fn haproxy_mut(&mut self) -> &mut Option<Haproxy> {
        &mut self.haproxy
    }

    /// Stops HAProxy gracefully.
    pub async fn stop(&mut self, grace: Duration) {
        if let Some(mut haproxy) = self.haproxy.take() {
            haproxy.stop(grace).await;
        }
    }

    fn schedule(&mut self, reasons: BTreeSet<ReloadReason>) -> &'static str {
        if reasons.is_empty() {
            // A later change may have undone what needed a reload.
            self.pending = None;
            self.publish_sync();
            return "runtime";
        }
        let earliest = self
            .last_reload
            .map_or_else(Instant::now, |at| at + self.reload_interval);
        let not_before = match &self.pending {
            Some(pending) => pending.not_before,
            None => earliest.max(Instant::now()),
        };
        tracing::info!(reasons = ?reasons, in_ms = not_before.saturating_duration_since(Instant::now()).as_millis(), "reload scheduled");
        self.pending = Some(PendingReload {
            reasons,
            not_before,
        });
        self.publish_sync();
        "reload"
    }

    async fn reload(&mut self) {
        let Some(pending) = self.pending.clone() else {
            return;
        };
        let Some(haproxy) = &mut self.haproxy else {
            return;
        };
        let reason = pending
            .reasons
            .first()
            .copied()
            .unwrap_or(ReloadReason::MainConfig);
        let metrics = &self.admin.metrics;
        match haproxy.reload().await {
            Ok(_) => {
                metrics
                    .reloads
                    .get_or_create(&vec![("reason", reason.as_str().to_owned())])
                    .inc();
                tracing::info!(%reason, all = ?pending.reasons, "haproxy reloaded");
                self.live = self.written.clone();
                self.pending = None;
                self.failed_reloads = 0;
                self.last_reload = Some(Instant::now());
                self.drain_deadline = None;
                self.next_drain_retry = None;
            }
            Err(err) => {
                metrics.reload_failures.inc();
                self.failed_reloads = self.failed_reloads.saturating_add(1);
                let backoff = self
                    .reload_interval
                    .max(Duration::from_millis(500))
                    .saturating_mul(1 << self.failed_reloads.min(6))
                    .min(MAX_RELOAD_BACKOFF);
                tracing::error!(error = %err, retry_in_ms = backoff.as_millis(), "haproxy reload failed; the previous configuration keeps serving");
                self.pending = Some(PendingReload {
                    not_before: Instant::now() + backoff,
                    ..pending
                });
            }
        }
        self.publish_sync();
    }

    async fn retry_drained(&mut self) {
        let Some(live) = &mut self.live else {
            self.next_drain_retry = None;
            return;
        };
        let servers: Vec<_> = live.draining.iter().cloned().collect();
        let mut reasons = self
            .pending
            .as_ref()
            .map(|p| p.reasons.clone())
            .unwrap_or_default();
        match self.runtime.delete_servers(&servers).await {
            Ok(applied) => {
                for server in &applied.deleted {
                    live.draining.remove(server);
                }
            }
            Err(err) => {
                tracing::warn!(error = %err, "cannot delete drained servers; reloading instead");
                self.live = None;
                reasons.insert(ReloadReason::RuntimeApiFailed);
            }
        }
        if self.drain_expired() {
            reasons.insert(ReloadReason::DrainTimeout);
        }
        if !reasons.is_empty() {
            self.schedule(reasons);
        }
    }

    /// Keeps the drain timer (servers left in maintenance are retried until they are gone)
    /// and says whether they outlasted one reload interval, so that a reload must remove
    /// them. The deadline stays until a reload succeeds.
    fn drain_expired(&mut self) -> bool {
        let draining = self.live.as_ref().is_some_and(|l| !l.draining.is_empty());
        if !draining {
            self.drain_deadline = None;
            self.next_drain_retry = None;
            return false;
        }
        let now = Instant::now();
        let deadline = *self
            .drain_deadline
            .get_or_insert(now + self.reload_interval.max(DRAIN_RETRY));
        let expired = deadline <= now;
        self.next_drain_retry = (!expired).then_some(now + DRAIN_RETRY);
        expired
    }

    async fn ensure_running(&mut self) {
        if self.haproxy.is_some() || self.written.is_none() {
            return;
        }
        match Haproxy::start(&self.launch).await {
            Ok(haproxy) => {
                tracing::info!(pid = haproxy.pid(), "haproxy started");
                self.admin.metrics.haproxy_starts.inc();
                self.haproxy = Some(haproxy);
                self.live = self.written.clone();
                self.pending = None;
                self.admin.ready.store(true, Ordering::SeqCst);
            }
            Err(err) => {
                tracing::error!(error = %err, retry_in_s = START_RETRY.as_secs(), "cannot start haproxy");
                self.next_start = Some(Instant::now() + START_RETRY);
            }
        }
        self.publish_sync();
    }

    fn publish_sync(&self) {
        let status = match (&self.haproxy, &self.pending) {
            (None, _) => Some("haproxy is not running".to_owned()),
            (Some(_), Some(pending)) if self.failed_reloads > 0 => Some(format!(
                "reload failing ({} attempts) for {:?}",
                self.failed_reloads, pending.reasons
            )),
            (Some(_), Some(pending)) => Some(format!("reload due for {:?}", pending.reasons)),
            (Some(_), None) => None,
        };
        self.admin.metrics.in_sync.set(i64::from(status.is_none()));
        self.admin
            .metrics
            .failing_reloads
            .set(i64::from(self.failed_reloads));
        if let Ok(mut out_of_sync) = self.admin.out_of_sync.lock() {
            *out_of_sync = status;
        }
    }
}
