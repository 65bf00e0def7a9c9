//! Keeps the running HAProxy in step with the written files: live updates over the runtime
//! API, coalesced and rate-limited reloads (retried until they succeed), deferred deletion
//! of servers that still had connections, and restarts.
//!
//! The rules are a pure state machine (`state.rs`: what each state holds; `transition.rs`:
//! what each event does); the [`Driver`] is its shell: it feeds events in, performs the one
//! action each transition asks for, feeds the outcome back, and publishes the state to the
//! admin endpoints.

mod state;
mod transition;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use haproxy::{Haproxy, LaunchOptions, RuntimeApi};
use plan::{LiveState, LiveUpdate, ReloadReason, ServerRef};
use tokio::time::Instant;

use crate::admin::AdminState;
use crate::metrics::UpdateMode;
use state::State;
use transition::{Action, Event, START_RETRY, transition};

/// The HAProxy process and what it runs.
#[derive(Debug)]
pub struct Driver {
    launch: LaunchOptions,
    runtime: RuntimeApi,
    admin: Arc<AdminState>,
    reload_interval: Duration,
    state: State,
    /// The process; `Some` exactly while the state says HAProxy runs.
    haproxy: Option<Haproxy>,
    /// When a replaced worker's sessions are closed (`close-sessions-duration`).
    session_closing: Option<SessionClosing>,
    /// An HAProxy an earlier portcullis left running, until a start tells it to stop.
    left_behind: Option<u32>,
    /// HAProxies replaced while they ran, finishing their connections.
    retiring: Vec<Haproxy>,
}

