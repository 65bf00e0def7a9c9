//! The driver's rules: one pure function from a state and an event to the next state and
//! the one piece of I/O to do next, whose outcome comes back as the next event.

use std::collections::BTreeSet;
use std::time::Duration;

use plan::{LiveState, LiveUpdate, ReloadReason, ServerRef};
use tokio::time::Instant;

use super::state::{Drain, Files, Live, PendingReload, Running, State};

/// How long to wait before trying again to start HAProxy after a failure.
pub const START_RETRY: Duration = Duration::from_secs(5);
/// How long to wait after HAProxy exited before starting it again, so that a HAProxy that
/// dies at once is not started in a busy loop.
pub const RESTART_DELAY: Duration = Duration::from_secs(1);
/// How soon servers left in maintenance with requests in flight are tried again; each
/// retry waits twice as long as the one before, up to [`DRAIN_RETRY_MAX`].
pub const DRAIN_RETRY: Duration = Duration::from_millis(500);
/// The longest wait between two deletions of servers still draining.
pub const DRAIN_RETRY_MAX: Duration = Duration::from_secs(8);
/// How long removed servers may keep their requests in flight before a reload takes them
/// out of what HAProxy runs. A reload does not end those requests either (the old worker
/// keeps them), so this only bounds how long HAProxy's servers differ from the files: a
/// server in maintenance takes no new request.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(300);
/// Longest wait between two attempts of a failing reload.
pub const MAX_RELOAD_BACKOFF: Duration = Duration::from_secs(30);
/// The base of a failing reload's backoff when the reload interval is shorter, so that a
/// failing reload does not retry in a busy loop.
const MIN_RELOAD_BACKOFF_BASE: Duration = Duration::from_millis(500);

/// What happened: files were written, an action finished, time passed, HAProxy exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// New files are in the state directory. `update` brings the running HAProxy to them;
    /// `None` when it was planned while HAProxy was not running.
    Written {
        files: LiveState,
        update: Option<LiveUpdate>,
    },
    /// The current objects' configuration is refused: if HAProxy does not run, it should
    /// serve the last good files left in the state directory rather than nothing.
    ServeLastGood,
    /// [`Action::Start`] succeeded.
    Started,
    /// [`Action::Start`] failed.
    StartFailed,
    /// The files HAProxy failed to start on were taken away (they were written before any
    /// check, and HAProxy refused them): there is nothing to start on until new ones come.
    Withdrawn,
    /// Every command of [`Action::ApplyLive`] went through; `deleted` are servers removed
    /// for good (the others removed are still draining).
    LiveApplied {
        update: LiveUpdate,
        deleted: Vec<ServerRef>,
    },
    /// A command of [`Action::ApplyLive`] failed: what HAProxy runs is unknown.
    LiveFailed { update: LiveUpdate },
    /// [`Action::Reload`] succeeded.
    Reloaded,
    /// [`Action::Reload`] failed; the previous configuration keeps serving.
    ReloadFailed,
    /// [`Action::DeleteDrained`] went through; `deleted` are gone, the others still have
    /// connections.
    DrainDeleted { deleted: Vec<ServerRef> },
    /// [`Action::DeleteDrained`] failed: what HAProxy runs is unknown.
    DrainFailed,
    /// [`State::next_deadline`] passed.
    Timer,
    /// HAProxy's master process exited.
    Exited,
}

/// I/O for the driver's shell to do; its outcome is the next [`Event`]. Waiting ("retry
/// later") is not an action: it is a deadline of the state ([`State::next_deadline`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start HAProxy on the files; then [`Event::Started`] or [`Event::StartFailed`].
    Start,
    /// Send the update's runtime commands; then [`Event::LiveApplied`] or
    /// [`Event::LiveFailed`], carrying the update back.
    ApplyLive(LiveUpdate),
    /// Reload HAProxy, for these reasons; then [`Event::Reloaded`] or
    /// [`Event::ReloadFailed`].
    Reload(BTreeSet<ReloadReason>),
    /// Try again to delete these draining servers; then [`Event::DrainDeleted`] or
    /// [`Event::DrainFailed`].
    DeleteDrained(Vec<ServerRef>),
}

/// The next state, and the I/O to do next if any.
pub type Step = (State, Option<Action>);

