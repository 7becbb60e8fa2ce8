//! An image that never starts, with `on-failure: rollback` and `progress-deadline-seconds: "15"` and no
//! other setting (issue 43; docs/rollback.md, "An image that never starts"):
//! `scenarios/rollback-bad-image.yaml` (`OrderedReady`, where the StatefulSet controller never replaces
//! the pod stuck on the bad revision, kubernetes#67250) and `rollback-bad-image-parallel.yaml`, played in
//! `once` and in `watch` (caches 0 and 2 s late). The set comes back to v1 with one pod down at most,
//! is never paused, and the stuck pod is returned by the stepper's DELETE without
//! `--recover-stuck-pods` and without waiting `recover-after-seconds`.

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load};
use sts_stepper::sim::scenario::{self, Run, Scenario, StepperMode};

fn played(s: &Scenario, mode: StepperMode, lag: i64) -> Run {
    let mut s = s.clone();
    s.stepper.mode = mode;
    s.stepper.watch_lag_seconds = lag;
    scenario::run(&s, false, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

#[test]
fn a_never_starting_image_comes_back_by_itself_in_both_modes() {
    for name in ["rollback-bad-image", "rollback-bad-image-parallel"] {
        let s = load(name);
        assert!(!s.stepper.recover_stuck_pods, "{name}: no recovery flag");
        for (mode, lag) in [
            (StepperMode::Once, 0),
            (StepperMode::Watch, 0),
            (StepperMode::Watch, 2),
        ] {
            let run = played(&s, mode, lag);
            assert_guarded_invariants(&run);
            assert!(all_on(&run, "v1"), "{name} {mode:?} lag {lag}: back on v1");
            let events: Vec<&str> = run.world.events.iter().map(|e| e.1.as_str()).collect();
            assert!(
                events.contains(&"RolledBack") && !events.contains(&"RolloutPaused"),
                "{name} {mode:?} lag {lag}: rolled back, never paused: {events:?}"
            );
            let rolled_back = (run.world.events.iter())
                .find(|e| e.1 == "RolledBack")
                .map(|e| e.0)
                .expect("RolledBack");
            let returned = (run.world.writes.iter())
                .find(|(_, w)| w.starts_with("DELETE pods demo/web-2"))
                .map(|(t, _)| *t)
                .unwrap_or_else(|| panic!("{name} {mode:?} lag {lag}: web-2 returned"));
            let interval = s.stepper.interval_seconds;
            assert!(
                returned <= rolled_back + interval + lag + 1,
                "{name} {mode:?} lag {lag}: returned at {returned}, rolled back at {rolled_back}"
            );
            assert!(
                run.summary.rollout_completed.is_some(),
                "{name} {mode:?} lag {lag}: complete"
            );
        }
    }
}
