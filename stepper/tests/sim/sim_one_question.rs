//! An answer belongs to its question (issue 46; docs/approvals.md, "One question, one answer"): the
//! A → B → A of a revert, played with the real policy and the real stepper in `once` and in `watch`
//! (caches 0–2 s late) — `scenarios/revert-while-denied.yaml` (the handshake on the pods) and
//! `revert-while-denied-webhook.yaml` (the webhook). The oracle (`sim::questions`) counts a replacement
//! approved before the last question asked of the pod, or a webhook `Approve` resting on work begun
//! before that question, as unapproved.

use std::collections::BTreeSet;

use crate::support::sim_runs::{all_on, load, requests};
use sts_stepper::sim::scenario::{self, Run, Scenario, StepperMode};

fn played(s: &Scenario, mode: StepperMode, lag: i64) -> Run {
    let mut s = s.clone();
    s.stepper.mode = mode;
    s.stepper.watch_lag_seconds = lag;
    scenario::run(&s, false, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

/// [`crate::support::sim_runs::assert_guarded_invariants`] but for one pod per step (these sets step
/// two): no step while a gate failed or twice for one observation, no restart while another pod was
/// down, at most one pod down beyond the faults.
fn assert_invariants(run: &Run) {
    let s = &run.summary;
    assert_eq!(
        (
            s.steps_while_gate_failed,
            s.steps_unobserved,
            s.harmful_restarts
        ),
        (0, 0, 0),
        "{}",
        run.name
    );
    assert!(run.frames.iter().all(|f| f.down <= f.fault_down + 1));
}

fn modes() -> [(StepperMode, i64); 3] {
    [
        (StepperMode::Once, 0),
        (StepperMode::Watch, 0),
        (StepperMode::Watch, 2),
    ]
}

/// The seconds at which the stepper wrote a request for `revision` on pod `pod` (either phase).
fn asked(run: &Run, pod: &str, revision: &str) -> Vec<i64> {
    let mut times: Vec<i64> = requests(run)
        .into_iter()
        .filter(|((p, r, _), _)| p == pod && r == revision)
        .flat_map(|(_, writes)| writes.into_iter().map(|(t, _)| t))
        .collect();
    times.sort_unstable();
    times
}

#[test]
fn a_pod_that_approved_before_a_revert_is_asked_again_and_replaced_only_on_its_new_yes() {
    let s = load("revert-while-denied");
    for (mode, lag) in modes() {
        let run = played(&s, mode, lag);
        assert_invariants(&run);
        assert!(
            run.world.unapproved_replacements.is_empty(),
            "{mode:?} lag {lag}: {:?}",
            run.world.unapproved_replacements
        );
        assert!(
            all_on(&run, "v2"),
            "{mode:?} lag {lag}: back on v2, complete"
        );
        let v2 = run.world.status_str("updateRevision");
        let v3 = (run.world.revisions.iter())
            .find(|r| sts_stepper::sim::history::template_image(&r.template) == Some("v3"))
            .map(|r| r.name.clone())
            .expect("v3's revision");
        let (on_v2, on_v3) = (asked(&run, "web-4", &v2), asked(&run, "web-4", &v3));
        assert!(
            on_v2.iter().any(|t| *t < 30),
            "{mode:?} lag {lag}: {on_v2:?}"
        );
        // Once asked about v3 (a cache late enough may lose that write to the denial that follows),
        // web-4 is asked about v2 again after the undo.
        assert!(
            on_v3.is_empty() || on_v2.iter().any(|t| *t >= 45),
            "{mode:?} lag {lag}: web-4 asked about v3 at {on_v3:?}, about v2 at {on_v2:?}"
        );
        if on_v3.is_empty() {
            continue;
        }
        // The question about v3 removed web-4's approval of v2 in the same patch.
        let cleared = (run.world.writes.iter()).any(|(t, line)| {
            (30..45).contains(t)
                && line.starts_with("PATCH pods demo/web-4 ")
                && line.contains(r#"{"op":"test","path":"/metadata/annotations/safe-rollout.dev~1update-approved","value":""#)
                && line.contains(r#"{"op":"remove","path":"/metadata/annotations/safe-rollout.dev~1update-approved"}"#)
        });
        assert!(cleared, "{mode:?} lag {lag}: {:#?}", run.world.writes);
    }
}

#[test]
fn through_the_webhook_the_reverted_question_is_a_new_request() {
    let s = load("revert-while-denied-webhook");
    for (mode, lag) in modes() {
        let run = played(&s, mode, lag);
        assert_invariants(&run);
        assert!(
            run.world.unapproved_replacements.is_empty(),
            "{mode:?} lag {lag}: {:?}",
            run.world.unapproved_replacements
        );
        assert!(all_on(&run, "v2"), "{mode:?} lag {lag}");
        let v2 = run.world.status_str("updateRevision");
        let hook = &run.world.application.as_ref().expect("app").webhook;
        let approved_by = hook
            .reply_requests
            .get(&(4, v2.clone()))
            .expect("web-4's last reply");
        let begun = hook.first_seen[approved_by];
        assert!(
            begun >= 45,
            "{mode:?} lag {lag}: web-4 approved under request {approved_by}, first seen at {begun}"
        );
        let ids: BTreeSet<&String> = hook.first_seen.keys().collect();
        assert!(
            ids.len() >= 3,
            "{mode:?} lag {lag}: v2, v3, v2 again: {ids:?}"
        );
    }
}
