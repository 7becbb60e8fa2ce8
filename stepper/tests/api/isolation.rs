//! Failures stay with the sets they concern (issue 29 item 1): a pod or PDB LIST that fails blocks the
//! sets that needed it with `ApiError` naming the read — their report, their Event, the errors metric —
//! and every other set is decided and stepped as usual. Exact requests at a mocked API server.

use crate::common::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::ClusterError;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport};
use sts_stepper::serve::metrics::Metrics;

/// The fixture set of `moment` (`demo/web`) as a list item, once fully Ready (`initialized`).
fn web(moment: &str) -> Value {
    let list: Value = serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
        .expect("json");
    let mut s = list["items"][0].clone();
    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    s
}

/// `web(moment)` moved to `namespace/name` with its own uid and selector.
fn other(moment: &str, namespace: &str, name: &str) -> Value {
    let mut s = web(moment);
    s["metadata"]["namespace"] = json!(namespace);
    s["metadata"]["name"] = json!(name);
    s["metadata"]["uid"] = json!(format!("uid-{namespace}-{name}"));
    s["spec"]["selector"] = json!({"matchLabels": {"app": name}});
    s
}

fn list_of(sets: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": sets}))
    .expect("json")
}

fn as_stored(mut set: Value) -> Vec<u8> {
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&set).expect("json")
}

/// The API server's 403 for a LIST of `resource` in `namespace` by the stepper's ServiceAccount: the
/// captured 403 body (`fixtures/api/errors/403-forbidden-delete-pod.json`) with the verb and object of
/// a LIST, as kube-apiserver words it (`<resource> is forbidden: … cannot list resource …`).
fn forbidden_list(resource: &str, group: &str, namespace: &str) -> Vec<u8> {
    let mut body: Value =
        serde_json::from_slice(&fixture_body("errors/403-forbidden-delete-pod.json"))
            .expect("json");
    body["message"] = json!(format!(
        "{resource} is forbidden: User \"system:serviceaccount:sts-safe-rollout:sts-stepper\" \
         cannot list resource \"{resource}\" in API group \"{group}\" in the namespace \"{namespace}\""
    ));
    body["details"] = json!({"kind": resource});
    serde_json::to_vec(&body).expect("json")
}

const PATCH_DB: &str = "/apis/apps/v1/namespaces/team-a/statefulsets/db?&fieldManager=sts-stepper";

/// The pass's requests after the reads: `team-a/db` records its block and announces it, `demo/web`
/// steps 4→3 and announces the step.
fn writes(db: &Value, web_now: &Value) -> [Expect; 4] {
    let mut stepped = web_now.clone();
    stepped["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    [
        patch(PATCH_DB, 200, as_stored(db.clone())),
        post_event("team-a"),
        patch(PATCH_WEB, 200, as_stored(stepped)),
        post_event("demo"),
    ]
}

fn uris(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| format!("{} {}", s.method, s.uri))
        .collect()
}

