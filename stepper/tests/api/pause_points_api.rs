//! The canary plan against a mocked API server, on the real fixture LISTs: the exact JSON Patch of the
//! step that reaches a pause point (the pause in the step's one write) and its Events, a paused set
//! read from the list alone, the bake-time resume, a bad `pause-at` (`InvalidAnnotation` and its
//! Event), a person's `resume` (the record kept), `wait` and `status` on a paused set, and a forced
//! step past a person's pause (the point recorded, that pause kept).

use std::sync::Arc;

use crate::common::*;
use crate::mock_api::*;
use serde_json::{Value, json};
use sts_stepper::cli::Target;
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::commands::{Forced, check_complete, resume_set, status_table, step_once};
use sts_stepper::config::Keys;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::Outcome;

const REASON_1: &str = "pause point 1 of 2: 1 of 5 pods on web-7d7598bf9d; `resume` to go on";
const REASON_BAKED: &str = "pause point 1 of 1: 1 of 5 pods on web-7d7598bf9d; goes on by itself \
                            20 s after the pause if every gate passes, or `resume` to go on";

fn a(key: &str) -> String {
    format!("/metadata/annotations/safe-rollout.dev~1{key}")
}

fn record(paused_at: &str) -> String {
    format!(r#"{{"updateRevision":"web-7d7598bf9d","pods":1,"pausedAt":"{paused_at}"}}"#)
}

/// The fixture set of `moment`, initialized, with `annotations` (short names) added.
fn with<'a>(annotations: &'a [(&'a str, &'a str)]) -> impl Fn(&mut Value) + 'a {
    move |s: &mut Value| {
        let map = &mut s["metadata"]["annotations"];
        map["safe-rollout.dev/initialized"] = json!("true");
        for (k, v) in annotations {
            map[format!("safe-rollout.dev/{k}")] = json!(v);
        }
    }
}

fn list_with(moment: &str, f: impl Fn(&mut Value)) -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    f(&mut list["items"][0]);
    serde_json::to_vec(&list).expect("json")
}

fn stored(moment: &str, f: impl Fn(&mut Value)) -> Vec<u8> {
    let list: Value = serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
        .expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    serde_json::to_vec(&set).expect("json")
}

/// The LISTs of a pass where `demo/web` (the fixture `moment`, with `f`) is a candidate.
fn candidate(moment: &str, f: impl Fn(&mut Value)) -> Vec<Expect> {
    vec![
        get(STS_ALL, list_with(moment, f)),
        set_pods(
            "demo",
            "app=web",
            fixture_body(&format!("{moment}-pods.json")),
        ),
        namespace_pdbs("demo", fixture_body(&format!("{moment}-pdbs.json"))),
    ]
}

#[tokio::test]
async fn the_step_that_reaches_a_point_pauses_in_its_one_patch_then_says_so() {
    let plan = [("pause-at", "1,60%:20"), ("step", "25%")];
    let after = |s: &mut Value| {
        with(&plan)(s);
        s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
    };
    let (report, seen) = pass_in_default_scope(script(
        candidate("1-staged", with(&plan)),
        [
            patch(PATCH_WEB, 200, stored("1-staged", after)),
            post_event("demo"),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
    assert_eq!(
        seen[3].body,
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 5},
            {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 4},
            {"op": "add", "path": a("last-partition-update"), "value": "2026-11-23T01:20:00Z"},
            {"op": "add", "path": a("paused"), "value": "true"},
            {"op": "add", "path": a("paused-reason"), "value": REASON_1},
            {"op": "add", "path": a("pause-points-passed"), "value": record("2026-11-23T01:20:00Z")},
        ])
    );
    assert_eq!(
        (&seen[4].body["reason"], &seen[4].body["note"]),
        (
            &json!("Stepped"),
            &json!("partition 5→4 (updateRevision web-7d7598bf9d)")
        )
    );
    let paused = &seen[5].body;
    assert_eq!(
        (
            &paused["reason"],
            &paused["type"],
            &paused["action"],
            &paused["note"]
        ),
        (
            &json!("RolloutPaused"),
            &json!("Normal"),
            &json!("Pause"),
            &json!(REASON_1)
        )
    );
}

