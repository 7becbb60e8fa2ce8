//! An image that never starts, rolled back (issue 43; docs/rollback.md, "An image that never starts")
//! against a mocked API server: moment 3 (web-1 not Ready on `REV_OLD`) after the stepper rolled
//! `REV_OLD` back — `failed-revision` names it, `currentRevision` and `updateRevision` are `REV_NEW`,
//! the set steps back — with `podManagementPolicy` `OrderedReady` and `Parallel`. Without
//! `--recover-stuck-pods` and without any `recover-after-seconds`, the pass deletes web-1 at once with
//! its uid and resourceVersion preconditions and announces it (`ReturnedPod`); a 403 names the rule.

use crate::common::*;
use crate::mock_api::{Expect, Seen, expect, mock_client, post_event};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::pass::recovery::RecoveryOutcome;
use sts_stepper::pass::{PassOptions, PassReport, run_pass};

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
const WEB_PODS: &str = "/api/v1/namespaces/demo/pods?&labelSelector=app%3Dweb";
const DEMO_PDBS: &str = "/apis/policy/v1/namespaces/demo/poddisruptionbudgets?";
const DELETE_WEB1: &str = "/api/v1/namespaces/demo/pods/web-1?";
const PATCH_WEB_SET: &str =
    "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";
const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?";
/// web-1 in moment 3: not Ready since 01:10:46 on `REV_OLD`.
const WEB1_UID: &str = "97687683-4102-4573-bd17-1a071d71b80c";
const WEB1_RV: &str = "1964";

/// Moment 3 stepping back from `REV_OLD` (rolled back: `failed-revision`, the revert the update
/// revision and the current one) with `policy` as `podManagementPolicy`. The set already records its
/// block and its `RolledBack` record, so the pass writes no status.
fn stepping_back(policy: &str) -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-statefulsets.json")).expect("json");
    let set = &mut list["items"][0];
    set["spec"]["podManagementPolicy"] = json!(policy);
    set["status"]["currentRevision"] = json!(REV_NEW);
    set["status"]["updateRevision"] = json!(REV_NEW);
    let notes = &mut set["metadata"]["annotations"];
    notes["safe-rollout.dev/initialized"] = json!("true");
    notes["safe-rollout.dev/on-failure"] = json!("rollback");
    notes["safe-rollout.dev/progress-deadline-seconds"] = json!("15");
    notes["safe-rollout.dev/failed-revision"] =
        json!(format!("{REV_OLD}: ProgressDeadline: web-1 not Ready"));
    notes["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    notes["safe-rollout.dev/degraded-reason"] = json!(format!(
        "RolledBack: revision {REV_OLD} failed (ProgressDeadline: web-1 not Ready); back to revision \
         {REV_NEW}"
    ));
    serde_json::to_vec(&list).expect("json")
}

/// A SelfSubjectAccessReview's answer: `allowed`.
fn review(allowed: bool) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview", "metadata": {},
        "spec": {"resourceAttributes": {"namespace": "demo", "verb": "delete", "resource": "pods"}},
        "status": {"allowed": allowed}}))
    .expect("json")
}

/// The review the pass makes for an `OrderedReady` set with `on-failure: rollback` (delete pods in
/// demo), answered `allowed`.
fn ssar(allowed: bool) -> Expect {
    expect(Method::POST, SSAR, 201, review(allowed))
}

fn lists(policy: &str) -> Vec<Expect> {
    let mut script = vec![expect(Method::GET, STS_ALL, 200, stepping_back(policy))];
    if policy == "OrderedReady" {
        script.push(ssar(true));
    }
    script.extend([
        expect(
            Method::GET,
            WEB_PODS,
            200,
            fixture_body("3-web1-notready-pods.json"),
        ),
        expect(
            Method::GET,
            DEMO_PDBS,
            200,
            fixture_body("3-web1-notready-pdbs.json"),
        ),
    ]);
    script
}

fn deleted_web1() -> Vec<u8> {
    let pods: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-pods.json")).expect("json");
    let mut pod = pods["items"][1].clone();
    pod["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:20:00Z");
    serde_json::to_vec(&pod).expect("json")
}

