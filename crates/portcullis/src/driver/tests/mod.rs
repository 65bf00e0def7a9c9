//! The driver's rules, stated as tables: a state and an event, then the next state and the
//! action. Times are milliseconds after a fixed origin; the reload interval is two seconds.

mod drain;
mod live;
mod reloads;
mod starts;

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use plan::{LiveState, LiveUpdate, ReloadReason, RuntimeCommand, ServerRef};
use render::RenderedFile;
use tokio::time::Instant;

use super::state::{Drain, Files, Live, PendingReload, Running, State};
use super::transition::{Action, Event, reload_backoff, transition};

use ReloadReason::{BackendSections, DrainTimeout, MainConfig, RuntimeApiFailed};

const INTERVAL: Duration = Duration::from_secs(2);

/// One rule: `given` and `event` at `at` ms lead to `then` and `action`.
struct Rule {
    says: &'static str,
    given: State,
    event: Event,
    at: u64,
    then: State,
    action: Option<Action>,
}

fn check(rules: Vec<Rule>) {
    for rule in rules {
        let step = transition(rule.given, rule.event, at(rule.at), INTERVAL);
        assert_eq!(step, (rule.then, rule.action), "{}", rule.says);
    }
}

/// A fixed origin, so that every table speaks in milliseconds after it.
fn at(ms: u64) -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now) + Duration::from_millis(ms)
}

/// Files of version `version`: distinct versions are distinct values.
fn files(version: u32) -> LiveState {
    LiveState {
        files: [(
            "haproxy.cfg".to_owned(),
            RenderedFile::new(format!("# version {version}\n"), false),
        )]
        .into(),
        ..LiveState::default()
    }
}

fn server(name: &str) -> ServerRef {
    ServerRef {
        backend: "default_svc_80".to_owned(),
        server: name.to_owned(),
    }
}

/// Files of `version` with `servers` still draining in HAProxy.
fn draining(version: u32, servers: &[&str]) -> LiveState {
    LiveState {
        draining: servers.iter().map(|name| server(name)).collect(),
        ..files(version)
    }
}

fn known(state: LiveState) -> Live {
    Live::Known { state, drain: None }
}

fn known_draining(state: LiveState, deadline: u64, retry_at: Option<u64>, retries: u32) -> Live {
    Live::Known {
        state,
        drain: Some(Drain {
            deadline: at(deadline),
            retry_at: retry_at.map(at),
            retries,
        }),
    }
}

/// HAProxy runs `live`, loaded from files of `version`, last reloaded at `last_reload`.
fn running(version: u32, live: Live, last_reload: Option<u64>) -> Running {
    Running {
        files: Files::Rendered(files(version)),
        live,
        last_reload: last_reload.map(at),
    }
}

/// HAProxy runs files of `version` exactly, never reloaded.
fn in_step(version: u32) -> State {
    State::Running(running(version, known(files(version)), None))
}

fn reasons(reasons: &[ReloadReason]) -> BTreeSet<ReloadReason> {
    reasons.iter().copied().collect()
}

fn due(running: Running, why: &[ReloadReason], not_before: u64, failed_attempts: u32) -> State {
    State::ReloadDue {
        running,
        reload: PendingReload {
            reasons: reasons(why),
            not_before: at(not_before),
            failed_attempts,
        },
    }
}

fn update(commands: Vec<RuntimeCommand>, reload: &[ReloadReason], next: LiveState) -> LiveUpdate {
    LiveUpdate {
        commands,
        reload: reasons(reload),
        next,
    }
}

fn remove(name: &str) -> Vec<RuntimeCommand> {
    vec![RuntimeCommand::RemoveServer(server(name))]
}

fn written(version: u32, update: Option<LiveUpdate>) -> Event {
    Event::Written {
        files: files(version),
        update,
    }
}
