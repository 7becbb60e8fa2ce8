//! The `HttpCheck` gate through a whole pass (issue 29 item 4): a mocked API server (tower-test, the
//! real fixture bodies of `demo/web`) and an endpoint on 127.0.0.1 answering Elasticsearch's
//! `_cluster/health` green or yellow, a page that is not JSON, a 500, or nothing at all. Green steps;
//! yellow against `green` is a failure; the others are errors (held, counted apart, never paused).
//! The URL comes from `--http-check` only: an annotation naming an unknown check, or holding a URL,
//! is `InvalidAnnotation` and nothing is called. Every server binds 127.0.0.1 and stops when dropped;
//! the hung one is bounded by the client's timeout.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use crate::mock_api::*;
use crate::support::counting::Counting;
use crate::support::prometheus::{HungServer, StubServer};
use axum::http::StatusCode;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::http_check::HttpChecks;
use sts_stepper::config::{Served, http_check};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport};

const GREEN: &str = r#"{"cluster_name":"logs","status":"green","number_of_nodes":3}"#;
const YELLOW: &str = r#"{"cluster_name":"logs","status":"yellow","number_of_nodes":3}"#;

/// `demo/web` of moment `2-stepped-4` (Ready, staged, partition 4), once fully Ready, with an HTTP
/// check `es` on `$.status` expecting `green`, and `extra` annotations.
fn checked_web(extra: &[(&str, &str)]) -> Value {
    let list: Value =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let mut s = list["items"][0].clone();
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/initialized"] = json!("true");
    a["safe-rollout.dev/http-check"] = json!("es");
    a["safe-rollout.dev/http-check-jsonpath"] = json!("$.status");
    a["safe-rollout.dev/http-check-expect"] = json!("green");
    for (k, v) in extra {
        a[format!("safe-rollout.dev/{k}")] = json!(v);
    }
    s
}

/// One pass over `web` with the stepper's `--http-check` flags `checks` (GET timeout 300 ms); the
/// API server expects the LIST, the pod and PDB reads when `candidate`, one patch (a step to
/// partition 3 when `steps`) and `events` Events. Returns the report and the patch's body.
async fn pass(
    checks: &[(&str, String)],
    web: Value,
    candidate: bool,
    steps: bool,
    events: usize,
) -> (PassReport, Value) {
    let checks: Vec<(String, String)> = checks
        .iter()
        .map(|(n, u)| ((*n).to_string(), u.clone()))
        .collect();
    let http = HttpChecks::new(&checks, Duration::from_millis(300)).expect("client");
    let mut opts = PassOptions::default();
    opts.gates.served.insert(&http_check::FLAG, http.names());
    let checks = Checks {
        http: Some(http),
        ..Checks::default()
    };
    let (report, patch, _) = pass_over_web(&checks, &opts, web, (candidate, steps), events).await;
    (report, patch)
}

/// The value `patch` adds at annotation `name`.
fn added<'a>(patch: &'a Value, name: &str) -> Option<&'a str> {
    let path = format!("/metadata/annotations/safe-rollout.dev~1{name}");
    patch
        .as_array()?
        .iter()
        .find(|op| op["op"] == "add" && op["path"] == path.as_str())?["value"]
        .as_str()
}

fn check_state(patch: &Value) -> Value {
    serde_json::from_str(added(patch, "http-check-state").expect("state written")).expect("json")
}

fn blocked(report: &PassReport, reason: Reason) -> String {
    match &report.sets[0].outcome {
        Outcome::Blocked(b) if b.reason == reason => b.detail.clone(),
        other => panic!("expected Blocked {reason}, got {other}"),
    }
}

/// Asserts the pass counted one error (not a failure), held the step and paused nothing.
fn assert_one_error(report: &PassReport, patch: &Value, cause: &str) {
    let detail = blocked(report, Reason::HttpCheck);
    assert!(
        detail.contains("0 failed of limit 1, 1 in a row got no answer (check-error-limit 4)")
            && detail.contains(cause),
        "{detail}"
    );
    let s = check_state(patch);
    assert_eq!(
        (&s["errors"], &s["failures"]),
        (&json!(1), &json!(0)),
        "{s}"
    );
    assert!(
        s["lastError"].as_str().is_some_and(|e| e.contains(cause)),
        "{s}"
    );
    assert_eq!(
        added(patch, "paused"),
        None,
        "an error never pauses: {patch}"
    );
    assert!(
        report.sets[0].error.is_none(),
        "a held check is no API error"
    );
}