async fn pass(script: Vec<Expect>) -> (PassReport, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let cluster = KubeCluster::new(client, Scope::default(), None);
    // The defaults: no --recover-stuck-pods.
    let report = run_pass(&cluster, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    (report, server.await.expect("mock API server script"))
}

#[tokio::test]
async fn a_pod_not_ready_on_the_rolled_back_revision_is_returned_at_once() {
    for policy in ["OrderedReady", "Parallel"] {
        let mut script = lists(policy);
        script.push(expect(Method::DELETE, DELETE_WEB1, 200, deleted_web1()));
        script.push(post_event("demo"));
        let (report, seen) = pass(script).await;
        // After the reads (and the access review of an OrderedReady set): the DELETE, its Event.
        let seen = &seen[seen.len() - 2..];
        assert_eq!(
            seen[0].body,
            json!({"preconditions": {"uid": WEB1_UID, "resourceVersion": WEB1_RV}}),
            "{policy}: the DELETE pins the pod seen"
        );
        let event = &seen[1].body;
        assert_eq!(
            (event["reason"].as_str(), event["type"].as_str()),
            (Some("ReturnedPod"), Some("Warning")),
            "{policy}"
        );
        let note = event["note"].as_str().expect("note");
        for part in ["deleted pod web-1", REV_OLD, "rolled back", REV_NEW] {
            assert!(note.contains(part), "{policy}: {part} in {note:?}");
        }
        let r = &report.recoveries[0];
        assert_eq!(r.outcome, RecoveryOutcome::Deleted, "{policy}");
        assert!(r.pod.failed_revision, "{policy}");
        assert!(!report.any_errored(), "{policy}");
    }
}

#[tokio::test]
async fn without_pod_delete_the_403_names_the_component() {
    let mut script = lists("OrderedReady");
    script.push(expect(
        Method::DELETE,
        DELETE_WEB1,
        403,
        std::fs::read(fixture_path("errors/403-forbidden-delete-pod.json")).expect("fixture"),
    ));
    let (report, _) = pass(script).await;
    let RecoveryOutcome::Failed(e) = &report.recoveries[0].outcome else {
        panic!("{:?}", report.recoveries[0].outcome)
    };
    assert!(e.to_string().contains("deploy/stepper/recovery/"), "{e}");
}

/// Before it is needed (issue 43): an `OrderedReady` set with `on-failure: rollback`, in a namespace
/// where the stepper may not delete pods, is told so — `missing-rbac` naming the rule and the Component,
/// a Warning `MissingRbac` Event, once; the record goes when the rule is there. A `Parallel` set is not
/// asked about (the StatefulSet controller replaces its stuck pods itself).
#[tokio::test]
async fn a_set_that_will_need_pod_delete_says_so_before_it_is_needed() {
    let idle = |policy: &str, record: Option<&str>| {
        let mut list: Value = serde_json::from_slice(&stepping_back(policy)).expect("json");
        let set = &mut list["items"][0];
        // Nothing to step or return: every pod Ready on the good revision.
        set["status"]["currentRevision"] = json!(REV_OLD);
        set["status"]["updateRevision"] = json!(REV_OLD);
        set["status"]["updatedReplicas"] = json!(5);
        set["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
        let notes = set["metadata"]["annotations"]
            .as_object_mut()
            .expect("notes");
        for k in ["blocked-reason", "degraded-reason", "failed-revision"] {
            notes.remove(&format!("safe-rollout.dev/{k}"));
        }
        if let Some(v) = record {
            notes.insert("safe-rollout.dev/missing-rbac".into(), json!(v));
        }
        serde_json::to_vec(&list).expect("json")
    };
    let stored = |body: Vec<u8>| {
        let list: Value = serde_json::from_slice(&body).expect("json");
        let mut set = list["items"][0].clone();
        set["kind"] = json!("StatefulSet");
        set["apiVersion"] = json!("apps/v1");
        serde_json::to_vec(&set).expect("json")
    };
    let key = "/metadata/annotations/safe-rollout.dev~1missing-rbac";
    // Denied: recorded and announced.
    let (_, seen) = pass(vec![
        expect(Method::GET, STS_ALL, 200, idle("OrderedReady", None)),
        ssar(false),
        expect(
            Method::PATCH,
            PATCH_WEB_SET,
            200,
            stored(idle("OrderedReady", None)),
        ),
        post_event("demo"),
    ])
    .await;
    assert_eq!(
        seen[1].body["spec"]["resourceAttributes"],
        json!({"namespace": "demo", "verb": "delete", "resource": "pods"})
    );
    assert_eq!(
        seen[2].body,
        json!([{"op": "add", "path": key, "value": sts_stepper::plan::rbac::POD_DELETE}])
    );
    let note = seen[3].body["note"].as_str().expect("note");
    assert_eq!(seen[3].body["reason"], "MissingRbac");
    assert!(note.contains("deploy/stepper/recovery"), "{note}");
    // Recorded and still denied: nothing more (no second Event).
    let recorded = Some(sts_stepper::plan::rbac::POD_DELETE);
    let (_, seen) = pass(vec![
        expect(Method::GET, STS_ALL, 200, idle("OrderedReady", recorded)),
        ssar(false),
    ])
    .await;
    assert_eq!(seen.len(), 2);
    // Granted: the record goes.
    let (_, seen) = pass(vec![
        expect(Method::GET, STS_ALL, 200, idle("OrderedReady", recorded)),
        ssar(true),
        expect(
            Method::PATCH,
            PATCH_WEB_SET,
            200,
            stored(idle("OrderedReady", None)),
        ),
    ])
    .await;
    assert_eq!(seen[2].body, json!([{"op": "remove", "path": key}]));
    // Parallel: no review at all.
    let (_, seen) = pass(vec![expect(
        Method::GET,
        STS_ALL,
        200,
        idle("Parallel", None),
    )])
    .await;
    assert_eq!(seen.len(), 1);
}
