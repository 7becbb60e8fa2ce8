//! The approval handshake and the primary's place (docs/approvals.md), as pure decisions on the real
//! "1-staged" moment (a 5-replica set staged at partition 5: the next step 5→4 replaces web-4): the
//! gates' verdicts, the exact pod writes and the `ApprovalTimeout` record.

use crate::common::webhook_gate::gate_changes;
use crate::common::*;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use sts_stepper::gates::approval::{Phase, PodWriteKind};
use sts_stepper::gates::{self, Evaluation, FleetView, GateOptions, Probes, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::{Blocked, Reason};

const P: &str = "safe-rollout.dev";

fn key(name: &str) -> String {
    format!("{P}/{name}")
}

/// The staged moment with `annotations` added to the set, and `pod_annotations` / `labels` on pods by
/// ordinal ([`staged_with`]).
fn staged(
    annotations: &[(&str, &str)],
    pod_annotations: &[(u32, &str, &str)],
    labels: &[(u32, &str, &str)],
) -> (StatefulSet, Vec<Pod>) {
    staged_with(annotations, pod_annotations, labels)
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

fn blocked(reason: Reason, detail: &str) -> Verdict {
    Verdict::Blocked(Blocked::new(reason, detail))
}

const ON: (&str, &str) = ("pre-update-approval", "true");

#[test]
fn without_the_handshake_nothing_is_asked() {
    let (set, pods) = staged(&[], &[], &[]);
    let ev = evaluate(&set, &pods, now());
    assert!(matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }));
    assert!(ev.pod_writes.is_empty());
}

#[test]
fn the_step_s_pod_is_asked_once_with_the_revision_time_and_phase() {
    let (set, pods) = staged(&[ON], &[], &[]);
    let ev = evaluate(&set, &pods, now());
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::ApprovalPending,
            &format!("web: waiting 0 s of 600 s for approval of web-4 on {REV_NEW}")
        )
    );
    assert_eq!(ev.pod_writes.len(), 1, "{:?}", ev.pod_writes);
    let w = &ev.pod_writes[0];
    assert_eq!(w.name, "web-4");
    assert_eq!(w.kind, PodWriteKind::Request(Phase::Update));
    assert_eq!(
        w.changes,
        vec![
            (key("update-requested"), Some(REV_NEW.to_string())),
            (key("update-requested-at"), Some(now().to_string())),
            (key("update-request-phase"), Some("Update".to_string())),
        ]
    );
    // Asked: the next pass writes nothing and counts the wait from the request.
    let asked_at = now().to_string();
    let (set, pods) = staged(
        &[ON],
        &[
            (4, "update-requested", REV_NEW),
            (4, "update-requested-at", &asked_at),
            (4, "update-request-phase", "Update"),
        ],
        &[],
    );
    let later = Timestamp::from_second(now().as_second() + 40).unwrap();
    let ev = evaluate(&set, &pods, later);
    assert!(ev.pod_writes.is_empty(), "{:?}", ev.pod_writes);
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::ApprovalPending,
            &format!("web: waiting 40 s of 600 s for approval of web-4 on {REV_NEW}")
        )
    );
    assert!(ev.expected_wait || Reason::ApprovalPending.is_expected_wait());
}

#[test]
fn an_approval_of_the_revision_lets_the_step_through_and_another_does_not() {
    let (set, pods) = staged(&[ON], &[(4, "update-approved", REV_NEW)], &[]);
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        ev.verdict
    );
    assert!(ev.pod_writes.is_empty());

    let (set, pods) = staged(&[ON], &[(4, "update-approved", REV_OLD)], &[]);
    let ev = evaluate(&set, &pods, now());
    assert!(matches!(ev.verdict, Verdict::Blocked(ref b) if b.reason == Reason::ApprovalPending));
    assert_eq!(ev.pod_writes.len(), 1, "asked again for the new revision");
}

