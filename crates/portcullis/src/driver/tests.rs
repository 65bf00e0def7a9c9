//! The driver's rules, stated as tables: a state and an event, then the next state and the
//! action.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use plan::{LiveState, LiveUpdate, ReloadReason, RuntimeCommand, ServerRef};
use render::RenderedFile;
use tokio::time::Instant;

use super::state::{Drain, Files, Live, PendingReload, Running, State};
use super::transition::{Action, Event, reload_backoff, transition};

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

fn known_draining(state: LiveState, deadline: u64, retry_at: Option<u64>) -> Live {
    Live::Known {
        state,
        drain: Some(Drain {
            deadline: at(deadline),
            retry_at: retry_at.map(at),
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

use ReloadReason::{BackendSections, DrainTimeout, MainConfig, RuntimeApiFailed};

#[test]
fn haproxy_is_started_on_the_first_files_and_again_after_a_failure() {
    check(vec![
        Rule {
            says: "the first files start HAProxy",
            given: State::Unstarted,
            event: written(1, None),
            at: 0,
            then: State::Starting {
                files: Files::Rendered(files(1)),
            },
            action: Some(Action::Start),
        },
        Rule {
            says: "a started HAProxy runs the files, and no reload is due",
            given: State::Starting {
                files: Files::Rendered(files(1)),
            },
            event: Event::Started,
            at: 0,
            then: in_step(1),
            action: None,
        },
        Rule {
            says: "a failed start is tried again five seconds later",
            given: State::Starting {
                files: Files::Rendered(files(1)),
            },
            event: Event::StartFailed,
            at: 100,
            then: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            action: None,
        },
        Rule {
            says: "before the retry time, the timer does nothing",
            given: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            event: Event::Timer,
            at: 5_099,
            then: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            action: None,
        },
        Rule {
            says: "at the retry time, HAProxy is started again",
            given: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            event: Event::Timer,
            at: 5_100,
            then: State::Starting {
                files: Files::Rendered(files(1)),
            },
            action: Some(Action::Start),
        },
        Rule {
            says: "new files start a HAProxy that is down at once, on the new files",
            given: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            event: written(2, None),
            at: 200,
            then: State::Starting {
                files: Files::Rendered(files(2)),
            },
            action: Some(Action::Start),
        },
        Rule {
            says: "with nothing written, the timer does nothing",
            given: State::Unstarted,
            event: Event::Timer,
            at: 0,
            then: State::Unstarted,
            action: None,
        },
    ]);
}

#[test]
fn the_last_good_files_serve_when_haproxy_does_not_run_and_are_reloaded_away() {
    let on_last_good = Running {
        files: Files::LastGood,
        live: Live::Unknown,
        last_reload: None,
    };
    check(vec![
        Rule {
            says: "a refused configuration starts HAProxy on the last good files",
            given: State::Unstarted,
            event: Event::ServeLastGood,
            at: 0,
            then: State::Starting {
                files: Files::LastGood,
            },
            action: Some(Action::Start),
        },
        Rule {
            says: "what HAProxy runs from the last good files is unknown, yet in sync",
            given: State::Starting {
                files: Files::LastGood,
            },
            event: Event::Started,
            at: 0,
            then: State::Running(on_last_good.clone()),
            action: None,
        },
        Rule {
            says: "a running HAProxy keeps what it runs",
            given: in_step(1),
            event: Event::ServeLastGood,
            at: 0,
            then: in_step(1),
            action: None,
        },
        Rule {
            says: "the next change can only be applied by a reload",
            given: State::Running(on_last_good),
            event: written(
                2,
                Some(update(vec![], &[RuntimeApiFailed], LiveState::default())),
            ),
            at: 100,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 100, 0),
            action: None,
        },
    ]);
}

#[test]
fn changes_go_live_and_a_failed_runtime_command_forces_a_reload() {
    let removal = update(remove("a"), &[], files(2));
    check(vec![
        Rule {
            says: "runtime commands are sent; HAProxy still runs the old state meanwhile",
            given: in_step(1),
            event: written(2, Some(removal.clone())),
            at: 0,
            then: State::Running(running(2, known(files(1)), None)),
            action: Some(Action::ApplyLive(removal.clone())),
        },
        Rule {
            says: "once they went through, HAProxy runs the update's result",
            given: State::Running(running(2, known(files(1)), None)),
            event: Event::LiveApplied {
                update: update(remove("a"), &[], draining(2, &["a"])),
                deleted: vec![server("a")],
            },
            at: 10,
            then: in_step(2),
            action: None,
        },
        Rule {
            says: "a failed command makes what HAProxy runs unknown, and a reload due",
            given: State::Running(running(2, known(files(1)), None)),
            event: Event::LiveFailed {
                update: removal.clone(),
            },
            at: 10,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 10, 0),
            action: None,
        },
        Rule {
            says: "the failure adds to the reasons the update already had",
            given: State::Running(running(2, known(files(1)), None)),
            event: Event::LiveFailed {
                update: update(remove("a"), &[MainConfig], files(2)),
            },
            at: 10,
            then: due(
                running(2, Live::Unknown, None),
                &[MainConfig, RuntimeApiFailed],
                10,
                0,
            ),
            action: None,
        },
        Rule {
            says: "with nothing to send, HAProxy runs the update's result at once",
            given: in_step(1),
            event: written(2, Some(update(vec![], &[], files(2)))),
            at: 0,
            then: in_step(2),
            action: None,
        },
        Rule {
            says: "while what HAProxy runs is unknown, it stays unknown until a reload",
            given: due(running(1, Live::Unknown, None), &[RuntimeApiFailed], 500, 0),
            event: written(
                2,
                Some(update(vec![], &[RuntimeApiFailed], LiveState::default())),
            ),
            at: 100,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 500, 0),
            action: None,
        },
        Rule {
            says: "an update planned while HAProxy was down cannot be trusted: reload",
            given: in_step(1),
            event: written(2, None),
            at: 0,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 0, 0),
            action: None,
        },
    ]);
}

