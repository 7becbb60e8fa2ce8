//! The approval handshake against a mocked API server, on the real "1-staged" objects with
//! `pre-update-approval: "true"`: the exact pod PATCH (pinned to the pod's uid and resourceVersion), the
//! `ApprovalRequested` Event and the set's `approval-pending` line; a 403 without the opt-in RBAC names the component; a pod recreated since
//! the read (a failed `test` op) is no error; `--dry-run` writes nothing.

use crate::common::*;
use crate::mock_api::{
    Expect, expect, get, pass_with, post_event, status_body, web_candidate_reads,
};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions};

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
const PATCH_WEB4: &str = "/api/v1/namespaces/demo/pods/web-4?&fieldManager=sts-stepper";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";

/// The staged set with the handshake on (and `initialized`, so the only status write is the new
/// `blocked-reason`).
fn sets() -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("1-staged-statefulsets.json")).expect("json");
    let notes = &mut list["items"][0]["metadata"]["annotations"];
    notes["safe-rollout.dev/pre-update-approval"] = json!("true");
    notes["safe-rollout.dev/initialized"] = json!("true");
    serde_json::to_vec(&list).expect("json")
}

fn pod(ordinal: usize) -> Value {
    let pods: Value = serde_json::from_slice(&fixture_body("1-staged-pods.json")).expect("json");
    pods["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|p| p["metadata"]["name"] == format!("web-{ordinal}"))
        .cloned()
        .expect("pod")
}

fn reads() -> Vec<Expect> {
    let mut script = vec![get(STS_ALL, sets())];
    script.extend(web_candidate_reads(
        fixture_body("1-staged-pods.json"),
        fixture_body("1-staged-pdbs.json"),
    ));
    script
}

fn stored_set() -> Vec<u8> {
    let list: Value = serde_json::from_slice(&sets()).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&set).expect("json")
}

#[tokio::test]
async fn the_request_is_one_pod_patch_pinned_to_its_uid_and_version_then_announced() {
    let web4 = pod(4);
    let mut script = reads();
    script.push(expect(
        Method::PATCH,
        PATCH_WEB4,
        200,
        serde_json::to_vec(&web4).expect("json"),
    ));
    script.push(post_event("demo"));
    script.push(expect(Method::PATCH, PATCH_WEB, 200, stored_set()));
    script.push(post_event("demo"));
    let (report, seen) = pass_with(Scope::default(), PassOptions::default(), script).await;
    let report = report.expect("pass");
    let uid = web4["metadata"]["uid"].clone();
    let t = now().to_string();
    let rv = web4["metadata"]["resourceVersion"].clone();
    let mut want = vec![
        json!({"op": "test", "path": "/metadata/uid", "value": uid}),
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}),
    ];
    let add = |k: &str, v: &str| json!({"op": "add", "path": format!("/metadata/annotations/safe-rollout.dev~1{k}"), "value": v});
    if web4["metadata"].get("annotations").is_none() {
        want.push(
            json!({"op": "add", "path": "/metadata/annotations", "value": {
                "safe-rollout.dev/update-requested": REV_NEW,
                "safe-rollout.dev/update-requested-at": t,
                "safe-rollout.dev/update-request-phase": "Update",
            }}),
        );
    } else {
        want.push(add("update-requested", REV_NEW));
        want.push(add("update-requested-at", &t));
        want.push(add("update-request-phase", "Update"));
    }
    assert_eq!(seen[3].method, Method::PATCH);
    assert_eq!(seen[3].body, Value::Array(want), "the pod patch");
    let event = &seen[4].body;
    assert_eq!(event["reason"], "ApprovalRequested");
    assert_eq!(event["type"], "Normal");
    assert_eq!(
        event["note"],
        format!("asked web-4 to approve updateRevision {REV_NEW}")
    );
    // The set records what the step waits for, for whoever reads the object alone (the GitOps health).
    assert_eq!(seen[5].method, Method::PATCH);
    let waiting = format!(
        "approval of web-4 on {REV_NEW} asked at 2026-11-23T01:20:00Z, deadline 2026-11-23T01:30:00Z"
    );
    assert!(
        seen[5].body.as_array().expect("ops").contains(&json!({
            "op": "add",
            "path": "/metadata/annotations/safe-rollout.dev~1approval-pending",
            "value": waiting,
        })),
        "{}",
        seen[5].body
    );
    assert_eq!(seen[6].body["reason"], "Blocked");
    match &report.sets[0].outcome {
        Outcome::Blocked(b) => {
            assert_eq!(b.reason, Reason::ApprovalPending);
            assert!(b.detail.contains("approval of web-4"), "{}", b.detail);
        }
        other => panic!("{other:?}"),
    }
    assert!(!report.any_errored());
}

#[tokio::test]
async fn forbidden_without_the_opt_in_rbac_names_the_component() {
    let mut script = reads();
    script.push(expect(
        Method::PATCH,
        PATCH_WEB4,
        403,
        status_body(
            403,
            "Forbidden",
            "pods \"web-4\" is forbidden: User \"system:serviceaccount:sts-safe-rollout:sts-stepper\" \
             cannot patch resource \"pods\" in API group \"\" in the namespace \"demo\"",
        ),
    ));
    let (report, seen) = pass_with(Scope::default(), PassOptions::default(), script).await;
    let report = report.expect("pass");
    assert_eq!(seen.len(), 4, "nothing after the refused pod patch");
    let set = &report.sets[0];
    match &set.outcome {
        Outcome::Blocked(b) => assert_eq!(b.reason, Reason::ApiError),
        other => panic!("{other:?}"),
    }
    let msg = set.error.as_ref().expect("an error").to_string();
    for part in [
        "patch pod demo/web-4",
        "cannot patch resource \"pods\"",
        "deploy/stepper/approvals/",
    ] {
        assert!(msg.contains(part), "{part} in {msg:?}");
    }
    assert!(report.any_errored());
}

#[tokio::test]
async fn a_pod_recreated_since_the_read_is_no_error_and_not_announced() {
    let mut script = reads();
    script.push(expect(
        Method::PATCH,
        PATCH_WEB4,
        422,
        std::fs::read(fixture_path("errors/422-json-patch-test-failed.json")).expect("fixture"),
    ));
    script.push(expect(Method::PATCH, PATCH_WEB, 200, stored_set()));
    script.push(post_event("demo"));
    let (report, seen) = pass_with(Scope::default(), PassOptions::default(), script).await;
    let report = report.expect("pass");
    assert_eq!(seen[4].method, Method::PATCH, "no ApprovalRequested Event");
    assert_eq!(seen[5].body["reason"], "Blocked");
    assert!(!report.any_errored());
}

#[tokio::test]
async fn dry_run_asks_no_one() {
    let opts = PassOptions {
        dry_run: true,
        ..PassOptions::default()
    };
    let (report, seen) = pass_with(Scope::default(), opts, reads()).await;
    report.expect("pass");
    assert!(seen.iter().all(|s| s.method == Method::GET));
}
