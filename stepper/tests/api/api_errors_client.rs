//! The API server's real error bodies (`fixtures/api/errors/`) through the real kube-rs client (a
//! tower-test mock API server) as the answer to a step's JSON Patch: a lost race is a `Conflict` (exit 0,
//! re-read next pass), a rejected write an `ApiError` with the server's message (exit 1).

use crate::support::api_errors::{
    TEST_FAILED_MESSAGE, VALIDATION_MESSAGE, WEBHOOK_MESSAGE, error_body, expected, fixture,
};
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::cluster::{Cluster, ClusterError, PatchOutcome};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

/// One request the mock API server expects (method, URI) and its answer.
struct Answer {
    method: Method,
    uri: &'static str,
    status: u16,
    body: Vec<u8>,
}

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
/// The reads of the one candidate demo/web: its own pods (its selector) and its namespace's PDBs.
const WEB_PODS: &str = "/api/v1/namespaces/demo/pods?&labelSelector=app%3Dweb";
const DEMO_PDBS: &str = "/apis/policy/v1/namespaces/demo/poddisruptionbudgets?";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";

/// Answers `script` in order, asserting each request's method and URI; Events (POST to
/// events.k8s.io) are echoed as created whenever they come and are not part of the script. Returns
/// the JSON bodies of the scripted requests, and fails on any other request.
fn serve(
    handle: Handle<Request<Body>, Response<Body>>,
    script: Vec<Answer>,
) -> JoinHandle<Vec<Value>> {
    tokio::spawn(async move {
        let mut handle = handle;
        let mut bodies = Vec::new();
        let mut script = script.into_iter();
        while let Some((req, send)) = handle.next_request().await {
            let (method, uri) = (req.method().clone(), req.uri().to_string());
            let bytes = req.into_body().collect().await.expect("body").to_bytes();
            let (status, body) = if method == Method::POST && uri.contains("/events") {
                (201, bytes.to_vec())
            } else {
                let next = script
                    .next()
                    .unwrap_or_else(|| panic!("unexpected request {method} {uri}"));
                assert_eq!((&method, uri.as_str()), (&next.method, next.uri));
                bodies.push(serde_json::from_slice(&bytes).unwrap_or(Value::Null));
                (next.status, next.body)
            };
            send.send_response(
                Response::builder()
                    .status(StatusCode::from_u16(status).expect("status"))
                    .header("content-type", "application/json")
                    .body(Body::from(body))
                    .expect("response"),
            );
        }
        assert!(
            script.next().is_none(),
            "the client stopped before the script ended"
        );
        bodies
    })
}

fn mock_cluster(script: Vec<Answer>) -> (KubeCluster, JoinHandle<Vec<Value>>) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    let server = serve(handle, script);
    (
        KubeCluster::new(Client::new(service, "default"), Scope::default(), None),
        server,
    )
}

fn step_patch() -> json_patch::Patch {
    serde_json::from_value(json!([
        {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 5},
        {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 4}
    ]))
    .expect("patch")
}

#[tokio::test]
async fn a_step_patch_answered_with_each_real_body_is_a_conflict_or_an_error() {
    for file in [
        "422-json-patch-test-failed.json",
        "409-conflict-stale-resourceversion.json",
        "404-not-found.json",
        "422-validation-failed.json",
        "400-admission-webhook-denied.json",
        "403-forbidden-delete-pod.json",
    ] {
        let (code, body) = error_body(file);
        let (cluster, server) = mock_cluster(vec![Answer {
            method: Method::PATCH,
            uri: PATCH_WEB,
            status: code,
            body,
        }]);
        let outcome = cluster
            .patch_statefulset("demo", "web", &step_patch())
            .await;
        drop(cluster);
        let sent = server.await.expect("mock API server");
        assert_eq!(
            sent,
            vec![serde_json::to_value(step_patch()).expect("json")],
            "{file}"
        );
        let message = expected(file).to_string();
        match outcome {
            Ok(PatchOutcome::Conflict(m)) => {
                assert!(expected(file).is_retried_next_pass(), "{file}: Conflict");
                assert_eq!(m, message, "{file}");
            }
            Err(ClusterError::Refused {
                action,
                code: got,
                message: m,
            }) => {
                assert!(!expected(file).is_retried_next_pass(), "{file}: error");
                assert!(expected(file).is_refusal(), "{file}: a refusal");
                assert_eq!(action, "patch statefulset demo/web", "{file}");
                assert_eq!((got, m.as_str()), (code, message.as_str()), "{file}");
            }
            other => panic!("{file}: {other:?}"),
        }
    }
}

