//! Reads follow the work (issue 12 item 1, docs/design.md, "Reads follow the work"): the exact requests of a
//! pass at the mocked API server — which namespace, which `labelSelector`, and no cluster-wide pod LIST
//! when one set is a candidate, no pod read at all when none is.

use crate::common::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::status_table;
use sts_stepper::gates::GateOptions;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::PassOptions;
use sts_stepper::pass::PodReads;

/// The fixture set of `moment` renamed to `namespace/name` (uid and selector made its own), with `f`
/// applied.
fn set_as(moment: &str, namespace: &str, name: &str, f: impl FnOnce(&mut Value)) -> Value {
    let list: Value = serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
        .expect("json");
    let mut s = list["items"][0].clone();
    s["metadata"]["namespace"] = json!(namespace);
    s["metadata"]["name"] = json!(name);
    s["metadata"]["uid"] = json!(format!("uid-{namespace}-{name}"));
    s["spec"]["selector"] = json!({"matchLabels": {"app": name}});
    f(&mut s);
    s
}

/// A StatefulSetList body of `sets`.
fn list_of(sets: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": sets}))
    .expect("json")
}

/// A set that was once fully Ready (`initialized`) and has `reason` announced already, so a pass that
/// blocks it for the same reason writes nothing.
fn announced(reason: &'static str) -> impl FnOnce(&mut Value) {
    move |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/blocked-reason"] = json!(reason);
    }
}

/// Named scenario: a fleet with nothing to step — a paused canary in `canary`, a complete set in
/// `done` — as one StatefulSetList.
fn fleet_with_a_paused_canary() -> Vec<Value> {
    vec![
        set_as("2-stepped-4", "canary", "db", |s| {
            announced("Paused")(s);
            s["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
        }),
        set_as("4-complete", "done", "cache", |s| {
            s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
        }),
    ]
}

#[tokio::test]
async fn a_pass_with_no_candidate_reads_no_pod() {
    let (report, seen) =
        pass_in_default_scope(vec![get(STS_ALL, list_of(fleet_with_a_paused_canary()))]).await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::Paused));
    assert_eq!(seen.len(), 1, "only the StatefulSet list: {seen:?}");
}

#[tokio::test]
async fn one_candidate_reads_its_own_pods_and_its_namespace_pdbs_only() {
    // demo/web (not ready, already announced) is the candidate; the paused canary and the complete
    // set get no read.
    let mut sets = fleet_with_a_paused_canary();
    let mut web = list_body_item("3-web1-notready");
    announced("PodNotReady")(&mut web);
    sets.push(web);
    let (report, seen) = pass_in_default_scope(script(
        vec![get(STS_ALL, list_of(sets))],
        web_candidate_reads(
            fixture_body("3-web1-notready-pods.json"),
            fixture_body("3-web1-notready-pdbs.json"),
        ),
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[2].blocked_reason(), Some(Reason::PodNotReady));
    assert_eq!(
        report.sets[2].outcome.to_string(),
        "Blocked PodNotReady web-1: ContainersNotReady",
        "decided on the pods read by its selector"
    );
    assert!(seen.iter().all(|s| s.method == Method::GET));
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn a_spent_step_budget_reads_no_pod() {
    // `--max-steps-per-minute 1` and a step 10 s ago (by the complete set `done/cache`): every set is
    // Throttled, whatever its pods.
    let mut web = list_body_item("1-staged");
    web["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let cache = set_as("4-complete", "done", "cache", |s| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:19:50Z");
        a["safe-rollout.dev/completed-revision"] = json!(REV_NEW);
    });
    let opts = PassOptions {
        gates: GateOptions {
            max_steps_per_minute: Some(1),
            ..GateOptions::default()
        },
        ..PassOptions::default()
    };
    let (report, seen) = pass_with(
        Scope::default(),
        opts,
        vec![
            get(STS_ALL, list_of(vec![web.clone(), cache])),
            // The set's Throttled block is announced; no pod was read.
            patch(PATCH_WEB, 200, as_stored(web)),
            post_event("demo"),
        ],
    )
    .await;
    assert_eq!(
        report.expect("pass").sets[0].blocked_reason(),
        Some(Reason::Throttled)
    );
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[1].method, Method::PATCH);
}

