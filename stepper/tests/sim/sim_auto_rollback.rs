//! Rolling back by itself (`on-failure: rollback`, docs/rollback.md) in the shipped scenario
//! `scenarios/auto-rollback.yaml`: a Prometheus check fails after the second step; the stepper writes
//! back v1's template itself, steps the two updated pods back one at a time without asking the failed
//! check, and holds a later re-apply of v2 (gate `FailedRevision`, Degraded); and
//! `scenarios/reapply-midway.yaml`: a re-apply that comes before the steps back are done is held too,
//! and the pod it left on v2 is returned (deleted, created again from v1), in `once` and in `watch`.

use crate::support::sim_runs::{all_on, load, play};
use sts_stepper::sim::scenario::{Run, StepperMode};

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

/// Every pod of `run` runs the image `tag` (whatever the update revision is) and is Ready.
fn every_pod_on(run: &Run, tag: &str) -> bool {
    run.world.pods.values().all(|p| {
        p.running_and_ready()
            && run
                .world
                .revision(&p.revision)
                .and_then(|r| sts_stepper::sim::history::template_image(&r.template))
                == Some(tag)
    })
}

#[test]
fn a_reapply_before_the_steps_back_are_done_is_held_and_its_pods_returned() {
    let s = load("reapply-midway");
    let reapply = s.events.iter().map(|e| e.at).max().expect("events");
    for (mode, lag) in [(StepperMode::Once, 0), (StepperMode::Watch, 0)] {
        let mut s = s.clone();
        s.stepper.mode = mode;
        s.stepper.watch_lag_seconds = lag;
        let run = play(&s, false);
        let at = |t: i64| run.frames.iter().take_while(|f| f.t <= t).last();
        let before = at(reapply - 1).expect("a frame before the re-apply");
        let on_v2 = before.pods.iter().filter(|p| p.letter == 'B').count();
        assert_eq!(on_v2, 1, "{mode:?}: web-3 still on v2 at the re-apply");
        // Held: no step after the re-apply, the partition at replicas.
        assert!(
            run.steps.iter().all(|st| st.t < reapply),
            "{mode:?}: {:?}",
            run.steps
        );
        assert_eq!(run.frames.last().map(|f| f.partition), Some(5));
        // web-3 returned, once, announced; every pod back on v1, one down at most.
        let returned = events(&run, "ReturnedPod");
        assert_eq!(returned.len(), 1, "{mode:?}: {returned:?}");
        assert!(
            returned[0].0 > reapply && returned[0].1.starts_with("deleted pod web-3 on revision "),
            "{mode:?}: {returned:?}"
        );
        assert!(
            every_pod_on(&run, "v1"),
            "{mode:?}: {:?}",
            run.frames.last()
        );
        assert_eq!(run.summary.max_down, 1, "{mode:?}: {:?}", run.summary);
        assert_eq!(run.summary.harmful_restarts, 0, "{mode:?}");
        assert_eq!(
            events(&run, "RolledBack").len(),
            1,
            "{mode:?}: rolled back once"
        );
        let held = run.frames.last().and_then(|f| f.notes.last()).cloned();
        assert!(
            run.frames
                .iter()
                .any(|f| f.t > reapply
                    && f.notes.iter().any(|n| n.contains("Blocked FailedRevision"))),
            "{mode:?}: held, last note {held:?}"
        );
    }
}

#[test]
fn the_rollback_and_the_return_ask_the_application_and_move_the_primary_first() {
    let run = play(&load("rollback-with-approvals"), false);
    let rolled = events(&run, "RolledBack");
    assert_eq!(rolled.len(), 1, "{rolled:?}");
    let back_from = rolled[0].0;
    // The steps back asked: the primary (web-4) switched over before it was stepped back.
    let switchover_back = run.frames.iter().any(|f| {
        f.t > back_from
            && f.notes
                .iter()
                .any(|n| n.contains("Blocked PrimaryNotMoved web: web-4 holds the primary role"))
    });
    assert!(
        switchover_back,
        "web-4 asked to switch over on the way back"
    );
    let returned = events(&run, "ReturnedPod");
    assert_eq!(returned.len(), 1, "{returned:?}");
    assert!(
        returned[0].1.starts_with("deleted pod web-3"),
        "{returned:?}"
    );
    // The return waited for web-3's approval of v1.
    let asked = run.frames.iter().any(|f| {
        f.t < returned[0].0
            && f.notes
                .iter()
                .any(|n| n.contains("returning web-3") && n.ends_with("held by ApprovalPending"))
    });
    assert!(asked, "the return waited for the approval");
    assert!(
        run.world.unapproved_replacements.is_empty(),
        "{:?}",
        run.world.unapproved_replacements
    );
    assert!(every_pod_on(&run, "v1"), "{:?}", run.frames.last());
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
}
