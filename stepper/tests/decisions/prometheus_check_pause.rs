//! The `PrometheusCheck` gate's failures through the plan: a failure below the limit is a Warning, the
//! limit pauses the rollout (`paused`, `paused-reason`, `degraded-reason`) and the next pass is
//! `Paused`; invalid annotations block first; and short multi-pass sequences (each pass's patches
//! applied to the set's JSON) from the first failure to the pause and a person's resume. The defect found
//! here (a pause without a Warning) is fixed; its test stays.

use crate::common::plans::*;
use crate::common::prometheus_check::*;
use crate::common::*;
use jiff::SignedDuration;
use rstest::rstest;
use serde_json::json;
use std::sync::Arc;
use sts_stepper::config::SetConfig;
use sts_stepper::gates::check::prometheus::{CheckState, QueryOutcome};
use sts_stepper::gates::{self, CheckRead, FleetView, GateInput, Need, Probes, Verdict};
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, ProbeMap};

#[test]
fn a_failure_below_the_limit_is_recorded_and_a_warning() {
    let v = prom_set_json(&[("safe-rollout.dev/failure-limit", "3")]);
    let p = plan_one(v, pods("web", 3, 3), outcomes(vec![QueryOutcome::Empty]));
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            &format!(
                "web: 0 of 1 consecutive checks passed, 1 failed of limit 3; last check failed: {EMPTY_Q0}; next check in 30s"
            )
        )
    );
    assert_eq!(p.events()[0].type_, EventType::Warning);
    let ops = to_json(&p.status_patch());
    assert_eq!(
        ops[0],
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": "100"})
    );
    let written = ops
        .as_array()
        .expect("ops")
        .iter()
        .find(|op| path_of(op) == "/metadata/annotations/safe-rollout.dev~1prometheus-check")
        .expect("state written");
    let s: CheckState =
        serde_json::from_str(written["value"].as_str().expect("string")).expect("state");
    assert_eq!(s, st(0, 1, 0, Some(EMPTY_Q0)));
}

#[test]
fn reaching_the_failure_limit_pauses_and_the_next_pass_is_paused() {
    let old = state_json(0, 1, "2026-11-23T01:19:00Z");
    let v = prom_set_json(&[
        ("safe-rollout.dev/failure-limit", "2"),
        ("safe-rollout.dev/prometheus-check", &old),
    ]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::Empty]),
    );
    let reason = format!(
        "PrometheusCheck failed 2 times (failure-limit 2) since the last step; last: {EMPTY_Q0}"
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            &format!("web: {reason}: rollout paused")
        )
    );
    assert!(p.step_patch().is_none());
    let paused_reason = format!("{reason} (at 2026-11-23T01:20:00Z)");
    assert_eq!(
        to_json(&p.status_patch()),
        json!([
            {"op": "test", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": old},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused", "value": "true"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused-reason", "value": paused_reason},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason",
             "value": format!("FailureLimit: {reason}")}
        ])
    );
    assert!(
        !p.events().iter().any(|e| e.reason == "RolloutDegraded"),
        "the RolloutPaused Event announces it: {:?}",
        p.events()
    );
    assert_eq!(p.events()[0].type_, EventType::Warning);
    let after =
        applied(&v, p.status_patch().as_ref().expect("status_annotations")).expect("applies");
    assert!(
        after["metadata"]["annotations"]
            .get(key("prometheus-check"))
            .is_none()
    );
    let snap = snapshot(vec![after], pods("web", 3, 3));
    assert_eq!(plan::needs(&snap, &opts(), now(), &ProbeMap::new()), vec![]);
    let next = plan::plan(&snap, &opts(), now()).pop().expect("plan");
    assert_eq!(
        next.verdict,
        blocked(
            Reason::Paused,
            &format!("web: safe-rollout.dev/paused is \"true\": {paused_reason}")
        )
    );
    let next_ops = to_json(&next.status_patch()).to_string();
    assert!(
        !next_ops.contains("degraded-reason"),
        "kept while paused: {next_ops}"
    );
}

#[test]
fn a_failure_limit_of_1_pauses_on_the_first_failed_check_guarded_by_resource_version() {
    // An unanswered check never pauses (tests/decisions/check_errors.rs); an empty answer does.
    let v = prom_set_json(&[("safe-rollout.dev/failure-limit", "1")]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::Empty]),
    );
    let reason = "PrometheusCheck failed 1 times (failure-limit 1) since the last step; last: safe-rollout.dev/prometheus-query returned an empty result";
    assert_eq!(
        to_json(&p.status_patch()),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused", "value": "true"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused-reason",
             "value": format!("{reason} (at 2026-11-23T01:20:00Z)")},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason",
             "value": format!("FailureLimit: {reason}")}
        ])
    );
    let after =
        applied(&v, p.status_patch().as_ref().expect("status_annotations")).expect("applies");
    let next = plan_one(after, pods("web", 3, 3), None);
    assert!(
        matches!(&next.verdict, Verdict::Blocked(b) if b.reason == Reason::Paused && b.detail.contains("returned an empty result")),
        "{:?}",
        next.verdict
    );
}

