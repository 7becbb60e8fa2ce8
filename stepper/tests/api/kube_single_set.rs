//! The single-set subcommands (`status`, `step`, `wait`) through the kube-rs cluster against a mocked
//! API server: the first blocking gate in the status table, a step refused without `--force`, a forced
//! step recording who and why, completion only when really complete, a set that does not exist.

use crate::common::*;
use crate::mock_api::moments::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cli::Target;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::{Forced, check_complete, status_table, step_once};
use sts_stepper::pass::Outcome;

const STS_WEB: &str =
    "/apis/apps/v1/namespaces/demo/statefulsets?&fieldSelector=metadata.name%3Dweb";

fn web() -> Target {
    Target {
        namespace: "demo".into(),
        name: "web".into(),
    }
}

fn web_scope() -> Scope {
    Scope {
        namespaces: vec!["demo".into()],
        label_selector: None,
        field_selector: Some("metadata.name=web".into()),
    }
}

fn reads(moment: &str) -> Vec<Expect> {
    vec![
        get(STS_WEB, list_body(moment, "statefulsets")),
        set_pods("demo", "app=web", list_body(moment, "pods")),
        namespace_pdbs("demo", list_body(moment, "pdbs")),
    ]
}

#[tokio::test]
async fn status_shows_the_first_blocking_gate() {
    let marked =
        |s: &mut Value| s["metadata"]["annotations"]["safe-rollout.dev/guarded"] = json!("true");
    let (cluster, server) = mock_cluster(Scope::default(), lists_of("3-web1-notready", marked));
    let table = status_table(&cluster, &web_pods(), None, now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 5, "{table}");
    assert!(
        lines[0].starts_with("NAMESPACE  STATEFULSET  PARTITION  UPDATED/READY/REPLICAS"),
        "{table}"
    );
    assert_eq!(
        lines[2..],
        [
            "",
            "Health (as Argo CD and Flux report it with deploy/gitops/):",
            &format!("  demo/web Progressing: stepping: 1 of 5 pods on {REV_NEW}, partition 4"),
        ],
        "{table}"
    );
    let cells: Vec<&str> = lines[1]
        .split("  ")
        .filter(|c| !c.trim().is_empty())
        .map(str::trim)
        .collect();
    assert_eq!(
        cells,
        [
            "demo",
            "web",
            "4",
            "1/4/5",
            REV_OLD,
            REV_NEW,
            "Progressing",
            "Blocked PodNotReady web-1: ContainersNotReady"
        ]
    );
}

#[tokio::test]
async fn step_refuses_a_blocked_set_without_force() {
    let (cluster, server) = mock_cluster(web_scope(), reads("3-web1-notready"));
    let err = step_once(&cluster, &web_pods(), &web(), None, now())
        .await
        .expect_err("refused");
    drop(cluster);
    let seen = server.await.expect("script");
    assert_eq!(
        err.to_string(),
        "demo/web not stepped: PodNotReady web-1: ContainersNotReady (wait for the gate, or step \
         anyway with --force --reason TEXT)"
    );
    assert!(seen.iter().all(|s| s.method == Method::GET), "no write");
}

#[tokio::test]
async fn forced_step_uses_the_same_patch_and_records_who_and_why() {
    let mut script = reads("3-web1-notready");
    script.push(patch(
        PATCH_WEB,
        200,
        stored("3-web1-notready", set_partition(3)),
    ));
    script.push(post_event("demo"));
    script.push(post_event("demo"));
    let (cluster, server) = mock_cluster(web_scope(), script);
    let forced = Forced {
        who: "alice".into(),
        reason: "node of web-1 is drained".into(),
    };
    let report = step_once(&cluster, &web_pods(), &web(), Some(&forced), now())
        .await
        .expect("step");
    drop(cluster);
    let seen = server.await.expect("script");
    assert_eq!(report.outcome, Outcome::Stepped { from: 4, to: 3 });
    assert_eq!(seen[3].body, step_body(4, 3));
    assert_eq!(seen[4].body["reason"], "Stepped");
    assert_eq!(seen[5].body["reason"], "ForcedStep");
    assert_eq!(seen[5].body["type"], "Warning");
    assert_eq!(
        seen[5].body["note"],
        "partition 4→3 forced past PodNotReady web-1: ContainersNotReady by alice: node of web-1 is drained"
    );
}

#[tokio::test]
async fn a_person_step_on_a_healthy_set_is_the_stepper_step() {
    let (cluster, server) = mock_cluster(
        web_scope(),
        vec![
            get(STS_WEB, list_with("2-stepped-4", initialized)),
            set_pods("demo", "app=web", list_body("2-stepped-4", "pods")),
            namespace_pdbs("demo", list_body("2-stepped-4", "pdbs")),
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    );
    let report = step_once(&cluster, &web_pods(), &web(), None, now())
        .await
        .expect("step");
    drop(cluster);
    let seen = server.await.expect("script");
    assert_eq!(report.outcome, Outcome::Stepped { from: 4, to: 3 });
    assert_eq!(seen[3].body, step_body(4, 3));
}

#[tokio::test]
async fn wait_sees_completion_only_when_really_complete() {
    for (moment, want) in [
        (
            "4-complete",
            Ok("rollout complete: 5 pods on web-7d7598bf9d, all Ready".to_string()),
        ),
        (
            "2-stepped-4",
            Err("StepInProgress web: partition 4 > 0, next step due".to_string()),
        ),
        (
            "1-staged",
            Err("StepInProgress web: partition 5 > 0, next step due".to_string()),
        ),
        (
            "3-web1-notready",
            Err("PodNotReady web-1: ContainersNotReady".to_string()),
        ),
    ] {
        let (cluster, server) = mock_cluster(web_scope(), reads(moment));
        let got = check_complete(&cluster, &web_pods(), &web(), now())
            .await
            .expect("check");
        drop(cluster);
        server.await.expect("script");
        assert_eq!(got.map_err(|b| b.to_string()), want, "{moment}");
    }
}

#[tokio::test]
async fn single_set_commands_say_when_the_set_does_not_exist() {
    let empty = serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {}, "items": []}))
    .expect("json");
    let (cluster, server) = mock_cluster(web_scope(), vec![get(STS_WEB, empty)]);
    let err = check_complete(&cluster, &web_pods(), &web(), now())
        .await
        .expect_err("missing");
    drop(cluster);
    let _ = server.await;
    assert_eq!(err.to_string(), "statefulset demo/web not found");
}
