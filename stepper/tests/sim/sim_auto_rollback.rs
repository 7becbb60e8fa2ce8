//! Rolling back by itself (`on-failure: rollback`, docs/rollback.md) in the shipped scenario
//! `scenarios/auto-rollback.yaml`: a Prometheus check fails after the second step; the stepper writes
//! back v1's template itself, steps the two updated pods back one at a time without asking the failed
//! check, and holds a later re-apply of v2 (gate `FailedRevision`, Degraded).

use crate::support::sim_runs::{all_on, load, play};
use sts_stepper::sim::scenario::Run;

const PREFIX: &str = "safe-rollout.dev";

fn events<'a>(run: &'a Run, reason: &str) -> Vec<(i64, &'a str)> {
    (run.world.events.iter())
        .filter(|e| e.1 == reason)
        .map(|e| (e.0, e.2.as_str()))
        .collect()
}

fn annotation(run: &Run, name: &str) -> Option<String> {
    run.world.set["metadata"]["annotations"][format!("{PREFIX}/{name}")]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_failed_check_rolls_the_set_back_pod_by_pod_and_a_reapply_is_held() {
    let mut s = load("auto-rollback");
    // Up to the re-apply: back on v1, every pod, by the stepper alone.
    let reapply = s.events.iter().map(|e| e.at).max().expect("events");
    let mut before = s.clone();
    before.events.retain(|e| e.at < reapply);
    before.duration = reapply - 1;
    let run = play(&before, false);
    assert!(
        all_on(&run, "v1"),
        "every pod back on v1: {:?}",
        run.summary
    );
    let rolled = events(&run, "RolledBack");
    assert_eq!(rolled.len(), 1, "one rollback: {rolled:?}");
    let (at, note) = rolled[0];
    assert!(
        note.contains("FailureLimit") && note.contains("written back"),
        "{note}"
    );
    // Two pods were on v2: two steps back, each after the rollback, one pod down at most.
    let back: Vec<(i32, i32)> = (run.steps.iter())
        .filter(|st| st.t > at)
        .map(|st| (st.from, st.to))
        .collect();
    assert_eq!(back, [(5, 4), (4, 3)], "stepped back pod by pod");
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
    assert_eq!(run.summary.steps_while_gate_failed, 0, "{:?}", run.summary);
    let failed = annotation(&run, "failed-revision").expect("failed-revision recorded");
    assert!(failed.contains(": FailureLimit: "), "{failed}");
    let degraded = annotation(&run, "degraded-reason").expect("Degraded");
    assert!(degraded.starts_with("RolledBack: revision "), "{degraded}");

    // The whole scenario: the same template applied again is staged by the policy and held.
    s.duration = reapply + 60;
    let run = play(&s, false);
    let last = run.frames.last().expect("frames");
    assert!(
        run.frames.iter().any(|f| f.t >= reapply
            && f.notes.iter().any(|n| n.contains("Blocked FailedRevision"))),
        "the re-apply is held"
    );
    assert_eq!(last.partition, 5, "staged, not stepped");
    assert_eq!(
        events(&run, "RolledBack").len(),
        1,
        "not rolled back a second time"
    );
    let on_v1 = run.world.pods.values().all(|p| {
        run.world
            .revision(&p.revision)
            .and_then(|r| sts_stepper::sim::history::template_image(&r.template))
            == Some("v1")
    });
    assert!(on_v1, "no pod of the failed revision after the re-apply");
}
