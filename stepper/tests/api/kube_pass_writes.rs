//! The writes of a pass through the kube-rs cluster against a mocked API server (tower-test, as
//! kube-rs's controller-rs does), which answers with the real fixture LIST bodies: the exact step patch
//! with its `test` ops (one write, the `initialized` stamp folded in), the blocked reason announced once
//! and cleared by the step, completion announced once per revision, and the Events.

use crate::common::*;
use crate::mock_api::moments::*;
use crate::mock_api::*;
use serde_json::{Value, json};
use sts_stepper::gates::Idle;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::Outcome;

#[tokio::test]
async fn staged_moment_is_stepped_with_one_pinned_json_patch() {
    let stamped = |s: &mut Value| {
        set_partition(4)(s);
        s["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] =
            json!("2026-11-23T01:20:00Z");
    };
    let (report, seen) = pass_in_default_scope(lists_then(
        "1-staged",
        |_| {},
        vec![
            patch(PATCH_WEB, 200, stored("1-staged", stamped)),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets.len(), 1);
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
    assert!(!report.any_errored());
    // The step is ONE write: test partition and updateRevision, replace, stamp — and the set's first
    // `initialized` stamp folded in (issue 12 item 5).
    let mut want = step_body(5, 4);
    want.as_array_mut()
        .expect("ops")
        .extend(initialized_patch().as_array().expect("ops").clone());
    assert_eq!(seen[3].body, want);
    // The report (and so the `Stepped` log line) carries the stamp this step wrote.
    assert_eq!(
        report.sets[0].figures.last_partition_update,
        Some(at("2026-11-23T01:20:00Z"))
    );
    // The Stepped Event, on the StatefulSet.
    let ev = &seen[4].body;
    assert_eq!(ev["reason"], "Stepped");
    assert_eq!(ev["type"], "Normal");
    assert_eq!(ev["note"], "partition 5→4 (updateRevision web-7d7598bf9d)");
    assert_eq!(ev["regarding"]["kind"], "StatefulSet");
    assert_eq!(ev["regarding"]["name"], "web");
    assert_eq!(ev["regarding"]["uid"], WEB_UID);
    assert_eq!(ev["reportingController"], "sts-stepper");
}

#[tokio::test]
async fn a_set_with_no_annotations_is_not_the_steppers_and_gets_no_write() {
    // No annotations, so no guarded mark: a partition the policy did not set (a person's canary). The
    // stepper neither steps it nor writes on it, and reads no pod for it (issue 43: one scope).
    let bare = |s: &mut Value| {
        s["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("annotations");
    };
    let (report, seen) =
        pass_in_default_scope(vec![get(STS_ALL, list_with("1-staged", bare))]).await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Unguarded(sts_stepper::gates::UNMARKED)
    );
    assert_eq!(seen.len(), 1, "one LIST, nothing else: {seen:?}");
}

#[tokio::test]
async fn stepped_moment_steps_4_to_3() {
    let (report, seen) = pass_in_default_scope(lists_then(
        "2-stepped-4",
        initialized,
        vec![
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
    assert_eq!(seen[3].body, step_body(4, 3));
}

#[tokio::test]
async fn not_ready_moment_blocks_announces_once_and_writes_no_partition() {
    let (report, seen) = pass_in_default_scope(lists_then(
        "3-web1-notready",
        |_| {},
        vec![
            patch(PATCH_WEB, 200, stored("3-web1-notready", |_| {})),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::PodNotReady));
    assert_eq!(
        seen[3].body,
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                "value": "PodNotReady"}])
    );
    assert_eq!(seen[4].body["reason"], "Blocked");
    assert_eq!(seen[4].body["type"], "Warning");
    assert_eq!(
        seen[4].body["note"],
        "PodNotReady web-1: ContainersNotReady"
    );

    // Next pass, same reason already announced on the object: three LISTs, no write, no Event.
    let announced = |s: &mut Value| {
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    };
    let (report, seen) = pass_in_default_scope(lists_of("3-web1-notready", announced)).await;
    assert_eq!(
        report.expect("pass").sets[0].blocked_reason(),
        Some(Reason::PodNotReady)
    );
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn step_clears_an_announced_reason_in_the_same_patch() {
    let annotated = |s: &mut Value| {
        s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PdbBlocked");
    };
    let (report, seen) = pass_in_default_scope(lists_then(
        "2-stepped-4",
        annotated,
        vec![
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
    let mut want = step_body(4, 3);
    want.as_array_mut().expect("ops").push(
        json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason"}),
    );
    assert_eq!(seen[3].body, want);
}

#[tokio::test]
async fn completion_of_a_stepped_rollout_is_announced_once_per_revision() {
    let stepped = |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:10:50Z");
        a["safe-rollout.dev/blocked-reason"] = json!("StepInProgress");
    };
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_with("4-complete", stepped)),
        patch(PATCH_WEB, 200, stored("4-complete", |_| {})),
        post_event("demo"),
    ])
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Idle(Idle::UpToDate)
    );
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1completed-revision", "value": REV_NEW}
        ])
    );
    assert_eq!(seen[2].body["reason"], "RolloutComplete");
    // Announced: the next pass writes nothing.
    let done = |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:10:50Z");
        a["safe-rollout.dev/completed-revision"] = json!(REV_NEW);
    };
    let (_, seen) = pass_in_default_scope(vec![get(STS_ALL, list_with("4-complete", done))]).await;
    assert_eq!(seen.len(), 1);
}
