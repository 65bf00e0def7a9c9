//! Live updates over the runtime API, and their failures.

use super::*;

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
