//! `<prefix>/approval-pending` (docs/approvals.md, "Where a person looks"): the set records what the
//! approval gates wait for in one stable line — written when the question or its answer changes, not
//! every pass (no live counter), removed by the step and once another gate holds the set. Plans of the
//! real "1-staged" moment (the next step 5→4 replaces web-4).

use std::collections::HashMap;
use std::sync::Arc;

use crate::common::*;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use sts_stepper::config::{Keys, Served, SetConfig, webhook};
use sts_stepper::gates::approval::webhook::answer::{Answer, Decision, WebhookAnswer};
use sts_stepper::gates::{GateOptions, Probes};
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{SetPlan, Snapshot, plan_with};
use sts_stepper::rollout::health::health;
use sts_stepper::sim::scenario::{self, Scenario};

const KEY: &str = "safe-rollout.dev/approval-pending";
const PTR: &str = "/metadata/annotations/safe-rollout.dev~1approval-pending";

fn plan(set: StatefulSet, pods: Vec<Pod>, answer: Option<WebhookAnswer>, t: Timestamp) -> SetPlan {
    let snap = Snapshot {
        statefulsets: vec![Arc::new(set)],
        pods,
        ..Snapshot::default()
    };
    let opts = GateOptions {
        served: Served::default().with(&webhook::FLAG, vec!["db".into()]),
        ..GateOptions::default()
    };
    let probes = HashMap::from([(
        0,
        Probes {
            webhook: answer,
            ..Probes::default()
        },
    )]);
    plan_with(&snap, &opts, t, &probes).remove(0)
}

/// The `approval-pending` op of the plan's status patch: `Some(Some(v))` written, `Some(None)` removed,
/// `None` untouched.
fn written(plan: &SetPlan) -> Option<Option<String>> {
    let patch = serde_json::to_value(plan.status_patch().as_ref()?).expect("json");
    ops_on(&patch)
}

fn ops_on(patch: &Value) -> Option<Option<String>> {
    let op = patch.as_array()?.iter().find(|op| op["path"] == PTR)?;
    Some(op["value"].as_str().map(str::to_string))
}

fn with_line(mut set: StatefulSet, line: &str) -> StatefulSet {
    let map = set
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    map.insert(KEY.into(), line.into());
    set
}

#[test]
fn the_handshake_line_is_written_once_then_left_until_it_changes() {
    let t0 = now();
    let line = format!(
        "approval of web-4 on {REV_NEW} asked at 2026-11-23T01:20:00Z, deadline 2026-11-23T01:30:00Z"
    );
    // The pass that asks: the line, with the request's time and the deadline (default 600 s).
    let (set, pods) = staged_with(&[("pre-update-approval", "true")], &[], &[]);
    let first = plan(set, pods, None, t0);
    assert_eq!(written(&first), Some(Some(line.clone())));

    // 40 s later, web-4 asked at t0 and the line stored: nothing to write (no live counter).
    let asked = [
        (4, "update-requested", REV_NEW),
        (4, "update-requested-at", "2026-11-23T01:20:00Z"),
        (4, "update-request-phase", "Update"),
    ];
    let (set, pods) = staged_with(&[("pre-update-approval", "true")], &asked, &[]);
    let later = t0.checked_add(SignedDuration::from_secs(40)).expect("time");
    let set = with_line(set, &line);
    assert_eq!(written(&plan(set.clone(), pods.clone(), None, later)), None);

    // web-4 denies: the line becomes the denial.
    let mut denied = asked.to_vec();
    denied.push((4, "update-denied", "replica lagging"));
    let (_, denying) = staged_with(&[("pre-update-approval", "true")], &denied, &[]);
    assert_eq!(
        written(&plan(set.clone(), denying, None, later)),
        Some(Some("web-4 denied the update: replica lagging".into()))
    );

    // web-4 approves: the step's own patch removes the line.
    let mut approved = asked.to_vec();
    approved.push((4, "update-approved", REV_NEW));
    let (_, approving) = staged_with(&[("pre-update-approval", "true")], &approved, &[]);
    let step = plan(set, approving, None, later);
    let patch = serde_json::to_value(step.step_patch().as_ref().expect("a step")).expect("json");
    assert_eq!(ops_on(&patch), Some(None), "{patch}");
}

#[test]
fn another_gate_holding_the_set_removes_the_line() {
    let (set, pods) = staged_with(
        &[("pre-update-approval", "true"), ("paused", "true")],
        &[],
        &[],
    );
    let set = with_line(set, "approval of web-4 on x asked at …");
    assert_eq!(written(&plan(set, pods, None, now())), Some(None));
}

#[test]
fn the_webhook_line_names_it_and_its_last_answer() {
    let (set, pods) = staged_with(
        &[("pre-update-webhook", "db"), ("guarded", "true")],
        &[],
        &[],
    );
    let wait = WebhookAnswer::Decided(Answer {
        decision: Decision::Wait,
        reason: "replica lag 12 s".into(),
        retry_after_seconds: None,
    });
    let p = plan(set.clone(), pods, Some(wait), now());
    let line = format!(
        "webhook db: approval of web-4 on {REV_NEW} asked at 2026-11-23T01:20:00Z, deadline \
         2026-11-23T01:30:00Z; answered Wait: replica lag 12 s"
    );
    assert_eq!(written(&p), Some(Some(line.clone())));

    // The set as the patch leaves it: its rollout health (the GitOps message) says what it waits for.
    let mut object = serde_json::to_value(&set).expect("json");
    json_patch::patch(&mut object, p.status_patch().as_ref().expect("patch")).expect("applies");
    let patched: StatefulSet = serde_json::from_value(object).expect("set");
    let config = SetConfig::parse(&patched, &Arc::new(Keys::default()));
    let message = health(&patched, &config).message;
    assert_eq!(
        message,
        format!(
            "staged, waiting for the stepper: 0 of 5 pods on {REV_NEW}; next step blocked: \
             ApprovalPending: {line}"
        )
    );
}

