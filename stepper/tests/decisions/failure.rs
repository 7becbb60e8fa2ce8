//! What a failure does (docs/rollback.md): the progress deadline (`progress-deadline-seconds`) pauses or
//! rolls back, gate `FailedRevision` holds a re-apply of the failed revision, the steps back skip the
//! check that failed, a new revision's first step ends the record, `resume --retry` forgets it.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common::plans::applied;
use crate::common::*;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use sts_stepper::config::{FailedRevision, Keys, SetConfig};
use sts_stepper::gates::{
    self, CheckRead, Effect, Evaluation, FleetView, GateOptions, Need, Probes, Verdict,
};
use sts_stepper::model::pods::pods_by_ordinal;
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::degraded;
use sts_stepper::plan::patch::{ends_rollback, step_changes};
use sts_stepper::plan::pause::{resume_patch, retry_patch};
use sts_stepper::plan::set_write::{Changes, SetWrite, SpecWrite};

const P: &str = "safe-rollout.dev";

/// 5 replicas stepped to partition 3 at 01:00 (web-3, web-4 on `b`), `annotations` added; pod
/// `not_ready` not Ready.
fn stepped(annotations: &[(&str, &str)], not_ready: Option<u32>) -> (Value, Vec<Pod>) {
    let mut v = set_json("web", 5, Some(3), 2);
    v["metadata"]["annotations"][format!("{P}/last-partition-update")] =
        json!("2026-11-23T01:00:00Z");
    for (name, value) in annotations {
        v["metadata"]["annotations"][format!("{P}/{name}")] = json!(value);
    }
    let pods = (0..5)
        .map(|o| {
            let mut p = pod_json("web", "web", o, if o >= 3 { "b" } else { "a" });
            if Some(o) == not_ready {
                p["status"]["conditions"][0]["status"] = json!("False");
            }
            pod_from(p)
        })
        .collect();
    (v, pods)
}

fn evaluate(v: &Value, pods: &[Pod], now: &str) -> Evaluation {
    let set = set_from(v.clone());
    let by_ordinal: BTreeMap<u32, &Pod> = pods_by_ordinal(&set, pods.iter());
    gates::evaluate(
        &set,
        &by_ordinal,
        &[],
        FleetView::default(),
        &Probes::default(),
        &GateOptions::default(),
        now.parse::<Timestamp>().expect("time"),
    )
}

fn failure(ev: &Evaluation) -> Option<&Effect> {
    (ev.effects.iter()).find(|e| matches!(e, Effect::Pause { .. } | Effect::RollBack { .. }))
}

#[test]
fn a_step_past_its_deadline_pauses_or_rolls_back_as_the_set_says() {
    let deadline = [("progress-deadline-seconds", "600")];
    let (v, pods) = stepped(&deadline, Some(4));
    // Before the deadline: blocked, nothing more.
    let ev = evaluate(&v, &pods, "2026-11-23T01:09:59Z");
    assert!(matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::PodNotReady));
    assert_eq!(failure(&ev), None);
    // Past it: paused, as a failure-limit pauses.
    let ev = evaluate(&v, &pods, "2026-11-23T01:10:00Z");
    match failure(&ev) {
        Some(Effect::Pause { kind, reason, .. }) => {
            assert_eq!(kind.as_str(), "ProgressDeadline");
            assert!(
                reason.contains("not done within 600 s on revision b"),
                "{reason}"
            );
        }
        other => panic!("expected a pause, got {other:?}"),
    }
    // With on-failure: rollback, back to status.currentRevision.
    let (v, pods) = stepped(&[deadline[0], ("on-failure", "rollback")], Some(4));
    let ev = evaluate(&v, &pods, "2026-11-23T01:10:00Z");
    match failure(&ev) {
        Some(Effect::RollBack { failed, to }) => {
            assert_eq!((failed.revision.as_str(), to.as_str()), ("b", "a"));
            assert!(
                failed.reason.starts_with("ProgressDeadline: "),
                "{failed:?}"
            );
        }
        other => panic!("expected a rollback, got {other:?}"),
    }
}

#[test]
fn the_deadline_is_the_steps_own_pods_not_a_pod_below_the_partition_nor_a_set_not_stepped() {
    let deadline = [("progress-deadline-seconds", "600")];
    // web-1 (below the partition, on the old revision) not Ready: not the step's failure.
    let (v, pods) = stepped(&deadline, Some(1));
    assert_eq!(failure(&evaluate(&v, &pods, "2026-11-23T02:00:00Z")), None);
    // No deadline annotation: never.
    let (v, pods) = stepped(&[], Some(4));
    assert_eq!(failure(&evaluate(&v, &pods, "2026-11-23T02:00:00Z")), None);
    // Staged, not stepped yet (partition = replicas): no step of this rollout to time.
    let (mut v, pods) = stepped(&deadline, Some(4));
    v["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(5);
    assert_eq!(failure(&evaluate(&v, &pods, "2026-11-23T02:00:00Z")), None);
}

#[test]
fn a_revision_recorded_as_failed_is_held_and_another_is_not() {
    let (v, pods) = stepped(&[("failed-revision", "b: FailureLimit: boom")], None);
    let ev = evaluate(&v, &pods, "2026-11-23T02:00:00Z");
    match &ev.verdict {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::FailedRevision);
            assert!(
                b.detail
                    .contains("revision b was rolled back (FailureLimit: boom)")
                    && b.detail.contains("resume web --retry"),
                "{}",
                b.detail
            );
        }
        other => panic!("expected FailedRevision, got {other:?}"),
    }
    let (v, pods) = stepped(&[("failed-revision", "c: FailureLimit: boom")], None);
    let ev = evaluate(&v, &pods, "2026-11-23T02:00:00Z");
    assert!(
        matches!(ev.verdict, Verdict::Step { .. }),
        "{:?}",
        ev.verdict
    );
}

