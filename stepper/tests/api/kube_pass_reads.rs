//! What a pass through the kube-rs cluster reads from a mocked API server: one StatefulSet LIST when
//! nothing is staged, the namespaces and the selector shaping the LISTs, a dry run that writes nothing,
//! and as many requests for 200 sets as for one.

use crate::mock_api::moments::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::gates::Idle;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::PodReads;
use sts_stepper::pass::{Outcome, PassOptions};

#[tokio::test]
async fn complete_moment_needs_one_list_and_is_idle() {
    // Nothing staged: no pod or PDB LIST at all; the fully Ready set gets its `initialized` stamp.
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_body("4-complete", "statefulsets")),
        patch(PATCH_WEB, 200, stored("4-complete", |_| {})),
    ])
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Idle(Idle::UpToDate)
    );
    assert_eq!(seen[1].body, initialized_patch());
}

#[tokio::test]
async fn dry_run_reads_and_writes_nothing() {
    let (report, seen) = pass_with(
        Scope::default(),
        PassOptions {
            dry_run: true,
            ..PassOptions::default()
        },
        lists_of("1-staged", |_| {}),
    )
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::WouldStep { from: 5, to: 4 }
    );
    assert!(seen.iter().all(|s| s.method == Method::GET));
}

#[tokio::test]
async fn namespaces_and_selector_shape_the_lists() {
    let scope = Scope {
        namespaces: vec!["demo".into(), "other".into()],
        label_selector: Some("tier=db".into()),
        field_selector: None,
    };
    let empty = empty_list;
    let (report, _) = pass_with(
        scope,
        PassOptions {
            pod_reads: PodReads::Scope,
            ..PassOptions::default()
        },
        vec![
            get(
                "/apis/apps/v1/namespaces/demo/statefulsets?&labelSelector=tier%3Ddb",
                list_with("4-complete", |s| {
                    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
                }),
            ),
            get(
                "/apis/apps/v1/namespaces/other/statefulsets?&labelSelector=tier%3Ddb",
                empty("StatefulSetList"),
            ),
            get("/api/v1/namespaces/demo/pods?", empty("PodList")),
            get("/api/v1/namespaces/other/pods?", empty("PodList")),
            get(
                "/apis/policy/v1/namespaces/demo/poddisruptionbudgets?",
                empty("PodDisruptionBudgetList"),
            ),
            get(
                "/apis/policy/v1/namespaces/other/poddisruptionbudgets?",
                empty("PodDisruptionBudgetList"),
            ),
        ],
    )
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Idle(Idle::UpToDate)
    );
}

#[tokio::test]
async fn requests_per_pass_do_not_grow_with_the_number_of_statefulsets() {
    // 200 staged sets with one selector, each already announced as blocked (its pods are missing):
    // 3 LISTs (one pod read serves every set with the same namespace and selector), no write.
    let base: Value =
        serde_json::from_slice(&list_body("3-web1-notready", "statefulsets")).expect("json");
    let mut list = base.clone();
    let items: Vec<Value> = (0..200)
        .map(|i| {
            let mut s = base["items"][0].clone();
            s["metadata"]["name"] = json!(format!("web{i}"));
            s["metadata"]["uid"] = json!(format!("uid-{i}"));
            s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
            s
        })
        .collect();
    list["items"] = json!(items);
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, serde_json::to_vec(&list).expect("json")),
        set_pods("demo", "app=web", list_body("3-web1-notready", "pods")),
        namespace_pdbs("demo", list_body("3-web1-notready", "pdbs")),
    ])
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets.len(), 200);
    assert!(
        report
            .sets
            .iter()
            .all(|s| s.blocked_reason() == Some(Reason::PodNotReady))
    );
    assert_eq!(seen.len(), 3);
}
