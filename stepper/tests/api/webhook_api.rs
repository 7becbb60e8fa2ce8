//! The approval webhook through a whole pass (issue 27): a mocked API server (tower-test, the real
//! fixture bodies of `demo/web`, staged at partition 4: the step 4→3 replaces web-3) and an answerer on
//! 127.0.0.1 that records each POST and answers `Approve`, `Wait` (with `retryAfterSeconds`), `Deny`, a
//! 500, a body that is not a decision, nothing at all (the timeout), or is not there (connection
//! refused). `Approve` steps; `Wait` and `Deny` hold with their reason; the others are errors (counted,
//! held, never a step). The URL comes from `--webhook` only: an annotation holding a URL, or naming an
//! unconfigured webhook, is `InvalidAnnotation` and nothing is called; a pass that may not write
//! (`status`, `--dry-run`) calls nothing. Every server binds 127.0.0.1 and stops when dropped; the hung
//! one is bounded by the client's timeout.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::mock_api::*;
use crate::support::counting::Counting;
use crate::support::prometheus::HungServer;
use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::webhook::{Endpoint, Webhooks};
use sts_stepper::config::webhook;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport};

/// `demo/web` of moment `2-stepped-4` (Ready, staged, partition 4), once fully Ready, asking the
/// webhook `name`, with `extra` annotations.
fn web(name: &str, extra: &[(&str, &str)]) -> Value {
    let list: Value =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let mut s = list["items"][0].clone();
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/initialized"] = json!("true");
    a["safe-rollout.dev/pre-update-webhook"] = json!(name);
    for (k, v) in extra {
        a[format!("safe-rollout.dev/{k}")] = json!(v);
    }
    s
}

