//! The record of a refused write (`<prefix>/degraded-reason`) as pure data: its value, when it is
//! news, its patch, and which pass removes it again — never another writer's `<Kind>: …` value.

use crate::common::*;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::Keys;
use sts_stepper::gates::{GateOptions, Idle, Verdict};
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::plan::degraded::{RecordBase, record_patch};
use sts_stepper::plan::rejected::{RefusedWrite, Rejection, cleared_by_step, cleared_without_step};
use sts_stepper::plan::{self, Snapshot};

const KEY_PTR: &str = "/metadata/annotations/safe-rollout.dev~1degraded-reason";

#[test]
fn the_record_is_kind_colon_detail_on_one_line_and_bounded() {
    let r = Rejection::new(
        RefusedWrite::Step,
        "admission webhook \"x\" denied\n  the request: no",
    );
    assert_eq!(
        r.record(),
        "StepRejected: admission webhook \"x\" denied the request: no"
    );
    let long = Rejection::new(RefusedWrite::StatusAnnotations, &"é".repeat(2000));
    let record = long.record();
    assert!(record.starts_with("StatusWriteRejected: é"));
    assert!(
        record.len() < 700 && record.ends_with('…'),
        "{}",
        record.len()
    );
    assert_eq!(long.record(), record, "the same refusal, the same record");
    assert!(!long.is_news(Some(&record)));
    assert!(long.is_news(None));
    assert!(long.is_news(Some("StatusWriteRejected: something else")));
}

#[rstest]
#[case::replaces_the_old_value(
    RecordBase { annotated: true, resource_version: Some("7"), recorded: Some("StepRejected: old") },
    json!([{"op": "test", "path": KEY_PTR, "value": "StepRejected: old"},
           {"op": "add", "path": KEY_PTR, "value": "StepRejected: new"}]))]
#[case::pins_the_resource_version(
    RecordBase { annotated: true, resource_version: Some("7"), recorded: None },
    json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
           {"op": "add", "path": KEY_PTR, "value": "StepRejected: new"}]))]
#[case::adds_the_whole_map(
    RecordBase { annotated: false, resource_version: Some("7"), recorded: None },
    json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
           {"op": "add", "path": "/metadata/annotations",
            "value": {"safe-rollout.dev/degraded-reason": "StepRejected: new"}}]))]
fn the_record_patch(#[case] base: RecordBase<'static>, #[case] want: Value) {
    let patch = record_patch(&Keys::default(), base, "StepRejected: new");
    assert_eq!(serde_json::to_value(patch).expect("json"), want);
}

fn blocked() -> Verdict {
    Verdict::Blocked(Blocked::new(Reason::PodNotReady, "web-1"))
}

fn step() -> Verdict {
    Verdict::Step {
        from: 3,
        to: 2,
        update_revision: "b".into(),
    }
}

/// Which pass removes which record: a refused status write by the next status write (no step: the
/// step's own patch removes it), a refused step by a step or once no step is pending; another
/// writer's kind (issue 22's `FailureLimit: …`, `StuckPod: …`) never.
#[rstest]
#[case("StatusWriteRejected: x", blocked(), true, true)]
#[case("StatusWriteRejected: x", Verdict::Idle(Idle::UpToDate), true, true)]
#[case("StatusWriteRejected: x", step(), true, false)]
#[case("StepRejected: x", blocked(), true, false)]
#[case("StepRejected: x", Verdict::Idle(Idle::UpToDate), true, true)]
#[case(
    "StepRejected: x",
    Verdict::Unguarded("force-rolling-update"),
    true,
    true
)]
#[case("StepRejected: x", step(), true, false)]
#[case(
    "FailureLimit: 3 failed checks",
    Verdict::Idle(Idle::UpToDate),
    false,
    false
)]
#[case("StuckPod: web-1", step(), false, false)]
fn which_pass_clears_the_record(
    #[case] recorded: &str,
    #[case] verdict: Verdict,
    #[case] by_step: bool,
    #[case] without_step: bool,
) {
    assert_eq!(cleared_by_step(Some(recorded)), by_step, "{recorded}");
    assert_eq!(
        cleared_without_step(Some(recorded), &verdict),
        without_step,
        "{recorded} {verdict:?}"
    );
}

/// In the plan: a blocked set that carries a refused status write's record removes it with its
/// status write; a set whose step was refused keeps the record while blocked.
#[rstest]
#[case("StatusWriteRejected: denied", true)]
#[case("StepRejected: denied", false)]
fn a_blocked_set_clears_only_a_refused_status_write(#[case] recorded: &str, #[case] cleared: bool) {
    let mut v = set_json("web", 3, Some(3), 0);
    v["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/degraded-reason"] = json!(recorded);
    // Paused by a person, the reason already announced: the status write only clears the record.
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("Paused");
    let snap = Snapshot {
        statefulsets: vec![set_from(v).into()],
        pods: pods("web", 3, 3),
        ..Snapshot::default()
    };
    let p = plan::plan(&snap, &GateOptions::default(), now())
        .pop()
        .expect("a plan");
    assert!(matches!(p.verdict, Verdict::Blocked(_)), "{:?}", p.verdict);
    let patch = serde_json::to_value(p.status_patch()).expect("json");
    let removes = patch
        .as_array()
        .is_some_and(|ops| ops.contains(&json!({"op": "remove", "path": KEY_PTR})));
    assert_eq!(removes, cleared, "{patch}");
    if !cleared {
        assert_eq!(patch, Value::Null, "nothing else to write");
    }
}
