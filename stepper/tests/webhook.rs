//! The approval webhook (docs/approvals.md, "Webhook") as pure decisions on the real "1-staged" moment
//! (a 5-replica set staged at partition 5: the next step 5→4 replaces web-4): the exact request the
//! gates ask the pass to POST, each decision and error as the gate and the record see it, the
//! `WebhookErrors` and `ApprovalTimeout` records, the Events of a plan, the primary's `Switchover`, and
//! the annotations a set cannot use (`InvalidAnnotation`).
mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::*;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use sts_stepper::gates::webhook::WebhookState;
use sts_stepper::gates::webhook_answer::{Answer, Decision, WebhookAnswer};
use sts_stepper::gates::{self, Evaluation, FleetView, GateOptions, Need, Probes, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::plan::{Snapshot, plan_with};

const P: &str = "safe-rollout.dev";

fn key(name: &str) -> String {
    format!("{P}/{name}")
}

/// The staged moment with `annotations` added to the set (the webhook `db` always) and `labels` on pods
/// by ordinal.
fn staged(annotations: &[(&str, &str)], labels: &[(u32, &str, &str)]) -> (StatefulSet, Vec<Pod>) {
    let mut all = vec![("pre-update-webhook", "db")];
    all.extend_from_slice(annotations);
    staged_with(&all, &[], labels)
}

fn opts() -> GateOptions {
    GateOptions {
        webhooks: Some(vec!["db".into()]),
        ..GateOptions::default()
    }
}

fn evaluate(
    set: &StatefulSet,
    pods: &[Pod],
    answer: Option<WebhookAnswer>,
    now: Timestamp,
) -> Evaluation {
    let by_ordinal = pods::pods_by_ordinal(set, pods.iter());
    let probes = Probes {
        webhook: answer,
        ..Probes::default()
    };
    gates::evaluate(
        set,
        &by_ordinal,
        &[],
        FleetView::default(),
        &probes,
        &opts(),
        now,
    )
}

fn decided(decision: Decision, reason: &str, retry: Option<u32>) -> Option<WebhookAnswer> {
    Some(WebhookAnswer::Decided(Answer {
        decision,
        reason: reason.into(),
        retry_after_seconds: retry,
    }))
}

fn blocked_detail(ev: &Evaluation, reason: Reason) -> String {
    match &ev.verdict {
        Verdict::Blocked(b) if b.reason == reason => b.detail.clone(),
        other => panic!("expected Blocked {reason}, got {other:?}"),
    }
}

/// The value the gates set for annotation `name` (`Some(None)`: removed; `None`: unchanged).
fn change(ev: &Evaluation, name: &str) -> Option<Option<String>> {
    ev.changes
        .iter()
        .find(|(k, _)| *k == key(name))
        .map(|(_, v)| v.clone())
}

fn state(ev: &Evaluation) -> WebhookState {
    let value = change(ev, "webhook-state")
        .flatten()
        .expect("webhook-state written");
    WebhookState::parse(&value).expect("a record")
}

/// The set with the record `ev` wrote stored on it (and `extra` annotations).
fn with_record(set: &StatefulSet, ev: &Evaluation) -> StatefulSet {
    let mut s = set.clone();
    let a = s.metadata.annotations.get_or_insert_with(Default::default);
    for (k, v) in &ev.changes {
        match v {
            Some(v) => a.insert(k.clone(), v.clone()),
            None => a.remove(k),
        };
    }
    s
}

fn need(ev: &Evaluation) -> (String, Value) {
    match &ev.need {
        Some(Need::Webhook { name, body }) => (name.clone(), body.clone()),
        other => panic!("expected a webhook call, got {other:?}"),
    }
}

#[test]
fn the_request_is_the_versioned_json_of_the_step() {
    let (set, pods) = staged(&[], &[]);
    let ev = evaluate(&set, &pods, None, now());
    assert!(
        blocked_detail(&ev, Reason::ApprovalPending)
            .contains(&format!("asking webhook db to approve web-4 on {REV_NEW}")),
        "{:?}",
        ev.verdict
    );
    let (name, body) = need(&ev);
    assert_eq!(name, "db");
    let web4 = pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some("web-4"))
        .unwrap();
    let id = body["requestId"].as_str().expect("an id").to_string();
    assert_eq!(id.len(), 16);
    let status = set.status.as_ref().unwrap();
    assert_eq!(
        body,
        json!({
            "apiVersion": "safe-rollout.dev/v1alpha1",
            "kind": "UpdateApprovalRequest",
            "requestId": id,
            "statefulSet": {"namespace": "demo", "name": "web", "uid": set.metadata.uid.clone().unwrap()},
            "phase": "Update",
            "pods": [{
                "name": "web-4",
                "uid": web4.metadata.uid.clone().unwrap(),
                "ordinal": 4,
                "labels": web4.metadata.labels.clone().unwrap(),
                "primary": false,
            }],
            "currentRevision": REV_OLD,
            "updateRevision": REV_NEW,
            "partition": {"from": 5, "to": 4},
            "replicas": 5,
            "updatedReplicas": status.updated_replicas.unwrap_or(0),
            "readyReplicas": status.ready_replicas.unwrap_or(0),
            "deadline": "2026-11-23T01:30:00Z",
        })
    );
    // The same question a minute later: the same id (retries are idempotent for the application).
    let later = evaluate(&set, &pods, None, at("2026-11-23T01:21:00Z"));
    assert_eq!(need(&later).1["requestId"], json!(id));
    // Another step size is another question.
    let (two, _) = staged(&[("step", "2")], &[]);
    assert_ne!(
        need(&evaluate(&two, &pods, None, now())).1["requestId"],
        json!(id)
    );
}