#[tokio::test]
async fn status_of_one_set_reads_only_that_sets_pods() {
    // Two sets in `demo`; `status demo/web` reads web's pods by its selector, never every pod.
    let other = set_as("1-staged", "demo", "db", |_| {});
    let mut sets = vec![list_body_item("3-web1-notready"), other];
    announced("PodNotReady")(&mut sets[0]);
    let (cluster, server) = mock_cluster(
        Scope {
            namespaces: vec!["demo".into()],
            ..Scope::default()
        },
        script(
            vec![get(
                "/apis/apps/v1/namespaces/demo/statefulsets?",
                list_of(sets),
            )],
            web_candidate_reads(
                fixture_body("3-web1-notready-pods.json"),
                fixture_body("3-web1-notready-pdbs.json"),
            ),
        ),
    );
    let opts = PassOptions {
        pod_reads: PodReads::Set {
            namespace: "demo".into(),
            name: "web".into(),
        },
        ..PassOptions::default()
    };
    let target = sts_stepper::cli::Target {
        namespace: "demo".into(),
        name: "web".into(),
    };
    let table = status_table(&cluster, &opts, Some(&target), now())
        .await
        .expect("status");
    drop(cluster);
    let seen = server.await.expect("script");
    assert_eq!(seen.len(), 3);
    assert!(table.contains("PodNotReady"), "{table}");
}

/// The fixture set of `moment` (`demo/web`) as a list item.
fn list_body_item(moment: &str) -> Value {
    let list: Value = serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
        .expect("json");
    list["items"][0].clone()
}

/// `set` as the API server returns one object (with `kind` and `apiVersion`).
fn as_stored(mut set: Value) -> Vec<u8> {
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&set).expect("json")
}

#[tokio::test]
async fn a_step_decided_on_old_pods_is_decided_again_on_a_fresh_read() {
    // `--max-decision-age 0`: the step 4→3 was decided on Ready pods; before the write the set (GET)
    // and its pods are read again, web-1 is now NotReady, and no step is written (docs/design.md, "A
    // step is decided on fresh pods").
    let mut web = list_body_item("2-stepped-4");
    web["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let opts = PassOptions {
        max_decision_age: std::time::Duration::ZERO,
        ..PassOptions::default()
    };
    let fresh = web_candidate_reads(
        fixture_body("3-web1-notready-pods.json"),
        fixture_body("3-web1-notready-pdbs.json"),
    );
    let (report, seen) = pass_with(
        Scope::default(),
        opts,
        script(
            script(
                vec![get(STS_ALL, list_of(vec![web.clone()]))],
                web_candidate_reads(
                    fixture_body("2-stepped-4-pods.json"),
                    fixture_body("2-stepped-4-pdbs.json"),
                ),
            ),
            script(
                script(vec![get(GET_WEB, as_stored(web.clone()))], fresh),
                [patch(PATCH_WEB, 200, as_stored(web)), post_event("demo")],
            ),
        ),
    )
    .await;
    let set = &report.expect("pass").sets[0];
    assert_eq!(set.blocked_reason(), Some(Reason::PodNotReady));
    assert!(set.decision_age_seconds.is_some_and(|a| a < 5.0));
    // The only write announces the block; no partition is touched.
    let writes: Vec<&Seen> = seen.iter().filter(|s| s.method == Method::PATCH).collect();
    assert_eq!(writes.len(), 1);
    assert!(
        !writes[0].body.to_string().contains("partition"),
        "{:?}",
        writes[0].body
    );
}

#[tokio::test]
async fn a_step_on_fresh_pods_is_written_without_a_second_read() {
    let mut web = list_body_item("2-stepped-4");
    web["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let mut stored = web.clone();
    stored["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    let (report, seen) = pass_in_default_scope(script(
        script(
            vec![get(STS_ALL, list_of(vec![web]))],
            web_candidate_reads(
                fixture_body("2-stepped-4-pods.json"),
                fixture_body("2-stepped-4-pdbs.json"),
            ),
        ),
        [patch(PATCH_WEB, 200, as_stored(stored)), post_event("demo")],
    ))
    .await;
    let set = &report.expect("pass").sets[0];
    assert_eq!(
        set.outcome,
        sts_stepper::pass::Outcome::Stepped { from: 4, to: 3 }
    );
    assert!(
        set.decision_age_seconds
            .is_some_and(|a| (0.0..1.0).contains(&a))
    );
    assert_eq!(seen.len(), 5);
}
