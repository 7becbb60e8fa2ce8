//! The approval webhook's records as pure decisions on the real "1-staged" moment: errors counted apart
//! and the `WebhookErrors` record at the limit, the `ApprovalTimeout` record at the deadline, the
//! primary's `Switchover`, and the annotations a set cannot use (`InvalidAnnotation`). The request and
//! the decisions: webhook.rs.

use crate::common::webhook_gate::*;
use crate::common::*;
use serde_json::json;
use sts_stepper::config::{Served, webhook};
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use sts_stepper::gates::{self, FleetView, GateOptions, Probes, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::plan::plan_with;

#[test]
fn errors_are_counted_apart_and_the_limit_records_webhook_errors() {
    let (set, pods) = staged(&[("webhook-error-limit", "2")], &[]);
    let error = |cause: &str| Some(WebhookAnswer::Error(cause.into()));
    let first = evaluate(&set, &pods, error("connection refused"), now());
    let detail = blocked_detail(&first, Reason::ApprovalPending);
    assert!(
        detail.contains("has not decided on web-4")
            && detail
                .contains("no answer 1 times in a row (webhook-error-limit 2): connection refused"),
        "{detail}"
    );
    assert_eq!(change(&set, &first, "degraded-reason"), None);
    let s = state(&first);
    assert_eq!((s.errors, s.decision), (1, None));
    let t1 = at("2026-11-23T01:20:10Z");
    let recorded = with_record(&set, &first);
    let second = evaluate(&recorded, &pods, error("HTTP 500: boom"), t1);
    let record = change(&recorded, &second, "degraded-reason")
        .flatten()
        .expect("recorded");
    assert_eq!(
        record,
        "WebhookErrors: webhook db gave no answer 2 times in a row (webhook-error-limit 2); last: HTTP 500: boom"
    );
    // Announced as the other degraded records are.
    let snap = snapshot(with_record(&set, &first), pods.clone());
    let plan = &plan_with(&snap, &opts(), t1, &probes_of(error("HTTP 500: boom")))[0];
    assert!(
        plan.events().iter().any(|e| e.reason == "RolloutDegraded"),
        "{:?}",
        plan.events()
    );
    // A decision clears the errors and the record.
    let degraded = with_record(&recorded, &second);
    let wait = evaluate(&degraded, &pods, decided(Decision::Wait, "", None), t1);
    assert_eq!(change(&degraded, &wait, "degraded-reason"), Some(None));
    assert_eq!(state(&wait).errors, 0);
    // A step removes it too (and the record of the request).
    let ok = evaluate(&degraded, &pods, decided(Decision::Approve, "", None), t1);
    assert!(matches!(ok.verdict, Verdict::Step { .. }));
}

#[test]
fn no_approval_by_the_deadline_is_an_approval_timeout() {
    let (set, pods) = staged(&[("approval-timeout-seconds", "60")], &[]);
    let first = evaluate(
        &set,
        &pods,
        decided(Decision::Wait, "catching up", None),
        now(),
    );
    assert_eq!(state(&first).deadline(60), at("2026-11-23T01:21:00Z"));
    let stored = with_record(&set, &first);
    let late = at("2026-11-23T01:21:01Z");
    let ev = evaluate(
        &stored,
        &pods,
        decided(Decision::Wait, "catching up", None),
        late,
    );
    let detail = blocked_detail(&ev, Reason::ApprovalPending);
    assert!(
        detail.starts_with(&format!(
            "web: ApprovalTimeout: no approval of web-4 on {REV_NEW} within 60 s from webhook db; \
             webhook db answered Wait for web-4 on {REV_NEW}: catching up"
        )),
        "{detail}"
    );
    assert_eq!(
        change(&stored, &ev, "degraded-reason").flatten().as_deref(),
        Some(
            format!(
                "ApprovalTimeout: no approval of web-4 on {REV_NEW} within 60 s from webhook db"
            )
            .as_str()
        )
    );
    // The request keeps its deadline: the first call's.
    let ev = evaluate(&stored, &pods, None, late);
    assert_eq!(need(&ev).1["deadline"], json!("2026-11-23T01:21:00Z"));
    // A late approval still lets the step go.
    let ev = evaluate(&stored, &pods, decided(Decision::Approve, "", None), late);
    assert!(matches!(ev.verdict, Verdict::Step { .. }));
}

#[test]
fn the_primary_is_asked_to_switch_over_and_steps_once_it_no_longer_matches() {
    let selector = ("primary-selector", "role=primary");
    let (set, pods) = staged(&[selector], &[(4, "role", "primary")]);
    let ev = evaluate(&set, &pods, None, now());
    let detail = blocked_detail(&ev, Reason::PrimaryNotMoved);
    assert!(
        detail.contains("asked webhook db to move the role (phase Switchover)"),
        "{detail}"
    );
    let (_, body) = need(&ev);
    assert_eq!(
        (&body["phase"], &body["pods"][0]["primary"]),
        (&json!("Switchover"), &json!(true))
    );
    // The webhook approves the switchover, but web-4 still holds the role: no step.
    let ev = evaluate(
        &set,
        &pods,
        decided(Decision::Approve, "moving", None),
        now(),
    );
    let detail = blocked_detail(&ev, Reason::PrimaryNotMoved);
    assert!(detail.contains("it answered Approve: moving"), "{detail}");
    let switchover_id = body["requestId"].clone();
    // The role moved: a new question (phase Update, another id), and its approval steps.
    let (moved, pods) = staged(
        &[selector],
        &[(4, "role", "replica"), (0, "role", "primary")],
    );
    let ev = evaluate(&moved, &pods, None, now());
    let (_, body) = need(&ev);
    assert_eq!(body["phase"], json!("Update"));
    assert_ne!(body["requestId"], switchover_id);
    let ev = evaluate(&moved, &pods, decided(Decision::Approve, "", None), now());
    assert!(
        matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        ev.verdict
    );
}

#[test]
fn annotations_it_cannot_use_are_invalid() {
    let invalid = |annotations: &[(&str, &str)], opts: &GateOptions| {
        let (set, pods) = staged(annotations, &[]);
        let by_ordinal = pods::pods_by_ordinal(&set, pods.iter());
        gates::evaluate(
            &set,
            &by_ordinal,
            &[],
            FleetView::default(),
            &Probes::default(),
            opts,
            now(),
        )
        .verdict
    };
    let detail = |v: Verdict| match v {
        Verdict::Blocked(Blocked {
            reason: Reason::InvalidAnnotation,
            detail,
        }) => detail,
        other => panic!("{other:?}"),
    };
    let d = detail(invalid(&[("pre-update-approval", "true")], &opts()));
    assert!(d.contains("one way of asking the application"), "{d}");
    let d = detail(invalid(
        &[("pre-update-webhook", "https://evil.example/approve")],
        &opts(),
    ));
    assert!(d.contains("never a URL"), "{d}");
    let d = detail(invalid(&[("webhook-error-limit", "many")], &opts()));
    assert!(d.contains("webhook-error-limit: \"many\""), "{d}");
    let others = GateOptions {
        served: Served::default().with(&webhook::FLAG, vec!["approver".into(), "gate".into()]),
        ..GateOptions::default()
    };
    let d = detail(invalid(&[], &others));
    assert_eq!(
        d,
        "safe-rollout.dev/pre-update-webhook: \"db\" names no webhook configured on the stepper; configured: approver, gate"
    );
    let none = GateOptions {
        served: Served::default().with(&webhook::FLAG, Vec::new()),
        ..GateOptions::default()
    };
    assert!(detail(invalid(&[], &none)).contains(
        "none (no --webhook NAME=URL flag, no --webhook-config or --answerer-config entry)"
    ));
}
