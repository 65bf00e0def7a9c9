//! Servers removed while they still had connections.

use super::*;

#[test]
fn draining_servers_are_retried_until_gone_or_a_reload_removes_them() {
    let busy = || draining(2, &["a"]);
    check(vec![
        Rule {
            says: "a server left draining is retried after half a second, until the drain deadline",
            given: State::Running(running(2, known(files(1)), None)),
            event: Event::LiveApplied {
                update: update(remove("a"), &[], busy()),
                deleted: vec![],
            },
            at: 100,
            then: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(600), 0),
                None,
            )),
            action: None,
        },
        Rule {
            says: "at the retry time, the timer deletes the draining servers",
            given: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(600), 0),
                None,
            )),
            event: Event::Timer,
            at: 600,
            then: State::Running(running(2, known_draining(busy(), 300_100, None, 1), None)),
            action: Some(Action::DeleteDrained(vec![server("a")])),
        },
        Rule {
            says: "once they are gone, nothing is left to do",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 0), None)),
            event: Event::DrainDeleted {
                deleted: vec![server("a")],
            },
            at: 610,
            then: in_step(2),
            action: None,
        },
        Rule {
            says: "still busy before the deadline: retried again",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 1), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 610,
            then: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(1_110), 1),
                None,
            )),
            action: None,
        },
        Rule {
            says: "each retry waits twice as long as the one before",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 3), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 5_000,
            then: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(7_000), 3),
                None,
            )),
            action: None,
        },
        Rule {
            says: "up to eight seconds",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 9), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 50_000,
            then: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(58_000), 9),
                None,
            )),
            action: None,
        },
        Rule {
            says: "still busy at the deadline: a reload removes them, at once when it may",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 0), None)),
            event: Event::DrainDeleted { deleted: vec![] },
            at: 300_100,
            then: due(
                running(2, known_draining(busy(), 300_100, None, 0), None),
                &[DrainTimeout],
                300_100,
                0,
            ),
            action: Some(Action::Reload(reasons(&[DrainTimeout]))),
        },
        Rule {
            says: "changes do not postpone the retry either",
            given: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(600), 0),
                None,
            )),
            event: written(3, Some(update(vec![], &[], draining(3, &["a"])))),
            at: 400,
            then: State::Running(running(
                3,
                known_draining(draining(3, &["a"]), 300_100, Some(600), 0),
                None,
            )),
            action: None,
        },
        Rule {
            says: "a change while a retry is due leaves it due, for the timer",
            given: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(600), 0),
                None,
            )),
            event: written(3, Some(update(vec![], &[], draining(3, &["a"])))),
            at: 700,
            then: State::Running(running(
                3,
                known_draining(draining(3, &["a"]), 300_100, Some(600), 0),
                None,
            )),
            action: None,
        },
        Rule {
            says: "changes do not postpone the deadline",
            given: State::Running(running(
                2,
                known_draining(busy(), 300_100, Some(2_000), 0),
                None,
            )),
            event: written(3, Some(update(vec![], &[], draining(3, &["a"])))),
            at: 300_100,
            then: due(
                running(
                    3,
                    known_draining(draining(3, &["a"]), 300_100, None, 0),
                    None,
                ),
                &[DrainTimeout],
                300_100,
                0,
            ),
            action: None,
        },
        Rule {
            says: "a failed deletion makes what HAProxy runs unknown, and reloads",
            given: State::Running(running(2, known_draining(busy(), 300_100, None, 0), None)),
            event: Event::DrainFailed,
            at: 600,
            then: due(running(2, Live::Unknown, None), &[RuntimeApiFailed], 600, 0),
            action: Some(Action::Reload(reasons(&[RuntimeApiFailed]))),
        },
        Rule {
            says: "draining servers are tried before a reload due at the same time",
            given: due(
                running(2, known_draining(busy(), 300_100, Some(600), 0), None),
                &[MainConfig],
                600,
                0,
            ),
            event: Event::Timer,
            at: 600,
            then: due(
                running(2, known_draining(busy(), 300_100, None, 1), None),
                &[MainConfig],
                600,
                0,
            ),
            action: Some(Action::DeleteDrained(vec![server("a")])),
        },
        Rule {
            says: "then the due reload runs, for its reasons",
            given: due(
                running(2, known_draining(busy(), 300_100, None, 0), None),
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
