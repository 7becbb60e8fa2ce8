//! The kube-rs cluster against a mocked API server (tower-test, as kube-rs's controller-rs does): the
//! exact requests of a pass, the exact patch bodies with their `test` ops, 422/409 on a failed test,
//! Events, and a 500 from the API server. The mock answers with the real fixture LIST bodies.
mod common;
mod mock_api;

use common::*;
use http::Method;
use mock_api::*;
use serde_json::{Value, json};
use sts_stepper::cli::Target;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::{Forced, check_complete, status_table, step_once};
use sts_stepper::gates::Idle;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::PodReads;
use sts_stepper::pass::{Outcome, PassOptions};

fn list_body(moment: &str, kind: &str) -> Vec<u8> {
    fixture_body(&format!("{moment}-{kind}.json"))
}

/// The StatefulSet of a moment as the API server would store it after `f`.
fn stored(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let list: Value = serde_json::from_slice(&list_body(moment, "statefulsets")).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    serde_json::to_vec(&set).expect("json")
}

/// A StatefulSetList body of `moment` with `f` applied to the set.
fn list_with(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut list: Value = serde_json::from_slice(&list_body(moment, "statefulsets")).expect("json");
    f(&mut list["items"][0]);
    serde_json::to_vec(&list).expect("json")
}

