//! The `PrometheusCheck` gate through `plan::needs` and `plan::plan_with`: the queries asked of the pass,
//! the step once the threshold is reached (its patch removes the state), and the state written under a
//! `test` op (the `resourceVersion` when absent, its old value when present), with each patch applied to
//! the set's JSON (`json_patch::patch`).

use crate::common::plans::*;
use crate::common::prometheus_check::*;
use crate::common::*;
use jiff::SignedDuration;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::gates::check::prometheus::QueryOutcome;
use sts_stepper::gates::{CheckRead, Need};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, ProbeMap};

#[test]
fn a_set_with_a_query_needs_the_queries_first() {
    let snap = snapshot(vec![prom_set_json(&[])], pods("web", 3, 3));
    assert_eq!(
        plan::needs(&snap, &opts(), now(), &ProbeMap::new()),
        vec![(0, Need::Check(CheckRead::Queries(vec![q(Q0, QUERY)])))]
    );
    let p = plan::plan(&snap, &opts(), now());
    assert_eq!(
        p[0].verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: check due (1 query), not run yet"
        )
    );
    assert!(p[0].step_patch().is_none());
    // A set blocked before the gate needs nothing.
    let mut missing = pods("web", 3, 3);
    missing.remove(0);
    let snap = snapshot(vec![prom_set_json(&[])], missing);
    assert_eq!(plan::needs(&snap, &opts(), now(), &ProbeMap::new()), vec![]);
}

#[rstest]
#[case::no_old_state(None)]
#[case::stale_state_of_an_earlier_step(Some(r#"{"updateRevision":"b","partition":4,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:00:00Z"}"#))]
#[case::unreadable_state(Some("{"))]
fn threshold_1_steps_and_the_step_patch_removes_the_state(#[case] old: Option<&str>) {
    let extra: Vec<(&str, &str)> = old
        .iter()
        .map(|o| ("safe-rollout.dev/prometheus-check", *o))
        .collect();
    let v = prom_set_json(&extra);
    let snap = snapshot(vec![v.clone()], pods("web", 3, 3));
    let mut probes = ProbeMap::new();
    probes.insert(
        0,
        outcomes(vec![QueryOutcome::NonEmpty(1)]).expect("probes"),
    );
    assert_eq!(plan::needs(&snap, &opts(), now(), &probes), vec![]);
    let p = plan::plan_with(&snap, &opts(), now(), &probes)
        .pop()
        .expect("plan");
    assert_eq!(p.verdict, step(3, 2));
    assert!(p.status_patch().is_none(), "{:?}", p.status_patch());
    let ops = to_json(&p.step_patch());
    let removes: Vec<&Value> = ops
        .as_array()
        .expect("ops")
        .iter()
        .filter(|op| path_of(op) == "/metadata/annotations/safe-rollout.dev~1prometheus-check")
        .collect();
    match old {
        Some(_) => assert_eq!(
            removes,
            vec![
                &json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check"})
            ]
        ),
        None => assert!(removes.is_empty(), "{ops}"),
    }
    let after = applied(&v, p.step_patch().as_ref().expect("step")).expect("step applies");
    assert_eq!(
        after["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        json!(2)
    );
    assert!(
        after["metadata"]["annotations"]
            .get(key("prometheus-check"))
            .is_none()
    );
}

#[test]
fn threshold_2_writes_the_state_guarded_by_resource_version_when_absent() {
    let v = prom_set_json(&[("safe-rollout.dev/success-threshold", "2")]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::NonEmpty(2)]),
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 1 of 2 consecutive checks passed, 0 failed; next check in 30s"
        )
    );
    assert!(p.step_patch().is_none());
    let new = state_json(1, 0, "2026-11-23T01:20:00Z");
    assert_eq!(
        to_json(&p.status_patch()),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": new}
        ])
    );
    assert_eq!(p.events().len(), 1);
    assert_eq!(
        p.events()[0].type_,
        EventType::Normal,
        "counting up successes is an expected wait"
    );
    let patch = &p.status_patch().expect("status_annotations");
    let after = applied(&v, patch).expect("applies to the observed object");
    assert_eq!(
        after["metadata"]["annotations"][key("prometheus-check")],
        json!(new)
    );
    // Another stepper wrote in between: the resourceVersion moved, the patch fails.
    let mut raced = v.clone();
    raced["metadata"]["resourceVersion"] = json!("101");
    assert!(applied(&raced, patch).is_err());
}

#[test]
fn threshold_3_updates_the_state_guarded_by_its_old_value() {
    let old = state_json(1, 0, "2026-11-23T01:19:30Z");
    let v = prom_set_json(&[
        ("safe-rollout.dev/success-threshold", "3"),
        ("safe-rollout.dev/prometheus-check", &old),
        ("safe-rollout.dev/blocked-reason", "PrometheusCheck"),
    ]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::NonEmpty(1)]),
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 2 of 3 consecutive checks passed, 0 failed; next check in 30s"
        )
    );
    let new = state_json(2, 0, "2026-11-23T01:20:00Z");
    assert_eq!(
        to_json(&p.status_patch()),
        json!([
            {"op": "test", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": old},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": new}
        ])
    );
    assert!(p.events().is_empty(), "reason already announced");
    let patch = &p.status_patch().expect("status_annotations");
    assert!(applied(&v, patch).is_ok());
    // Another stepper counted this period first: its state differs, the test op fails.
    let mut raced = v.clone();
    raced["metadata"]["annotations"][key("prometheus-check")] =
        json!(state_json(2, 0, "2026-11-23T01:19:59Z"));
    assert!(applied(&raced, patch).is_err());
    // Not due yet (10 s later, on the patched object): nothing to read and nothing to write.
    let after = applied(&v, patch).expect("applies");
    let snap = snapshot(vec![after], pods("web", 3, 3));
    let later = now() + SignedDuration::from_secs(10);
    assert_eq!(plan::needs(&snap, &opts(), later, &ProbeMap::new()), vec![]);
    let p = plan::plan_with(&snap, &opts(), later, &ProbeMap::new())
        .pop()
        .expect("plan");
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 2 of 3 consecutive checks passed, 0 failed; next check in 20s"
        )
    );
    assert!(p.status_patch().is_none(), "{:?}", p.status_patch());
}
