//! Rollouts of the shipped scenarios on the simulated StatefulSet controller, guarded: one pod at a
//! time, a rollback in the middle, a scale-up with a template change, twelve replicas in numeric ordinal
//! order, `minReadySeconds` holding each step, a PDB that allows no disruption.

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load, play, restarted};

#[test]
fn a_healthy_rollout_of_5_completes_one_pod_at_a_time() {
    let s = load("healthy-5");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v2"));
    assert_eq!(run.summary.max_down, 1);
    assert_eq!(run.summary.steps, 5);
    assert_eq!(restarted(&run), vec![4, 3, 2, 1, 0]);
    // One pod at a time: never two pods on the way at once.
    assert!(run.frames.iter().all(|f| f.down <= 1));
}

#[test]
fn a_rollback_in_the_middle_rolls_the_updated_pods_back_one_at_a_time() {
    let run = play(&load("rollback"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v1"));
    assert_eq!(run.summary.max_down, 1);
    // v2 reached pods 4, 3, 2; the undo then replaced them from the top again.
    assert_eq!(restarted(&run), vec![4, 3, 2, 4, 3, 2]);
    assert_eq!(
        run.world.status_str("currentRevision"),
        run.world.status_str("updateRevision")
    );
}

#[test]
fn scale_up_with_a_template_change_starts_new_pods_staged_then_rolls_all() {
    let run = play(&load("scale-up-with-template"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v2"));
    assert_eq!(run.world.pods.len(), 5);
    assert_eq!(restarted(&run), vec![4, 3, 2, 1, 0]);
    assert_eq!(run.summary.max_down, 1);
}

#[test]
fn twelve_replicas_roll_in_numeric_ordinal_order() {
    let run = play(&load("twelve-replicas"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some());
    assert_eq!(restarted(&run), (0..12).rev().collect::<Vec<u32>>());
    let froms: Vec<i32> = run.steps.iter().map(|s| s.from).collect();
    assert_eq!(froms, (1..=12).rev().collect::<Vec<i32>>());
}

#[test]
fn min_ready_seconds_holds_each_step_until_the_pod_is_available() {
    let mut s = load("healthy-5");
    s.set.min_ready_seconds = 20;
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some());
    // Each later step waits for the replaced pod: terminate 2 + pending 2 + ready 5 + minReady 20.
    for w in run.steps.windows(2) {
        assert!(w[1].t - w[0].t >= 29, "{:?}", w);
    }
    assert!(
        run.frames
            .iter()
            .any(|f| f.pods.iter().any(|p| p.state == '~'))
    );
}

#[test]
fn a_pdb_that_allows_no_disruption_blocks_every_step() {
    let mut s = load("healthy-5");
    s.set.pdb_max_unavailable = Some(0);
    let run = play(&s, false);
    assert!(run.steps.is_empty(), "{:?}", run.steps);
    assert!(
        run.frames
            .iter()
            .flat_map(|f| f.notes.iter())
            .any(|n| n.contains("Blocked PdbBlocked"))
    );
    assert!(run.summary.rollout_completed.is_none());
    // Natively the controller ignores the PDB (StatefulSet updates do not go through eviction).
    let native = play(&s, true);
    assert!(native.summary.rollout_completed.is_some());
}