#[test]
fn a_denial_blocks_and_its_request_is_answered_once() {
    let (set, pods) = staged(
        &[ON],
        &[
            (4, "update-requested", REV_NEW),
            (4, "update-request-phase", "Update"),
            (4, "update-denied", "2 partitions under min.insync.replicas"),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::ApprovalPending,
            "web: web-4 denied the update: 2 partitions under min.insync.replicas"
        )
    );
    assert_eq!(ev.pod_writes.len(), 1);
    let w = &ev.pod_writes[0];
    assert_eq!(
        w.kind,
        PodWriteKind::Denied("2 partitions under min.insync.replicas".into())
    );
    // Only the keys present are removed (no update-requested-at was written on this pod).
    assert_eq!(
        w.changes,
        vec![
            (key("update-requested"), None),
            (key("update-request-phase"), None)
        ]
    );
    // Answered: the denial alone still blocks, and nothing more is written.
    let (set, pods) = staged(&[ON], &[(4, "update-denied", "busy")], &[]);
    let ev = evaluate(&set, &pods, now());
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::ApprovalPending,
            "web: web-4 denied the update: busy"
        )
    );
    assert!(ev.pod_writes.is_empty());
}

#[test]
fn past_the_timeout_the_set_is_degraded_never_stepped_and_the_record_goes_with_the_approval() {
    let asked = "2026-11-20T10:00:00Z";
    let requested = [
        (4, "update-requested", REV_NEW),
        (4, "update-requested-at", asked),
        (4, "update-request-phase", "Update"),
    ];
    let (set, pods) = staged(&[ON, ("approval-timeout-seconds", "60")], &requested, &[]);
    let ev = evaluate(&set, &pods, at("2026-11-20T10:01:01Z"));
    let detail = format!("ApprovalTimeout: no approval of web-4 on {REV_NEW} within 60 s");
    assert_eq!(
        ev.verdict,
        blocked(Reason::ApprovalPending, &format!("web: {detail}"))
    );
    assert_eq!(
        gate_changes(&set, &ev),
        vec![(key("degraded-reason"), Some(detail.clone()))]
    );
    // At the limit itself it still waits.
    let ev = evaluate(&set, &pods, at("2026-11-20T10:01:00Z"));
    assert!(gate_changes(&set, &ev).is_empty());

    // Recorded, then approved: the step goes, and a step removes the record (patch.rs).
    let (set, pods) = staged(
        &[
            ON,
            ("approval-timeout-seconds", "60"),
            ("degraded-reason", &detail),
        ],
        &[(4, "update-approved", REV_NEW)],
        &[],
    );
    let ev = evaluate(&set, &pods, at("2026-11-20T10:05:00Z"));
    assert!(
        matches!(ev.verdict, Verdict::Step { .. }),
        "{:?}",
        ev.verdict
    );
}

#[test]
fn the_primary_is_never_replaced_without_the_handshake() {
    let (set, pods) = staged(
        &[("primary-selector", "role=primary")],
        &[],
        &[(4, "role", "primary"), (3, "role", "replica")],
    );
    let ev = evaluate(&set, &pods, now());
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::PrimaryNotMoved,
            "web: web-4 holds the primary role (role=primary); move the role to an updated pod, or \
             `step --force`"
        )
    );
    assert!(
        ev.pod_writes.is_empty(),
        "no handshake: nothing written on pods"
    );
    // The role elsewhere: the step goes.
    let (set, pods) = staged(
        &[("primary-selector", "role=primary")],
        &[],
        &[(2, "role", "primary")],
    );
    assert!(matches!(
        evaluate(&set, &pods, now()).verdict,
        Verdict::Step { .. }
    ));
}

