//! The `OwnerNotHealthy` gate through the kube-rs cluster against a mocked API server: the owner found
//! through API discovery (a MOCO MySQLCluster), read healthy or not (stale generation), or forbidden to
//! the stepper (RBAC missing fails the pass).

use crate::mock_api::moments::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::Outcome;

const MOCO_DISCOVERY: &str = "/apis/moco.cybozu.com/v1beta2";
const MOCO_OWNER: &str = "/apis/moco.cybozu.com/v1beta2/namespaces/demo/mysqlclusters/web";
const OWNER_UID: &str = "0c4bd8a0-49c3-4d53-9d0f-9b1a3c1d2e3f";

/// The `2-stepped-4` moment, initialized, owned by a MOCO MySQLCluster `web`, with
/// `owner-condition: Healthy`.
fn owned(s: &mut Value) {
    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    s["metadata"]["annotations"]["safe-rollout.dev/owner-condition"] = json!("Healthy");
    s["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster", "name": "web",
        "uid": OWNER_UID, "controller": true, "blockOwnerDeletion": true
    }]);
}

/// The API discovery answer for `moco.cybozu.com/v1beta2` (what `kubectl api-resources` reads).
fn moco_resources() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "moco.cybozu.com/v1beta2",
        "resources": [
            {"name": "mysqlclusters", "singularName": "mysqlcluster", "namespaced": true,
             "kind": "MySQLCluster", "verbs": ["delete", "get", "list", "patch", "update", "watch"],
             "shortNames": ["mysql"]},
            {"name": "mysqlclusters/status", "singularName": "", "namespaced": true,
             "kind": "MySQLCluster", "verbs": ["get", "patch", "update"]}
        ]
    }))
    .expect("json")
}

/// A MySQLCluster as MOCO reports it, `Healthy` with `status` at generation `observed` of `generation`.
fn mysqlcluster(healthy: &str, generation: i64, observed: i64) -> Vec<u8> {
    let cond = |t: &str, s: &str| {
        json!({"type": t, "status": s, "reason": if s == "True" { "Healthy" } else { "NotAvailable" },
               "message": "", "observedGeneration": observed,
               "lastTransitionTime": "2026-11-23T01:00:00Z"})
    };
    serde_json::to_vec(&json!({
        "apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster",
        "metadata": {"name": "web", "namespace": "demo", "uid": OWNER_UID, "generation": generation},
        "spec": {"replicas": 5},
        "status": {"conditions": [cond("Initialized", "True"), cond("Available", "True"),
                                  cond("Healthy", healthy)],
                   "currentPrimaryIndex": 0, "syncedReplicas": 4}
    }))
    .expect("json")
}

/// The owned `2-stepped-4` moment's LISTs, the discovery of `moco.cybozu.com/v1beta2`, the owner read
/// `owner`, then `rest`.
fn owner_script<const N: usize>(owner: Expect, rest: [Expect; N]) -> Vec<Expect> {
    let mut script = lists_then(
        "2-stepped-4",
        owned,
        vec![get(MOCO_DISCOVERY, moco_resources()), owner],
    );
    script.extend(rest);
    script
}

/// The status_annotations patch announcing a new blocked reason, and its Event.
fn blocked_announced() -> [Expect; 2] {
    [
        patch(PATCH_WEB, 200, stored("2-stepped-4", |_| {})),
        post_event("demo"),
    ]
}

#[tokio::test]
async fn a_healthy_owner_read_through_discovery_lets_the_step_go() {
    let (report, seen) = pass_in_default_scope(owner_script(
        get(MOCO_OWNER, mysqlcluster("True", 3, 3)),
        [
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 4, to: 3 });
    assert_eq!(seen[5].body, step_body(4, 3));
}

#[rstest::rstest]
#[case::healthy_false(
    mysqlcluster("False", 3, 3),
    "condition Healthy is False (NotAvailable)"
)]
#[case::stale_generation(
    mysqlcluster("True", 4, 3),
    "True for generation 3, but the owner is at generation 4"
)]
#[tokio::test]
async fn an_unhealthy_owner_blocks_with_owner_not_healthy(
    #[case] owner: Vec<u8>,
    #[case] detail: &str,
) {
    let (report, seen) =
        pass_in_default_scope(owner_script(get(MOCO_OWNER, owner), blocked_announced())).await;
    let report = report.expect("pass");
    let Outcome::Blocked(b) = &report.sets[0].outcome else {
        panic!("{:?}", report.sets[0].outcome);
    };
    assert_eq!(b.reason, Reason::OwnerNotHealthy);
    assert!(b.detail.contains(detail), "{}", b.detail);
    assert!(!report.any_errored());
    assert_eq!(
        seen[5].body,
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                "value": "OwnerNotHealthy"}])
    );
    assert_eq!(seen[6].body["type"], "Warning");
    assert_eq!(seen[6].body["reason"], "Blocked");
}

#[tokio::test]
async fn an_owner_the_stepper_may_not_read_blocks_and_fails_the_pass() {
    let (report, _) = pass_in_default_scope(owner_script(
        Expect {
            method: Method::GET,
            uri: MOCO_OWNER.into(),
            status: 403,
            response: status_body(
                403,
                "Forbidden",
                "mysqlclusters.moco.cybozu.com \"web\" is forbidden: User \
                     \"system:serviceaccount:sts-safe-rollout:sts-stepper\" cannot get resource \
                     \"mysqlclusters\" in API group \"moco.cybozu.com\" in the namespace \"demo\"",
            ),
        },
        blocked_announced(),
    ))
    .await;
    let report = report.expect("pass");
    let Outcome::Blocked(b) = &report.sets[0].outcome else {
        panic!("{:?}", report.sets[0].outcome);
    };
    assert_eq!(b.reason, Reason::OwnerNotHealthy);
    assert!(b.detail.contains("cannot get resource"), "{}", b.detail);
    assert!(
        report.any_errored(),
        "RBAC missing must fail the pass (exit 1)"
    );
}