/// The driver's rules. `now` is when `event` happened; reloads are at least
/// `reload_interval` apart. A pair that cannot happen (an outcome of an action that was
/// not asked for) leaves the state as it is.
pub fn transition(state: State, event: Event, now: Instant, reload_interval: Duration) -> Step {
    let rules = Rules {
        now,
        reload_interval,
    };
    match state {
        State::Running(running) => rules.running(running, None, event),
        State::ReloadDue { running, reload } => rules.running(running, Some(reload), event),
        stopped => rules.stopped(stopped, event),
    }
}

/// How long a reload that failed `failed_attempts` times waits before the next attempt:
/// twice the reload interval, doubling with each failure, at most [`MAX_RELOAD_BACKOFF`].
pub fn reload_backoff(reload_interval: Duration, failed_attempts: u32) -> Duration {
    reload_interval
        .max(MIN_RELOAD_BACKOFF_BASE)
        .saturating_mul(1 << failed_attempts.min(6))
        .min(MAX_RELOAD_BACKOFF)
}

#[derive(Debug, Clone, Copy)]
struct Rules {
    now: Instant,
    reload_interval: Duration,
}

impl Rules {
    /// HAProxy does not run: new files or the last good ones start it, and so does the
    /// restart deadline.
    fn stopped(self, state: State, event: Event) -> Step {
        match (state, event) {
            (_, Event::Written { files, .. }) => Self::start(Files::Rendered(files)),
            (_, Event::ServeLastGood) => Self::start(Files::LastGood),
            (State::Starting { files }, Event::Started) => {
                (State::Running(Running::started(files)), None)
            }
            (State::Starting { files }, Event::StartFailed) => (
                State::Down {
                    files,
                    restart_at: self.now + START_RETRY,
                },
                None,
            ),
            (State::Down { files, restart_at }, Event::Timer) if restart_at <= self.now => {
                Self::start(files)
            }
            (State::Down { .. }, Event::Withdrawn) => (State::Unstarted, None),
            (state, _) => (state, None),
        }
    }

    fn start(files: Files) -> Step {
        (State::Starting { files }, Some(Action::Start))
    }

    /// HAProxy runs; `pending` is the reload due, if any.
    fn running(self, mut running: Running, pending: Option<PendingReload>, event: Event) -> Step {
        match event {
            Event::Written { files, update } => {
                running.files = Files::Rendered(files);
                match update {
                    Some(update) if !update.commands.is_empty() => (
                        with_reload(running, pending),
                        Some(Action::ApplyLive(update)),
                    ),
                    Some(update) => {
                        // Nothing to send: HAProxy runs the update's result already, if
                        // what it ran was known.
                        running.live = match running.live {
                            Live::Known { drain, .. } => Live::Known {
                                state: update.next,
                                drain,
                            },
                            Live::Unknown => Live::Unknown,
                        };
                        (self.settle(running, pending, update.reload), None)
                    }
                    // Planned while HAProxy was down, for a HAProxy that runs now: what it
                    // runs is not what the plan started from.
                    None => {
                        running.live = Live::Unknown;
                        let reasons = BTreeSet::from([ReloadReason::RuntimeApiFailed]);
                        (self.settle(running, pending, reasons), None)
                    }
                }
            }
            Event::LiveApplied { update, deleted } => {
                let drain = match running.live {
                    Live::Known { drain, .. } => drain,
                    Live::Unknown => None,
                };
                let mut state = update.next;
                for server in &deleted {
                    state.draining.remove(server);
                }
                running.live = Live::Known { state, drain };
                (self.settle(running, pending, update.reload), None)
            }
            Event::LiveFailed { update } => {
                running.live = Live::Unknown;
                let mut reasons = update.reload;
                reasons.insert(ReloadReason::RuntimeApiFailed);
                (self.settle(running, pending, reasons), None)
            }
            Event::Timer => self.on_timer(running, pending),
            Event::DrainDeleted { deleted } => {
                if let Live::Known { state, .. } = &mut running.live {
                    for server in &deleted {
                        state.draining.remove(server);
                    }
                }
                let reasons = pending
                    .as_ref()
                    .map(|p| p.reasons.clone())
                    .unwrap_or_default();
                self.reload_if_due(self.settle(running, pending, reasons))
            }
            Event::DrainFailed => {
                running.live = Live::Unknown;
                let mut reasons = pending
                    .as_ref()
                    .map(|p| p.reasons.clone())
                    .unwrap_or_default();
                reasons.insert(ReloadReason::RuntimeApiFailed);
                self.reload_if_due(self.settle(running, pending, reasons))
            }
            Event::Reloaded if pending.is_some() => {
                let reloaded = Running {
                    live: running.files.loaded(),
                    files: running.files,
                    last_reload: Some(self.now),
                };
                (State::Running(reloaded), None)
            }
            Event::ReloadFailed => {
                let pending = pending.map(|reload| {
                    let failed_attempts = reload.failed_attempts.saturating_add(1);
                    PendingReload {
                        not_before: self.now
                            + reload_backoff(self.reload_interval, failed_attempts),
                        failed_attempts,
                        ..reload
                    }
                });
                (with_reload(running, pending), None)
            }
            // The due reload is forgotten: the restart loads the files.
            Event::Exited => (
                State::Down {
                    files: running.files,
                    restart_at: self.now + RESTART_DELAY,
                },
                None,
            ),
            Event::Reloaded
            | Event::ServeLastGood
            | Event::Started
            | Event::StartFailed
            | Event::Withdrawn => (with_reload(running, pending), None),
        }
    }