#[test]
fn reloads_are_rate_limited_coalesced_and_backed_off() {
    check(vec![
        Rule {
            says: "a reload waits one interval after the last one",
            given: State::Running(running(1, known(files(1)), Some(0))),
            event: written(2, Some(update(vec![], &[BackendSections], files(2)))),
            at: 500,
            then: due(
                running(2, known(files(2)), Some(0)),
                &[BackendSections],
                2_000,
                0,
            ),
            action: None,
        },
        Rule {
            says: "long after the last reload, a reload is due at once",
            given: State::Running(running(1, known(files(1)), Some(0))),
            event: written(2, Some(update(vec![], &[BackendSections], files(2)))),
            at: 9_000,
            then: due(
                running(2, known(files(2)), Some(0)),
                &[BackendSections],
                9_000,
                0,
            ),
            action: None,
        },
        Rule {
            says: "changes while a reload is due share it: its time stays, its reasons are the latest",
            given: due(
                running(2, known(files(2)), Some(0)),
                &[BackendSections],
                2_000,
                0,
            ),
            event: written(3, Some(update(vec![], &[MainConfig], files(3)))),
            at: 1_000,
            then: due(
                running(3, known(files(3)), Some(0)),
                &[MainConfig],
                2_000,
                0,
            ),
            action: None,
        },
        Rule {
            says: "a change that undoes what needed a reload cancels it",
            given: due(
                running(2, known(files(2)), Some(0)),
                &[BackendSections],
                2_000,
                3,
            ),
            event: written(3, Some(update(vec![], &[], files(3)))),
            at: 1_000,
            then: State::Running(running(3, known(files(3)), Some(0))),
            action: None,
        },
        Rule {
            says: "before its time, the timer does not reload",
            given: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                2_000,
                0,
            ),
            event: Event::Timer,
            at: 1_999,
            then: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                2_000,
                0,
            ),
            action: None,
        },
        Rule {
            says: "at its time, the timer reloads",
            given: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig, DrainTimeout],
                2_000,
                0,
            ),
            event: Event::Timer,
            at: 2_000,
            then: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig, DrainTimeout],
                2_000,
                0,
            ),
            action: Some(Action::Reload(reasons(&[MainConfig, DrainTimeout]))),
        },
        Rule {
            says: "a reloaded HAProxy runs the files, and draining servers are gone",
            given: due(
                running(
                    2,
                    known_draining(draining(1, &["a"]), 2_500, Some(2_100)),
                    Some(0),
                ),
                &[MainConfig],
                2_000,
                0,
            ),
            event: Event::Reloaded,
            at: 2_050,
            then: State::Running(running(2, known(files(2)), Some(2_050))),
            action: None,
        },
        Rule {
            says: "a failed reload is tried again after twice the interval",
            given: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                2_000,
                0,
            ),
            event: Event::ReloadFailed,
            at: 2_100,
            then: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                6_100,
                1,
            ),
            action: None,
        },
        Rule {
            says: "each further failure doubles the wait",
            given: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                6_100,
                1,
            ),
            event: Event::ReloadFailed,
            at: 6_200,
            then: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                14_200,
                2,
            ),
            action: None,
        },
        Rule {
            says: "a change keeps the failing reload's attempts and time",
            given: due(
                running(2, known(files(1)), Some(0)),
                &[MainConfig],
                14_200,
                2,
            ),
            event: written(3, Some(update(vec![], &[MainConfig], files(1)))),
            at: 7_000,
            then: due(
                running(3, known(files(1)), Some(0)),
                &[MainConfig],
                14_200,
                2,
            ),
            action: None,
        },
        Rule {
            says: "a reload of the last good files leaves what HAProxy runs unknown",
            given: due(
                Running {
                    files: Files::LastGood,
                    live: Live::Unknown,
                    last_reload: None,
                },
                &[RuntimeApiFailed],
                0,
                0,
            ),
            event: Event::Reloaded,
            at: 10,
            then: State::Running(Running {
                files: Files::LastGood,
                live: Live::Unknown,
                last_reload: Some(at(10)),
            }),
            action: None,
        },
        Rule {
            says: "a reload outcome nobody asked for changes nothing",
            given: in_step(1),
            event: Event::Reloaded,
            at: 10,
            then: in_step(1),
            action: None,
        },
    ]);
}