#[test]
fn approve_steps_at_once_and_records_nothing() {
    let (set, pods) = staged(&[], &[]);
    let ev = evaluate(&set, &pods, decided(Decision::Approve, "ok", None), now());
    assert!(
        matches!(ev.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        ev.verdict
    );
    assert!(ev.need.is_none());
    // The plan announces it with the step.
    let snap = snapshot(set, pods);
    let probes = probes_of(decided(Decision::Approve, "ok", None));
    let plan = &plan_with(&snap, &opts(), now(), &probes)[0];
    let reasons: Vec<&str> = plan
        .status_events
        .iter()
        .map(|e| e.reason.as_str())
        .collect();
    assert_eq!(reasons, ["Approved"], "{:?}", plan.status_events);
    assert_eq!(
        plan.status_events[0].note,
        format!("webhook db approved updateRevision {REV_NEW} for web-4")
    );
}

fn snapshot(set: StatefulSet, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        statefulsets: vec![Arc::new(set)],
        pods,
        ..Snapshot::default()
    }
}

fn probes_of(answer: Option<WebhookAnswer>) -> HashMap<usize, Probes> {
    HashMap::from([(
        0,
        Probes {
            webhook: answer,
            ..Probes::default()
        },
    )])
}

#[test]
fn wait_holds_and_retry_after_delays_the_next_call() {
    let (set, pods) = staged(&[], &[]);
    let ev = evaluate(
        &set,
        &pods,
        decided(Decision::Wait, "draining 3 connections", Some(30)),
        now(),
    );
    let detail = blocked_detail(&ev, Reason::ApprovalPending);
    assert!(
        detail.contains(&format!(
            "webhook db answered Wait for web-4 on {REV_NEW}: draining 3 connections"
        )) && detail.contains("waited 0 s of 600 s")
            && detail.contains("next call in 30 s"),
        "{detail}"
    );
    let s = state(&ev);
    assert_eq!(
        (
            s.decision,
            s.retry_at,
            s.first_asked,
            s.partition,
            s.pods.clone()
        ),
        (
            Some(Decision::Wait),
            Some(at("2026-11-23T01:20:30Z")),
            now(),
            5,
            vec!["web-4".to_string()]
        )
    );
    let stored = with_record(&set, &ev);
    // Before retryAt: no call, the stored answer shown.
    let ev = evaluate(&stored, &pods, None, at("2026-11-23T01:20:10Z"));
    assert!(ev.need.is_none(), "no call before retryAfterSeconds");
    let detail = blocked_detail(&ev, Reason::ApprovalPending);
    assert!(
        detail.contains("draining") && detail.contains("next call in 20 s"),
        "{detail}"
    );
    // Then the next pass calls; the same answer again writes nothing new.
    let ev = evaluate(&stored, &pods, None, at("2026-11-23T01:20:30Z"));
    assert!(matches!(ev.need, Some(Need::Webhook { .. })));
    let (plain, _) = staged(&[], &[]);
    let first = evaluate(&plain, &pods, decided(Decision::Wait, "x", None), now());
    let again = evaluate(
        &with_record(&plain, &first),
        &pods,
        decided(Decision::Wait, "x", None),
        at("2026-11-23T01:20:05Z"),
    );
    assert_eq!(
        change(&again, "webhook-state"),
        None,
        "an unchanged record is not rewritten"
    );
}