/// When the sessions of a worker replaced by a reload are closed: one by one over
/// `window`, which ends when the worker's `hard-stop-after` (`timeout_stop`) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionClosing {
    /// The worker's `hard-stop-after`.
    pub timeout_stop: Duration,
    /// The last part of it over which the sessions are closed.
    pub window: Duration,
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
            state: State::Unstarted,
            haproxy: None,
            session_closing: None,
            left_behind: None,
            retiring: Vec::new(),
        }
    }

    /// How the sessions of workers replaced from now on are closed.
    pub fn set_session_closing(&mut self, closing: Option<SessionClosing>) {
        self.session_closing = closing;
    }

    /// How to bring HAProxy to the desired backends and files; `None` when HAProxy is not
    /// running (it will be started on the files).
    pub fn live_update(
        &self,
        backends: &plan::Backends,
        desired: &render::RenderedConfig,
    ) -> Option<LiveUpdate> {
        self.state.live_update(backends, desired)
    }

    /// Brings HAProxy to the files just written: starts it, or applies `update` live and
    /// schedules the reload it still needs. Returns how the update was applied.
    pub async fn apply(&mut self, update: Option<LiveUpdate>, written: LiveState) -> UpdateMode {
        let was_running = self.is_running();
        self.handle(Event::Written {
            files: written,
            update,
        })
        .await;
        match (was_running, &self.state) {
            (false, _) => UpdateMode::Start,
            (true, State::ReloadDue { .. }) => UpdateMode::Reload,
            (true, _) => UpdateMode::Runtime,
        }
    }

    /// Starts HAProxy on the files already in the state directory, when it is not
    /// running and `files_present`: the current objects cannot be served, and the last
    /// configuration that passed serves rather than nothing. What it runs is not the
    /// model's, so the next change that can be applied reloads.
    pub async fn start_on_last_good(&mut self, files_present: bool) {
        if self.state.running().is_some() || !files_present {
            return;
        }
        tracing::warn!("starting haproxy on the last good configuration in the state directory");
        self.handle(Event::ServeLastGood).await;
    }

    /// Whether HAProxy serves the files last written (see [`State::serves_written`]).
    pub fn serves_written(&self) -> bool {
        self.state.serves_written()
    }

    /// Whether HAProxy runs.
    pub fn is_running(&self) -> bool {
        self.state.running().is_some()
    }

    /// The files HAProxy failed to start on were taken away: it is not started again
    /// until new files are written.
    pub async fn withdraw(&mut self) {
        self.handle(Event::Withdrawn).await;
    }

    /// The next time [`Driver::on_timer`] has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.state.next_deadline()
    }

    /// Starts HAProxy again, retries server deletions or runs the due reload.
    pub async fn on_timer(&mut self) {
        self.handle(Event::Timer).await;
    }

    /// HAProxy's master exited: forget what it ran; it is started again on the files
    /// after a short delay (see [`Driver::next_deadline`]).
    pub async fn restart_after_exit(&mut self) {
        self.haproxy = None;
        self.handle(Event::Exited).await;
    }

    /// The running HAProxy, to wait for its exit.
    pub fn haproxy_mut(&mut self) -> &mut Option<Haproxy> {
        &mut self.haproxy
    }

    /// Stops HAProxy gracefully, and the ones replaced that still finish their
    /// connections.
    pub async fn stop(&mut self, grace: Duration) {
        // One left behind that no start replaced would otherwise outlive this process,
        // its socket gone, serving what it ran.
        if let Some(pid) = self.left_behind.take() {
            haproxy::finish_and_stop(pid);
        }
        let stopping: Vec<_> = self
            .haproxy
            .take()
            .into_iter()
            .chain(self.retiring.drain(..))
            .map(|mut haproxy| tokio::spawn(async move { haproxy.stop(grace).await }))
            .collect();
        for stopped in stopping {
            let _ = stopped.await;
        }
    }

    /// Runs `event` through the machine, and each action's outcome after it.
    async fn handle(&mut self, event: Event) {
        let scheduled_before = self.scheduled_reload();
        let mut next = Some(event);
        while let Some(event) = next.take() {
            let (state, action) = transition(
                std::mem::take(&mut self.state),
                event,
                Instant::now(),
                self.reload_interval,
            );
            self.state = state;
            if let Some(action) = action {
                next = Some(self.perform(action).await);
            }
        }
        if let Some(reload) = self.state.pending_reload()
            && self.scheduled_reload() != scheduled_before
        {
            tracing::info!(
                reasons = ?reload.reasons,
                in_ms = reload.not_before.saturating_duration_since(Instant::now()).as_millis(),
                failed_attempts = reload.failed_attempts,
                "reload scheduled"
            );
        }
        self.publish();
    }

    fn scheduled_reload(&self) -> Option<(BTreeSet<ReloadReason>, Instant)> {
        self.state
            .pending_reload()
            .map(|reload| (reload.reasons.clone(), reload.not_before))
    }

    /// Does what `action` says; returns its outcome.
    async fn perform(&mut self, action: Action) -> Event {
        match action {
            Action::Start => self.start().await,
            Action::ApplyLive(update) => self.apply_live(update).await,
            Action::Reload(reasons) => self.reload(&reasons).await,
            Action::DeleteDrained(servers) => self.delete_drained(&servers).await,
        }
    }

    async fn start(&mut self) -> Event {
        match Haproxy::start_after(&self.launch, &mut self.left_behind).await {
            Ok(haproxy) => {
                tracing::info!(pid = haproxy.pid(), "haproxy started");
                self.admin.metrics.haproxy_starts.inc();
                self.haproxy = Some(haproxy);
                Event::Started
            }
            Err(err) => {
                tracing::error!(error = %err, retry_in_s = START_RETRY.as_secs(), "cannot start haproxy");
                Event::StartFailed
            }
        }
    }

    async fn apply_live(&mut self, update: LiveUpdate) -> Event {
        let started = Instant::now();
        match self.runtime.apply(&update.commands).await {
            Ok(applied) => {
                self.admin
                    .metrics
                    .runtime_commands
                    .inc_by(applied.transcript.len() as u64);
                tracing::info!(
                    commands = update.commands.len(),
                    exchanges = applied.transcript.len(),
                    elapsed_ms = started.elapsed().as_millis(),
                    "applied live"
                );
                Event::LiveApplied {
                    update,
                    deleted: applied.deleted,
                }
            }
            Err(err) => {
                self.admin.metrics.runtime_failures.inc();
                tracing::warn!(error = %err, "live update failed; reloading instead");
                Event::LiveFailed { update }
            }
        }
    }

    async fn reload(&mut self, reasons: &BTreeSet<ReloadReason>) -> Event {
        let Some(haproxy) = &mut self.haproxy else {
            // The machine believed HAProxy ran: tell it the truth.
            return Event::Exited;
        };
        let reason = reasons.first().copied().unwrap_or(ReloadReason::MainConfig);
        // The runtime API's socket removed (by hand, or by a temporary-file cleaner): a
        // reload hands the listening socket over without making the file again, so every
        // change would reload from then on. A new HAProxy takes the old one's place, as
        // it does when the master's socket is gone and no reload can reach it.
        let runtime_api_gone = !self.launch.sockets.admin().exists();
        let outcome = match haproxy.reload().await {
            Ok(_) if runtime_api_gone => {
                tracing::warn!(
                    "haproxy's runtime API socket is gone; starting a new haproxy to take its place"
                );
                self.replace_haproxy().await.map(|()| "haproxy replaced")
            }
            Err(haproxy::HaproxyError::MasterCli(err)) if unreachable(&err) => {
                tracing::warn!(error = %err, "haproxy's master CLI cannot be reached; starting a new haproxy to take its place");
                self.replace_haproxy().await.map(|()| "haproxy replaced")
            }
            Ok(reloaded) => {
                let master = haproxy.master_cli();
                self.close_replaced_sessions(master, &reloaded.replaced);
                Ok("haproxy reloaded")
            }
            Err(err) => Err(err),
        };
        let metrics = &self.admin.metrics;
        match outcome {
            Ok(what) => {
                metrics
                    .reloads
                    .get_or_create(&vec![("reason", reason.as_str().to_owned())])
                    .inc();
                tracing::info!(%reason, all = ?reasons, "{what}");
                Event::Reloaded
            }
            Err(err) => {
                metrics.reload_failures.inc();
                tracing::error!(error = %err, "haproxy reload failed; the previous configuration keeps serving");
                Event::ReloadFailed
            }
        }
    }

    /// Starts a new HAProxy in the running one's place; the old one finishes its
    /// connections and is stopped with the controller if it has not exited by then.
    async fn replace_haproxy(&mut self) -> Result<(), haproxy::HaproxyError> {
        let Some(haproxy) = &mut self.haproxy else {
            return Ok(());
        };
        let replaced = haproxy.replace(&self.launch).await?;
        self.admin.metrics.haproxy_starts.inc();
        self.retiring.retain_mut(|old| !old.has_exited());
        self.retiring.push(replaced);
        Ok(())
    }

    /// Schedules the closing of the sessions of the workers a reload just replaced.
    fn close_replaced_sessions(&self, master: haproxy::MasterCli, replaced: &[u32]) {
        let Some(closing) = self.session_closing else {
            return;
        };
        for &pid in replaced {
            let wait = closing.timeout_stop.saturating_sub(closing.window);
            tracing::info!(
                pid,
                wait_ms = wait.as_millis(),
                window_ms = closing.window.as_millis(),
                "the replaced worker's sessions will be closed one by one"
            );
            tokio::spawn(haproxy::close_sessions_gradually(
                master.clone(),
                pid,
                wait,
                closing.window,
            ));
        }
    }

    async fn delete_drained(&mut self, servers: &[ServerRef]) -> Event {
        match self.runtime.delete_servers(servers).await {
            Ok(applied) => Event::DrainDeleted {
                deleted: applied.deleted,
            },
            Err(err) => {
                tracing::warn!(error = %err, "cannot delete drained servers; reloading instead");
                Event::DrainFailed
            }
        }
    }

    /// Shows the state at `/readyz`, `/syncz` and in the metrics.
    fn publish(&self) {
        let status = self.state.out_of_sync();
        let metrics = &self.admin.metrics;
        metrics.in_sync.set(i64::from(status.is_none()));
        metrics
            .failing_reloads
            .set(i64::from(self.state.failed_reloads()));
        self.admin
            .ready
            .store(self.state.running().is_some(), Ordering::SeqCst);
        if let Ok(mut out_of_sync) = self.admin.out_of_sync.lock() {
            *out_of_sync = status;
        }
    }
}

/// Whether a master CLI error means its socket is gone for good, rather than busy.
fn unreachable(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
    )
}
