//! Returning a pod a re-apply left on a failed revision (docs/rollback.md) against a mocked API server:
//! the DELETE with its uid and resourceVersion preconditions, then the `ReturnedPod` Event; a 403
//! without pod `delete` names the rule; a failed precondition (409) deletes nothing and is no error;
//! `--dry-run` sends no DELETE.

use crate::common::*;
use crate::mock_api::{Expect, Seen, expect, mock_client, post_event, status_body};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport, run_pass};

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
const WEB_PODS: &str = "/api/v1/namespaces/demo/pods?&labelSelector=app%3Dweb";
const DEMO_PDBS: &str = "/apis/policy/v1/namespaces/demo/poddisruptionbudgets?";
const DELETE_WEB4: &str = "/api/v1/namespaces/demo/pods/web-4?";
/// web-4 in moment 2 (stepped to partition 4): the one pod on `REV_NEW`.
const WEB4_UID: &str = "782b27cc-f571-4389-b761-e819edb6f7b5";
const WEB4_RV: &str = "1960";

/// Moment 2 after `REV_NEW` was rolled back and applied again before web-4 was stepped back: the policy
/// staged it (partition 5), `failed-revision` names it, and the set already records the hold (so the pass
/// writes no status).
fn held_sets() -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let set = &mut list["items"][0];
    set["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(5);
    let notes = &mut set["metadata"]["annotations"];
    notes["safe-rollout.dev/initialized"] = json!("true");
    notes["safe-rollout.dev/on-failure"] = json!("rollback");
    notes["safe-rollout.dev/failed-revision"] = json!(format!("{REV_NEW}: FailureLimit: boom"));
    notes["safe-rollout.dev/blocked-reason"] = json!("FailedRevision");
    notes["safe-rollout.dev/degraded-reason"] = json!(format!(
        "RolledBack: revision {REV_NEW} failed (FailureLimit: boom); back to revision {REV_OLD}"
    ));
    serde_json::to_vec(&list).expect("json")
}

/// The pass's reads: the held set is a candidate (a pod to return), so its pods and PDBs are read.
fn lists() -> Vec<Expect> {
    vec![
        expect(Method::GET, STS_ALL, 200, held_sets()),
        expect(
            Method::GET,
            WEB_PODS,
            200,
            fixture_body("2-stepped-4-pods.json"),
        ),
        expect(
            Method::GET,
            DEMO_PDBS,
            200,
            fixture_body("2-stepped-4-pdbs.json"),
        ),
    ]
}

fn deleted_web4() -> Vec<u8> {
    let pods: Value = serde_json::from_slice(&fixture_body("2-stepped-4-pods.json")).expect("json");
    let mut pod = pods["items"][4].clone();
    pod["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:20:00Z");
    serde_json::to_vec(&pod).expect("json")
}

async fn pass(dry_run: bool, script: Vec<Expect>) -> (PassReport, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let cluster = KubeCluster::new(client, Scope::default(), None);
    let opts = PassOptions {
        dry_run,
        ..PassOptions::default()
    };
    let report = run_pass(&cluster, &opts, now()).await.expect("pass");
    drop(cluster);
    (report, server.await.expect("mock API server script"))
}

#[tokio::test]
async fn the_pod_left_on_the_failed_revision_is_deleted_pinned_and_announced() {
    let mut script = lists();
    script.push(expect(Method::DELETE, DELETE_WEB4, 200, deleted_web4()));
    script.push(post_event("demo"));
    let (report, seen) = pass(false, script).await;
    assert_eq!(
        seen[3].body,
        json!({"preconditions": {"uid": WEB4_UID, "resourceVersion": WEB4_RV}}),
        "the DELETE body pins the pod seen"
    );
    let event = &seen[4].body;
    assert_eq!(event["reason"], "ReturnedPod");
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["name"], "web");
    let note = event["note"].as_str().expect("note");
    for part in ["deleted pod web-4", REV_NEW, REV_OLD, "0 more to return"] {
        assert!(note.contains(part), "{part} in {note:?}");
    }
    let set = &report.sets[0];
    assert_eq!(
        set.outcome,
        Outcome::Returned(format!("web-4 ({REV_NEW} → {REV_OLD})"))
    );
    assert_eq!(
        set.blocked_reason(),
        Some(Reason::FailedRevision),
        "still held"
    );
    assert!(!report.any_errored());
}

#[tokio::test]
async fn forbidden_without_pod_delete_names_the_rule_and_fails_the_pass() {
    let mut script = lists();
    script.push(expect(
        Method::DELETE,
        DELETE_WEB4,
        403,
        std::fs::read(fixture_path("errors/403-forbidden-delete-pod.json")).expect("fixture"),
    ));
    let (report, seen) = pass(false, script).await;
    assert_eq!(seen.len(), 4, "no Event after a refused DELETE");
    let set = &report.sets[0];
    assert!(
        matches!(&set.outcome, Outcome::Blocked(b) if b.reason == Reason::ApiError),
        "{:?}",
        set.outcome
    );
    let msg = set.error.as_ref().expect("the error").to_string();
    for part in [
        "delete pod demo/web-4",
        "missing RBAC rule: verb \"delete\"",
    ] {
        assert!(msg.contains(part), "{part} in {msg:?}");
    }
    assert!(report.any_errored());
}

#[tokio::test]
async fn a_failed_precondition_deletes_nothing_and_is_no_error() {
    let mut script = lists();
    script.push(expect(
        Method::DELETE,
        DELETE_WEB4,
        409,
        status_body(
            409,
            "Conflict",
            "Operation cannot be fulfilled on Pod \"web-4\": Precondition failed: resourceVersion",
        ),
    ));
    let (report, seen) = pass(false, script).await;
    assert_eq!(seen.len(), 4, "no Event for a pod not deleted");
    assert!(
        matches!(&report.sets[0].outcome, Outcome::Conflict(m) if m.contains("Precondition failed")),
        "{:?}",
        report.sets[0].outcome
    );
    assert!(!report.any_errored());
}

#[tokio::test]
async fn dry_run_says_what_it_would_return_and_sends_no_delete() {
    let (report, seen) = pass(true, lists()).await;
    assert!(seen.iter().all(|s| s.method == Method::GET), "{seen:?}");
    assert_eq!(
        report.sets[0].outcome,
        Outcome::WouldReturn(format!("web-4 ({REV_NEW} → {REV_OLD})"))
    );
}
