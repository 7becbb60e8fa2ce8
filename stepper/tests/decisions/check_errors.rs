//! Error ≠ failure (issue 29 item 3), through the plan: a Prometheus check that got no answer holds the
//! step and counts as an error, never toward `failure-limit`; `check-error-limit` errors in a row record
//! `degraded-reason: CheckErrors: …` with one `RolloutDegraded` Event, without a pause; the next answer
//! (or a step) removes the record. Each pass's patches are applied to the set's JSON as the API server
//! would, and the next pass plans on the result.

use crate::common::*;
use jiff::SignedDuration;
use json_patch::Patch;
use serde_json::{Value, json};
use sts_stepper::gates::check::prometheus::QueryOutcome;
use sts_stepper::gates::{GateOptions, Probes, Verdict};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, ProbeMap, SetPlan, Snapshot};

const QUERY_KEY: &str = "safe-rollout.dev/prometheus-query";
const DEGRADED: &str = "safe-rollout.dev/degraded-reason";
const STATE: &str = "safe-rollout.dev/prometheus-check";

/// A staged, fully Ready set `ns/web` with a Prometheus check and `extra` annotations.
fn checked_set(extra: &[(&str, &str)]) -> Value {
    let mut v = set_json("web", 3, Some(3), 0);
    let a = &mut v["metadata"]["annotations"];
    a[QUERY_KEY] = json!("up == 1");
    a["safe-rollout.dev/initialized"] = json!("true");
    for (k, val) in extra {
        a[format!("safe-rollout.dev/{k}")] = json!(val);
    }
    v
}

/// The plan of `v` at `now() + secs` with the check's queries answered `outcome`.
fn plan_at(v: &Value, secs: i64, outcome: QueryOutcome) -> SetPlan {
    let snap = Snapshot {
        statefulsets: vec![set_from(v.clone()).into()],
        pods: pods("web", 3, 3),
        ..Snapshot::default()
    };
    let probes: ProbeMap = [(
        0,
        Probes {
            owner: None,
            prometheus: Some(vec![outcome]),
            http: None,
            webhook: None,
        },
    )]
    .into();
    let at = now() + SignedDuration::from_secs(secs);
    plan::plan_with(&snap, &GateOptions::default(), at, &probes)
        .pop()
        .expect("one plan")
}

fn apply(v: &Value, patch: Option<&Patch>) -> Value {
    let mut out = v.clone();
    if let Some(p) = patch {
        json_patch::patch(&mut out, p).expect("the pass's patch applies");
    }
    out
}

fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v["metadata"]["annotations"][key].as_str()
}

fn state(v: &Value) -> Value {
    serde_json::from_str(annotation(v, STATE).expect("state recorded")).expect("state is JSON")
}

fn timeout() -> QueryOutcome {
    QueryOutcome::Error("error sending request: operation timed out".into())
}

#[test]
fn an_unanswered_check_is_an_error_not_a_failure_even_with_a_failure_limit_of_1() {
    let v = checked_set(&[("failure-limit", "1")]);
    let p = plan_at(&v, 0, timeout());
    let Verdict::Blocked(b) = &p.verdict else {
        panic!("{:?}", p.verdict)
    };
    assert_eq!(b.reason, Reason::PrometheusCheck);
    assert!(
        b.detail.contains("0 failed of limit 1, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: error sending request"),
        "{}",
        b.detail
    );
    let after = apply(&v, p.status_patch().as_ref());
    assert_eq!(
        annotation(&after, "safe-rollout.dev/paused"),
        None,
        "never paused"
    );
    assert_eq!(
        annotation(&after, DEGRADED),
        None,
        "one error is not Degraded"
    );
    let s = state(&after);
    assert_eq!(
        (s["errors"].as_u64(), s["failures"].as_u64()),
        (Some(1), Some(0))
    );
    // The Blocked Event says which it was: Warning, an error.
    let [ev] = p.events() else {
        panic!("{:?}", p.events())
    };
    assert_eq!(
        (ev.reason.as_str(), ev.type_),
        ("Blocked", EventType::Warning)
    );
    assert!(ev.note.contains("last check errored"), "{}", ev.note);
}