#[test]
fn deny_blocks_with_its_reason_and_is_announced_once_per_episode() {
    let (set, pods) = staged(&[], &[]);
    let deny = || decided(Decision::Deny, "backup of shard 3 running", None);
    let ev = evaluate(&set, &pods, deny(), now());
    assert_eq!(
        blocked_detail(&ev, Reason::ApprovalPending),
        "web: webhook db denied the update of web-4: backup of shard 3 running; waited 0 s of 600 s"
    );
    let reasons =
        |set: &StatefulSet, answer: Option<WebhookAnswer>, t: Timestamp| -> Vec<(String, String)> {
            let snap = snapshot(set.clone(), pods.clone());
            plan_with(&snap, &opts(), t, &probes_of(answer))[0]
                .status_events
                .iter()
                .filter(|e| e.reason.starts_with("Approval"))
                .map(|e| (e.reason.clone(), e.note.clone()))
                .collect()
        };
    assert_eq!(
        reasons(&set, deny(), now()),
        [
            (
                "ApprovalRequested".to_string(),
                format!("asked webhook db to approve updateRevision {REV_NEW} for web-4")
            ),
            (
                "ApprovalDenied".to_string(),
                "webhook db denied the update of web-4: backup of shard 3 running".to_string()
            ),
        ]
    );
    let denied = with_record(&set, &ev);
    let t1 = at("2026-11-23T01:20:10Z");
    assert!(
        reasons(&denied, deny(), t1).is_empty(),
        "the same denial again: no Event"
    );
    // An error between two denials does not start a new episode; a Wait does.
    let err = evaluate(
        &denied,
        &pods,
        Some(WebhookAnswer::Error("HTTP 500".into())),
        t1,
    );
    assert!(reasons(&with_record(&denied, &err), deny(), t1).is_empty());
    let wait = evaluate(&denied, &pods, decided(Decision::Wait, "", None), t1);
    assert_eq!(reasons(&with_record(&denied, &wait), deny(), t1).len(), 1);
}

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
    assert_eq!(change(&first, "degraded-reason"), None);
    let s = state(&first);
    assert_eq!((s.errors, s.decision), (1, None));
    let t1 = at("2026-11-23T01:20:10Z");
    let second = evaluate(
        &with_record(&set, &first),
        &pods,
        error("HTTP 500: boom"),
        t1,
    );
    let record = change(&second, "degraded-reason")
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
        plan.status_events
            .iter()
            .any(|e| e.reason == "RolloutDegraded"),
        "{:?}",
        plan.status_events
    );
    // A decision clears the errors and the record.
    let degraded = with_record(&set, &second);
    let wait = evaluate(&degraded, &pods, decided(Decision::Wait, "", None), t1);
    assert_eq!(change(&wait, "degraded-reason"), Some(None));
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
        change(&ev, "degraded-reason").flatten().as_deref(),
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
        webhooks: Some(vec!["approver".into(), "gate".into()]),
        ..GateOptions::default()
    };
    let d = detail(invalid(&[], &others));
    assert_eq!(
        d,
        "safe-rollout.dev/pre-update-webhook: \"db\" names no webhook configured on the stepper; configured: approver, gate"
    );
    let none = GateOptions {
        webhooks: Some(Vec::new()),
        ..GateOptions::default()
    };
    assert!(
        detail(invalid(&[], &none))
            .contains("none (no --webhook NAME=URL flag, no --webhook-config entry)")
    );
}
