//! Stuck-pod recovery on the simulated StatefulSet controller (OrderedReady waits forever on a pod
//! that is not Ready on a superseded revision, kubernetes#67250): with recovery off the rollout waits,
//! as the real controller does; with it on the rollout completes; and recovery never takes a second
//! pod down. Random rollouts (replicas, when the bad image is applied, when it is rolled back, seed),
//! and `scenarios/stuck-rollout-recovered.yaml` as `simulate` plays it.
use std::path::PathBuf;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::scenario::{self, Run, Scenario};

fn load(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The stuck rollout with `replicas`, the bad image applied at `apply`, rolled back at `undo`.
fn stuck(replicas: i32, apply: i64, undo: i64, recover: bool) -> Scenario {
    let mut s = load("stuck-rollout-recovered");
    s.set.replicas = replicas;
    s.events[0].at = apply;
    s.events[1].at = undo;
    s.stepper.recover_stuck_pods = recover;
    // The wait for recover-after-seconds (300), then one pod at a time.
    s.duration = undo + 300 + 60 * i64::from(replicas) + 120;
    s
}

fn completed_on_v1(run: &Run) -> bool {
    let update = run.world.status_str("updateRevision");
    run.summary.rollout_completed.is_some()
        && run
            .world
            .pods
            .values()
            .all(|p| p.revision == update && p.running_and_ready())
}

fn check(replicas: i32, apply: i64, undo: i64, seed: u64) -> Result<(), TestCaseError> {
    let off = scenario::run(&stuck(replicas, apply, undo, false), false, seed)
        .map_err(TestCaseError::fail)?;
    prop_assert!(
        off.summary.rollout_completed.is_none(),
        "recovery off: the controller waits on the stuck pod: {:?}",
        off.summary
    );
    let on = scenario::run(&stuck(replicas, apply, undo, true), false, seed)
        .map_err(TestCaseError::fail)?;
    prop_assert!(
        completed_on_v1(&on),
        "recovery on completes: {:?}",
        on.summary
    );
    // The pod went not Ready after the apply: no recovery before recover-after-seconds (300).
    prop_assert!(
        on.summary
            .rollout_completed
            .is_some_and(|t| t >= apply + 300),
        "not before recover-after-seconds: {:?}",
        on.summary
    );
    prop_assert!(on.summary.max_down <= 1, "{:?}", on.summary);
    prop_assert!(on.frames.iter().all(|f| f.down <= 1), "a second pod down");
    prop_assert_eq!(on.summary.harmful_restarts, 0);
    prop_assert_eq!(on.summary.steps_while_gate_failed, 0);
    Ok(())
}

#[test]
fn recovery_off_waits_recovery_on_completes_never_two_pods_down() {
    let cases = std::env::var("SIM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (2i32..=6, 1i64..=20, 40i64..=200, any::<u64>());
    let result = runner.run(&strategy, |(replicas, apply, undo, seed)| {
        check(replicas, apply, undo, seed)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_scenario_file_shows_the_recovery_in_simulate() {
    let s = load("stuck-rollout-recovered");
    let run = scenario::run(&s, false, 1).expect("run");
    assert!(completed_on_v1(&run), "{:?}", run.summary);
    assert_eq!(run.summary.max_down, 1);
    let timeline = scenario::render(&run, &s);
    assert!(
        timeline.contains("stepper: recovery: demo/web: stuck pod web-2")
            && timeline.contains(": deleted"),
        "{timeline}"
    );
    let native = scenario::run(&s, true, 1).expect("run native");
    assert!(
        native.summary.rollout_completed.is_none(),
        "natively it stays stuck"
    );
}