/// An answerer on 127.0.0.1: records each request (its `Content-Type` and JSON body) and answers every
/// one with `status` and `body`.
struct Answerer {
    url: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Answerer {
    async fn start(status: StatusCode, body: &'static str) -> Answerer {
        let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let record = seen.clone();
        let app = Router::new().route(
            "/approve",
            post(move |headers: HeaderMap, request: String| {
                let record = record.clone();
                async move {
                    let kind = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let json = serde_json::from_str(&request).unwrap_or(Value::Null);
                    record.lock().expect("lock").push((kind, json));
                    (status, body)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}/approve", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Answerer { url, seen, task }
    }

    fn requests(&self) -> Vec<(String, Value)> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Drop for Answerer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What one pass did: its report, the patch's body, the Events' reasons.
struct Pass {
    report: PassReport,
    patch: Value,
    events: Vec<String>,
}

/// One pass over `web` with the stepper's `--webhook` flags `webhooks` (call timeout 300 ms, calls
/// made unless `quiet`); the API server expects the LIST, the pod and PDB reads when `candidate`, one
/// patch (a step to partition 3 when `steps`) and `events` Events.
async fn pass(
    webhooks: &[(&str, String)],
    web: Value,
    (candidate, steps, quiet): (bool, bool, bool),
    events: usize,
) -> Pass {
    let endpoints: Vec<Endpoint> = webhooks
        .iter()
        .map(|(n, u)| Endpoint {
            name: (*n).to_string(),
            url: u.clone(),
            timeout: Duration::from_millis(300),
            access: Default::default(),
            serves: None,
        })
        .collect();
    let client = Webhooks::new(&endpoints, None).expect("client");
    let mut opts = PassOptions::default();
    opts.gates.served.insert(&webhook::FLAG, client.names());
    opts.probes.call_webhooks = !quiet;
    let checks = Checks {
        webhooks: Some(client),
        ..Checks::default()
    };
    let (report, patch, after) =
        pass_over_web(&checks, &opts, web, (candidate, steps), events).await;
    Pass {
        report,
        patch,
        events: after
            .iter()
            .map(|body| body["reason"].as_str().unwrap_or("").to_string())
            .collect(),
    }
}

const BLOCKED: (bool, bool, bool) = (true, false, false);

/// The value `patch` adds at annotation `name`.
fn added<'a>(patch: &'a Value, name: &str) -> Option<&'a str> {
    let path = format!("/metadata/annotations/safe-rollout.dev~1{name}");
    patch
        .as_array()?
        .iter()
        .find(|op| op["op"] == "add" && op["path"] == path.as_str())?["value"]
        .as_str()
}

fn record(patch: &Value) -> Value {
    serde_json::from_str(added(patch, "webhook-state").expect("record written")).expect("json")
}

fn blocked(report: &PassReport, reason: Reason) -> String {
    match &report.sets[0].outcome {
        Outcome::Blocked(b) if b.reason == reason => b.detail.clone(),
        other => panic!("expected Blocked {reason}, got {other}"),
    }
}

#[tokio::test]
async fn approve_steps_and_the_request_is_the_step_s() {
    let app = Answerer::start(
        StatusCode::OK,
        r#"{"decision":"Approve","reason":"drained"}"#,
    )
    .await;
    // The step's patch, then Stepped and Approved.
    let p = pass(
        &[("db", app.url.clone())],
        web("db", &[]),
        (true, true, false),
        2,
    )
    .await;
    assert_eq!(
        p.report.sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 },
        "{}",
        p.patch
    );
    assert_eq!(p.events, ["Stepped", "Approved"]);
    let requests = app.requests();
    assert_eq!(requests.len(), 1, "one POST");
    let (kind, body) = &requests[0];
    assert_eq!(kind, "application/json");
    assert_eq!(body["apiVersion"], "safe-rollout.dev/v1alpha1");
    assert_eq!(body["kind"], "UpdateApprovalRequest");
    assert_eq!(body["phase"], "Update");
    assert_eq!(body["partition"], json!({"from": 4, "to": 3}));
    assert_eq!(body["pods"][0]["name"], "web-3");
    assert_eq!(body["pods"].as_array().map(Vec::len), Some(1));
    assert_eq!(body["updateRevision"], REV_NEW);
    assert_eq!(body["currentRevision"], REV_OLD);
    assert_eq!(body["deadline"], "2026-11-23T01:30:00Z");
    assert_eq!(body["statefulSet"]["name"], "web");
}

#[tokio::test]
async fn wait_holds_with_its_reason_and_retry_after() {
    let app = Answerer::start(
        StatusCode::OK,
        r#"{"decision":"Wait","reason":"replica lag 12 s","retryAfterSeconds":45}"#,
    )
    .await;
    // The status patch, then Blocked and ApprovalRequested (the first call of this request).
    let p = pass(&[("db", app.url.clone())], web("db", &[]), BLOCKED, 2).await;
    let detail = blocked(&p.report, Reason::ApprovalPending);
    assert!(
        detail.contains("webhook db answered Wait for web-3")
            && detail.contains("replica lag 12 s")
            && detail.contains("next call in 45 s"),
        "{detail}"
    );
    assert_eq!(p.events, ["Blocked", "ApprovalRequested"]);
    let r = record(&p.patch);
    assert_eq!(
        (&r["decision"], &r["retryAt"], &r["partition"]),
        (&json!("Wait"), &json!("2026-11-23T01:20:45Z"), &json!(4)),
        "{r}"
    );
    assert!(p.report.sets[0].error.is_none());
    // The call and the wait reach the metrics (webhook_calls_total, approval_wait_seconds).
    let set = &p.report.sets[0];
    assert_eq!(set.webhook_call, Some(("db".to_string(), "Wait")));
    assert_eq!(set.figures.approval_wait, Some((0, 600)));
}

#[tokio::test]
async fn deny_holds_and_is_announced() {
    let app = Answerer::start(
        StatusCode::OK,
        r#"{"decision":"Deny","reason":"backup running"}"#,
    )
    .await;
    let p = pass(&[("db", app.url.clone())], web("db", &[]), BLOCKED, 3).await;
    assert!(
        blocked(&p.report, Reason::ApprovalPending)
            .contains("webhook db denied the update of web-3: backup running")
    );
    assert_eq!(p.events, ["Blocked", "ApprovalRequested", "ApprovalDenied"]);
    assert_eq!(record(&p.patch)["decision"], "Deny");
}

/// Asserts one error, counted in the record, no decision, no step.
fn assert_one_error(p: &Pass, cause: &str) {
    let detail = blocked(&p.report, Reason::ApprovalPending);
    assert!(
        detail.contains("has not decided on web-3")
            && detail.contains("no answer 1 times in a row (webhook-error-limit 4)")
            && detail.contains(cause),
        "{detail}"
    );
    let r = record(&p.patch);
    assert_eq!(r["errors"], 1, "{r}");
    assert!(r.get("decision").is_none(), "{r}");
    assert!(
        r["lastError"].as_str().is_some_and(|e| e.contains(cause)),
        "{r}"
    );
    assert!(
        p.report.sets[0].error.is_none(),
        "a webhook error is no API error"
    );
}

#[tokio::test]
async fn a_500_is_an_error_even_with_a_decision_in_its_body() {
    let app = Answerer::start(
        StatusCode::INTERNAL_SERVER_ERROR,
        r#"{"decision":"Approve"}"#,
    )
    .await;
    let p = pass(&[("db", app.url.clone())], web("db", &[]), BLOCKED, 2).await;
    assert_one_error(&p, "HTTP 500");
    assert_eq!(
        p.report.sets[0].webhook_call,
        Some(("db".to_string(), "Error"))
    );
}

#[tokio::test]
async fn a_2xx_without_a_decision_is_an_error() {
    let app = Answerer::start(StatusCode::OK, "OK").await;
    let p = pass(&[("db", app.url.clone())], web("db", &[]), BLOCKED, 2).await;
    assert_one_error(&p, "HTTP 200: not JSON");
    let app = Answerer::start(StatusCode::OK, r#"{"approved":true}"#).await;
    let p = pass(&[("db", app.url.clone())], web("db", &[]), BLOCKED, 2).await;
    assert_one_error(&p, "no \"decision\"");
}

#[tokio::test]
async fn no_answer_within_the_timeout_is_an_error() {
    let hung = HungServer::start().await;
    let p = pass(&[("db", hung.url())], web("db", &[]), BLOCKED, 2).await;
    assert_one_error(&p, "timed out");
}

#[tokio::test]
async fn a_refused_connection_is_an_error_and_the_limit_records_it() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/approve", closed.local_addr().expect("addr"));
    drop(closed);
    let p = pass(&[("db", url.clone())], web("db", &[]), BLOCKED, 2).await;
    assert_one_error(&p, "error sending request");
    // Three errors already recorded for this request (from the first pass), the limit 4: the fourth
    // records the rollout as Degraded, announced by a RolloutDegraded Event.
    let mut r = record(&p.patch);
    r["errors"] = json!(3);
    let state = r.to_string();
    let p = pass(
        &[("db", url)],
        web("db", &[("webhook-state", &state)]),
        BLOCKED,
        2,
    )
    .await;
    assert!(
        added(&p.patch, "degraded-reason").is_some_and(|d| d.starts_with("WebhookErrors: webhook db gave no answer 4 times in a row (webhook-error-limit 4); last: ")),
        "{}",
        p.patch
    );
    assert_eq!(p.events, ["Blocked", "RolloutDegraded"]);
}

#[tokio::test]
async fn the_url_comes_only_from_the_flag() {
    let configured = Counting::start("/approve").await;
    let elsewhere = Counting::start("/approve").await;
    // An annotation holding a URL: not a webhook name; nothing is called.
    let p = pass(
        &[("db", configured.url.clone())],
        web(&elsewhere.url, &[]),
        (false, false, false),
        1,
    )
    .await;
    let detail = blocked(&p.report, Reason::InvalidAnnotation);
    assert!(
        detail.starts_with("safe-rollout.dev/pre-update-webhook: ")
            && detail.contains("never a URL"),
        "{detail}"
    );
    // A name the stepper does not configure: InvalidAnnotation naming the configured ones.
    let p = pass(
        &[("db", configured.url.clone())],
        web("other", &[]),
        (false, false, false),
        1,
    )
    .await;
    assert_eq!(
        blocked(&p.report, Reason::InvalidAnnotation),
        "safe-rollout.dev/pre-update-webhook: \"other\" names no webhook configured on the stepper; configured: db"
    );
    assert_eq!(elsewhere.hits(), 0);
    assert_eq!(configured.hits(), 0);
}

#[tokio::test]
async fn a_pass_that_may_not_write_calls_nothing() {
    let app = Counting::start("/approve").await;
    // The status patch records only the new blocked-reason; its Blocked Event.
    let p = pass(
        &[("db", app.url.clone())],
        web("db", &[]),
        (true, false, true),
        1,
    )
    .await;
    assert!(
        blocked(&p.report, Reason::ApprovalPending).contains("asking webhook db to approve web-3")
    );
    assert_eq!(added(&p.patch, "webhook-state"), None, "{}", p.patch);
    assert_eq!(app.hits(), 0);
}