#[test]
fn a_failing_reload_waits_twice_the_interval_doubling_up_to_thirty_seconds() {
    let waits = |interval: Duration| -> Vec<u64> {
        (1..=8)
            .map(|failed| reload_backoff(interval, failed).as_millis() as u64)
            .collect()
    };
    assert_eq!(
        waits(Duration::from_secs(2)),
        [4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000]
    );
    assert_eq!(
        waits(Duration::from_millis(200)),
        [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000],
        "a short interval backs off from half a second"
    );
}

#[test]
fn draining_servers_are_retried_until_gone_or_a_reload_removes_them() {
    let busy = || draining(2, &["a"]);
    check(vec![
        Rule {
            says: "a server left draining is retried every half second, for one interval",
            given: State::Running(running(2, known(files(1)), None)),
            event: Event::LiveApplied {
                update: update(remove("a"), &[], busy()),
                deleted: vec![],
            },
            at: 100,
            then: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            action: None,
        },
        Rule {
            says: "at the retry time, the timer deletes the draining servers",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            event: Event::Timer,
            at: 600,
            then: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            action: Some(Action::DeleteDrained(vec![server("a")])),
        },
        Rule {
            says: "once they are gone, nothing is left to do",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            event: Event::DrainDeleted {
                deleted: vec![server("a")],
            },
            at: 610,
            then: in_step(2),
            action: None,
        },
        Rule {
            says: "still busy before the deadline: retried again",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 610,
            then: State::Running(running(2, known_draining(busy(), 2_100, Some(1_110)), None)),
            action: None,
        },
        Rule {
            says: "still busy at the deadline: a reload removes them, at once when it may",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(2_100)), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 2_100,
            then: due(
                running(2, known_draining(busy(), 2_100, None), None),
                &[DrainTimeout],
                2_100,
                0,
            ),
            action: Some(Action::Reload(reasons(&[DrainTimeout]))),
        },
        Rule {
            says: "changes do not postpone the deadline",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(2_000)), None)),
            event: written(3, Some(update(vec![], &[], draining(3, &["a"])))),
            at: 2_100,
            then: due(
                running(3, known_draining(draining(3, &["a"]), 2_100, None), None),
                &[DrainTimeout],
                2_100,
                0,
            ),
            action: None,
        },
        Rule {
            says: "a failed deletion makes what HAProxy runs unknown, and reloads",
            given: State::Running(running(2, known_draining(busy(), 2_100, Some(600)), None)),
            event: Event::DrainFailed,
            at: 600,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 600, 0),
            action: Some(Action::Reload(reasons(&[RuntimeApiFailed]))),
        },
        Rule {
            says: "draining servers are tried before a reload due at the same time",
            given: due(
                running(2, known_draining(busy(), 2_100, Some(600)), None),
                &[MainConfig],
                600,
                0,
            ),
            event: Event::Timer,
            at: 600,
            then: due(
                running(2, known_draining(busy(), 2_100, Some(600)), None),
                &[MainConfig],
                600,
                0,
            ),
            action: Some(Action::DeleteDrained(vec![server("a")])),
        },
        Rule {
            says: "then the due reload runs, for its reasons",
            given: due(
                running(2, known_draining(busy(), 2_100, Some(600)), None),
                &[MainConfig],
                600,
                0,
            ),
            event: Event::DrainDeleted {
                deleted: vec![server("a")],
            },
            at: 610,
            then: due(running(2, known(files(2)), None), &[MainConfig], 600, 0),
            action: Some(Action::Reload(reasons(&[MainConfig]))),
        },
    ]);
}

