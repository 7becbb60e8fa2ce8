//! An answer belongs to its question (issue 46; docs/approvals.md, "One question, one answer") against a
//! mocked API server, on the real "1-staged" objects with `pre-update-approval: "true"`: web-4 carries
//! an approval of the update revision given before it was asked about another revision (its request
//! names that other one). The pass does not step on it: it asks web-4 again in one pod PATCH that
//! removes the old approval after a `test` of its value, pinned to the pod's uid and resourceVersion.

use crate::common::*;
use crate::mock_api::{Expect, expect, get, pass_with, post_event, web_candidate_reads};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions};

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
const PATCH_WEB4: &str = "/api/v1/namespaces/demo/pods/web-4?&fieldManager=sts-stepper";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";
/// The revision web-4 was last asked about (the B of A → B → A).
const REV_B: &str = "web-5c9f8d7b6a";

fn sets() -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("1-staged-statefulsets.json")).expect("json");
    let notes = &mut list["items"][0]["metadata"]["annotations"];
    notes["safe-rollout.dev/pre-update-approval"] = json!("true");
    notes["safe-rollout.dev/initialized"] = json!("true");
    serde_json::to_vec(&list).expect("json")
}

/// The pods, web-4 with a stale approval of `REV_NEW` under a request of `REV_B`.
fn pods() -> Value {
    let mut pods: Value =
        serde_json::from_slice(&fixture_body("1-staged-pods.json")).expect("json");
    for p in pods["items"].as_array_mut().expect("items") {
        if p["metadata"]["name"] == "web-4" {
            let a = p["metadata"]
                .as_object_mut()
                .expect("metadata")
                .entry("annotations")
                .or_insert_with(|| json!({}));
            a["safe-rollout.dev/update-approved"] = json!(REV_NEW);
            a["safe-rollout.dev/update-requested"] = json!(REV_B);
            a["safe-rollout.dev/update-requested-at"] = json!("2026-11-23T01:00:00Z");
            a["safe-rollout.dev/update-request-phase"] = json!("Update");
        }
    }
    pods
}

fn stored_set() -> Vec<u8> {
    let list: Value = serde_json::from_slice(&sets()).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&set).expect("json")
}

#[tokio::test]
async fn a_stale_approval_is_not_stepped_on_and_the_new_request_removes_it() {
    let pods = pods();
    let web4 = pods["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|p| p["metadata"]["name"] == "web-4")
        .cloned()
        .expect("web-4");
    let mut script: Vec<Expect> = vec![get(STS_ALL, sets())];
    script.extend(web_candidate_reads(
        serde_json::to_vec(&pods).expect("json"),
        fixture_body("1-staged-pdbs.json"),
    ));
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
    let key = |k: &str| format!("/metadata/annotations/safe-rollout.dev~1{k}");
    let want = json!([
        {"op": "test", "path": "/metadata/uid", "value": web4["metadata"]["uid"]},
        {"op": "test", "path": "/metadata/resourceVersion", "value": web4["metadata"]["resourceVersion"]},
        {"op": "test", "path": key("update-approved"), "value": REV_NEW},
        {"op": "add", "path": key("update-requested"), "value": REV_NEW},
        {"op": "add", "path": key("update-requested-at"), "value": now().to_string()},
        {"op": "add", "path": key("update-request-phase"), "value": "Update"},
        {"op": "remove", "path": key("update-approved")},
    ]);
    assert_eq!(seen[3].method, Method::PATCH);
    assert_eq!(
        seen[3].body, want,
        "the pod patch asks and clears, key by key"
    );
    assert_eq!(seen[4].body["reason"], "ApprovalRequested");
    // No step: the set's only write is its status annotations (no partition op).
    assert_eq!(seen[5].method, Method::PATCH);
    assert!(
        !seen[5].body.to_string().contains("/spec/"),
        "{}",
        seen[5].body
    );
    match &report.sets[0].outcome {
        Outcome::Blocked(b) => assert_eq!(b.reason, Reason::ApprovalPending),
        other => panic!("{other:?}"),
    }
}
