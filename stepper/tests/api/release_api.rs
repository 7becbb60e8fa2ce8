//! `release` against a mocked API server answering the real fixture bodies: the exact JSON Patches (the
//! partition pinned by `test` ops and restamped so the policy lets it through; then each annotation
//! removed after a `test` of its value, never the whole map), a staged set refused without `--force` and
//! what `--force` would roll, `--dry-run` writing nothing, a lost race writing nothing more, and a set
//! with nothing to release left alone; and its flags.

use std::sync::Arc;

use crate::common::*;
use crate::mock_api::{Expect, Seen, expect, mock_client};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cli::Target;
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::commands::{How, ReleaseReport, release_sets};
use sts_stepper::config::Keys;

const LIST_WEB: &str =
    "/apis/apps/v1/namespaces/demo/statefulsets?&fieldSelector=metadata.name%3Dweb";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";
const STAMP: &str = "2026-11-23T01:10:42Z";

/// Moment `moment`'s set with `f` applied.
fn set_of(moment: &str, f: impl FnOnce(&mut Value)) -> Value {
    let list: Value =
        serde_json::from_slice(&raw_fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    set
}

fn listed(set: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "9"}, "items": [set]}))
    .expect("json")
}

/// What the stepper and the policy leave on a set they guarded, and one annotation of yours.
fn ours(s: &mut Value) {
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/guarded"] = json!("true");
    a["safe-rollout.dev/initialized"] = json!("true");
    a["safe-rollout.dev/last-partition-update"] = json!(STAMP);
    a["safe-rollout.dev/completed-revision"] = json!(REV_NEW);
    a["safe-rollout.dev/step"] = json!("2");
}

fn partition(p: i32) -> impl FnOnce(&mut Value) {
    move |s| s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p)
}

fn web() -> Target {
    Target {
        namespace: "demo".into(),
        name: "web".into(),
    }
}

async fn release(script: Vec<Expect>, how: How) -> (ReleaseReport, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let scope = Scope {
        namespaces: vec!["demo".into()],
        label_selector: None,
        field_selector: Some("metadata.name=web".into()),
    };
    let cluster = KubeCluster::new(client, scope, None);
    let report = release_sets(
        &cluster,
        &Arc::new(Keys::default()),
        Some(&web()),
        how,
        now(),
    )
    .await
    .expect("release");
    drop(cluster);
    (report, server.await.expect("script"))
}

/// The cleanup patch: each annotation of ours, `test`ed then removed, in the release's order.
fn cleanup(pairs: &[(&str, &str)]) -> Value {
    let ops: Vec<Value> = pairs
        .iter()
        .flat_map(|(k, v)| {
            let path = format!("/metadata/annotations/safe-rollout.dev~1{k}");
            [
                json!({"op": "test", "path": path, "value": v}),
                json!({"op": "remove", "path": path}),
            ]
        })
        .collect();
    Value::Array(ops)
}

#[tokio::test]
async fn an_idle_set_goes_to_partition_0_at_once_then_loses_our_annotations_key_by_key() {
    // Moment 4 (every pod on the new revision) with the partition back at 5: idle, nothing rolls.
    let idle = set_of("4-complete", |s| {
        ours(s);
        partition(5)(s);
    });
    // The API server's answer to the first PATCH: partition 0, the new stamp.
    let after = set_of("4-complete", |s| {
        ours(s);
        s["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] =
            json!("2026-11-23T01:20:00Z");
    });
    let (report, seen) = release(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(&idle)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&after).expect("json"),
            ),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&after).expect("json"),
            ),
        ],
        How::default(),
    )
    .await;
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 5},
            {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 0},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1last-partition-update",
             "value": "2026-11-23T01:20:00Z"}
        ])
    );
    // Pinned to the values of the object the first PATCH returned (the new stamp); `step` stays.
    assert_eq!(
        seen[2].body,
        cleanup(&[
            ("guarded", "true"),
            ("initialized", "true"),
            ("last-partition-update", "2026-11-23T01:20:00Z"),
            ("completed-revision", REV_NEW),
        ])
    );
    assert_eq!((report.released, report.not_released), (1, 0));
    assert_eq!(
        report.lines,
        [
            "demo/web: released: partition 5→0 (nothing staged, nothing rolls); 4 annotations removed: \
          safe-rollout.dev/guarded, safe-rollout.dev/initialized, safe-rollout.dev/last-partition-update, \
          safe-rollout.dev/completed-revision"
        ]
    );
}

#[tokio::test]
async fn a_staged_set_is_not_released_without_force_and_says_what_would_roll() {
    let staged = set_of("1-staged", ours);
    let (report, seen) = release(
        vec![expect(Method::GET, LIST_WEB, 200, listed(&staged))],
        How::default(),
    )
    .await;
    assert_eq!(seen.len(), 1, "nothing written");
    assert_eq!((report.released, report.not_released), (0, 1));
    assert_eq!(
        report.lines,
        [format!(
            "demo/web: not released: an update is staged behind partition 5: release --force lets the \
             StatefulSet controller replace web-4, web-3, web-2, web-1, web-0 (5 pods) onto {REV_NEW} at \
             once, natively, without the gates"
        )]
    );
}

