//! The application-level gates on the simulated StatefulSet controller: the app-unhealthy signal, the
//! canary plan holding at each pause point until the resume and the bake time, a failing Prometheus
//! check holding the rollout while every pod is Ready, and an unhealthy owner condition.

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load, play};
use sts_stepper::sim::scenario::{Action, Event, Run};

#[test]
fn the_app_unhealthy_signal_is_modelled_and_counted() {
    let mut s = load("healthy-5");
    s.events.push(Event {
        at: 1,
        action: Action::AppUnhealthy(true),
    });
    let run = play(&s, false);
    assert!(run.world.app_unhealthy);
    // The current stepper has no gate on it yet (next issue): the summary counts such steps.
    assert_eq!(run.summary.steps_while_app_unhealthy, run.summary.steps);
}

/// The steps of a run as (second, from, to).
fn steps_at(run: &Run) -> Vec<(i64, i32, i32)> {
    run.steps.iter().map(|s| (s.t, s.from, s.to)).collect()
}

#[test]
fn the_canary_plan_holds_at_each_point_until_the_resume_and_the_bake_time() {
    let s = load("canary-pause-points");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(all_on(&run, "v2"), "{:?}", run.summary);
    // Pods at or above the partition after each step: 1 (point 1), held until the resume at t=60,
    // then 2, 3 (point 2: 60% of 5), held 30 s, then 4, 5.
    let steps = steps_at(&run);
    let released: Vec<i32> = steps.iter().map(|(_, _, to)| 5 - to).collect();
    assert_eq!(released, [1, 2, 3, 4, 5], "{steps:?}");
    assert!(
        steps[0].0 < 60 && steps[1].0 >= 60,
        "held at point 1: {steps:?}"
    );
    assert!(
        steps[3].0 >= steps[2].0 + 30,
        "baked 30 s at point 2: {steps:?}"
    );
    let said: Vec<(&str, &str)> = (run.world.events.iter())
        .filter(|(_, r, _)| r.starts_with("RolloutPaused") || r.starts_with("RolloutResumed"))
        .map(|(_, r, n)| (r.as_str(), n.split(':').next().unwrap_or("")))
        .collect();
    assert_eq!(
        said,
        [
            ("RolloutPaused", "pause point 1 of 2"),
            (
                "RolloutResumed",
                "resumed by a person; Prometheus and HTTP check counts cleared (was paused"
            ),
            ("RolloutPaused", "pause point 2 of 2"),
            ("RolloutResumed", "resumed by the stepper"),
        ]
    );
}

#[test]
fn a_failing_prometheus_check_holds_the_rollout_while_every_pod_is_ready() {
    let s = load("prometheus-gated");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert_eq!(
        run.summary.steps_while_app_unhealthy,
        0,
        "{:?}",
        steps_at(&run)
    );
    // Unhealthy during [60, 120): no step lands; after it, the check must pass twice, 10 s apart.
    assert!(
        run.steps.iter().all(|st| st.t < 60 || st.t >= 130),
        "a step inside the unhealthy window or before two passing checks: {:?}",
        steps_at(&run)
    );
    assert!(
        run.steps.iter().any(|st| st.t >= 130),
        "{:?}",
        steps_at(&run)
    );
    assert!(all_on(&run, "v2"), "the rollout resumes and completes");
    assert!(
        run.frames.iter().any(|f| f.t >= 60
            && f.t < 120
            && f.notes
                .iter()
                .any(|n| n.contains("PrometheusCheck") && n.contains("returned an empty result"))),
        "the timeline names the failing check"
    );
    // Every step waits for two passing checks at least 10 s apart after the pods are Ready.
    for w in run.steps.windows(2) {
        assert!(w[1].t - w[0].t >= 10, "steps too close: {w:?}");
    }
}

#[test]
fn an_unhealthy_owner_condition_holds_the_rollout_until_it_is_true_again() {
    let s = load("moco-owner-healthy");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.steps_while_app_unhealthy, 0);
    assert!(
        run.steps.iter().all(|st| st.t < 25 || st.t >= 85),
        "no step while Healthy is False: {:?}",
        steps_at(&run)
    );
    assert!(all_on(&run, "v2"));
    assert!(run.frames.iter().any(|f| {
        f.notes
            .iter()
            .any(|n| n.contains("OwnerNotHealthy MySQLCluster web: condition Healthy is False"))
    }));
}
