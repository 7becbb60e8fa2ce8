//! An answer belongs to its question (docs/approvals.md, "One question, one answer"; issue 46): on the
//! real "1-staged" moment (the step 5→4 replaces web-4, `updateRevision` is `REV_NEW`), an approval
//! left from before the last question asked of a pod never lets its step through — the A → B → A of a
//! revert: web-4 approved A, was asked about B and denied, and A is back — and a new question removes
//! the old answers in the same patch, each after a `test` of its value.

use crate::common::*;

use jiff::Timestamp;
use json_patch::PatchOperation;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use sts_stepper::gates::approval::{Phase, PodWriteKind, step_pods, withdraw_answered};
use sts_stepper::gates::{self, Evaluation, FleetView, GateOptions, Probes, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::patch::pod_patch;

const P: &str = "safe-rollout.dev";
const ON: (&str, &str) = ("pre-update-approval", "true");
/// Another revision: the B of A → B → A.
const REV_B: &str = "web-5c9f8d7b6a";

fn key(name: &str) -> String {
    format!("{P}/{name}")
}

fn evaluate(set: &StatefulSet, pods: &[Pod], now: Timestamp) -> Evaluation {
    let by_ordinal = pods::pods_by_ordinal(set, pods.iter());
    gates::evaluate(
        set,
        &by_ordinal,
        &[],
        FleetView::default(),
        &Probes::default(),
        &GateOptions::default(),
        now,
    )
}

fn is_pending(ev: &Evaluation) -> bool {
    matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::ApprovalPending)
}

