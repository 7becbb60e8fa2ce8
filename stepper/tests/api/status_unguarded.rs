//! What `status` says of a set without the guarded mark (`<prefix>/guarded: "true"`, which the policy
//! writes when it stages or restores the partition): its health is the built-in rule's, and the table
//! names it below even when Healthy; a guarded Healthy set gets no line. The mock API server answers
//! with the real fixture LIST bodies (captured before the mark existed: unmarked as they are, `raw_fixture_body`).

use crate::common::*;
use crate::mock_api::*;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::{status_items, status_table};

/// The StatefulSetList of `moment` with `f` applied to its set.
fn list_with(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let body = raw_fixture_body(&format!("{moment}-statefulsets.json"));
    let mut list: Value = serde_json::from_slice(&body).expect("json");
    f(&mut list["items"][0]);
    serde_json::to_vec(&list).expect("json")
}

/// The reads of a pass over `moment` where `demo/web` is the one candidate.
fn reads(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<Expect> {
    vec![
        get(STS_ALL, list_with(moment, f)),
        set_pods(
            "demo",
            "app=web",
            raw_fixture_body(&format!("{moment}-pods.json")),
        ),
        namespace_pdbs("demo", raw_fixture_body(&format!("{moment}-pdbs.json"))),
    ]
}

/// 2-stepped-4 without the mark reads as a person's canary at partition 4: Healthy by the built-in
/// rule, and the table says why below it.
#[tokio::test]
async fn the_table_names_an_unmarked_set_as_unguarded() {
    let (cluster, server) = mock_cluster(Scope::default(), reads("2-stepped-4", |_| {}));
    let table = status_table(&cluster, &web_pods(), None, now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[1].contains("  Healthy  "), "{table}");
    assert!(
        lines[1].ends_with("Unguarded (no guarded mark: the policy did not stage it)"),
        "NEXT says the stepper leaves it alone: {table}"
    );
    assert_eq!(
        lines[2..],
        [
            "",
            "Health (as Argo CD and Flux report it with deploy/gitops/):",
            "  demo/web Healthy: unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready",
        ],
        "{table}"
    );
}

/// `-o json`: the health message says so; the same set marked is this project's, stepping.
#[tokio::test]
async fn the_document_says_unguarded_and_a_marked_set_is_stepping() {
    for (mark, status, message) in [
        (
            None,
            "Healthy",
            "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready".to_string(),
        ),
        (
            Some("true"),
            "Progressing",
            format!("stepping: 1 of 5 pods on {REV_NEW}, partition 4"),
        ),
    ] {
        let script = reads("2-stepped-4", |s| {
            if let Some(v) = mark {
                s["metadata"]["annotations"]["safe-rollout.dev/guarded"] = json!(v);
            }
        });
        let (cluster, server) = mock_cluster(Scope::default(), script);
        let items = status_items(&cluster, &Checks::default(), &web_pods(), None, now())
            .await
            .expect("status");
        drop(cluster);
        server.await.expect("script");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].health.status, status, "{mark:?}");
        assert_eq!(items[0].health.message, message, "{mark:?}");
        assert_eq!(items[0].unguarded, mark.is_none());
    }
}

/// A guarded set whose rollout is complete gets no health line: nothing to say.
#[tokio::test]
async fn a_marked_healthy_set_has_no_health_line() {
    let marked = |s: &mut Value| {
        s["metadata"]["annotations"]["safe-rollout.dev/guarded"] = json!("true");
    };
    let (cluster, server) = mock_cluster(Scope::default(), reads("4-complete", marked));
    let table = status_table(&cluster, &web_pods(), None, now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.contains("  Healthy  "), "{table}");
}

/// The RBAC the in-cluster stepper recorded it lacks for a set (`missing-rbac`, issue 43) is listed below
/// the table, and in the document's `recorded.missingRbac`.
#[tokio::test]
async fn the_rbac_the_stepper_lacks_is_listed() {
    let lacking = |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/guarded"] = json!("true");
        a["safe-rollout.dev/missing-rbac"] =
            json!("delete pods: add the deploy/stepper/recovery Component");
    };
    let (cluster, server) = mock_cluster(Scope::default(), reads("4-complete", lacking));
    let table = status_table(&cluster, &web_pods(), None, now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    assert!(
        table.contains(
            "RBAC the stepper lacks (recorded by it, missing-rbac):\n  demo/web delete pods: add \
             the deploy/stepper/recovery Component\n"
        ),
        "{table}"
    );
    let (cluster, server) = mock_cluster(Scope::default(), reads("4-complete", lacking));
    let items = status_items(&cluster, &Checks::default(), &web_pods(), None, now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    assert_eq!(
        items[0].recorded.missing_rbac.as_deref(),
        Some("delete pods: add the deploy/stepper/recovery Component")
    );
}