#[test]
fn the_steps_back_do_not_ask_the_check_that_failed() {
    let check = [("prometheus-query", "up == 1"), ("success-threshold", "1")];
    // The revert staged: updateRevision is currentRevision `a`; web-3, web-4 still on `b`.
    let back = |record: Option<&str>| {
        let mut notes = check.to_vec();
        notes.extend(record.map(|r| ("failed-revision", r)));
        let (mut v, pods) = stepped(&notes, None);
        v["status"]["updateRevision"] = json!("a");
        v["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(5);
        v["status"]["updatedReplicas"] = json!(3);
        evaluate(&v, &pods, "2026-11-23T02:00:00Z")
    };
    let stepping_back = back(Some("b: FailureLimit: boom"));
    assert!(
        matches!(stepping_back.verdict, Verdict::Step { from: 5, to: 4, .. }),
        "{:?}",
        stepping_back.verdict
    );
    assert_eq!(stepping_back.need, None, "no query run");
    // The same set without the record: the check is asked.
    let asked = back(None);
    assert!(
        matches!(asked.need, Some(Need::Check(CheckRead::Queries(_)))),
        "{:?}",
        asked.need
    );
}

fn config(v: &Value) -> SetConfig {
    SetConfig::parse(&set_from(v.clone()), &Arc::new(Keys::default()))
}

/// The step's write as the plan makes it: its own changes ([`step_changes`]) with what
/// `plan::degraded` decides for a step (`Claim::Step`).
fn step_write(v: &Value, from: i32, to: i32, revision: &str, now: Timestamp) -> json_patch::Patch {
    let (set, config) = (set_from(v.clone()), config(v));
    let mut annotations: Changes = step_changes(&set, &config, revision, now)
        .into_iter()
        .collect();
    let new_revision = ends_rollback(&set, &config, revision);
    let change = degraded::next(&config, &[degraded::Claim::Step { new_revision }]);
    annotations.extend(change.keyed(&config));
    let write = SetWrite {
        spec: SpecWrite::Step {
            from,
            to,
            update_revision: revision.into(),
        },
        annotations,
        ..SetWrite::default()
    };
    write.patch(&set, None).expect("a step")
}

#[test]
fn a_new_revisions_first_step_ends_the_record_and_the_steps_back_keep_it() {
    let record = [
        ("failed-revision", "x: FailureLimit: boom"),
        (
            "degraded-reason",
            "RolledBack: revision x failed (FailureLimit: boom); back to revision a",
        ),
    ];
    let (v, _) = stepped(&record, None);
    let now = at("2026-11-23T02:00:00Z");
    // A step of `b` (neither the failed `x` nor the current `a`): the record goes.
    let after = applied(&v, &step_write(&v, 3, 2, "b", now)).expect("applies");
    let notes = &after["metadata"]["annotations"];
    assert!(
        notes.get(format!("{P}/failed-revision")).is_none(),
        "{notes}"
    );
    assert!(
        notes.get(format!("{P}/degraded-reason")).is_none(),
        "{notes}"
    );
    // A step back to the current revision `a`: kept.
    let mut back = v.clone();
    back["status"]["updateRevision"] = json!("a");
    let after = applied(&back, &step_write(&back, 3, 2, "a", now)).expect("applies");
    let notes = &after["metadata"]["annotations"];
    assert!(
        notes.get(format!("{P}/failed-revision")).is_some(),
        "{notes}"
    );
    assert!(
        notes.get(format!("{P}/degraded-reason")).is_some(),
        "{notes}"
    );
}

#[test]
fn resume_retry_forgets_the_record_and_resume_alone_does_not() {
    let failed = FailedRevision {
        revision: "b".into(),
        reason: "FailureLimit: boom".into(),
    };
    let (v, _) = stepped(
        &[
            ("failed-revision", failed.to_annotation().as_str()),
            (
                "degraded-reason",
                "RolledBack: revision b failed (FailureLimit: boom); back to revision a",
            ),
        ],
        None,
    );
    let set = set_from(v.clone());
    assert_eq!(resume_patch(&set, &config(&v)), None, "nothing paused");
    let patch = retry_patch(&set, &config(&v)).expect("a retry patch");
    let after = applied(&v, &patch).expect("applies");
    let notes = &after["metadata"]["annotations"];
    assert!(
        notes.get(format!("{P}/failed-revision")).is_none(),
        "{notes}"
    );
    assert!(
        notes.get(format!("{P}/degraded-reason")).is_none(),
        "{notes}"
    );
    assert_eq!(notes["team"], "db", "other annotations stay");
}