#[test]
fn an_approval_under_a_request_of_another_revision_answers_nothing() {
    // web-4 approved REV_NEW (A), was then asked about B (the request is B's), and A is back.
    let (set, pods) = staged_with(
        &[ON],
        &[
            (4, "update-approved", REV_NEW),
            (4, "update-requested", REV_B),
            (4, "update-requested-at", "2026-11-20T10:00:00Z"),
            (4, "update-request-phase", "Update"),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(is_pending(&ev), "stepped on a stale yes: {:?}", ev.verdict);
    assert_eq!(ev.pod_writes.len(), 1, "{:?}", ev.pod_writes);
    let w = &ev.pod_writes[0];
    assert_eq!(w.kind, PodWriteKind::Request(Phase::Update));
    assert_eq!(
        w.changes,
        vec![
            (key("update-requested"), Some(REV_NEW.to_string())),
            (key("update-requested-at"), Some(now().to_string())),
            (key("update-request-phase"), Some("Update".to_string())),
            (key("update-approved"), None),
        ],
        "the new question removes the old answer"
    );
    assert_eq!(w.tests, vec![(key("update-approved"), REV_NEW.to_string())]);
}

#[test]
fn an_approval_with_no_request_or_its_own_request_still_counts() {
    // A person's approval, asked nothing (docs/approvals.md, "What a person can do").
    let (set, pods) = staged_with(&[ON], &[(4, "update-approved", REV_NEW)], &[]);
    assert!(matches!(
        evaluate(&set, &pods, now()).verdict,
        Verdict::Step { .. }
    ));
    // Asked to switch over, the role moved, then approved: the request is this revision's.
    let (set, pods) = staged_with(
        &[ON],
        &[
            (4, "update-approved", REV_NEW),
            (4, "update-requested", REV_NEW),
            (4, "update-request-phase", "Switchover"),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(ev.verdict, Verdict::Step { .. }),
        "{:?}",
        ev.verdict
    );
    // With the step its request goes, its approval stays (the step's write may still be lost).
    assert_eq!(ev.pod_writes.len(), 1);
    assert_eq!(ev.pod_writes[0].kind, PodWriteKind::Answered);
    assert!(
        ev.pod_writes[0]
            .changes
            .iter()
            .all(|(k, _)| k != &key("update-approved")),
        "{:?}",
        ev.pod_writes[0].changes
    );
}

#[test]
fn a_primary_asked_to_switch_over_loses_an_approval_it_gave_before() {
    // web-4 approved as a replica, then took the primary role: a Switchover is a new question.
    let (set, pods) = staged_with(
        &[ON, ("primary-selector", "role=primary")],
        &[
            (4, "update-approved", REV_NEW),
            (4, "update-requested", REV_NEW),
            (4, "update-request-phase", "Update"),
        ],
        &[(4, "role", "primary")],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::PrimaryNotMoved),
        "{:?}",
        ev.verdict
    );
    let w = &ev.pod_writes[0];
    assert_eq!(w.kind, PodWriteKind::Request(Phase::Switchover));
    assert!(w.changes.contains(&(key("update-approved"), None)));
}

#[test]
fn a_withdrawn_request_takes_its_approval_and_a_denial_stays() {
    // web-3 is not in the step 5→4: its request (and the approval that answered it) are withdrawn.
    let (set, pods) = staged_with(
        &[ON],
        &[
            (3, "update-requested", REV_NEW),
            (3, "update-approved", REV_NEW),
            (2, "update-requested", REV_NEW),
            (2, "update-denied", "backup running"),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    let of = |name: &str| {
        ev.pod_writes
            .iter()
            .find(|w| w.name == name)
            .unwrap_or_else(|| panic!("no write on {name}: {:?}", ev.pod_writes))
    };
    assert_eq!(of("web-3").kind, PodWriteKind::Withdraw);
    assert_eq!(
        of("web-3").changes,
        vec![
            (key("update-requested"), None),
            (key("update-approved"), None)
        ]
    );
    assert_eq!(
        of("web-2").changes,
        vec![(key("update-requested"), None)],
        "a denial is the application's to lift"
    );
}

#[test]
fn the_pod_patch_tests_each_answer_it_removes() {
    let (set, pods) = staged_with(
        &[ON],
        &[(4, "update-approved", REV_B), (4, "update-denied", " ")],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    let w = &ev.pod_writes[0];
    let patch = pod_patch(w);
    let ops: Vec<serde_json::Value> = patch
        .0
        .iter()
        .map(|op| serde_json::to_value(op).expect("op"))
        .collect();
    let approved = "/metadata/annotations/safe-rollout.dev~1update-approved";
    let denied = "/metadata/annotations/safe-rollout.dev~1update-denied";
    assert!(ops.contains(&json!({"op": "test", "path": approved, "value": REV_B})));
    assert!(ops.contains(&json!({"op": "test", "path": denied, "value": " "})));
    let test_at = |path: &str| {
        ops.iter()
            .position(|o| o["op"] == "test" && o["path"] == path)
    };
    let remove_at = |path: &str| {
        ops.iter()
            .position(|o| o["op"] == "remove" && o["path"] == path)
    };
    for path in [approved, denied] {
        assert!(
            test_at(path) < remove_at(path) && remove_at(path).is_some(),
            "{ops:?}"
        );
    }
    assert!(
        patch
            .0
            .iter()
            .all(|op| !matches!(op, PatchOperation::Replace(_)))
    );
    // The patch applies to the pod as read, and removes exactly those two keys.
    let pod = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("web-4"))
        .expect("web-4");
    let mut doc = serde_json::to_value(pod).expect("pod");
    json_patch::patch(&mut doc, &patch).expect("applies");
    let annotations = &doc["metadata"]["annotations"];
    assert!(annotations.get(key("update-approved")).is_none());
    assert!(annotations.get(key("update-denied")).is_none());
    assert_eq!(annotations[key("update-requested")], json!(REV_NEW));
    // An answer changed since the read fails the patch.
    let mut changed = serde_json::to_value(pod).expect("pod");
    changed["metadata"]["annotations"][key("update-approved")] = json!(REV_NEW);
    assert!(json_patch::patch(&mut changed, &patch).is_err());
}

#[test]
fn withdraw_answered_keeps_the_approvals() {
    let (set, pods) = staged_with(
        &[ON],
        &[
            (4, "update-requested", REV_NEW),
            (4, "update-approved", REV_NEW),
        ],
        &[],
    );
    let by_ordinal = pods::pods_by_ordinal(&set, pods.iter());
    let keys = sts_stepper::config::Keys::new(P);
    let step = step_pods(&set, &by_ordinal, (5, 4), None, &keys);
    let writes = withdraw_answered(&step, &keys);
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].changes, vec![(key("update-requested"), None)]);
    assert!(writes[0].tests.is_empty());
}

/// The set's `updateRevision` (and its generation, as a template change bumps it) set to `revision`.
fn revision(set: &StatefulSet, revision: &str, generation: i64) -> StatefulSet {
    let mut s = set.clone();
    s.metadata.generation = Some(generation);
    if let Some(status) = s.status.as_mut() {
        status.update_revision = Some(revision.to_string());
        status.observed_generation = Some(generation);
    }
    s
}

#[test]
fn through_the_webhook_a_question_asked_again_after_another_has_a_new_request_id() {
    use crate::common::webhook_gate::{decided, evaluate as ask, need, staged, with_record};
    use sts_stepper::gates::approval::webhook::answer::Decision;
    let (a, pods) = staged(&[], &[]);
    let generation = a.metadata.generation.unwrap_or(1);
    // A asked, answered Wait: recorded.
    let first = ask(&a, &pods, None, now());
    let id_a = need(&first).1["requestId"].clone();
    let a_recorded = with_record(
        &a,
        &ask(&a, &pods, decided(Decision::Wait, "", None), now()),
    );
    let t1 = Timestamp::from_second(now().as_second() + 60).unwrap();
    assert_eq!(
        need(&ask(&a_recorded, &pods, None, t1)).1["requestId"],
        id_a
    );
    // B (a new template) asked and denied: its record replaces A's.
    let b = revision(&a_recorded, REV_B, generation + 1);
    let b_asked = ask(&b, &pods, decided(Decision::Deny, "replica lag", None), t1);
    let b_recorded = with_record(&b, &b_asked);
    // A again (undo), same partition step and phase: a new question, under a new id.
    let t2 = Timestamp::from_second(now().as_second() + 120).unwrap();
    let back = revision(&b_recorded, REV_NEW, generation + 2);
    let again = need(&ask(&back, &pods, None, t2)).1["requestId"].clone();
    assert_ne!(again, id_a, "A → B → A reused the first id");
    // Even with the generation unchanged (the record of B's question is what tells them apart).
    let back_same_generation = revision(&b_recorded, REV_NEW, generation);
    assert_ne!(
        need(&ask(&back_same_generation, &pods, None, t2)).1["requestId"],
        id_a
    );
}