#[tokio::test]
async fn a_set_held_at_a_point_is_judged_from_the_list_alone() {
    let held = [
        ("pause-at", "1,60%:20"),
        ("paused", "true"),
        ("paused-reason", REASON_1),
        ("pause-points-passed", &record("2026-11-23T01:19:00Z")),
    ];
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_with("2-stepped-4", with(&held))),
        patch(PATCH_WEB, 200, stored("2-stepped-4", with(&held))),
        post_event("demo"),
    ])
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::Paused));
    assert_eq!(
        seen[1].body,
        json!([{"op": "add", "path": a("blocked-reason"), "value": "Paused"}])
    );
    assert_eq!(seen[2].body["type"], "Normal");
    assert_eq!(
        seen[2].body["note"],
        format!("Paused web: safe-rollout.dev/paused is \"true\": {REASON_1}")
    );
}

#[tokio::test]
async fn after_the_bake_time_a_step_lifts_the_plans_pause_pinned_to_its_reason() {
    let held = [
        ("pause-at", "1:20"),
        ("paused", "true"),
        ("paused-reason", REASON_BAKED),
        ("pause-points-passed", &record("2026-11-23T01:19:00Z")),
        ("blocked-reason", "Paused"),
    ];
    let (report, seen) = pass_in_default_scope(script(
        candidate("2-stepped-4", with(&held)),
        [
            patch(
                PATCH_WEB,
                200,
                stored("2-stepped-4", |s| {
                    with(&[])(s);
                    s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
                }),
            ),
            post_event("demo"),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
    assert_eq!(
        seen[3].body,
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 4},
            {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
            {"op": "test", "path": a("paused"), "value": "true"},
            {"op": "test", "path": a("paused-reason"), "value": REASON_BAKED},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 3},
            {"op": "add", "path": a("last-partition-update"), "value": "2026-11-23T01:20:00Z"},
            {"op": "remove", "path": a("blocked-reason")},
            {"op": "remove", "path": a("paused")},
            {"op": "remove", "path": a("paused-reason")},
        ])
    );
    assert_eq!(seen[4].body["reason"], "Stepped");
    assert_eq!(seen[5].body["reason"], "RolloutResumed");
    let note = seen[5].body["note"].as_str().expect("note");
    assert!(
        note.starts_with("resumed by the stepper: 20 s of bake time over and every gate passed"),
        "{note}"
    );
}

#[tokio::test]
async fn a_bad_pause_at_blocks_as_invalid_annotation_with_a_warning_event() {
    let bad = [("pause-at", "1,60%,50%")];
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_with("1-staged", with(&bad))),
        patch(PATCH_WEB, 200, stored("1-staged", with(&bad))),
        post_event("demo"),
    ])
    .await;
    assert_eq!(
        report.expect("pass").sets[0].blocked_reason(),
        Some(Reason::InvalidAnnotation)
    );
    assert_eq!(
        seen[1].body,
        json!([{"op": "add", "path": a("blocked-reason"), "value": "InvalidAnnotation"}])
    );
    let ev = &seen[2].body;
    assert_eq!(
        (&ev["reason"], &ev["type"]),
        (&json!("Blocked"), &json!("Warning"))
    );
    let note = ev["note"].as_str().expect("note");
    assert!(
        note.starts_with(
            "InvalidAnnotation safe-rollout.dev/pause-at: \"1,60%,50%\" is not a pause plan: point \
             50% comes after 60%; expected comma-separated points"
        ),
        "{note}"
    );
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

