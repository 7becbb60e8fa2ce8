//! Other writers and a faulty API server on the simulated StatefulSet controller, guarded: two steppers
//! racing and one killed never double-step, API errors and conflicts on every call delay but never harm,
//! a GitOps re-apply of partition 0 mid-rollout is restored by the policy.

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load, play};
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{self, Action, Event};

#[test]
fn two_steppers_racing_and_a_killed_stepper_never_double_step() {
    let run = play(&load("racing-steppers"), false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.steps, 4);
    assert!(run.summary.conflicts >= 1, "the loser's test op failed");
    assert!(
        run.frames
            .iter()
            .flat_map(|f| f.notes.iter())
            .any(|n| n.starts_with("killed:") && n.contains("Stepped"))
    );
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
}

#[test]
fn api_errors_and_conflicts_on_every_call_delay_but_never_harm() {
    let mut s = load("healthy-5");
    for (call, kind) in [
        (Call::Any, FaultKind::Error),
        (Call::Patch, FaultKind::Conflict),
    ] {
        s.events.push(Event {
            at: 1,
            action: Action::ApiFault {
                call,
                kind,
                seconds: 300,
                probability: 0.3,
            },
        });
    }
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(
        run.summary.api_errors > 0 && run.summary.conflicts > 0,
        "{:?}",
        run.summary
    );
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
}

#[test]
fn a_gitops_reapply_of_partition_0_mid_rollout_is_restored_by_the_policy() {
    let mut s = load("healthy-5");
    s.events.push(Event {
        at: 17,
        action: Action::Apply(scenario::ApplySpec {
            image: Some("v2".into()),
            partition: Some(0),
            ..Default::default()
        }),
    });
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    let restored = run
        .world
        .admissions
        .iter()
        .any(|(t, _, row)| *t == 17 && format!("{row:?}") == "PartitionRestored");
    assert!(restored, "{:?}", run.world.admissions);
    assert_eq!(run.summary.max_down, 1);
}
