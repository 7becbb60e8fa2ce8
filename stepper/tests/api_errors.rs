//! The API server's error answers, classified as it means them: every real body in
//! `fixtures/api/errors/` through the pure classifier, then through the real kube-rs client
//! (a tower-test mock API server) as the answer to a step's JSON Patch: a lost race is a `Conflict`
//! (exit 0, re-read next pass), a rejected write an `ApiError` with the server's message (exit 1).

use std::path::PathBuf;

use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::Body;
use kube::core::Status;
use serde_json::{Value, json};
use sts_stepper::cluster::api_error::{ApiAnswer, MissingRule, classify};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::cluster::{Cluster, ClusterError, PatchOutcome};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

const WEBHOOK_MESSAGE: &str = "admission webhook \"sts-safe-rollout.e2e.safe-rollout.dev\" denied \
     the request: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater \
     than or equal to 0";
const VALIDATION_MESSAGE: &str = "StatefulSet.apps \"s000\" is invalid: spec.replicas: Invalid \
     value: -1: must be greater than or equal to 0";
const FORBIDDEN_MESSAGE: &str = "pods \"web-0\" is forbidden: User \
     \"system:serviceaccount:sts-safe-rollout:sts-stepper\" cannot delete resource \"pods\" in API \
     group \"\" in the namespace \"e2e\"";
const TEST_FAILED_MESSAGE: &str = "the server rejected our request due to an error in our request";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/api")
}

/// The raw bytes of `fixtures/api/{file}`.
fn fixture(file: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(file)).unwrap_or_else(|e| panic!("read fixture {file}: {e}"))
}

/// An error body and its HTTP code (the file name's number, as the fixtures' README says).
fn error_body(file: &str) -> (u16, Vec<u8>) {
    let code = file[..3]
        .parse()
        .unwrap_or_else(|e| panic!("{file}: no HTTP code: {e}"));
    (code, fixture(&format!("errors/{file}")))
}

fn status(file: &str) -> Status {
    serde_json::from_slice(&error_body(file).1).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// What each real body means. Every file in the directory must be here.
fn expected(file: &str) -> ApiAnswer {
    match file {
        "422-json-patch-test-failed.json" => ApiAnswer::LostRace {
            message: TEST_FAILED_MESSAGE.into(),
        },
        "409-conflict-stale-resourceversion.json" => ApiAnswer::LostRace {
            message: "Operation cannot be fulfilled on statefulsets.apps \"s001\": the object has \
                      been modified; please apply your changes to the latest version and try again"
                .into(),
        },
        "404-not-found.json" => ApiAnswer::Gone {
            message: "statefulsets.apps \"nosuch\" not found".into(),
        },
        "422-validation-failed.json" => ApiAnswer::Rejected {
            message: VALIDATION_MESSAGE.into(),
            causes: vec![(
                "spec.replicas".into(),
                "Invalid value: -1: must be greater than or equal to 0".into(),
            )],
        },
        "400-admission-webhook-denied.json" => ApiAnswer::WebhookDenied {
            webhook: "sts-safe-rollout.e2e.safe-rollout.dev".into(),
            message: WEBHOOK_MESSAGE.into(),
        },
        "403-forbidden-delete-pod.json" => ApiAnswer::Forbidden {
            missing_rule: Some(MissingRule {
                user: "system:serviceaccount:sts-safe-rollout:sts-stepper".into(),
                verb: "delete".into(),
                resource: "pods".into(),
                group: String::new(),
                namespace: Some("e2e".into()),
            }),
            message: FORBIDDEN_MESSAGE.into(),
        },
        other => panic!("{other}: a new error fixture: say what it means here"),
    }
}

#[test]
fn every_real_error_body_is_classified_as_the_api_server_means_it() {
    let mut files: Vec<String> = std::fs::read_dir(fixtures().join("errors"))
        .expect("errors fixture directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6, "{files:?}");
    for file in &files {
        let answer = classify(&status(file));
        assert_eq!(answer, expected(file), "{file}");
        let (code, _) = error_body(file);
        let retried = matches!(code, 404 | 409) || file == "422-json-patch-test-failed.json";
        assert_eq!(answer.is_retried_next_pass(), retried, "{file}");
    }
}

/// A ValidatingAdmissionPolicy's denial, shaped as k8s.io/apiserver's validating dispatcher builds
/// it (`admission.NewForbidden`, then reason `Invalid` and code 422 unless the policy sets a reason,
/// and the message appended as a cause without a field): a refusal naming the policy, never a lost
/// race, although it is a 422.
#[test]
fn a_validating_admission_policy_denial_is_a_refusal_naming_the_policy() {
    let message = "statefulsets.apps \"web\" is forbidden: ValidatingAdmissionPolicy \
                   'freeze-partitions' with binding 'freeze-partitions' denied request: \
                   partitions are frozen during the change freeze";
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Invalid", "code": 422,
        "details": {"name": "web", "group": "apps", "kind": "statefulsets", "causes": [
            {"message": "ValidatingAdmissionPolicy 'freeze-partitions' with binding \
                         'freeze-partitions' denied request: partitions are frozen during the \
                         change freeze"}
        ]}
    });
    let answer = classify(&serde_json::from_value(body).expect("a Status"));
    assert!(
        answer.is_refusal() && !answer.is_retried_next_pass(),
        "{answer:?}"
    );
    assert!(
        answer
            .to_string()
            .contains("ValidatingAdmissionPolicy 'freeze-partitions'")
    );
    let race = classify(&status("422-json-patch-test-failed.json"));
    assert!(!race.is_refusal());
}