#[tokio::test]
async fn resume_lifts_the_pause_and_keeps_the_record_so_the_plan_goes_on() {
    let held = [
        ("pause-at", "1,60%:20"),
        ("paused", "true"),
        ("paused-reason", REASON_1),
        ("pause-points-passed", &record("2026-11-23T01:19:00Z")),
    ];
    let list_web = "/apis/apps/v1/namespaces/demo/statefulsets?&fieldSelector=metadata.name%3Dweb";
    let (client, server) = mock_client(vec![
        get(list_web, list_with("2-stepped-4", with(&held))),
        patch(PATCH_WEB, 200, stored("2-stepped-4", with(&held))),
        post_event("demo"),
    ]);
    let cluster = only_web(client);
    let out = resume_set(
        &cluster,
        &Arc::new(Keys::default()),
        &web(),
        "alice",
        false,
        false,
    )
    .await;
    drop(cluster);
    let seen = server.await.expect("script");
    assert!(
        out.expect("resumed")
            .contains("was paused: pause point 1 of 2")
    );
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "test", "path": a("paused"), "value": "true"},
            {"op": "test", "path": a("paused-reason"), "value": REASON_1},
            {"op": "remove", "path": a("paused")},
            {"op": "remove", "path": a("paused-reason")},
        ])
    );
}

#[tokio::test]
async fn wait_reports_a_pause_point_as_paused_and_status_shows_the_plan() {
    let held = [
        ("pause-at", "1,60%:20"),
        ("paused", "true"),
        ("paused-reason", REASON_1),
        ("pause-points-passed", &record("2026-11-23T01:19:00Z")),
    ];
    let reads = || {
        vec![
            get(STS_ALL, list_with("2-stepped-4", with(&held))),
            set_pods("demo", "app=web", fixture_body("2-stepped-4-pods.json")),
            namespace_pdbs("demo", fixture_body("2-stepped-4-pdbs.json")),
        ]
    };
    let (cluster, server) = mock_cluster(Scope::default(), reads());
    let waited = check_complete(&cluster, &web_pods(), &web(), now())
        .await
        .expect("read");
    drop(cluster);
    server.await.expect("script");
    let blocked = waited.expect_err("not complete");
    assert_eq!(blocked.reason, Reason::Paused);
    assert!(blocked.detail.contains(REASON_1), "{}", blocked.detail);

    let (cluster, server) = mock_cluster(Scope::default(), reads());
    let table = status_table(&cluster, &web_pods(), Some(&web()), now())
        .await
        .expect("status");
    drop(cluster);
    server.await.expect("script");
    assert!(
        table.ends_with(
            "\nPause points (safe-rollout.dev/pause-at):\n  demo/web 1,60%:20: paused at point 1 of \
             2 (1 of 5 pods); `resume` to go on\n"
        ),
        "{table}"
    );
}

#[tokio::test]
async fn a_forced_step_past_a_persons_pause_records_the_point_and_keeps_that_pause() {
    let held = [
        ("pause-at", "1,60%:20"),
        ("paused", "true"),
        ("paused-reason", "INC-7 (paused by bob)"),
    ];
    let list_web = "/apis/apps/v1/namespaces/demo/statefulsets?&fieldSelector=metadata.name%3Dweb";
    let (client, server) = mock_client(vec![
        get(list_web, list_with("1-staged", with(&held))),
        set_pods("demo", "app=web", fixture_body("1-staged-pods.json")),
        namespace_pdbs("demo", fixture_body("1-staged-pdbs.json")),
        patch(
            PATCH_WEB,
            200,
            stored("1-staged", |s| {
                with(&held)(s);
                s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
            }),
        ),
        post_event("demo"),
        post_event("demo"),
    ]);
    let cluster = only_web(client);
    let forced = Forced {
        who: "alice".into(),
        reason: "look at one pod anyway".into(),
    };
    let report = step_once(&cluster, &web_pods(), &web(), Some(&forced), now())
        .await
        .expect("step");
    drop(cluster);
    let seen = server.await.expect("script");
    assert_eq!(report.outcome, Outcome::Stepped { from: 5, to: 4 });
    assert_eq!(
        seen[3].body,
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 5},
            {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 4},
            {"op": "add", "path": a("last-partition-update"), "value": "2026-11-23T01:20:00Z"},
            {"op": "add", "path": a("pause-points-passed"), "value": record("2026-11-23T01:20:00Z")},
        ])
    );
    let reasons: Vec<&Value> = seen[4..].iter().map(|s| &s.body["reason"]).collect();
    assert_eq!(reasons, [&json!("Stepped"), &json!("ForcedStep")]);
}