#[test]
fn errors_up_to_the_limit_record_degraded_once_without_a_pause_and_an_answer_clears_it() {
    let mut v = checked_set(&[("check-error-limit", "2"), ("failure-limit", "1")]);
    // Pass 1: one error, below the limit.
    let p = plan_at(&v, 0, timeout());
    v = apply(&v, p.status_patch().as_ref());
    assert_eq!(annotation(&v, DEGRADED), None);
    // Pass 2, a period later: the second error in a row reaches the limit.
    let p = plan_at(&v, 30, timeout());
    assert!(
        matches!(&p.verdict, Verdict::Blocked(b) if b.reason == Reason::PrometheusCheck),
        "held, not paused: {:?}",
        p.verdict
    );
    let degraded: Vec<_> = p
        .events()
        .iter()
        .filter(|e| e.reason == "RolloutDegraded")
        .collect();
    assert_eq!(degraded.len(), 1, "{:?}", p.events());
    v = apply(&v, p.status_patch().as_ref());
    let record = annotation(&v, DEGRADED).expect("recorded").to_string();
    assert_eq!(
        record,
        "CheckErrors: PrometheusCheck got no answer 2 times in a row (check-error-limit 2); last: \
         safe-rollout.dev/prometheus-query got no answer: error sending request: operation timed out"
    );
    assert_eq!(degraded[0].note, record);
    assert_eq!(annotation(&v, "safe-rollout.dev/paused"), None);
    // Pass 3: a third error: the record and its Event are not repeated.
    let p = plan_at(&v, 60, timeout());
    assert!(p.events().iter().all(|e| e.reason != "RolloutDegraded"));
    v = apply(&v, p.status_patch().as_ref());
    assert_eq!(annotation(&v, DEGRADED), Some(record.as_str()));
    assert_eq!(state(&v)["errors"], 3);
    // Pass 4: Prometheus answers, with an empty result: the record goes, the failure counts (and with
    // failure-limit 1 pauses: a FailureLimit record replaces it).
    let p = plan_at(&v, 90, QueryOutcome::Empty);
    v = apply(&v, p.status_patch().as_ref());
    assert_eq!(annotation(&v, "safe-rollout.dev/paused"), Some("true"));
    assert!(
        annotation(&v, DEGRADED).is_some_and(|d| d.starts_with("FailureLimit: ")),
        "{:?}",
        annotation(&v, DEGRADED)
    );
}

#[test]
fn an_answer_below_the_threshold_removes_the_record() {
    let mut v = checked_set(&[("check-error-limit", "1"), ("success-threshold", "2")]);
    let p = plan_at(&v, 0, timeout());
    v = apply(&v, p.status_patch().as_ref());
    assert!(annotation(&v, DEGRADED).is_some_and(|d| d.starts_with("CheckErrors: ")));
    let p = plan_at(&v, 30, QueryOutcome::NonEmpty(1));
    v = apply(&v, p.status_patch().as_ref());
    assert_eq!(annotation(&v, DEGRADED), None, "the check got an answer");
    assert_eq!(state(&v)["successes"], 1);
    assert!(state(&v).get("errors").is_none(), "{}", state(&v));
}

#[test]
fn a_step_removes_the_record() {
    let mut v = checked_set(&[("check-error-limit", "1")]);
    let p = plan_at(&v, 0, timeout());
    v = apply(&v, p.status_patch().as_ref());
    assert!(annotation(&v, DEGRADED).is_some());
    let p = plan_at(&v, 30, QueryOutcome::NonEmpty(1));
    assert!(
        matches!(p.verdict, Verdict::Step { from: 3, to: 2, .. }),
        "{:?}",
        p.verdict
    );
    let after = apply(&v, p.step_patch().as_ref());
    assert_eq!(annotation(&after, DEGRADED), None);
}