/// The three LISTs of a pass over a fixture `moment` where `demo/web` is the one candidate
/// (StatefulSets with `f` applied to the set; then its own pods and its namespace's PDBs): the start of
/// every script that judges pods.
fn lists_of(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<Expect> {
    vec![
        get(STS_ALL, list_with(moment, f)),
        set_pods("demo", "app=web", list_body(moment, "pods")),
        namespace_pdbs("demo", list_body(moment, "pdbs")),
    ]
}

/// [`lists_of`], then the requests of `rest`.
fn lists_then(moment: &str, f: impl FnOnce(&mut Value), rest: Vec<Expect>) -> Vec<Expect> {
    let mut script = lists_of(moment, f);
    script.extend(rest);
    script
}

/// Stamps `initialized: "true"` on a set (a set that was once fully Ready).
fn initialized(s: &mut Value) {
    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
}

fn initialized_patch() -> Value {
    json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1initialized", "value": "true"}])
}

fn step_body(from: i32, to: i32) -> Value {
    json!([
        {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": from},
        {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
        {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": to},
        {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1last-partition-update",
         "value": "2026-11-23T01:20:00Z"}
    ])
}

fn set_partition(p: i32) -> impl FnOnce(&mut Value) {
    move |s| s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p)
}

#[tokio::test]
async fn staged_moment_is_stepped_with_one_pinned_json_patch() {
    let stamped = |s: &mut Value| {
        set_partition(4)(s);
        s["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] =
            json!("2026-11-23T01:20:00Z");
    };
    let (report, seen) = pass_in_default_scope(lists_then(
        "1-staged",
        |_| {},
        vec![
            patch(PATCH_WEB, 200, stored("1-staged", stamped)),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets.len(), 1);
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
    assert!(!report.any_errored());
    // The step is ONE write: test partition and updateRevision, replace, stamp — and the set's first
    // `initialized` stamp folded in (issue 12 item 5).
    let mut want = step_body(5, 4);
    want.as_array_mut()
        .expect("ops")
        .extend(initialized_patch().as_array().expect("ops").clone());
    assert_eq!(seen[3].body, want);
    // The report (and so the `Stepped` log line) carries the stamp this step wrote.
    assert_eq!(
        report.sets[0].figures.last_partition_update,
        Some(at("2026-11-23T01:20:00Z"))
    );
    // The Stepped Event, on the StatefulSet.
    let ev = &seen[4].body;
    assert_eq!(ev["reason"], "Stepped");
    assert_eq!(ev["type"], "Normal");
    assert_eq!(ev["note"], "partition 5→4 (updateRevision web-7d7598bf9d)");
    assert_eq!(ev["regarding"]["kind"], "StatefulSet");
    assert_eq!(ev["regarding"]["name"], "web");
    assert_eq!(ev["regarding"]["uid"], WEB_UID);
    assert_eq!(ev["reportingController"], "sts-stepper");
}

#[tokio::test]
async fn a_set_with_no_annotations_steps_in_one_write_pinned_by_its_resource_version() {
    // Before: a bookkeeping patch changed the resourceVersion and the step's `test` on it then
    // failed once every time. Now the whole annotations map comes with the step.
    let bare = |s: &mut Value| {
        s["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("annotations");
    };
    let list: Value = serde_json::from_slice(&list_with("1-staged", bare)).expect("json");
    let rv = list["items"][0]["metadata"]["resourceVersion"].clone();
    let (report, seen) = pass_in_default_scope(lists_then(
        "1-staged",
        bare,
        vec![
            patch(PATCH_WEB, 200, stored("1-staged", set_partition(4))),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 5, to: 4 }
    );
    let patches: Vec<&Seen> = seen.iter().filter(|s| s.method == Method::PATCH).collect();
    assert_eq!(patches.len(), 1, "one write");
    let ops = patches[0].body.as_array().expect("ops");
    assert!(ops.contains(&json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv})));
    assert!(ops.contains(
        &json!({"op": "add", "path": "/metadata/annotations", "value": {
        "safe-rollout.dev/last-partition-update": "2026-11-23T01:20:00Z"}})
    ));
    assert_eq!(
        ops.last(),
        initialized_patch().as_array().expect("op").first()
    );
}

#[tokio::test]
async fn stepped_moment_steps_4_to_3() {
    let (report, seen) = pass_in_default_scope(lists_then(
        "2-stepped-4",
        initialized,
        vec![
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
    assert_eq!(seen[3].body, step_body(4, 3));
}

#[tokio::test]
async fn not_ready_moment_blocks_announces_once_and_writes_no_partition() {
    let (report, seen) = pass_in_default_scope(lists_then(
        "3-web1-notready",
        |_| {},
        vec![
            patch(PATCH_WEB, 200, stored("3-web1-notready", |_| {})),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::PodNotReady));
    assert_eq!(
        seen[3].body,
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                "value": "PodNotReady"}])
    );
    assert_eq!(seen[4].body["reason"], "Blocked");
    assert_eq!(seen[4].body["type"], "Warning");
    assert_eq!(
        seen[4].body["note"],
        "PodNotReady web-1: ContainersNotReady"
    );

    // Next pass, same reason already announced on the object: three LISTs, no write, no Event.
    let announced = |s: &mut Value| {
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    };
    let (report, seen) = pass_in_default_scope(lists_of("3-web1-notready", announced)).await;
    assert_eq!(
        report.expect("pass").sets[0].blocked_reason(),
        Some(Reason::PodNotReady)
    );
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn step_clears_an_announced_reason_in_the_same_patch() {
    let annotated = |s: &mut Value| {
        s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PdbBlocked");
    };
    let (report, seen) = pass_in_default_scope(lists_then(
        "2-stepped-4",
        annotated,
        vec![
            patch(PATCH_WEB, 200, stored("2-stepped-4", set_partition(3))),
            post_event("demo"),
        ],
    ))
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
    let mut want = step_body(4, 3);
    want.as_array_mut().expect("ops").push(
        json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason"}),
    );
    assert_eq!(seen[3].body, want);
}

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
async fn completion_of_a_stepped_rollout_is_announced_once_per_revision() {
    let stepped = |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:10:50Z");
        a["safe-rollout.dev/blocked-reason"] = json!("StepInProgress");
    };
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_with("4-complete", stepped)),
        patch(PATCH_WEB, 200, stored("4-complete", |_| {})),
        post_event("demo"),
    ])
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Idle(Idle::UpToDate)
    );
    assert_eq!(
        seen[1].body,
        json!([
            {"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1completed-revision", "value": REV_NEW}
        ])
    );
    assert_eq!(seen[2].body["reason"], "RolloutComplete");
    // Announced: the next pass writes nothing.
    let done = |s: &mut Value| {
        let a = &mut s["metadata"]["annotations"];
        a["safe-rollout.dev/initialized"] = json!("true");
        a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:10:50Z");
        a["safe-rollout.dev/completed-revision"] = json!(REV_NEW);
    };
    let (_, seen) = pass_in_default_scope(vec![get(STS_ALL, list_with("4-complete", done))]).await;
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn a_failed_test_op_is_a_conflict_not_an_error() {
    for (code, reason) in [(422, "Invalid"), (409, "Conflict")] {
        let (report, seen) = pass_in_default_scope(lists_then(
            "1-staged",
            initialized,
            vec![patch(
                PATCH_WEB,
                code,
                status_body(
                    code,
                    reason,
                    "the server rejected our request due to an error in our request",
                ),
            )],
        ))
        .await;
        let report = report.expect("pass");
        assert!(
            matches!(&report.sets[0].outcome, Outcome::Conflict(m) if m.contains("rejected our request")),
            "{code}: {:?}",
            report.sets[0].outcome
        );
        assert!(!report.any_errored(), "{code}");
        assert_eq!(
            seen[3].body,
            step_body(5, 4),
            "{code}: no Event after a conflict"
        );
    }
}

#[tokio::test]
async fn a_500_blocks_that_set_with_api_error_and_the_pass_goes_on() {
    // Two sets: demo/web (staged, its step gets a 500) and demo/done (complete, gets its stamp).
    let mut list: Value =
        serde_json::from_slice(&list_body("1-staged", "statefulsets")).expect("json");
    list["items"][0]["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let done_list: Value =
        serde_json::from_slice(&list_body("4-complete", "statefulsets")).expect("json");
    let mut done = done_list["items"][0].clone();
    done["metadata"]["name"] = json!("done");
    done["metadata"]["uid"] = json!("uid-done");
    list["items"].as_array_mut().expect("items").push(done);
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, serde_json::to_vec(&list).expect("json")),
        set_pods("demo", "app=web", list_body("1-staged", "pods")),
        namespace_pdbs("demo", list_body("1-staged", "pdbs")),
        patch(
            PATCH_WEB,
            500,
            status_body(500, "InternalError", "etcdserver: request timed out"),
        ),
        patch(
            "/apis/apps/v1/namespaces/demo/statefulsets/done?&fieldManager=sts-stepper",
            200,
            stored("4-complete", |_| {}),
        ),
    ])
    .await;
    let report = report.expect("pass");
    assert!(report.any_errored());
    let web = &report.sets[0];
    assert_eq!(web.blocked_reason(), Some(Reason::ApiError));
    assert_eq!(
        web.outcome.to_string(),
        "Blocked ApiError patch statefulset demo/web: etcdserver: request timed out"
    );
    assert_eq!(web.error.as_ref().and_then(|e| e.code()), Some(500));
    assert_eq!(report.sets[1].outcome, Outcome::Idle(Idle::UpToDate));
    assert!(report.sets[1].error.is_none());
    assert_eq!(seen[4].body, initialized_patch());
}

#[tokio::test]
async fn a_failed_pod_list_blocks_its_set_with_api_error_naming_the_read() {
    // The pass goes on (issue 29 item 1): the set that needed the read is blocked, its block recorded
    // and announced; the StatefulSet LIST failing is what fails a pass (tests/isolation.rs).
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_body("1-staged", "statefulsets")),
        Expect {
            method: Method::GET,
            status: 500,
            response: status_body(500, "InternalError", "boom"),
            ..set_pods("demo", "app=web", Vec::new())
        },
        patch(PATCH_WEB, 200, stored("1-staged", |_| {})),
        post_event("demo"),
    ])
    .await;
    let report = report.expect("the pass goes on");
    let web = &report.sets[0];
    assert_eq!(
        web.outcome.to_string(),
        "Blocked ApiError list pods in namespace demo (app=web): boom"
    );
    assert_eq!(web.error.as_ref().and_then(|e| e.code()), Some(500));
    assert!(seen[2].body.to_string().contains(r#""value":"ApiError""#));
    assert_eq!(seen[3].body["reason"], "Blocked");
}

#[tokio::test]
async fn an_admission_webhook_keeping_the_partition_is_an_error_not_a_step() {
    let (report, _) = pass_in_default_scope(lists_then(
        "1-staged",
        initialized,
        vec![
            patch(PATCH_WEB, 200, stored("1-staged", |_| {})), // partition still 5
            // Then recorded as a refused step and announced (tests/rejected_writes.rs).
            patch(PATCH_WEB, 200, stored("1-staged", |_| {})),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert!(report.any_errored());
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::ApiError));
    assert!(
        report.sets[0]
            .rejection
            .as_ref()
            .is_some_and(|r| r.announced)
    );
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

// ---- the single-set subcommands: status, step, wait ------------------------------------------------

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

/// The options of the single-set commands on `demo/web`: its own pods, whatever its gates say.
fn web_pods() -> PassOptions {
    PassOptions {
        pod_reads: PodReads::Set {
            namespace: "demo".into(),
            name: "web".into(),
        },
        ..PassOptions::default()
    }
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
