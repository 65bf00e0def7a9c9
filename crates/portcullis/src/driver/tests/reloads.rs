//! Reloads: rate limit, coalescing, backoff, and what the state reports.

use super::*;

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
                    known_draining(draining(1, &["a"]), 2_500, Some(2_100), 0),
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
            known_draining(draining(2, &["a"]), 2_000, Some(600), 0),
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
fn the_written_files_are_served_once_loaded_and_no_reload_they_need_is_due() {
    let cases = [
        (State::Unstarted, false),
        (
            State::Starting {
                files: Files::Rendered(files(1)),
            },
            false,
        ),
        (
            State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_000),
            },
            false,
        ),
        (in_step(1), true),
        // The last good files, whatever they hold.
        (State::Running(Running::started(Files::LastGood)), false),
        (
            due(
                running(2, known(files(1)), None),
                &[BackendSections],
                1_000,
                0,
            ),
            false,
        ),
        (
            due(
                running(2, Live::Unknown, None),
                &[RuntimeApiFailed],
                1_000,
                0,
            ),
            false,
        ),
        // Only servers that outlasted their drain wait for the reload: the rest is served.
        (
            due(
                running(2, known_draining(draining(2, &["a"]), 2_000, None, 0), None),
                &[DrainTimeout],
                1_000,
                0,
            ),
            true,
        ),
        (
            due(
                running(2, known_draining(draining(2, &["a"]), 2_000, None, 0), None),
                &[DrainTimeout, MainConfig],
                1_000,
                0,
            ),
            false,
        ),
    ];
    for (state, served) in cases {
        assert_eq!(state.serves_written(), served, "{state:?}");
    }
}
