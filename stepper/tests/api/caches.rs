//! `watch` from caches (issue 12 item 2): a pass decides from reflector stores and issues no LIST;
//! a step is written only after a fresh consistent read of that set (GET) and its pods (LIST by its
//! selector) confirms it — the exact requests, at the mocked API server.

use crate::common::*;
use crate::mock_api::*;
use http::Method;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use std::sync::Arc;
use sts_stepper::cluster::caches::{CachedCluster, Caches};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::config::Keys;
use sts_stepper::gates::GateOptions;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, PassReport, run_pass};
use tokio::task::JoinHandle;

/// Caches holding the fixture `moment`, its set changed by `f`, as the first LIST of each kind leaves
/// them (decoded, kept and indexed as `watch` keeps them).
fn caches_of(moment: &str, f: impl FnOnce(&mut Value)) -> Caches {
    let mut set: Value = fixture_list::<Value>(&format!("{moment}-statefulsets.json"))[0].clone();
    f(&mut set);
    let set: StatefulSet = serde_json::from_value(set).expect("set");
    Caches::listed(
        vec![set],
        fixture_list::<Pod>(&format!("{moment}-pods.json")),
        fixture_list::<PodDisruptionBudget>(&format!("{moment}-pdbs.json")),
        &Arc::new(Keys::default()),
    )
}

fn initialized(s: &mut Value) {
    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
}

/// The set of `moment` as the API server returns it, changed by `f`.
fn object(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut set: Value = fixture_list::<Value>(&format!("{moment}-statefulsets.json"))[0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    serde_json::to_vec(&set).expect("json")
}

/// The requests of a step 4 → 3 of `demo/web` decided on the caches: the fresh GET of the set and LIST
/// of its pods that confirm it (moment 2, all Ready), the step's PATCH, its Event.
fn confirmed_step_4_to_3() -> Vec<Expect> {
    let stepped = |s: &mut Value| {
        initialized(s);
        s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    };
    vec![
        get(GET_WEB, object("2-stepped-4", initialized)),
        set_pods("demo", "app=web", fixture_body("2-stepped-4-pods.json")),
        patch(PATCH_WEB, 200, object("2-stepped-4", stepped)),
        post_event("demo"),
    ]
}

/// One pass over `caches`, the mocked API server (`api`, `server`) answering what the caches do not
/// serve: the report and the requests the API server saw.
async fn cached_pass(
    caches: &Caches,
    api: KubeCluster,
    server: JoinHandle<Vec<Seen>>,
    opts: &PassOptions,
) -> (PassReport, Vec<Seen>) {
    let cached = CachedCluster { caches, api: &api };
    let report = run_pass(&cached, opts, now()).await.expect("pass");
    drop(api);
    (report, server.await.expect("mock API server script"))
}

#[tokio::test]
async fn a_pass_from_the_caches_issues_no_request_when_nothing_steps() {
    // web-1 NotReady, the reason already announced: decided from the stores, nothing to write.
    let caches = caches_of("3-web1-notready", |s| {
        initialized(s);
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    });
    let (api, server) = mock_cluster(Scope::default(), vec![]);
    let (report, seen) = cached_pass(&caches, api, server, &PassOptions::default()).await;
    assert!(seen.is_empty());
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::PodNotReady));
}

#[tokio::test]
async fn a_step_decided_from_the_caches_is_confirmed_by_a_fresh_read_then_written() {
    let caches = caches_of("2-stepped-4", initialized);
    let (api, server) = mock_cluster(Scope::default(), confirmed_step_4_to_3());
    let (report, seen) = cached_pass(&caches, api, server, &PassOptions::default()).await;
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 4, to: 3 });
    // No LIST of StatefulSets, no PDB read: the set's GET, its pods, the step, its Event.
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[2].method, Method::PATCH);
}

#[tokio::test]
async fn the_leader_over_the_caches_still_confirms_a_step_on_a_fresh_read() {
    // watch's stack: LeaderCluster over CachedCluster. The wrapper must not hide that the reads are
    // cached, or the step would go out on the caches alone.
    let caches = caches_of("2-stepped-4", initialized);
    let (api, server) = mock_cluster(Scope::default(), confirmed_step_4_to_3());
    let cached = CachedCluster {
        caches: &caches,
        api: &api,
    };
    let leadership = sts_stepper::leader::Leadership::sole();
    let guarded = sts_stepper::leader::cluster::LeaderCluster {
        inner: &cached,
        leadership: &leadership,
    };
    let report = run_pass(&guarded, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(api);
    let seen = server.await.expect("script: GET, pods, PATCH, Event");
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 4, to: 3 });
    assert_eq!(seen.len(), 4);
}