/// Found by `sim_approvals`: a rollback while pod patches fail (409 for 40 s, until t=121). The passes
/// after the undo have nothing to step and fail to withdraw web-0's request; the first pass after the
/// faults withdraws it, and the next removes the `approval-pending` line (the run goes on until
/// then: it ended at t=123 before, with the request still on web-0).
#[test]
fn a_withdrawal_lost_after_a_rollback_is_retried() {
    let s = Scenario::from_yaml(
        "name: lost-withdrawal
set:
  replicas: 1
  annotations: {pre-update-approval: \"true\", approval-timeout-seconds: \"30\"}
  application: {answerSeconds: 6, switchoverSeconds: 0}
timing: {pendingSeconds: 1, readySeconds: 1, terminateSeconds: 1}
stepper: {intervalSeconds: 5}
duration: 300
events:
  - {at: 0, silentApplication: true}
  - {at: 71, apply: {image: v2}}
  - {at: 81, apiFault: {call: patchPod, kind: conflict, seconds: 40}}
  - {at: 86, undo: {}}
  - {at: 122, silentApplication: false}
",
    )
    .expect("scenario");
    let run = scenario::run(&s, false, 7).expect("run");
    let requested = "safe-rollout.dev/update-requested";
    let left: Vec<u32> = run
        .world
        .pods
        .values()
        .filter(|p| p.annotations.contains_key(requested))
        .map(|p| p.ordinal)
        .collect();
    assert!(
        left.is_empty(),
        "requests left on pods {left:?}; set {}",
        run.world.set["metadata"]["annotations"]
    );
    assert!(
        run.world.set["metadata"]["annotations"][KEY].is_null(),
        "approval-pending removed once nothing is left: {}",
        run.world.set["metadata"]["annotations"]
    );
    assert!(run.world.unapproved_replacements.is_empty());
}

/// The complete moment (nothing to step) with the handshake on, `set_notes` on the set and a request
/// on web-2 when `asked`.
fn idle(set_notes: &[(&str, &str)], asked: bool) -> (StatefulSet, Vec<Pod>) {
    let snap = moment("4-complete");
    let mut set = (*snap.statefulsets[0]).clone();
    let map = set
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    map.insert("safe-rollout.dev/pre-update-approval".into(), "true".into());
    for (k, v) in set_notes {
        map.insert(format!("safe-rollout.dev/{k}"), (*v).to_string());
    }
    let mut pods = snap.pods.clone();
    if asked {
        let web2 = pods
            .iter_mut()
            .find(|p| p.metadata.name.as_deref() == Some("web-2"))
            .expect("web-2");
        let notes = web2
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        notes.insert("safe-rollout.dev/update-requested".into(), REV_NEW.into());
    }
    (set, pods)
}

/// A withdrawal the API server drops (the pod changed since the read: a 422 the pass does not count as
/// an error) is retried: the line says it is under way, so the next pass reads the pods again.
#[test]
fn a_withdrawal_keeps_the_line_until_no_request_is_left() {
    let withdrawing = "withdrawing the requests on web-2: nothing left to step";
    // Rolled back while blocked: the request is withdrawn and the line says so.
    let (set, pods) = idle(&[("blocked-reason", "ApprovalPending")], true);
    let p = plan(set, pods, None, now());
    assert_eq!(p.pod_writes.len(), 1);
    assert_eq!(written(&p), Some(Some(withdrawing.into())));
    // The withdrawal was lost: the line (not the blocked-reason, now removed) keeps the pods read and
    // the write retried, without a set write.
    let (set, pods) = idle(&[("approval-pending", withdrawing)], true);
    assert!(sts_stepper::gates::withdraws_requests(&SetConfig::parse(
        &set,
        &Arc::new(Keys::default())
    )));
    let p = plan(set, pods, None, now());
    assert_eq!(p.pod_writes.len(), 1);
    assert_eq!(written(&p), None);
    // No request left: the line goes.
    let (set, pods) = idle(&[("approval-pending", withdrawing)], false);
    let p = plan(set, pods, None, now());
    assert!(p.pod_writes.is_empty());
    assert_eq!(written(&p), Some(None));
}

/// A pod that denies before it is asked (its operator blocks updates while a replica lags) is announced
/// once, a Warning `ApprovalDenied`, as the line becomes the denial; not again while it stands.
#[test]
fn a_denial_before_any_request_is_announced_once() {
    let denied = [(4, "update-denied", "replica lagging")];
    let (set, pods) = staged_with(&[("pre-update-approval", "true")], &denied, &[]);
    let p = plan(set.clone(), pods.clone(), None, now());
    let line = "web-4 denied the update: replica lagging";
    assert_eq!(written(&p), Some(Some(line.into())));
    assert!(
        p.pod_writes.is_empty(),
        "nothing to withdraw: {:?}",
        p.pod_writes
    );
    let announced: Vec<(EventType, &str)> = p
        .events()
        .iter()
        .filter(|e| e.reason == "ApprovalDenied")
        .map(|e| (e.type_, e.note.as_str()))
        .collect();
    assert_eq!(announced, [(EventType::Warning, line)]);
    let again = plan(with_line(set, line), pods, None, now());
    assert!(
        again.events().iter().all(|e| e.reason != "ApprovalDenied"),
        "{:?}",
        again.events()
    );
}
