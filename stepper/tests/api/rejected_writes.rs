//! A write the API server refuses, made visible on the StatefulSet (issue 20): each real error body of
//! `fixtures/api/errors/` (400 webhook denial, 422 with causes, 403) as the answer to a step
//! and to a status-annotation write, through the real kube-rs client on a tower-test mock API server.
//! Each time: the refusal is recorded in `<prefix>/degraded-reason` by a patch of its own (pinned by a
//! `test` op), a Warning Event (`StepRejected`, `StatusWriteRejected`) names the server's message, and
//! a later pass with the same refusal sends nothing; a changed message is announced again; a refused
//! record still sends the Event (once per pass); a successful step clears the record.

use crate::common::*;
use crate::mock_api::*;
use http::Method;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassReport};
use sts_stepper::serve::metrics::Metrics;

const KEY: &str = "safe-rollout.dev/degraded-reason";
const KEY_PTR: &str = "/metadata/annotations/safe-rollout.dev~1degraded-reason";

/// An error body of `fixtures/api/errors/` and its HTTP code (the file name's number).
fn error_body(file: &str) -> (u16, Vec<u8>) {
    (
        file[..3].parse().expect("a code"),
        fixture_body(&format!("errors/{file}")),
    )
}

/// The `message` of an error body.
fn message_of(file: &str) -> String {
    let v: Value = serde_json::from_slice(&error_body(file).1).expect("json");
    v["message"].as_str().expect("message").to_string()
}

/// The fixture set of `moment`, stamped `initialized`, with `f` applied, as a list body.
fn list(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    let set = &mut list["items"][0];
    set["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    f(set);
    serde_json::to_vec(&list).expect("json")
}

/// The fixture set of `moment` as the API server returns one stored object, with `f` applied.
fn stored(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let list: Value = serde_json::from_slice(&list(moment, |_| {})).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    serde_json::to_vec(&set).expect("json")
}

/// The reads of one pass over `moment` (demo/web the one candidate), the set changed by `f`.
fn reads(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<Expect> {
    let mut script = vec![get(STS_ALL, list(moment, f))];
    script.extend(web_candidate_reads(
        fixture_body(&format!("{moment}-pods.json")),
        fixture_body(&format!("{moment}-pdbs.json")),
    ));
    script
}

fn with_record(value: &str) -> impl FnOnce(&mut Value) + '_ {
    move |s: &mut Value| s["metadata"]["annotations"][KEY] = json!(value)
}

/// The bodies of the PATCHes and the Events among `seen`.
fn writes(seen: &[Seen]) -> (Vec<&Value>, Vec<&Value>) {
    let patches = seen
        .iter()
        .filter(|s| s.method == Method::PATCH)
        .map(|s| &s.body);
    let events = seen
        .iter()
        .filter(|s| s.method == Method::POST)
        .map(|s| &s.body);
    (patches.collect(), events.collect())
}

async fn pass(script: Vec<Expect>) -> (PassReport, Vec<Seen>) {
    let (report, seen) = pass_in_default_scope(script).await;
    (report.expect("pass"), seen)
}

/// The step (staged moment: every pod Ready) answered with each refusing body: the record patch
/// (`test` resourceVersion, `add` the record) and one Warning `StepRejected` Event with the server's
/// message — the webhook's name, the invalid field, the missing RBAC rule.
#[rstest]
#[case::webhook_denial(
    "400-admission-webhook-denied.json",
    "sts-safe-rollout.e2e.safe-rollout.dev"
)]
#[case::invalid_with_causes("422-validation-failed.json", "spec.replicas: Invalid value: -1")]
#[case::forbidden("403-forbidden-delete-pod.json", "missing RBAC rule: verb \"delete\"")]
#[tokio::test]
async fn a_refused_step_is_recorded_and_announced_once(#[case] file: &str, #[case] names: &str) {
    let (code, body) = error_body(file);
    let mut script = reads("1-staged", |_| {});
    script.push(patch(PATCH_WEB, code, body));
    script.push(patch(PATCH_WEB, 200, stored("1-staged", |_| {})));
    script.push(post_event("demo"));
    let (report, seen) = pass(script).await;
    let set = &report.sets[0];
    assert_eq!(set.blocked_reason(), Some(Reason::ApiError));
    assert!(report.any_errored(), "a refused step exits 1");
    let (patches, events) = writes(&seen);
    assert_eq!(
        patches[1][0],
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": "1947"})
    );
    assert_eq!(
        (&patches[1][1]["op"], &patches[1][1]["path"]),
        (&json!("add"), &json!(KEY_PTR))
    );
    let record = patches[1][1]["value"].as_str().expect("the record");
    assert!(
        record.starts_with(&format!("StepRejected: {}", message_of(file)))
            && record.contains(names),
        "{record}"
    );
    let event = events[0];
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["reason"], "StepRejected");
    assert_eq!(event["regarding"]["name"], "web");
    let note = event["note"].as_str().expect("note");
    assert!(
        note.starts_with("the API server rejected the step: "),
        "{note}"
    );
    assert!(note.contains(names), "{note}");
    let r = set.rejection.as_ref().expect("a rejection report");
    assert!(
        r.recorded && r.announced && r.record_error.is_none(),
        "{r:?}"
    );
}