#[tokio::test]
async fn green_steps() {
    let es = StubServer::start(StatusCode::OK, GREEN).await;
    let url = format!("{}/_cluster/health", es.url());
    // One failure counted for this partition, a period ago: the check is due; green passes it.
    let state = r#"{"updateRevision":"web-7d7598bf9d","partition":4,"successes":0,"failures":1,"lastCheck":"2026-11-23T01:19:00Z","lastFailure":"yellow"}"#;
    let web = checked_web(&[("http-check-state", state)]);
    let (report, patch) = pass(&[("es", url)], web, true, true, 1).await;
    assert_eq!(
        report.sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 },
        "{patch}"
    );
    // The step starts the counts over: the state goes with it.
    let removed = patch.as_array().expect("ops").iter().any(|op| {
        op["op"] == "remove"
            && op["path"] == "/metadata/annotations/safe-rollout.dev~1http-check-state"
    });
    assert!(removed, "{patch}");
}

#[test]
fn resume_clears_the_http_check_counts() {
    let state = r#"{"updateRevision":"web-7d7598bf9d","partition":4,"successes":0,"failures":3,"lastCheck":"2026-11-23T01:19:00Z"}"#;
    let web = checked_web(&[("paused", "true"), ("http-check-state", state)]);
    let set: k8s_openapi::api::apps::v1::StatefulSet = serde_json::from_value(web).expect("set");
    let keys = Arc::new(sts_stepper::config::Keys::default());
    let config = sts_stepper::config::SetConfig::parse(&set, &keys);
    let patch = sts_stepper::plan::pause::resume_patch(&set, &config).expect("a resume patch");
    let ops = serde_json::to_value(&patch.0).expect("json");
    assert!(
        ops.as_array()
            .expect("ops")
            .iter()
            .any(|op| op["op"] == "remove"
                && op["path"] == "/metadata/annotations/safe-rollout.dev~1http-check-state"),
        "{ops}"
    );
}

#[tokio::test]
async fn a_number_compared_steps() {
    let es = StubServer::start(StatusCode::OK, GREEN).await;
    let web = checked_web(&[
        ("http-check-jsonpath", "$.number_of_nodes"),
        ("http-check-expect", ">=3"),
    ]);
    let (report, _) = pass(&[("es", es.url())], web, true, true, 1).await;
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 4, to: 3 });
}

#[tokio::test]
async fn yellow_when_green_is_expected_is_a_failure() {
    let es = StubServer::start(StatusCode::OK, YELLOW).await;
    let web = checked_web(&[("failure-limit", "2")]);
    let (report, patch) = pass(&[("es", es.url())], web, true, false, 1).await;
    let detail = blocked(&report, Reason::HttpCheck);
    assert!(
        detail.contains(
            "1 failed of limit 2; last check failed: http-check es: $.status is \"yellow\", expected green"
        ),
        "{detail}"
    );
    let s = check_state(&patch);
    assert_eq!(s["failures"], 1, "{s}");
    assert!(s.get("errors").is_none(), "{s}");
}

#[tokio::test]
async fn failures_up_to_the_limit_pause() {
    let es = StubServer::start(StatusCode::OK, YELLOW).await;
    let web = checked_web(&[("failure-limit", "1")]);
    // The patch, then its Events: Blocked (the pause), RolloutDegraded.
    let (report, patch) = pass(&[("es", es.url())], web, true, false, 2).await;
    assert!(blocked(&report, Reason::HttpCheck).contains("rollout paused"));
    assert_eq!(added(&patch, "paused"), Some("true"), "{patch}");
    assert!(
        added(&patch, "degraded-reason")
            .is_some_and(|d| d.starts_with("FailureLimit: HttpCheck failed 1 times")),
        "{patch}"
    );
}

