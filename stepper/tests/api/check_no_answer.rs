//! Error ≠ failure through a whole pass (issue 29 item 3): a mocked API server (tower-test, the real
//! fixture bodies of `demo/web`) and a Prometheus stand-in on 127.0.0.1 that never answers, answers
//! 503, answers a page that is not the Prometheus API's, or answers an empty vector. The first three are
//! errors — counted apart in `prometheus-check` (`errors`), the step held, never paused — the last is a
//! failure. Every server binds 127.0.0.1 and stops when dropped; the hung one is bounded by the
//! client's timeout.

use std::time::Duration;

use crate::common::*;
use crate::mock_api::*;
use crate::support::prometheus::{HungServer, StubServer};
use axum::http::StatusCode;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport, run_pass_with};

/// `demo/web` of moment `2-stepped-4` (Ready, staged, partition 4), once fully Ready, with a
/// Prometheus check and `extra` annotations.
fn checked_web(extra: &[(&str, &str)]) -> Value {
    let list: Value =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let mut s = list["items"][0].clone();
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/initialized"] = json!("true");
    a["safe-rollout.dev/prometheus-query"] = json!("up{job=\"web\"} == 1");
    for (k, v) in extra {
        a[format!("safe-rollout.dev/{k}")] = json!(v);
    }
    s
}

/// One pass over `web` with Prometheus at `url` (query timeout 300 ms); the API server expects the
/// reads, the status patch and `events` Events. Returns the report and the status patch's body.
async fn pass(url: &str, web: Value, events: usize) -> (PassReport, Value) {
    let prometheus = PrometheusClient::new(&PrometheusConfig {
        url: url.into(),
        timeout: Duration::from_millis(300),
        auth: Auth::None,
        ca_file: None,
    })
    .expect("client");
    let checks = Checks {
        prometheus: Some(prometheus),
        ..Checks::default()
    };
    let mut stored = web.clone();
    stored["kind"] = json!("StatefulSet");
    stored["apiVersion"] = json!("apps/v1");
    let list = json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": [web]});
    let mut expected = script(
        vec![get(STS_ALL, serde_json::to_vec(&list).expect("json"))],
        web_candidate_reads(
            fixture_body("2-stepped-4-pods.json"),
            fixture_body("2-stepped-4-pdbs.json"),
        ),
    );
    expected.push(patch(
        PATCH_WEB,
        200,
        serde_json::to_vec(&stored).expect("json"),
    ));
    expected.extend((0..events).map(|_| post_event("demo")));
    let (cluster, server) = mock_cluster(Scope::default(), expected);
    let report = run_pass_with(&cluster, &checks, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    let seen = server.await.expect("mock API server script");
    (report, seen[3].body.clone())
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

/// The recorded check state of `patch`.
fn check_state(patch: &Value) -> Value {
    serde_json::from_str(added(patch, "prometheus-check").expect("state written")).expect("json")
}

fn blocked_detail(report: &PassReport) -> String {
    match &report.sets[0].outcome {
        Outcome::Blocked(b) if b.reason == Reason::PrometheusCheck => b.detail.clone(),
        other => panic!("expected Blocked PrometheusCheck, got {other}"),
    }
}

/// Asserts the pass counted one error (not a failure), held the step and paused nothing.
fn assert_one_error(report: &PassReport, patch: &Value, cause: &str) {
    let detail = blocked_detail(report);
    assert!(
        detail.contains("0 failed of limit 1, 1 in a row got no answer (check-error-limit 4)")
            && detail
                .contains("last check errored: safe-rollout.dev/prometheus-query got no answer")
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
    assert_eq!(added(patch, "degraded-reason"), None, "{patch}");
    assert!(
        report.sets[0].error.is_none(),
        "a held check is no API error"
    );
}

#[tokio::test]
async fn a_prometheus_that_never_answers_is_an_error_and_holds_the_step() {
    let hung = HungServer::start().await;
    let (report, patch) = pass(&hung.url(), checked_web(&[("failure-limit", "1")]), 1).await;
    assert_one_error(&report, &patch, "timed out");
}

#[tokio::test]
async fn a_5xx_is_an_error() {
    let stub = StubServer::start(
        StatusCode::SERVICE_UNAVAILABLE,
        "<html>503 Service Temporarily Unavailable</html>",
    )
    .await;
    let (report, patch) = pass(&stub.url(), checked_web(&[("failure-limit", "1")]), 1).await;
    assert_one_error(&report, &patch, "HTTP 503");
}

#[tokio::test]
async fn an_answer_that_is_not_the_prometheus_api_is_an_error() {
    let stub = StubServer::start(StatusCode::OK, "<html>sign in</html>").await;
    let (report, patch) = pass(&stub.url(), checked_web(&[("failure-limit", "1")]), 1).await;
    assert_one_error(&report, &patch, "not a Prometheus API answer");
}

#[tokio::test]
async fn an_empty_vector_is_a_failure() {
    let stub = StubServer::start(
        StatusCode::OK,
        r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#,
    )
    .await;
    let (report, patch) = pass(&stub.url(), checked_web(&[("failure-limit", "2")]), 1).await;
    let detail = blocked_detail(&report);
    assert!(
        detail.contains("1 failed of limit 2; last check failed: safe-rollout.dev/prometheus-query returned an empty result"),
        "{detail}"
    );
    let s = check_state(&patch);
    assert_eq!(s["failures"], 1, "{s}");
    assert!(s.get("errors").is_none(), "{s}");
}

#[tokio::test]
async fn errors_up_to_the_limit_record_degraded_not_paused() {
    let hung = HungServer::start().await;
    // Three errors already in a row for this observation, the last a period ago; limit 4.
    let state = r#"{"updateRevision":"web-7d7598bf9d","partition":4,"successes":0,"failures":0,"errors":3,"lastCheck":"2026-11-23T01:19:00Z","lastError":"earlier"}"#;
    let web = checked_web(&[("prometheus-check", state), ("failure-limit", "1")]);
    // The status patch, then its Events: Blocked, RolloutDegraded.
    let (report, patch) = pass(&hung.url(), web, 2).await;
    let degraded = added(&patch, "degraded-reason").expect("recorded");
    assert!(
        degraded.starts_with(
            "CheckErrors: PrometheusCheck got no answer 4 times in a row (check-error-limit 4); last: safe-rollout.dev/prometheus-query got no answer: "
        ),
        "{degraded}"
    );
    assert_eq!(added(&patch, "paused"), None, "{patch}");
    assert_eq!(check_state(&patch)["errors"], 4);
    assert!(blocked_detail(&report).contains("4 in a row got no answer"));
}
