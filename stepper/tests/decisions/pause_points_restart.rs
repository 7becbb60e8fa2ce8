//! The canary plan starts over: a record for another revision, or above the rollout's position (a
//! restage), or unreadable, counts for nothing; the plan's own pause made for an earlier rollout is
//! lifted, with the step or at once, and so is its pause on a set with nothing left to roll out.

use crate::canary_support::*;
use serde_json::{Value, json};
use sts_stepper::gates::Verdict;
use sts_stepper::model::reasons::Reason;

#[rstest::rstest]
// The record names another revision: a new template or a rollback.
#[case(r#"{"updateRevision":"a","pods":1,"pausedAt":"2026-11-23T01:00:00Z"}"#)]
// The rollout was restaged below the record (partition back at replicas).
#[case(r#"{"updateRevision":"b","pods":3,"pausedAt":"2026-11-23T01:00:00Z"}"#)]
#[case("unreadable")]
fn the_plan_starts_over_when_the_record_does_not_hold(#[case] stored: &str) {
    let p = plan_at(
        canary(
            5,
            &[("pause-at", "1,60%:30"), ("pause-points-passed", stored)],
        ),
        None,
        "2026-11-23T01:20:00Z",
    );
    assert!(matches!(p.verdict, Verdict::Step { from: 5, to: 4, .. }));
    let step = serde_json::to_value(p.step_patch()).expect("json");
    assert_eq!(
        step[5],
        json!({"op": "add", "path": a("paused-reason"), "value": REASON_1})
    );
}

/// The plan's pause at point 1 made for revision `a`, on a set now rolling out `b` from the start.
fn stale(partition: i32) -> Value {
    let old_reason = "pause point 1 of 2: 1 of 5 pods on a; `resume` to go on";
    canary(
        partition,
        &[
            ("pause-at", "1,60%:30"),
            ("paused", "true"),
            ("paused-reason", old_reason),
            (
                "pause-points-passed",
                r#"{"updateRevision":"a","pods":1,"pausedAt":"2026-11-23T01:00:00Z"}"#,
            ),
        ],
    )
}

#[test]
fn a_new_rollout_lifts_the_plans_pause_for_the_last_one_and_starts_over() {
    let p = plan_at(stale(5), None, "2026-11-23T01:20:00Z");
    assert!(matches!(p.verdict, Verdict::Step { from: 5, to: 4, .. }));
    let step = serde_json::to_value(p.step_patch()).expect("json");
    assert_eq!(
        step[3],
        json!({"op": "test", "path": a("paused-reason"),
               "value": "pause point 1 of 2: 1 of 5 pods on a; `resume` to go on"})
    );
    assert_eq!(
        step[7],
        json!({"op": "add", "path": a("paused-reason"), "value": REASON_1})
    );
    let evs = events(&p);
    assert_eq!(
        evs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["RolloutResumed", "RolloutPaused"]
    );
    assert!(
        evs[0].2.starts_with(
            "resumed by the stepper: a new rollout (updateRevision b) starts the pause plan over"
        ),
        "{}",
        evs[0].2
    );
}

#[test]
fn a_pause_for_an_earlier_rollout_is_lifted_at_once_even_while_another_gate_blocks() {
    let p = plan_at(stale(5), Some(0), "2026-11-23T01:20:00Z");
    assert_eq!(blocked(&p).0, Reason::PodNotReady);
    assert_eq!(
        serde_json::to_value(p.status_patch()).expect("json"),
        json!([
            {"op": "test", "path": a("paused"), "value": "true"},
            {"op": "test", "path": a("paused-reason"),
             "value": "pause point 1 of 2: 1 of 5 pods on a; `resume` to go on"},
            {"op": "add", "path": a("blocked-reason"), "value": "PodNotReady"},
            {"op": "remove", "path": a("paused")},
            {"op": "remove", "path": a("paused-reason")},
        ])
    );
    let evs = events(&p);
    assert_eq!(
        evs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["Blocked", "RolloutResumed"]
    );
}

#[test]
fn the_plans_pause_on_a_set_with_nothing_left_to_roll_is_lifted() {
    // A rollback whose step to point 1 put back the last pod on the old revision: nothing staged.
    let mut v = canary(
        4,
        &[
            ("pause-at", "1,60%:30"),
            ("paused", "true"),
            ("paused-reason", REASON_1),
            ("pause-points-passed", &record(1, "2026-11-23T01:19:00Z")),
        ],
    );
    v["status"]["currentRevision"] = json!("b");
    v["status"]["updatedReplicas"] = json!(5);
    let p = plan_at(v, None, "2026-11-23T01:20:00Z");
    assert!(matches!(p.verdict, Verdict::Idle(_)), "{:?}", p.verdict);
    assert_eq!(
        serde_json::to_value(p.status_patch()).expect("json"),
        json!([
            {"op": "test", "path": a("paused"), "value": "true"},
            {"op": "test", "path": a("paused-reason"), "value": REASON_1},
            {"op": "remove", "path": a("paused")},
            {"op": "remove", "path": a("paused-reason")},
        ])
    );
    let evs = events(&p);
    assert_eq!(evs.len(), 1);
    assert!(
        evs[0].2.starts_with(
            "resumed by the stepper: every pod runs updateRevision, nothing is left to hold"
        ),
        "{}",
        evs[0].2
    );
}