#[tokio::test]
async fn a_forced_release_of_a_staged_set_pins_the_revision_it_announced() {
    let staged = set_of("1-staged", ours);
    let (report, seen) = release(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(&staged)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&staged).expect("json"),
            ),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&staged).expect("json"),
            ),
        ],
        How {
            force: true,
            dry_run: false,
        },
    )
    .await;
    assert_eq!(
        seen[1].body[1],
        json!({"op": "test", "path": "/status/updateRevision", "value": REV_NEW})
    );
    assert_eq!(seen[1].body[2]["value"], 0);
    assert_eq!(report.released, 1);
    assert!(
        report.lines[0].starts_with(
            "demo/web: released: partition 5→0: the StatefulSet controller now replaces web-4, web-3"
        ),
        "{:?}",
        report.lines
    );
}

#[tokio::test]
async fn a_dry_run_reads_and_writes_nothing() {
    let idle = set_of("4-complete", |s| {
        ours(s);
        partition(5)(s);
    });
    let (report, seen) = release(
        vec![expect(Method::GET, LIST_WEB, 200, listed(&idle))],
        How {
            force: false,
            dry_run: true,
        },
    )
    .await;
    assert_eq!(seen.len(), 1);
    assert!(
        report.lines[0]
            .starts_with("demo/web: would release (dry run): partition 5→0 (nothing staged"),
        "{:?}",
        report.lines
    );
}

#[tokio::test]
async fn a_lost_race_on_the_partition_writes_nothing_more() {
    let idle = set_of("4-complete", |s| {
        ours(s);
        partition(5)(s);
    });
    let (report, seen) = release(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(&idle)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                422,
                raw_fixture_body("errors/422-json-patch-test-failed.json"),
            ),
        ],
        How::default(),
    )
    .await;
    assert_eq!(seen.len(), 2, "no cleanup after a failed test op");
    assert_eq!((report.released, report.not_released), (0, 1));
    assert!(
        report.lines[0].starts_with("demo/web: not released: it changed since it was read (")
            && report.lines[0].ends_with("nothing written, run release again"),
        "{:?}",
        report.lines
    );
}

#[tokio::test]
async fn without_a_partition_only_the_annotations_go_and_a_clean_set_is_left_alone() {
    // Moment 4 as captured: partition 0; with our annotations, one PATCH.
    let done = set_of("4-complete", ours);
    let (report, seen) = release(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(&done)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&done).expect("json"),
            ),
        ],
        How::default(),
    )
    .await;
    assert_eq!(
        seen[1].body[1],
        json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1guarded"})
    );
    assert_eq!(seen[1].body.as_array().map(Vec::len), Some(8));
    assert_eq!(report.released, 1);
    let clean = set_of("4-complete", |_| {});
    let (report, seen) = release(
        vec![expect(Method::GET, LIST_WEB, 200, listed(&clean))],
        How::default(),
    )
    .await;
    assert_eq!(seen.len(), 1);
    assert_eq!(
        report.lines,
        [
            "demo/web: nothing to release: no partition above 0, no annotation of the stepper or the policy"
        ]
    );
}

#[tokio::test]
async fn a_pause_written_by_the_stepper_goes_with_its_reason_a_bare_one_is_yours() {
    let paused = set_of("4-complete", |s| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/paused"] = json!("true");
        a["safe-rollout.dev/paused-reason"] = json!("INC-1234 (paused by alice)");
    });
    let (_, seen) = release(
        vec![
            expect(Method::GET, LIST_WEB, 200, listed(&paused)),
            expect(
                Method::PATCH,
                PATCH_WEB,
                200,
                serde_json::to_vec(&paused).expect("json"),
            ),
        ],
        How::default(),
    )
    .await;
    assert_eq!(
        seen[1].body,
        cleanup(&[
            ("paused-reason", "INC-1234 (paused by alice)"),
            ("paused", "true")
        ])
    );
    let bare = set_of("4-complete", |s| {
        s["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
    });
    let (report, seen) = release(
        vec![expect(Method::GET, LIST_WEB, 200, listed(&bare))],
        How::default(),
    )
    .await;
    assert_eq!((seen.len(), report.released), (1, 0));
}

#[tokio::test]
async fn a_named_set_that_does_not_exist_is_an_error() {
    let (client, server) = mock_client(vec![expect(
        Method::GET,
        LIST_WEB,
        200,
        serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
            "metadata": {}, "items": []}))
        .expect("json"),
    )]);
    let scope = Scope {
        namespaces: vec!["demo".into()],
        label_selector: None,
        field_selector: Some("metadata.name=web".into()),
    };
    let cluster = KubeCluster::new(client, scope, None);
    let err = release_sets(
        &cluster,
        &Arc::new(Keys::default()),
        Some(&web()),
        How::default(),
        now(),
    )
    .await
    .expect_err("not found");
    drop(cluster);
    server.await.expect("script");
    assert_eq!(err.to_string(), "statefulset demo/web not found");
}

#[test]
fn the_flags_parse_and_a_name_with_all_namespaces_is_refused_by_clap_or_the_command() {
    use clap::Parser;
    use sts_stepper::cli::{Cli, Command};
    let cli = Cli::try_parse_from(["sts-stepper", "release", "-A", "--force", "--dry-run"])
        .expect("parses");
    let Command::Release(r) = cli.command else {
        panic!("release")
    };
    assert!(r.all_namespaces && r.force && r.dry_run && r.target.is_none());
    let cli = Cli::try_parse_from(["sts-stepper", "release", "demo/web"]).expect("parses");
    let Command::Release(r) = cli.command else {
        panic!("release")
    };
    assert!(!r.force && r.target.is_some());
    let err = Cli::try_parse_from(["sts-stepper", "release", "-A", "-n", "demo"])
        .expect_err("-A with -n");
    assert!(err.to_string().contains("cannot be used with"), "{err}");
}
