//! Returning the pods a re-apply left on a failed revision (`gates::returning`, docs/rollback.md): the
//! failed template applied again while the steps back were under way leaves pods below the partition on
//! it; each is deleted, highest ordinal first, under the gates of the step back it stands for.

use std::collections::BTreeMap;

use crate::common::plans::{plan_one, snapshot};
use crate::common::verdicts::opts;
use crate::common::*;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::approval::{Phase, PodWriteKind};
use sts_stepper::gates::returning::may_return;
use sts_stepper::gates::{self, Evaluation, FleetView, GateOptions, Probes, Verdict};
use sts_stepper::model::pods::{PdbView, pods_by_ordinal};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan;

const P: &str = "safe-rollout.dev";

/// 5 replicas, `b` (recorded as failed) applied again and staged at partition 5 while `a` is
/// `status.currentRevision`; the pods in `on_b` still run `b`, the others `a`. Each pod has a uid and
/// resourceVersion (the DELETE's preconditions); `annotations` are added to the set.
fn reapplied(annotations: &[(&str, &str)], on_b: &[u32]) -> (Value, Vec<Value>) {
    let mut v = set_json("web", 5, Some(5), on_b.len() as i32);
    v["metadata"]["annotations"][format!("{P}/failed-revision")] = json!("b: FailureLimit: boom");
    for (name, value) in annotations {
        v["metadata"]["annotations"][format!("{P}/{name}")] = json!(value);
    }
    let pods = (0..5)
        .map(|o| {
            let mut p = pod_json("web", "web", o, if on_b.contains(&o) { "b" } else { "a" });
            p["metadata"]["uid"] = json!(format!("pod-uid-{o}"));
            p["metadata"]["resourceVersion"] = json!(format!("{}", 700 + o));
            p
        })
        .collect();
    (v, pods)
}

fn evaluate(v: &Value, pods: &[Value], pdbs: &[PodDisruptionBudget]) -> Evaluation {
    let set = set_from(v.clone());
    let pods: Vec<Pod> = pods.iter().cloned().map(pod_from).collect();
    let by_ordinal: BTreeMap<u32, &Pod> = pods_by_ordinal(&set, pods.iter());
    let views: Vec<PdbView<'_>> = pdbs.iter().map(PdbView::new).collect();
    gates::evaluate(
        &set,
        &by_ordinal,
        &views,
        FleetView::default(),
        &Probes::default(),
        &GateOptions::default(),
        "2026-11-23T02:00:00Z".parse::<Timestamp>().expect("time"),
    )
}

/// The `FailedRevision` detail of `ev` (panics on another verdict).
fn held_detail(ev: &Evaluation) -> &str {
    match &ev.verdict {
        Verdict::Blocked(b) if b.reason == Reason::FailedRevision => &b.detail,
        other => panic!("expected FailedRevision, got {other:?}"),
    }
}

#[test]
fn the_highest_pod_on_the_failed_revision_below_the_partition_is_returned_first() {
    let (v, pods) = reapplied(&[], &[2, 3]);
    let ev = evaluate(&v, &pods, &[]);
    let detail = held_detail(&ev);
    assert!(
        detail.contains("returning web-3 to a (2 pod(s) left on it): deleted this pass"),
        "{detail}"
    );
    let r = ev.returning.as_deref().expect("a return");
    assert!(r.deletes(), "{r:?}");
    assert_eq!(
        (
            r.pod.name.as_str(),
            r.pod.uid.as_str(),
            r.pod.resource_version.as_str()
        ),
        ("web-3", "pod-uid-3", "703"),
        "pinned to the pod as read"
    );
    assert_eq!((r.pod.revision.as_str(), r.pod.to.as_str()), ("b", "a"));
    // web-3 gone and recreated on `a`: web-2 next.
    let (v, pods) = reapplied(&[], &[2]);
    let r = evaluate(&v, &pods, &[]).returning.expect("a return");
    assert_eq!((r.pod.name.as_str(), r.pod.left), ("web-2", 1));
}

#[test]
fn nothing_to_return_is_the_plain_hold() {
    let (v, pods) = reapplied(&[], &[]);
    let ev = evaluate(&v, &pods, &[]);
    assert!(!held_detail(&ev).contains("returning"), "{:?}", ev.verdict);
    assert_eq!(ev.returning, None);
    // A pod on `b` at or above the partition is the controller's, not a return.
    let (mut v, pods) = reapplied(&[], &[4]);
    v["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
    assert_eq!(evaluate(&v, &pods, &[]).returning, None);
    // The failed revision not applied again (the steps back under way): no return, a step back.
    let (mut v, pods) = reapplied(&[], &[3]);
    v["status"]["updateRevision"] = json!("a");
    let ev = evaluate(&v, &pods, &[]);
    assert_eq!(ev.returning, None);
    assert!(
        matches!(ev.verdict, Verdict::Step { .. }),
        "{:?}",
        ev.verdict
    );
}

#[test]
fn a_pause_holds_the_return_and_a_pod_down_or_the_pdb_hold_it() {
    let (v, pods) = reapplied(&[("paused", "true")], &[3]);
    let ev = evaluate(&v, &pods, &[]);
    assert!(
        matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::Paused),
        "{:?}",
        ev.verdict
    );
    assert_eq!(ev.returning, None, "a pause stops every write");

    let (v, mut pods) = reapplied(&[], &[3]);
    pods[1]["status"]["conditions"][0]["status"] = json!("False");
    let ev = evaluate(&v, &pods, &[]);
    let r = ev.returning.as_deref().expect("a return");
    assert_eq!(
        r.held.as_ref().map(|b| b.reason),
        Some(Reason::PodNotReady),
        "{r:?}"
    );
    assert!(held_detail(&ev).ends_with("held by PodNotReady"));

    let (v, pods) = reapplied(&[], &[3]);
    let budget = pdb("web", json!({"matchLabels": {"app": "web"}}), 0);
    let r = evaluate(&v, &pods, &[budget]).returning.expect("a return");
    assert_eq!(r.held.map(|b| b.reason), Some(Reason::PdbBlocked));
}