#[test]
fn the_two_422s_differ_only_by_their_causes() {
    let race = status("422-json-patch-test-failed.json");
    let rejected = status("422-validation-failed.json");
    assert_eq!((race.code, race.reason.as_str()), (422, "Invalid"));
    assert_eq!((rejected.code, rejected.reason.as_str()), (422, "Invalid"));
    // `details: {}` without causes; the same body with the validation failure's causes is rejected.
    let mut with_causes = race.clone();
    with_causes.details = rejected.details.clone();
    assert!(classify(&race).is_retried_next_pass());
    assert!(matches!(
        classify(&with_causes),
        ApiAnswer::Rejected { ref causes, .. } if causes.len() == 1
    ));
}

#[test]
fn a_forbidden_answer_names_the_missing_rule_in_its_message() {
    assert_eq!(
        classify(&status("403-forbidden-delete-pod.json")).to_string(),
        format!(
            "{FORBIDDEN_MESSAGE} (missing RBAC rule: verb \"delete\", resource \"pods\", API group \
             \"\", namespace \"e2e\")"
        )
    );
    let cluster_scope = Status::failure(
        "namespaces \"demo\" is forbidden: User \"bob\" cannot get resource \"namespaces\" in API \
         group \"\" at the cluster scope",
        "Forbidden",
    )
    .with_code(403);
    let ApiAnswer::Forbidden {
        missing_rule: Some(rule),
        ..
    } = classify(&cluster_scope)
    else {
        panic!("{:?}", classify(&cluster_scope));
    };
    assert_eq!(rule.namespace, None);
    assert_eq!(
        rule.to_string().as_str().rsplit(", ").next(),
        Some("cluster scope")
    );
    // A 403 that is not the RBAC authorizer's still is Forbidden, without a rule.
    let terminating = Status::failure(
        "unable to create new content in namespace demo because it is being terminated",
        "Forbidden",
    )
    .with_code(403);
    assert!(matches!(
        classify(&terminating),
        ApiAnswer::Forbidden {
            missing_rule: None,
            ..
        }
    ));
}

#[test]
fn a_webhook_denial_with_its_own_code_is_still_the_webhook_and_a_plain_400_is_not() {
    let own_code = Status::failure(WEBHOOK_MESSAGE, "Forbidden").with_code(403);
    assert!(matches!(
        classify(&own_code),
        ApiAnswer::WebhookDenied { ref webhook, .. } if webhook == "sts-safe-rollout.e2e.safe-rollout.dev"
    ));
    let bad_request = Status::failure(
        "the body of the request was in an unknown format",
        "BadRequest",
    )
    .with_code(400);
    assert_eq!(
        classify(&bad_request),
        ApiAnswer::Other {
            code: 400,
            reason: "BadRequest".into(),
            message: "the body of the request was in an unknown format".into(),
        }
    );
    // A webhook the API server could not call is a 500, not a denial: retried, fail closed.
    let unreachable = Status::failure(
        "Internal error occurred: failed calling webhook \"x.example\": connection refused",
        "InternalError",
    )
    .with_code(500);
    assert!(matches!(
        classify(&unreachable),
        ApiAnswer::Other { code: 500, .. }
    ));
}

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
        // The refusal is then recorded on the set (tests/rejected_writes.rs has the details).
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