/// The checks shared by both failing reads: `team-a/db` blocked `ApiError` naming `read`, recorded
/// and announced; `demo/web` stepped; the pass errored; the errors metric counts one `Refused` (the
/// read's 403: `ClusterError::Refused`).
fn assert_isolated(report: &PassReport, seen: &[Seen], read: &str) {
    let db = &report.sets[0];
    assert_eq!(
        db.blocked_reason(),
        Some(Reason::ApiError),
        "{:?}",
        db.outcome
    );
    let Outcome::Blocked(b) = &db.outcome else {
        unreachable!()
    };
    assert!(b.detail.starts_with(read), "{}", b.detail);
    assert!(b.detail.contains("is forbidden"), "{}", b.detail);
    assert!(db.error.is_some(), "the set counts as errored");
    assert!(
        matches!(db.error, Some(ClusterError::Refused { code: 403, .. })),
        "{:?}",
        db.error
    );
    assert_eq!(db.error_reason(), Some("Refused"));
    assert_eq!(report.sets[1].outcome, Outcome::Stepped { from: 4, to: 3 });
    assert!(report.sets[1].error.is_none());
    assert!(report.any_errored(), "`once` exits 1");

    // team-a/db: blocked-reason ApiError recorded, one Warning Event naming the read.
    let status = &seen[seen.len() - 4];
    assert_eq!(status.method, Method::PATCH);
    assert!(
        status.body.to_string().contains(r#""value":"ApiError""#),
        "{}",
        status.body
    );
    assert!(!status.body.to_string().contains("partition"));
    let event = &seen[seen.len() - 3].body;
    assert_eq!(event["reason"], "Blocked");
    assert_eq!(event["type"], "Warning");
    assert!(
        event["note"]
            .as_str()
            .is_some_and(|n| n.starts_with(&format!("ApiError {read}"))),
        "{event}"
    );
    // demo/web: the step, pinned by its test ops.
    let step = &seen[seen.len() - 2];
    assert_eq!(step.uri, PATCH_WEB);
    assert!(
        step.body.as_array().is_some_and(|ops| ops.iter().any(|op| {
            op["op"] == "replace"
                && op["path"] == "/spec/updateStrategy/rollingUpdate/partition"
                && op["value"] == 3
        })),
        "{}",
        step.body
    );
    assert_eq!(seen[seen.len() - 1].body["reason"], "Stepped");

    let metrics = Metrics::new();
    metrics.observe(report, 0.1, 1_795_000_000.0);
    let text = metrics.encode();
    assert!(
        text.lines()
            .any(|l| l == r#"sts_safe_rollout_errors_total{reason="Refused"} 1"#),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l
            == r#"sts_safe_rollout_blocked{namespace="team-a",statefulset="db",reason="ApiError"} 1"#),
        "{text}"
    );
    assert!(
        !text.contains(r#"statefulset="web",reason="#),
        "web is not blocked: {text}"
    );
}

#[tokio::test]
async fn a_403_on_one_namespaces_pod_list_blocks_its_sets_and_steps_the_others() {
    let db = other("2-stepped-4", "team-a", "db");
    let web_now = web("2-stepped-4");
    let (report, seen) = pass_with(
        Scope::default(),
        PassOptions::default(),
        script(
            vec![
                get(STS_ALL, list_of(&[db.clone(), web_now.clone()])),
                expect(
                    Method::GET,
                    "/api/v1/namespaces/team-a/pods?&labelSelector=app%3Ddb",
                    403,
                    forbidden_list("pods", "", "team-a"),
                ),
                set_pods("demo", "app=web", fixture_body("2-stepped-4-pods.json")),
                // No PDB read for team-a: no set there is left to judge.
                namespace_pdbs("demo", fixture_body("2-stepped-4-pdbs.json")),
            ],
            writes(&db, &web_now),
        ),
    )
    .await;
    let report = report.expect("the pass goes on");
    assert_eq!(
        uris(&seen),
        [
            "GET /apis/apps/v1/statefulsets?",
            "GET /api/v1/namespaces/team-a/pods?&labelSelector=app%3Ddb",
            "GET /api/v1/namespaces/demo/pods?&labelSelector=app%3Dweb",
            "GET /apis/policy/v1/namespaces/demo/poddisruptionbudgets?",
            "PATCH /apis/apps/v1/namespaces/team-a/statefulsets/db?&fieldManager=sts-stepper",
            "POST /apis/events.k8s.io/v1/namespaces/team-a/events?",
            "PATCH /apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
            "POST /apis/events.k8s.io/v1/namespaces/demo/events?",
        ]
    );
    assert_isolated(&report, &seen, "list pods in namespace team-a (app=db): ");
}

#[tokio::test]
async fn a_403_on_one_namespaces_pdb_list_blocks_its_sets_and_steps_the_others() {
    let db = other("2-stepped-4", "team-a", "db");
    let web_now = web("2-stepped-4");
    let (report, seen) = pass_with(
        Scope::default(),
        PassOptions::default(),
        script(
            vec![
                get(STS_ALL, list_of(&[db.clone(), web_now.clone()])),
                set_pods("team-a", "app=db", empty_list("PodList")),
                set_pods("demo", "app=web", fixture_body("2-stepped-4-pods.json")),
                namespace_pdbs("demo", fixture_body("2-stepped-4-pdbs.json")),
                expect(
                    Method::GET,
                    "/apis/policy/v1/namespaces/team-a/poddisruptionbudgets?",
                    403,
                    forbidden_list("poddisruptionbudgets", "policy", "team-a"),
                ),
            ],
            writes(&db, &web_now),
        ),
    )
    .await;
    let report = report.expect("the pass goes on");
    assert_eq!(seen.len(), 9, "{:#?}", uris(&seen));
    assert_isolated(
        &report,
        &seen,
        "list poddisruptionbudgets in namespace team-a: ",
    );
}

#[tokio::test]
async fn the_statefulset_list_failing_still_fails_the_pass() {
    let (report, seen) = pass_in_default_scope(vec![expect(
        Method::GET,
        STS_ALL,
        403,
        forbidden_list("statefulsets", "apps", "team-a"),
    )])
    .await;
    let e = report.expect_err("nothing to decide");
    assert!(
        e.starts_with("list statefulsets in all namespaces: "),
        "{e}"
    );
    assert_eq!(seen.len(), 1);
}