/// The same refusal on the next pass (the record already says it): no record write, no Event — not
/// one Event per CronJob pass.
#[tokio::test]
async fn the_same_refusal_again_sends_nothing() {
    let file = "400-admission-webhook-denied.json";
    let (code, body) = error_body(file);
    let record = format!("StepRejected: {}", message_of(file));
    let mut script = reads("1-staged", with_record(&record));
    script.push(patch(PATCH_WEB, code, body));
    let (report, seen) = pass(script).await;
    assert_eq!(seen.len(), 4, "the reads and the refused step only");
    let r = report.sets[0].rejection.as_ref().expect("report");
    assert!(r.recorded && !r.announced, "{r:?}");
    assert!(report.any_errored(), "still exits 1");
}

/// A refusal whose message changed (another field, another webhook) is announced again; its record
/// patch pins the old value.
#[tokio::test]
async fn a_changed_message_is_announced_again() {
    let (code, body) = error_body("422-validation-failed.json");
    let old = format!(
        "StepRejected: {}",
        message_of("400-admission-webhook-denied.json")
    );
    let mut script = reads("1-staged", with_record(&old));
    script.push(patch(PATCH_WEB, code, body));
    script.push(patch(PATCH_WEB, 200, stored("1-staged", |_| {})));
    script.push(post_event("demo"));
    let (_, seen) = pass(script).await;
    let (patches, events) = writes(&seen);
    assert_eq!(
        patches[1][0],
        json!({"op": "test", "path": KEY_PTR, "value": old})
    );
    assert_eq!(
        patches[1][1]["value"],
        format!("StepRejected: {}", message_of("422-validation-failed.json"))
    );
    assert_eq!(events.len(), 1);
}

/// A refused status-annotation write (web-1 NotReady: the new blocked-reason is written, a webhook
/// denies it): recorded and announced as `StatusWriteRejected`.
#[tokio::test]
async fn a_refused_status_write_is_announced_with_its_own_reason() {
    let file = "400-admission-webhook-denied.json";
    let (code, body) = error_body(file);
    let mut script = reads("3-web1-notready", |_| {});
    script.push(patch(PATCH_WEB, code, body));
    script.push(patch(PATCH_WEB, 200, stored("3-web1-notready", |_| {})));
    script.push(post_event("demo"));
    let (report, seen) = pass(script).await;
    let (patches, events) = writes(&seen);
    assert!(
        patches[0].to_string().contains("blocked-reason"),
        "the status write: {}",
        patches[0]
    );
    assert_eq!(
        patches[1][1]["value"],
        format!("StatusWriteRejected: {}", message_of(file))
    );
    assert_eq!(events[0]["reason"], "StatusWriteRejected");
    assert_eq!(events[0]["type"], "Warning");
    let note = events[0]["note"].as_str().expect("note");
    assert!(note.starts_with("the API server rejected the status annotations: admission webhook"));
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::ApiError));
}

/// The record write refused too (a 403 on every patch): the Event still goes out, saying it could not
/// be recorded — once per pass, never more (two passes, two Events).
#[tokio::test]
async fn a_refused_record_still_announces_once_per_pass() {
    let (code, body) = error_body("403-forbidden-delete-pod.json");
    for _pass in 0..2 {
        let mut script = reads("1-staged", |_| {});
        script.push(patch(PATCH_WEB, code, body.clone()));
        script.push(patch(PATCH_WEB, code, body.clone()));
        script.push(post_event("demo"));
        let (report, seen) = pass(script).await;
        let (patches, events) = writes(&seen);
        assert_eq!((patches.len(), events.len()), (2, 1), "one Event this pass");
        let note = events[0]["note"].as_str().expect("note");
        assert!(
            note.contains("not recorded on the set, repeated every pass"),
            "{note}"
        );
        let r = report.sets[0].rejection.as_ref().expect("report");
        assert!(
            !r.recorded && r.announced && r.record_error.is_some(),
            "{r:?}"
        );
    }
}