#[test]
fn haproxy_that_exits_is_started_again_a_second_later_on_the_files() {
    check(vec![
        Rule {
            says: "an exit forgets what HAProxy ran and starts it again a second later",
            given: State::Running(running(
                2,
                known_draining(draining(2, &["a"]), 2_000, Some(600)),
                Some(0),
            )),
            event: Event::Exited,
            at: 300,
            then: State::Down {
                files: Files::Rendered(files(2)),
                restart_at: at(1_300),
            },
            action: None,
        },
        Rule {
            says: "the due reload is forgotten: the restart loads the files",
            given: due(running(2, known(files(1)), None), &[MainConfig], 2_000, 4),
            event: Event::Exited,
            at: 300,
            then: State::Down {
                files: Files::Rendered(files(2)),
                restart_at: at(1_300),
            },
            action: None,
        },
        Rule {
            says: "the restart loads the last good files if that is what ran",
            given: State::Running(Running {
                files: Files::LastGood,
                live: Live::Unknown,
                last_reload: None,
            }),
            event: Event::Exited,
            at: 0,
            then: State::Down {
                files: Files::LastGood,
                restart_at: at(1_000),
            },
            action: None,
        },
    ]);
}

#[test]
fn a_burst_of_changes_costs_one_reload() {
    let mut state = State::Running(running(1, known(files(1)), Some(0)));
    let mut actions = Vec::new();
    let changes = (2..=6).map(|version| {
        let reason = if version % 2 == 0 {
            MainConfig
        } else {
            BackendSections
        };
        written(version, Some(update(vec![], &[reason], files(version))))
    });
    let timeline = changes
        .zip([100, 400, 900, 1_500, 1_900])
        .chain([(Event::Timer, 2_000)])
        .chain([(Event::Reloaded, 2_100), (Event::Timer, 2_200)]);
    for (event, ms) in timeline {
        let (next, action) = transition(state, event, at(ms), INTERVAL);
        state = next;
        actions.extend(action);
    }
    assert_eq!(actions, [Action::Reload(reasons(&[MainConfig]))]);
    assert_eq!(
        state,
        State::Running(running(6, known(files(6)), Some(2_100)))
    );
}

#[test]
fn the_state_tells_what_is_due_and_whether_haproxy_is_in_sync() {
    let down = State::Down {
        files: Files::Rendered(files(1)),
        restart_at: at(5_000),
    };
    let draining_and_due = due(
        running(
            2,
            known_draining(draining(2, &["a"]), 2_000, Some(600)),
            None,
        ),
        &[MainConfig],
        1_000,
        0,
    );
    let failing = due(running(2, known(files(1)), None), &[MainConfig], 9_000, 2);
    let cases = [
        (State::Unstarted, None, Some("haproxy is not running")),
        (down, Some(at(5_000)), Some("haproxy is not running")),
        (in_step(1), None, None),
        (
            draining_and_due,
            Some(at(600)),
            Some("reload due for {MainConfig}"),
        ),
        (
            failing.clone(),
            Some(at(9_000)),
            Some("reload failing (2 attempts) for {MainConfig}"),
        ),
    ];
    for (state, deadline, out_of_sync) in cases {
        assert_eq!(state.next_deadline(), deadline, "{state:?}");
        assert_eq!(state.out_of_sync().as_deref(), out_of_sync, "{state:?}");
    }
    assert_eq!(failing.failed_reloads(), 2);
    assert_eq!(in_step(1).failed_reloads(), 0);
}

#[test]
fn a_live_update_is_planned_only_for_a_running_haproxy() {
    let desired = render::RenderedConfig::default();
    let backends = plan::Backends::default();
    assert_eq!(State::Unstarted.live_update(&backends, &desired), None);
    let unknown = State::Running(running(1, Live::Unknown, None));
    assert_eq!(
        unknown.live_update(&backends, &desired),
        Some(update(vec![], &[RuntimeApiFailed], LiveState::default())),
        "what HAProxy runs is unknown: only a reload brings it to the files"
    );
    let known = State::Running(running(1, known(LiveState::default()), None));
    assert_eq!(
        known.live_update(&backends, &desired),
        Some(plan::live_update(
            &LiveState::default(),
            &backends,
            &desired
        ))
    );
}