#[tokio::test]
async fn a_fresh_read_that_disagrees_with_the_caches_wins() {
    // The caches still hold every pod Ready; the fresh read sees web-1 NotReady: no step.
    let caches = caches_of("2-stepped-4", initialized);
    let (api, server) = mock_cluster(
        Scope::default(),
        vec![
            get(GET_WEB, object("2-stepped-4", initialized)),
            set_pods("demo", "app=web", fixture_body("3-web1-notready-pods.json")),
            patch(PATCH_WEB, 200, object("2-stepped-4", initialized)),
            post_event("demo"),
        ],
    );
    let (report, seen) = cached_pass(&caches, api, server, &PassOptions::default()).await;
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::PodNotReady));
    // The one write announces the block; the partition is not touched.
    assert!(
        !seen[2].body.to_string().contains("partition"),
        "{:?}",
        seen[2].body
    );
}

/// Moment 3 rolled back (`currentRevision` = `REV_NEW`), web-1 not Ready on `REV_OLD` below the
/// partition: a stuck pod, its `PodNotReady` already announced (the pass writes no status).
fn rolled_back(s: &mut Value) {
    initialized(s);
    s["status"]["currentRevision"] = json!(REV_NEW);
    s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
}

/// Moment 3's pods as a fresh read returns them, with web-2 (index 2) not Ready too when `web2_down`.
fn moment3_pods(web2_down: bool) -> Vec<u8> {
    let mut pods: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-pods.json")).expect("json");
    if web2_down {
        for c in pods["items"][2]["status"]["conditions"]
            .as_array_mut()
            .expect("conditions")
        {
            if c["type"] == "Ready" {
                c["status"] = json!("False");
            }
        }
    }
    serde_json::to_vec(&pods).expect("json")
}

/// web-1 as the API server answers its DELETE: the pod, terminating.
fn deleted_web1() -> Vec<u8> {
    let pods: Value = serde_json::from_slice(&moment3_pods(false)).expect("json");
    let mut pod = pods["items"][1].clone();
    pod["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:20:00Z");
    serde_json::to_vec(&pod).expect("json")
}

fn recovering() -> PassOptions {
    PassOptions {
        gates: GateOptions {
            recover_stuck_pods: true,
            ..GateOptions::default()
        },
        ..PassOptions::default()
    }
}

#[tokio::test]
async fn a_recovery_decided_from_the_caches_is_confirmed_by_a_fresh_read_then_deleted() {
    let caches = caches_of("3-web1-notready", rolled_back);
    let (api, server) = mock_cluster(
        Scope::default(),
        vec![
            get(GET_WEB, object("3-web1-notready", rolled_back)),
            set_pods("demo", "app=web", moment3_pods(false)),
            Expect {
                method: Method::DELETE,
                uri: "/api/v1/namespaces/demo/pods/web-1?".into(),
                status: 200,
                response: deleted_web1(),
            },
            post_event("demo"),
        ],
    );
    let (report, seen) = cached_pass(&caches, api, server, &recovering()).await;
    assert_eq!(report.recoveries.len(), 1);
    assert_eq!(
        report.recoveries[0].outcome,
        sts_stepper::pass::recovery::RecoveryOutcome::Deleted
    );
    assert_eq!(seen[2].method, Method::DELETE);
    assert_eq!(seen[2].body["preconditions"]["resourceVersion"], "1964");
}

#[tokio::test]
async fn a_recovery_the_fresh_read_contradicts_deletes_nothing() {
    // The caches lag: they show only web-1 down, the fresh read shows web-2 down too. Deleting web-1
    // would take a second pod down, so nothing is deleted.
    let caches = caches_of("3-web1-notready", rolled_back);
    let (api, server) = mock_cluster(
        Scope::default(),
        vec![
            get(GET_WEB, object("3-web1-notready", rolled_back)),
            set_pods("demo", "app=web", moment3_pods(true)),
        ],
    );
    let (report, seen) = cached_pass(&caches, api, server, &recovering()).await;
    assert!(seen.iter().all(|s| s.method == Method::GET), "{seen:?}");
    assert_eq!(report.recoveries.len(), 1);
    let sts_stepper::pass::recovery::RecoveryOutcome::Conflict(why) = &report.recoveries[0].outcome
    else {
        panic!("{:?}", report.recoveries[0].outcome);
    };
    assert!(why.contains("another pod is down"), "{why}");
    assert!(!report.any_errored());
}