/// The record's `test` op fails (another writer changed the set since it was read): neither record
/// nor Event; the next pass decides on the new object.
#[tokio::test]
async fn a_record_that_loses_a_race_sends_no_event() {
    let (code, body) = error_body("400-admission-webhook-denied.json");
    let (race, race_body) = error_body("422-json-patch-test-failed.json");
    let mut script = reads("1-staged", |_| {});
    script.push(patch(PATCH_WEB, code, body));
    script.push(patch(PATCH_WEB, race, race_body));
    let (report, _) = pass(script).await;
    let r = report.sets[0].rejection.as_ref().expect("report");
    assert!(
        !r.recorded && !r.announced && r.record_error.is_none(),
        "{r:?}"
    );
}

/// A step that succeeds after a refusal removes the record in the same patch.
#[tokio::test]
async fn a_successful_step_clears_the_record() {
    let record = format!(
        "StepRejected: {}",
        message_of("400-admission-webhook-denied.json")
    );
    let mut script = reads("1-staged", with_record(&record));
    script.push(patch(
        PATCH_WEB,
        200,
        stored("1-staged", |s| {
            s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
        }),
    ));
    script.push(post_event("demo"));
    let (report, seen) = pass(script).await;
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
    let (patches, _) = writes(&seen);
    assert!(
        patches[0]
            .as_array()
            .expect("ops")
            .contains(&json!({"op": "remove", "path": KEY_PTR})),
        "{}",
        patches[0]
    );
}

/// A step the API server accepted but stored with the old partition (a webhook changed it back):
/// announced as `StepRejected`, the record pinned on the object as stored.
#[tokio::test]
async fn a_step_a_webhook_undid_is_a_refused_step() {
    let mut script = reads("1-staged", |_| {});
    script.push(patch(
        PATCH_WEB,
        200,
        stored("1-staged", |s| {
            s["metadata"]["resourceVersion"] = json!("2000")
        }),
    ));
    script.push(patch(PATCH_WEB, 200, stored("1-staged", |_| {})));
    script.push(post_event("demo"));
    let (_, seen) = pass(script).await;
    let (patches, events) = writes(&seen);
    assert_eq!(
        patches[1][0],
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": "2000"})
    );
    assert!(
        patches[1][1]["value"].as_str().is_some_and(
            |v| v.starts_with("StepRejected: the API server accepted partition 4 but stored 5")
        ),
        "{}",
        patches[1]
    );
    assert_eq!(events[0]["reason"], "StepRejected");
}

/// `sts_safe_rollout_errors_total{reason}` counts a refused write by its Event reason and any other
/// failed write by its `ClusterError::reason`; the set's `error_reason` (its log line) is the same.
#[rstest]
#[case::refused_step(
    "1-staged",
    error_body("400-admission-webhook-denied.json"),
    true,
    "StepRejected"
)]
#[case::refused_status_write(
    "3-web1-notready",
    error_body("400-admission-webhook-denied.json"),
    true,
    "StatusWriteRejected"
)]
#[case::server_error(
    "1-staged",
    (500, status_body(500, "InternalError", "etcdserver: request timed out")),
    false,
    "ApiStatus"
)]
#[case::too_many_requests(
    "1-staged",
    (429, status_body(429, "TooManyRequests", "too many requests")),
    false,
    "ApiStatus"
)]
#[case::unreadable_answer("1-staged", (200, b"<html>proxy error</html>".to_vec()), false, "Transport")]
#[tokio::test]
async fn failed_writes_are_counted_by_reason(
    #[case] moment: &str,
    #[case] answer: (u16, Vec<u8>),
    #[case] refused: bool,
    #[case] reason: &str,
) {
    let mut script = reads(moment, |_| {});
    script.push(patch(PATCH_WEB, answer.0, answer.1));
    if refused {
        script.push(patch(PATCH_WEB, 200, stored(moment, |_| {})));
        script.push(post_event("demo"));
    }
    let (report, _) = pass(script).await;
    let set = &report.sets[0];
    assert_eq!(set.blocked_reason(), Some(Reason::ApiError));
    assert_eq!(set.error_reason(), Some(reason), "{:?}", set.error);
    assert_eq!(set.rejection.is_some(), refused);
    let metrics = Metrics::new();
    metrics.observe(&report, 0.1, 1.0);
    let text = metrics.encode();
    let counted: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("sts_safe_rollout_errors_total{"))
        .collect();
    assert_eq!(
        counted,
        [format!(
            "sts_safe_rollout_errors_total{{reason=\"{reason}\"}} 1"
        )],
        "{text}"
    );
}
