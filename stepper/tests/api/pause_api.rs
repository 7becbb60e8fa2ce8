//! `pause` and `resume` against a mocked API server: the exact JSON Patches (with their `test` ops)
//! and Events, a resume that lost a race (422) writing nothing more, and a resume of a set that is not
//! paused writing nothing.

use std::sync::Arc;

use crate::common::*;
use crate::mock_api::{Expect, Seen, expect, mock_client, post_event};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cli::Target;
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::commands::{pause_set, resume_set};
use sts_stepper::config::Keys;

const LIST_WEB: &str =
    "/apis/apps/v1/namespaces/demo/statefulsets?&fieldSelector=metadata.name%3Dweb";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";
const CHECK: &str = r#"{"updateRevision":"web-7d7598bf9d","partition":4,"successes":0,"failures":3,"lastCheck":"2026-11-23T01:19:00Z"}"#;

/// Moment 1's StatefulSetList with `f` applied to the set.
fn listed(f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("1-staged-statefulsets.json")).expect("json");
    f(&mut list["items"][0]);
    serde_json::to_vec(&list).expect("json")
}

/// The set as stored after a write (the body a PATCH answers with).
fn stored() -> Vec<u8> {
    let list: Value =
        serde_json::from_slice(&fixture_body("1-staged-statefulsets.json")).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&set).expect("json")
}

fn paused(s: &mut Value) {
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/paused"] = json!("true");
    a["safe-rollout.dev/paused-reason"] = json!("PrometheusCheck failed 3 times");
    a["safe-rollout.dev/prometheus-check"] = json!(CHECK);
}

fn web() -> Target {
    Target {
        namespace: "demo".into(),
        name: "web".into(),
    }
}

fn only_web(client: kube::Client) -> KubeCluster {
    let scope = Scope {
        namespaces: vec!["demo".into()],
        label_selector: None,
        field_selector: Some("metadata.name=web".into()),
    };
    KubeCluster::new(client, scope, None)
}

async fn run_pause(script: Vec<Expect>) -> (Result<String, String>, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let cluster = only_web(client);
    let keys = Arc::new(Keys::default());
    let out = pause_set(&cluster, &keys, &web(), "alice", "INC-1234: latency", false)
        .await
        .map_err(|e| e.to_string());
    drop(cluster);
    (out, server.await.expect("script"))
}

async fn run_resume(script: Vec<Expect>, dry_run: bool) -> (Result<String, String>, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let cluster = only_web(client);
    let keys = Arc::new(Keys::default());
    let out = resume_set(&cluster, &keys, &web(), "alice", false, dry_run)
        .await
        .map_err(|e| e.to_string());
    drop(cluster);
    (out, server.await.expect("script"))
}

#[tokio::test]
async fn pause_sets_both_annotations_in_one_patch_and_says_who_and_why() {
    let (out, seen) = run_pause(vec![
        expect(Method::GET, LIST_WEB, 200, listed(|_| {})),
        expect(Method::PATCH, PATCH_WEB, 200, stored()),
        post_event("demo"),
    ])
    .await;
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused", "value": "true"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused-reason",
             "value": "INC-1234: latency (paused by alice)"}
        ])
    );
    let event = &seen[2].body;
    assert_eq!(
        (&event["reason"], &event["type"], &event["action"]),
        (&json!("RolloutPaused"), &json!("Normal"), &json!("Pause"))
    );
    assert_eq!(event["note"], "paused by alice: INC-1234: latency");
    assert_eq!(event["regarding"]["name"], "web");
    assert!(out.expect("paused").contains("demo/web: paused by alice"));
}

#[tokio::test]
async fn pause_of_a_set_without_annotations_adds_the_map_pinned_to_its_resource_version() {
    let (_, seen) = run_pause(vec![
        expect(
            Method::GET,
            LIST_WEB,
            200,
            listed(|s| {
                s["metadata"]
                    .as_object_mut()
                    .expect("map")
                    .remove("annotations");
            }),
        ),
        expect(Method::PATCH, PATCH_WEB, 200, stored()),
        post_event("demo"),
    ])
    .await;
    let ops = seen[1].body.as_array().expect("ops");
    assert_eq!(ops[0]["op"], "test");
    assert_eq!(ops[0]["path"], "/metadata/resourceVersion");
    assert_eq!(
        ops[1],
        json!({"op": "add", "path": "/metadata/annotations", "value": {
            "safe-rollout.dev/paused": "true",
            "safe-rollout.dev/paused-reason": "INC-1234: latency (paused by alice)"}})
    );
}

#[tokio::test]
async fn resume_removes_the_pause_and_the_check_counts_each_pinned_to_what_it_read() {
    let (out, seen) = run_resume(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(paused)),
            expect(Method::PATCH, PATCH_WEB, 200, stored()),
            post_event("demo"),
        ],
        false,
    )
    .await;
    let p = |k: &str| format!("/metadata/annotations/safe-rollout.dev~1{k}");
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "test", "path": p("paused"), "value": "true"},
            {"op": "test", "path": p("paused-reason"), "value": "PrometheusCheck failed 3 times"},
            {"op": "test", "path": p("prometheus-check"), "value": CHECK},
            {"op": "remove", "path": p("paused")},
            {"op": "remove", "path": p("paused-reason")},
            {"op": "remove", "path": p("prometheus-check")},
        ])
    );
    let event = &seen[2].body;
    assert_eq!(
        (&event["reason"], &event["action"]),
        (&json!("RolloutResumed"), &json!("Resume"))
    );
    let note = event["note"].as_str().expect("note");
    assert!(
        note.contains("resumed by alice")
            && note.contains("Prometheus and HTTP check counts cleared")
            && note.contains("was paused: PrometheusCheck failed 3 times"),
        "{note}"
    );
    assert!(
        out.expect("resumed")
            .starts_with("demo/web: resumed by alice")
    );
}

#[tokio::test]
async fn a_resume_that_lost_a_race_says_so_and_sends_no_event() {
    let (out, seen) = run_resume(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(paused)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                422,
                std::fs::read(fixture_path("errors/422-json-patch-test-failed.json"))
                    .expect("fixture"),
            ),
        ],
        false,
    )
    .await;
    assert_eq!(seen.len(), 2);
    let err = out.expect_err("conflict");
    assert!(
        err.contains("demo/web changed while being written")
            && err.contains("run the command again"),
        "{err}"
    );
}

#[tokio::test]
async fn resume_of_a_set_that_is_not_paused_writes_nothing() {
    let (out, seen) = run_resume(
        vec![expect(Method::GET, LIST_WEB, 200, listed(|_| {}))],
        false,
    )
    .await;
    assert_eq!(seen.len(), 1);
    assert_eq!(
        out.expect("ok"),
        "demo/web is not paused: nothing to resume"
    );
}

#[tokio::test]
async fn dry_run_resume_reads_and_writes_nothing() {
    let (out, seen) = run_resume(
        vec![expect(Method::GET, LIST_WEB, 200, listed(paused))],
        true,
    )
    .await;
    assert_eq!(seen.len(), 1);
    assert!(out.expect("ok").contains("would resume (dry run)"));
}

#[tokio::test]
async fn pause_of_a_missing_set_names_it() {
    let empty = serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {}, "items": []}))
    .expect("json");
    let (out, _) = run_pause(vec![expect(Method::GET, LIST_WEB, 200, empty)]).await;
    assert_eq!(out.expect_err("missing"), "statefulset demo/web not found");
}
