//! The driver's states: each holds only what is meaningful while HAProxy is in it.

use std::collections::BTreeSet;

use plan::{LiveState, LiveUpdate, ReloadReason};
use tokio::time::Instant;

/// What the driver knows about HAProxy. Changed only by
/// [`transition`](super::transition::transition).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum State {
    /// Nothing was written yet: HAProxy has nothing to load.
    #[default]
    Unstarted,
    /// HAProxy is being started on `files`; the outcome is the next event.
    Starting { files: Files },
    /// HAProxy is not running (it exited or failed to start). It is started on `files` at
    /// `restart_at`, or at once when new files are written.
    Down { files: Files, restart_at: Instant },
    /// HAProxy runs and no reload is due.
    Running(Running),
    /// HAProxy runs, but something it cannot change live differs from the files: a reload
    /// is due.
    ReloadDue {
        running: Running,
        reload: PendingReload,
    },
}

/// What HAProxy loads from the state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Files {
    /// The files the current objects give, as HAProxy runs them once loaded.
    Rendered(LiveState),
    /// The last configuration that passed `haproxy -c`, left in the state directory while
    /// the current objects' one is refused: what it holds is not known.
    LastGood,
}

impl Files {
    /// What HAProxy runs right after loading these files.
    pub fn loaded(&self) -> Live {
        match self {
            Files::Rendered(state) => Live::Known {
                state: state.clone(),
                drain: None,
            },
            Files::LastGood => Live::Unknown,
        }
    }
}

/// A running HAProxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// What a reload loads.
    pub files: Files,
    /// What it runs now.
    pub live: Live,
    /// When it last reloaded: reloads are at least one reload interval apart.
    pub last_reload: Option<Instant>,
}

impl Running {
    /// A HAProxy just started on `files`.
    pub fn started(files: Files) -> Self {
        Self {
            live: files.loaded(),
            files,
            last_reload: None,
        }
    }

    /// When draining servers are to be tried again.
    pub fn drain_retry(&self) -> Option<Instant> {
        match &self.live {
            Live::Known {
                drain: Some(drain), ..
            } => drain.retry_at,
            _ => None,
        }
    }
}

/// What the running HAProxy runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Live {
    /// The files as loaded, changed live since. `drain` is set exactly while
    /// `state.draining` is not empty.
    Known {
        state: LiveState,
        drain: Option<Drain>,
    },
    /// A runtime command failed, or HAProxy loaded the last good files: only a reload of
    /// rendered files makes it known again.
    Unknown,
}

/// The timer of servers removed from the model but kept in maintenance by HAProxy because
/// they still had requests in flight (idle connections are closed when they are deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drain {
    /// When they must be gone; after it a reload removes them. Kept until they are gone
    /// or a reload succeeds, so that a stream of changes cannot postpone it.
    pub deadline: Instant,
    /// When to try deleting them again; `None` once the deadline passed.
    pub retry_at: Option<Instant>,
    /// Deletions tried so far: the retries back off, since a request still in flight
    /// after a few seconds is a long one (a download, a WebSocket).
    pub retries: u32,
}

/// A reload that is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReload {
    /// Why; never empty. Replaced by each change, since each recomputes them all.
    pub reasons: BTreeSet<ReloadReason>,
    /// Not before: reloads are rate-limited, and a failing one backs off.
    pub not_before: Instant,
    /// Attempts that failed so far.
    pub failed_attempts: u32,
}

impl State {
    /// The running HAProxy, if it runs.
    pub fn running(&self) -> Option<&Running> {
        match self {
            State::Running(running) | State::ReloadDue { running, .. } => Some(running),
            State::Unstarted | State::Starting { .. } | State::Down { .. } => None,
        }
    }

    /// The reload that is due, if one is.
    pub fn pending_reload(&self) -> Option<&PendingReload> {
        match self {
            State::ReloadDue { reload, .. } => Some(reload),
            _ => None,
        }
    }

    /// Whether HAProxy serves the files last written: it runs them (changed live where
    /// needed) and no reload they need is still due. A reload due only to remove servers
    /// that outlasted their drain leaves what is served as written.
    pub fn serves_written(&self) -> bool {
        let (running, reasons) = match self {
            State::Running(running) => (running, None),
            State::ReloadDue { running, reload } => (running, Some(&reload.reasons)),
            State::Unstarted | State::Starting { .. } | State::Down { .. } => return false,
        };
        matches!(running.live, Live::Known { .. })
            && reasons.is_none_or(|reasons| {
                reasons
                    .iter()
                    .all(|reason| *reason == ReloadReason::DrainTimeout)
            })
    }

    /// How to bring the running HAProxy to the desired backends and files; `None` when it
    /// does not run (it will be started on the files).
    pub fn live_update(
        &self,
        backends: &plan::Backends,
        desired: &render::RenderedConfig,
    ) -> Option<LiveUpdate> {
        Some(match &self.running()?.live {
            Live::Known { state, .. } => plan::live_update(state, backends, desired),
            Live::Unknown => LiveUpdate {
                commands: Vec::new(),
                reload: BTreeSet::from([ReloadReason::RuntimeApiFailed]),
                next: LiveState::default(),
            },
        })
    }

    /// The next time a [`Timer`](super::transition::Event::Timer) event has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        match self {
            State::Unstarted | State::Starting { .. } => None,
            State::Down { restart_at, .. } => Some(*restart_at),
            State::Running(running) => running.drain_retry(),
            State::ReloadDue { running, reload } => Some(
                running
                    .drain_retry()
                    .map_or(reload.not_before, |at| at.min(reload.not_before)),
            ),
        }
    }

    /// Why HAProxy does not run exactly the written files, if it does not.
    pub fn out_of_sync(&self) -> Option<String> {
        match self {
            State::Unstarted | State::Starting { .. } | State::Down { .. } => {
                Some("haproxy is not running".to_owned())
            }
            State::Running(_) => None,
            State::ReloadDue { reload, .. } if reload.failed_attempts > 0 => Some(format!(
                "reload failing ({} attempts) for {:?}",
                reload.failed_attempts, reload.reasons
            )),
            State::ReloadDue { reload, .. } => Some(format!("reload due for {:?}", reload.reasons)),
        }
    }

    /// Consecutive failed attempts of the due reload.
    pub fn failed_reloads(&self) -> u32 {
        self.pending_reload()
            .map_or(0, |reload| reload.failed_attempts)
    }
}