#[rstest]
#[case::paused_with_reason(&[("safe-rollout.dev/paused", "true"), ("safe-rollout.dev/paused-reason", "canary hold")],
    Some("web: safe-rollout.dev/paused is \"true\": canary hold"))]
#[case::paused_without_reason(&[("safe-rollout.dev/paused", "true")], Some("web: safe-rollout.dev/paused is \"true\""))]
#[case::reason_without_pause(&[("safe-rollout.dev/paused-reason", "left over")], None)]
#[case::paused_not_exactly_true(&[("safe-rollout.dev/paused", "True"), ("safe-rollout.dev/paused-reason", "x")], None)]
fn paused_gate_shows_the_paused_reason(#[case] pairs: &[(&str, &str)], #[case] want: Option<&str>) {
    let s = set_with(pairs);
    let config = SetConfig::parse(&s, &Arc::new(keys()));
    let got = gates::paused(&GateInput {
        set: &s,
        config: &config,
        pods: &Default::default(),
        pdbs: &[],
        fleet: FleetView::default(),
        probes: &Probes::default(),
        opts: &opts(),
        now: now(),
    });
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::Paused, d))),
    }
}

#[test]
fn invalid_prometheus_annotations_block_before_the_pods_are_judged() {
    let v = prom_set_json(&[("safe-rollout.dev/check-period-seconds", "0")]);
    let p = plan_one(v, vec![], None);
    assert_eq!(
        p.verdict,
        blocked(
            Reason::InvalidAnnotation,
            "safe-rollout.dev/check-period-seconds: \"0\" is not valid; expected a whole number ≥ 1 (\"3\")"
        )
    );
}

#[test]
fn a_failure_limit_pause_is_announced_as_a_warning() {
    let o = opts();
    let mut v = prom_set_json(&[
        ("safe-rollout.dev/success-threshold", "2"),
        ("safe-rollout.dev/failure-limit", "2"),
    ]);
    let mut events = Vec::new();
    let mut decisions = Vec::new();
    for (secs, outcome) in [
        (0, Some(QueryOutcome::NonEmpty(1))),
        (30, Some(QueryOutcome::Empty)),
        (60, Some(QueryOutcome::Empty)),
        (90, None),
    ] {
        let t = now() + SignedDuration::from_secs(secs);
        let (p, after) = pass_at(
            &v,
            &o,
            t,
            outcome.map(|q| outcomes(vec![q]).expect("probes")),
        );
        decisions.push(match &p.verdict {
            Verdict::Blocked(b) => b.reason,
            d => panic!("{secs}s: {d:?}"),
        });
        events.extend(p.events().iter().cloned());
        v = after;
    }
    assert_eq!(
        decisions,
        [
            Reason::PrometheusCheck,
            Reason::PrometheusCheck,
            Reason::PrometheusCheck,
            Reason::Paused
        ]
    );
    assert!(
        events.iter().any(|e| e.type_ == EventType::Warning),
        "{events:#?}"
    );
}

#[test]
fn a_failing_check_then_the_pause_over_passes() {
    // The sequence above, failing from the first check: its first Event is a Warning.
    let o = opts();
    let mut v = prom_set_json(&[("safe-rollout.dev/failure-limit", "2")]);
    let (p, after) = pass_at(&v, &o, now(), outcomes(vec![QueryOutcome::Empty]));
    assert_eq!(p.events().len(), 1);
    assert_eq!(p.events()[0].type_, EventType::Warning);
    v = after;
    // 10 s later: not due, nothing read or written.
    let later = now() + SignedDuration::from_secs(10);
    let (p, after) = pass_at(&v, &o, later, None);
    assert!(p.status_patch().is_none() && p.step_patch().is_none());
    assert_eq!(after, v);
    // 30 s later: due; the second failure pauses.
    let (p, after) = pass_at(
        &v,
        &o,
        now() + SignedDuration::from_secs(30),
        outcomes(vec![QueryOutcome::Empty]),
    );
    assert!(
        matches!(&p.verdict, Verdict::Blocked(b) if b.detail.ends_with(": rollout paused")),
        "{:?}",
        p.verdict
    );
    assert_eq!(
        after["metadata"]["annotations"][key("paused")],
        json!("true")
    );
    // A person resumes (removes paused and paused-reason): the counts start over, the check is due.
    let mut resumed = after;
    let ann = resumed["metadata"]["annotations"]
        .as_object_mut()
        .expect("annotations");
    ann.remove(&key("paused"));
    ann.remove(&key("paused-reason"));
    let snap = snapshot(vec![resumed.clone()], pods("web", 3, 3));
    let t = now() + SignedDuration::from_secs(40);
    assert_eq!(
        plan::needs(&snap, &o, t, &ProbeMap::new()),
        vec![(0, Need::Check(CheckRead::Queries(vec![q(Q0, QUERY)])))]
    );
    let (p, _) = pass_at(&resumed, &o, t, outcomes(vec![QueryOutcome::NonEmpty(1)]));
    assert_eq!(p.verdict, step(3, 2));
}
