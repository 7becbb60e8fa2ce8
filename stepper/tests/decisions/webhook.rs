//! The approval webhook (docs/approvals.md, "Webhook") as pure decisions on the real "1-staged" moment
//! (a 5-replica set staged at partition 5: the next step 5→4 replaces web-4): the exact request the
//! gates ask the pass to POST, and each decision (`Approve`, `Wait`, `Deny`) as the gate, the record and
//! a plan's Events see it. Errors, the deadline, the primary and bad annotations: webhook_records.rs.

use crate::common::webhook_gate::*;
use crate::common::*;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use sts_stepper::gates::{Need, Verdict};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::plan_with;

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
            "statefulSet": {"namespace": "demo", "name": "web", "uid": set.metadata.uid.clone().unwrap(),
                             "serviceName": set.spec.as_ref().unwrap().service_name.clone().unwrap_or_default(),
                             "startOrdinal": 0},
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
    // The same question a minute later, its first call recorded (`webhook-state`): the same id
    // (retries are idempotent for the application).
    let waited = evaluate(&set, &pods, decided(Decision::Wait, "", None), now());
    let recorded = with_record(&set, &waited);
    let later = evaluate(&recorded, &pods, None, at("2026-11-23T01:21:00Z"));
    assert_eq!(need(&later).1["requestId"], json!(id));
    // Unrecorded (the first call's record was lost), it is asked as a new question, under a new id.
    let lost = evaluate(&set, &pods, None, at("2026-11-23T01:21:00Z"));
    assert_ne!(need(&lost).1["requestId"], json!(id));
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
    let reasons: Vec<&str> = plan.events().iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["Approved"], "{:?}", plan.events());
    assert_eq!(
        plan.events()[0].note,
        format!("webhook db approved updateRevision {REV_NEW} for web-4")
    );
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
    let recorded = with_record(&plain, &first);
    let again = evaluate(
        &recorded,
        &pods,
        decided(Decision::Wait, "x", None),
        at("2026-11-23T01:20:05Z"),
    );
    assert_eq!(
        change(&recorded, &again, "webhook-state"),
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
                .events()
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