/// A pass over the recorded staged moment (demo/web at partition 5, every pod Ready, already
/// stamped `initialized`): the step patch gets `answer`.
fn staged_pass_script(step_status: u16, step_body: Vec<u8>) -> Vec<Answer> {
    let mut list: Value =
        serde_json::from_slice(&fixture("1-staged-statefulsets.json")).expect("json");
    list["items"][0]["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let get = |uri, body| Answer {
        method: Method::GET,
        uri,
        status: 200,
        body,
    };
    vec![
        get(STS_ALL, serde_json::to_vec(&list).expect("json")),
        get(WEB_PODS, fixture("1-staged-pods.json")),
        get(DEMO_PDBS, fixture("1-staged-pdbs.json")),
        Answer {
            method: Method::PATCH,
            uri: PATCH_WEB,
            status: step_status,
            body: step_body,
        },
    ]
}

#[tokio::test]
async fn a_pass_whose_step_loses_a_race_reports_conflict_and_exits_0() {
    let (code, body) = error_body("422-json-patch-test-failed.json");
    let (cluster, server) = mock_cluster(staged_pass_script(code, body));
    let report = run_pass(&cluster, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    let sent = server.await.expect("mock API server");
    assert_eq!(sent[3][0]["op"], "test", "the step carries its test ops");
    assert_eq!(
        report.sets[0].outcome,
        Outcome::Conflict(TEST_FAILED_MESSAGE.into())
    );
    assert!(!report.any_errored(), "a lost race exits 0");
}

#[tokio::test]
async fn a_pass_whose_step_is_rejected_reports_api_error_with_the_message_and_exits_1() {
    for (file, message) in [
        ("422-validation-failed.json", VALIDATION_MESSAGE),
        ("400-admission-webhook-denied.json", WEBHOOK_MESSAGE),
    ] {
        let (code, body) = error_body(file);
        let mut script = staged_pass_script(code, body);
        // The refusal is then recorded on the set (tests/api/rejected_writes.rs has the details).
        let mut stored: Value =
            serde_json::from_slice(&fixture("1-staged-statefulsets.json")).expect("json");
        stored = stored["items"][0].take();
        stored["kind"] = json!("StatefulSet");
        stored["apiVersion"] = json!("apps/v1");
        script.push(Answer {
            method: Method::PATCH,
            uri: PATCH_WEB,
            status: 200,
            body: serde_json::to_vec(&stored).expect("json"),
        });
        let (cluster, server) = mock_cluster(script);
        let report = run_pass(&cluster, &PassOptions::default(), now())
            .await
            .expect("pass");
        drop(cluster);
        let sent = server.await.expect("mock API server");
        assert!(
            sent[4].to_string().contains("degraded-reason"),
            "{file}: the record: {}",
            sent[4]
        );
        let set = &report.sets[0];
        assert_eq!(set.blocked_reason(), Some(Reason::ApiError), "{file}");
        assert_eq!(
            set.outcome.to_string(),
            format!("Blocked ApiError patch statefulset demo/web: {message}"),
            "{file}"
        );
        assert_eq!(
            set.error.as_ref().and_then(ClusterError::code),
            Some(code),
            "{file}"
        );
        assert!(report.any_errored(), "{file}: a rejected write exits 1");
    }
}

/// A time well after the recorded moment (its pods are Ready since 01:10–01:11).
fn now() -> jiff::Timestamp {
    "2026-11-23T01:20:00Z".parse().expect("time")
}