#[tokio::test]
async fn garbage_is_an_error() {
    let es = StubServer::start(StatusCode::OK, "<html>sign in</html>").await;
    let web = checked_web(&[("failure-limit", "1")]);
    let (report, patch) = pass(&[("es", es.url())], web, true, false, 1).await;
    assert_one_error(&report, &patch, "not JSON");
}

#[tokio::test]
async fn a_500_is_an_error() {
    let es = StubServer::start(StatusCode::INTERNAL_SERVER_ERROR, GREEN).await;
    let web = checked_web(&[("failure-limit", "1")]);
    let (report, patch) = pass(&[("es", es.url())], web, true, false, 1).await;
    assert_one_error(&report, &patch, "HTTP 500");
}

#[tokio::test]
async fn an_endpoint_that_never_answers_is_an_error() {
    let hung = HungServer::start().await;
    let web = checked_web(&[("failure-limit", "1")]);
    let (report, patch) = pass(&[("es", hung.url())], web, true, false, 1).await;
    assert_one_error(&report, &patch, "timed out");
}

#[tokio::test]
async fn a_path_that_selects_nothing_is_an_error() {
    let es = StubServer::start(StatusCode::OK, GREEN).await;
    let web = checked_web(&[("failure-limit", "1"), ("http-check-jsonpath", "$.health")]);
    let (report, patch) = pass(&[("es", es.url())], web, true, false, 1).await;
    assert_one_error(&report, &patch, "$.health selects nothing");
}

#[tokio::test]
async fn the_url_comes_only_from_the_flag() {
    let configured = Counting::start("").await;
    let elsewhere = Counting::start("").await;
    // An annotation holding a URL: not a check name; nothing is called.
    let web = checked_web(&[("http-check", elsewhere.url.as_str())]);
    let (report, _) = pass(&[("es", configured.url.clone())], web, false, false, 1).await;
    let detail = blocked(&report, Reason::InvalidAnnotation);
    assert!(
        detail.starts_with("safe-rollout.dev/http-check: ")
            && detail.contains("is not a check name"),
        "{detail}"
    );
    // A name the stepper does not configure: InvalidAnnotation naming the configured ones.
    let web = checked_web(&[("http-check", "other")]);
    let (report, _) = pass(&[("es", configured.url.clone())], web, false, false, 1).await;
    assert_eq!(
        blocked(&report, Reason::InvalidAnnotation),
        "safe-rollout.dev/http-check: \"other\" names no check configured on the stepper; configured: es"
    );
    assert_eq!(elsewhere.hits(), 0);
    assert_eq!(configured.hits(), 0);
}

/// Where the stepper's flags are known, an unconfigured name is `InvalidAnnotation` (even with no
/// `--http-check` at all); where they are not (`wait`, the library's default options) the name is
/// not judged and the check is only due: never a step without an answer.
#[test]
fn the_name_is_judged_against_the_flags_only_where_they_are_known() {
    use sts_stepper::gates::{GateOptions, Verdict, decide};
    let set: k8s_openapi::api::apps::v1::StatefulSet =
        serde_json::from_value(checked_web(&[])).expect("set");
    let pods: Value = serde_json::from_slice(&fixture_body("2-stepped-4-pods.json")).expect("json");
    let pods: Vec<k8s_openapi::api::core::v1::Pod> =
        serde_json::from_value(pods["items"].clone()).expect("pods");
    let by_ordinal = sts_stepper::model::pods::pods_by_ordinal(&set, pods.iter());
    let reason = |opts: &GateOptions| match decide(&set, &by_ordinal, &[], opts, now()) {
        Verdict::Blocked(b) => (b.reason, b.detail),
        other => panic!("expected Blocked, got {other:?}"),
    };
    let unknown = GateOptions::default();
    let (r, detail) = reason(&unknown);
    assert_eq!(r, Reason::HttpCheck, "{detail}");
    assert!(detail.ends_with("check due (es), not run yet"), "{detail}");
    let none = GateOptions {
        served: Served::default().with(&http_check::FLAG, Vec::new()),
        ..GateOptions::default()
    };
    assert_eq!(
        reason(&none),
        (
            Reason::InvalidAnnotation,
            "safe-rollout.dev/http-check: \"es\" names no check configured on the stepper; configured: none (no --http-check NAME=URL flag)".to_string()
        )
    );
}