#[test]
fn the_failed_checks_are_not_asked_for_a_return() {
    let check = [("prometheus-query", "up == 1"), ("success-threshold", "1")];
    let (v, pods) = reapplied(&check, &[3]);
    let ev = evaluate(&v, &pods, &[]);
    assert_eq!(ev.need, None, "no query run");
    assert!(ev.returning.expect("a return").deletes());
}

#[test]
fn a_primary_on_the_failed_revision_switches_over_before_it_is_returned() {
    let handshake = [
        ("pre-update-approval", "true"),
        ("primary-selector", "role=primary"),
    ];
    let (v, mut pods) = reapplied(&handshake, &[3]);
    pods[3]["metadata"]["labels"]["role"] = json!("primary");
    let ev = evaluate(&v, &pods, &[]);
    let r = ev.returning.as_deref().expect("a return");
    assert_eq!(
        r.held.as_ref().map(|b| b.reason),
        Some(Reason::PrimaryNotMoved)
    );
    assert_eq!(ev.pod_writes.len(), 1, "{:?}", ev.pod_writes);
    let w = &ev.pod_writes[0];
    assert_eq!(
        (w.name.as_str(), &w.kind),
        ("web-3", &PodWriteKind::Request(Phase::Switchover))
    );
    let asked = w
        .changes
        .iter()
        .find(|(k, _)| k == &format!("{P}/update-requested"))
        .and_then(|(_, v)| v.as_deref());
    assert_eq!(asked, Some("a"), "asked for the revision it returns to");

    // The role moved and web-3 approved `a`: returned.
    for (k, val) in [
        ("update-requested", "a"),
        ("update-request-phase", "Switchover"),
        ("update-approved", "a"),
    ] {
        pods[3]["metadata"]["annotations"][format!("{P}/{k}")] = json!(val);
    }
    pods[3]["metadata"]["labels"]["role"] = json!("replica");
    pods[0]["metadata"]["labels"]["role"] = json!("primary");
    let r = evaluate(&v, &pods, &[]).returning.expect("a return");
    assert!(r.deletes(), "{r:?}");
}

#[test]
fn the_list_says_which_held_sets_have_pods_to_read() {
    let keys = Keys::default().into();
    let may = |v: &Value| {
        let set = set_from(v.clone());
        may_return(&set, &SetConfig::parse(&set, &keys))
    };
    let (v, _) = reapplied(&[], &[3]);
    assert!(may(&v));
    let (v, _) = reapplied(&[], &[]);
    assert!(!may(&v), "no pod on the failed revision");
    let (mut v, _) = reapplied(&[], &[4]);
    v["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
    assert!(!may(&v), "the one pod on it is at the partition");
    let (mut v, _) = reapplied(&[], &[3]);
    v["status"]["updateRevision"] = json!("c");
    assert!(!may(&v), "another revision: no FailedRevision hold");
}

#[test]
fn the_plan_deletes_the_pod_and_a_pass_reads_the_held_sets_pods() {
    let (v, pods) = reapplied(&[], &[3]);
    let p = plan_one(
        v.clone(),
        pods.iter().cloned().map(pod_from).collect(),
        None,
    );
    assert!(
        p.deletes_a_pod() && !p.writes_nothing(),
        "{:?}",
        p.returning
    );
    assert_eq!(p.step_patch(), None, "no partition written");
    let (snap, opts) = (snapshot(vec![v], Vec::new()), opts());
    let planner = plan::Planner::new(&snap, &opts);
    assert_eq!(planner.candidates(now()), vec![0], "its pods are read");
    // Without a pod on the failed revision the held set is not read.
    let (v, _) = reapplied(&[], &[]);
    let snap = snapshot(vec![v], Vec::new());
    assert!(
        plan::Planner::new(&snap, &opts)
            .candidates(now())
            .is_empty()
    );
}

#[test]
fn a_return_waiting_for_the_application_records_the_approval_note() {
    let handshake = [("pre-update-approval", "true")];
    let (v, pods) = reapplied(&handshake, &[3]);
    let p = plan_one(v, pods.into_iter().map(pod_from).collect(), None);
    let held = p.returning.as_deref().and_then(|r| r.held.as_ref());
    assert_eq!(held.map(|b| b.reason), Some(Reason::ApprovalPending));
    let patch = serde_json::to_value(p.status_patch().expect("a status write")).expect("json");
    let note = patch
        .as_array()
        .expect("ops")
        .iter()
        .find(|op| op["path"] == format!("/metadata/annotations/{P}~1approval-pending"))
        .map(|op| op["value"].clone());
    assert!(
        note.as_ref()
            .and_then(Value::as_str)
            .is_some_and(|n| n.contains("web-3")),
        "{patch}"
    );
}