    /// Draining servers are tried first: their outcome may add to the reload's reasons.
    /// The retry is then off the timer until its outcome schedules the next one.
    fn on_timer(self, mut running: Running, pending: Option<PendingReload>) -> Step {
        let draining = match &mut running.live {
            Live::Known {
                state,
                drain: Some(drain),
            } if drain.retry_at.is_some_and(|at| at <= self.now) => {
                drain.retry_at = None;
                drain.retries = drain.retries.saturating_add(1);
                Some(state.draining.iter().cloned().collect())
            }
            _ => None,
        };
        if let Some(servers) = draining {
            return (
                with_reload(running, pending),
                Some(Action::DeleteDrained(servers)),
            );
        }
        self.reload_if_due(with_reload(running, pending))
    }

    /// Asks for the reload if one is due by now.
    fn reload_if_due(self, state: State) -> Step {
        match state {
            State::ReloadDue { running, reload } if reload.not_before <= self.now => {
                let reasons = reload.reasons.clone();
                (
                    State::ReloadDue { running, reload },
                    Some(Action::Reload(reasons)),
                )
            }
            state => (state, None),
        }
    }

    /// The state after a change of what HAProxy runs: the drain timer follows the draining
    /// servers (adding a reason once they outlast it), and a reload is due exactly when
    /// there is a reason for one. A reload already due keeps its time and failed
    /// attempts, so that a burst of changes shares one reload; a new one waits one
    /// reload interval after the last reload.
    fn settle(
        self,
        mut running: Running,
        pending: Option<PendingReload>,
        mut reasons: BTreeSet<ReloadReason>,
    ) -> State {
        if let Live::Known { state, drain } = &mut running.live {
            *drain = self.drain(state, drain.take(), &mut reasons);
        }
        if reasons.is_empty() {
            // A later change may have undone what needed a reload.
            return State::Running(running);
        }
        let reload = match pending {
            Some(pending) => PendingReload { reasons, ..pending },
            None => PendingReload {
                reasons,
                not_before: running
                    .last_reload
                    .map_or(self.now, |at| at + self.reload_interval)
                    .max(self.now),
                failed_attempts: 0,
            },
        };
        State::ReloadDue { running, reload }
    }

    /// The drain timer for `state`'s draining servers: a deadline [`DRAIN_DEADLINE`] away
    /// (one reload interval, if longer), retries backing off until then (a retry already
    /// scheduled keeps its time, so that a stream of changes cannot postpone it past the
    /// deadline), and [`ReloadReason::DrainTimeout`] once it passed.
    fn drain(
        self,
        state: &LiveState,
        drain: Option<Drain>,
        reasons: &mut BTreeSet<ReloadReason>,
    ) -> Option<Drain> {
        if state.draining.is_empty() {
            return None;
        }
        let deadline = drain.map_or(
            self.now + self.reload_interval.max(DRAIN_DEADLINE),
            |drain| drain.deadline,
        );
        let expired = deadline <= self.now;
        if expired {
            reasons.insert(ReloadReason::DrainTimeout);
        }
        // A retry already due stays due: the timer runs it next.
        let scheduled = drain.and_then(|drain| drain.retry_at);
        let retries = drain.map_or(0, |drain| drain.retries);
        let wait = DRAIN_RETRY
            .saturating_mul(1 << retries.saturating_sub(1).min(8))
            .min(DRAIN_RETRY_MAX);
        Some(Drain {
            deadline,
            retry_at: (!expired).then(|| scheduled.unwrap_or(self.now + wait)),
            retries,
        })
    }
}

fn with_reload(running: Running, pending: Option<PendingReload>) -> State {
    match pending {
        Some(reload) => State::ReloadDue { running, reload },
        None => State::Running(running),
    }
}