#[test]
fn with_the_handshake_the_primary_is_asked_to_switch_over_and_steps_once_the_role_moved() {
    let primary = [ON, ("primary-selector", "role=primary")];
    let (set, pods) = staged(&primary, &[], &[(4, "role", "primary")]);
    let ev = evaluate(&set, &pods, now());
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::PrimaryNotMoved,
            "web: web-4 holds the primary role (role=primary); asked it to move the role \
             (safe-rollout.dev/update-request-phase: Switchover)"
        )
    );
    assert!(
        ev.expected_wait,
        "a switchover under way is part of the rollout's rhythm"
    );
    assert_eq!(ev.pod_writes.len(), 1);
    assert_eq!(
        ev.pod_writes[0].kind,
        PodWriteKind::Request(Phase::Switchover)
    );

    // Approved while still primary: not replaced.
    let switchover = [
        (4, "update-requested", REV_NEW),
        (4, "update-request-phase", "Switchover"),
        (4, "update-approved", REV_NEW),
    ];
    let (set, pods) = staged(&primary, &switchover, &[(4, "role", "primary")]);
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(ev.verdict, Verdict::Blocked(ref b) if b.reason == Reason::PrimaryNotMoved),
        "{:?}",
        ev.verdict
    );
    assert!(ev.pod_writes.is_empty(), "asked once");

    // The role moved to web-3 (label changed) and web-4 approved: the step replaces web-4.
    let (set, pods) = staged(
        &primary,
        &switchover,
        &[(4, "role", "replica"), (3, "role", "primary")],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        ev.verdict
    );
}

#[test]
fn a_request_no_step_of_this_revision_makes_is_withdrawn() {
    let (set, pods) = staged(
        &[ON],
        &[
            (4, "update-approved", REV_NEW),
            (1, "update-requested", REV_OLD),
            (1, "update-requested-at", "2026-11-01T00:00:00Z"),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(matches!(ev.verdict, Verdict::Step { .. }));
    assert_eq!(ev.pod_writes.len(), 1);
    let w = &ev.pod_writes[0];
    assert_eq!(
        (w.name.as_str(), &w.kind),
        ("web-1", &PodWriteKind::Withdraw)
    );
    assert_eq!(
        w.changes,
        vec![
            (key("update-requested"), None),
            (key("update-requested-at"), None)
        ]
    );
}

#[test]
fn unreadable_settings_are_invalid_annotations_naming_the_form() {
    for (annotation, want) in [
        (
            ("approval-timeout-seconds", "10m"),
            "safe-rollout.dev/approval-timeout-seconds: \"10m\" is not a timeout",
        ),
        (
            ("primary-selector", "role in primary"),
            "safe-rollout.dev/primary-selector: \"role in primary\" is not a label selector",
        ),
    ] {
        let (set, pods) = staged(&[ON, annotation], &[], &[]);
        match evaluate(&set, &pods, now()).verdict {
            Verdict::Blocked(b) => {
                assert_eq!(b.reason, Reason::InvalidAnnotation);
                assert!(b.detail.contains(want), "{}", b.detail);
            }
            other => panic!("{annotation:?}: {other:?}"),
        }
    }
}

#[test]
fn the_step_withdraws_the_requests_it_answered() {
    // web-4 asked and approved: the step goes, and its request goes with it (a rollback right after the
    // step, before the controller replaces web-4, must not leave it behind).
    let (set, pods) = staged(
        &[ON],
        &[
            (4, "update-requested", REV_NEW),
            (4, "update-requested-at", "2026-11-20T10:00:00Z"),
            (4, "update-request-phase", "Update"),
            (4, "update-approved", REV_NEW),
        ],
        &[],
    );
    let ev = evaluate(&set, &pods, now());
    assert!(
        matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        ev.verdict
    );
    assert_eq!(ev.pod_writes.len(), 1, "{:?}", ev.pod_writes);
    let w = &ev.pod_writes[0];
    assert_eq!(
        (w.name.as_str(), &w.kind),
        ("web-4", &PodWriteKind::Answered)
    );
    assert_eq!(
        w.changes,
        vec![
            (key("update-requested"), None),
            (key("update-requested-at"), None),
            (key("update-request-phase"), None),
        ],
        "the approval stays: the pod is about to be replaced"
    );
}
