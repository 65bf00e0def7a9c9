//! Starting HAProxy, serving the last good files, and exits.

use super::*;

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
            says: "files taken away after a failed start leave nothing to start on",
            given: State::Down {
                files: Files::Rendered(files(1)),
                restart_at: at(5_100),
            },
            event: Event::Withdrawn,
            at: 200,
            then: State::Unstarted,
            action: None,
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
fn haproxy_that_exits_is_started_again_a_second_later_on_the_files() {
    check(vec![
        Rule {
            says: "an exit forgets what HAProxy ran and starts it again a second later",
            given: State::Running(running(
                2,
                known_draining(draining(2, &["a"]), 2_000, Some(600), 0),
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
