//! Stuck-pod recovery against a mocked API server: the exact DELETE with its uid and resourceVersion
//! preconditions and the `RecoveredStuckPod` Event; a 403 without the opt-in RBAC names the missing
//! rule; a failed precondition (409) deletes nothing; `--dry-run` and recovery off send no DELETE.

use crate::common::*;
use crate::mock_api::{Expect, Seen, expect, mock_client, post_event, status_body};
use http::Method;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::commands::status_table;
use sts_stepper::gates::GateOptions;
use sts_stepper::pass::PodReads;
use sts_stepper::pass::recovery::RecoveryOutcome;
use sts_stepper::pass::{PassOptions, PassReport, run_pass};

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
const PODS_ALL: &str = "/api/v1/pods?";
const PDBS_ALL: &str = "/apis/policy/v1/poddisruptionbudgets?";
/// A pass reads only its candidates' pods: `demo/web`'s, by its selector, and the PDBs of `demo`.
const WEB_PODS: &str = "/api/v1/namespaces/demo/pods?&labelSelector=app%3Dweb";
const DEMO_PDBS: &str = "/apis/policy/v1/namespaces/demo/poddisruptionbudgets?";
const PATCH_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";
const DELETE_WEB1: &str = "/api/v1/namespaces/demo/pods/web-1?";
/// web-1 in moment 3: not Ready since 01:10:46 on `REV_OLD`.
const WEB1_UID: &str = "97687683-4102-4573-bd17-1a071d71b80c";
const WEB1_RV: &str = "1964";

/// Moment 3 after a roll-forward went bad and was rolled back: `currentRevision` is now `REV_NEW` (the
/// revision every pod below the partition should run), so web-1, not Ready on `REV_OLD` below the
/// partition, is stuck. The set already announced `PodNotReady`, so the pass writes no status.
fn stuck_sets() -> Vec<u8> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-statefulsets.json")).expect("json");
    let set = &mut list["items"][0];
    set["status"]["currentRevision"] = json!(REV_NEW);
    let notes = &mut set["metadata"]["annotations"];
    notes["safe-rollout.dev/initialized"] = json!("true");
    notes["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    serde_json::to_vec(&list).expect("json")
}

/// The reads of a pass (`demo/web` is the one set whose pods are read) or, with `scope`, of `status` over
/// the whole scope (every pod, every PDB).
fn reads(scope: bool) -> Vec<Expect> {
    let (pods, pdbs) = if scope {
        (PODS_ALL, PDBS_ALL)
    } else {
        (WEB_PODS, DEMO_PDBS)
    };
    vec![
        expect(Method::GET, STS_ALL, 200, stuck_sets()),
        expect(
            Method::GET,
            pods,
            200,
            fixture_body("3-web1-notready-pods.json"),
        ),
        expect(
            Method::GET,
            pdbs,
            200,
            fixture_body("3-web1-notready-pdbs.json"),
        ),
    ]
}

fn lists() -> Vec<Expect> {
    reads(false)
}

fn deleted_web1() -> Vec<u8> {
    let pods: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-pods.json")).expect("json");
    let mut pod = pods["items"][1].clone();
    pod["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:20:00Z");
    serde_json::to_vec(&pod).expect("json")
}

fn recovering(dry_run: bool) -> PassOptions {
    PassOptions {
        gates: GateOptions {
            recover_stuck_pods: true,
            ..GateOptions::default()
        },
        dry_run,
        ..PassOptions::default()
    }
}

async fn pass(opts: PassOptions, script: Vec<Expect>) -> (PassReport, Vec<Seen>) {
    let (client, server) = mock_client(script);
    let cluster = KubeCluster::new(client, Scope::default(), None);
    let report = run_pass(&cluster, &opts, now()).await.expect("pass");
    drop(cluster);
    (report, server.await.expect("mock API server script"))
}

#[tokio::test]
async fn a_stuck_pod_is_deleted_with_uid_and_resource_version_preconditions() {
    let mut script = lists();
    script.push(expect(Method::DELETE, DELETE_WEB1, 200, deleted_web1()));
    script.push(post_event("demo"));
    let (report, seen) = pass(recovering(false), script).await;
    assert_eq!(
        seen[3].body,
        json!({"preconditions": {"uid": WEB1_UID, "resourceVersion": WEB1_RV}}),
        "the DELETE body pins the pod seen"
    );
    let event = &seen[4].body;
    assert_eq!(event["reason"], "RecoveredStuckPod");
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["name"], "web");
    let note = event["note"].as_str().expect("note");
    for part in ["web-1", REV_OLD, REV_NEW, "554s"] {
        assert!(note.contains(part), "{part} in {note:?}");
    }
    assert_eq!(report.recoveries.len(), 1);
    assert_eq!(report.recoveries[0].outcome, RecoveryOutcome::Deleted);
    assert_eq!(report.recoveries[0].pod.ordinal, 1);
    assert!(!report.any_errored());
}

#[tokio::test]
async fn forbidden_without_the_opt_in_rbac_names_the_missing_rule() {
    let mut script = lists();
    script.push(expect(
        Method::DELETE,
        DELETE_WEB1,
        403,
        std::fs::read(fixture_path("errors/403-forbidden-delete-pod.json")).expect("fixture"),
    ));
    let (report, seen) = pass(recovering(false), script).await;
    assert_eq!(seen.len(), 4, "no Event after a refused DELETE");
    let RecoveryOutcome::Failed(e) = &report.recoveries[0].outcome else {
        panic!("expected Failed, got {:?}", report.recoveries[0].outcome)
    };
    assert_eq!(e.code(), Some(403));
    let msg = e.to_string();
    for part in [
        "delete pod demo/web-1",
        "cannot delete resource \"pods\"",
        "missing RBAC rule: verb \"delete\", resource \"pods\"",
        "deploy/stepper/recovery/",
    ] {
        assert!(msg.contains(part), "{part} in {msg:?}");
    }
    assert!(
        report.any_errored(),
        "a refused DELETE fails the pass (exit 1)"
    );
}

#[tokio::test]
async fn a_failed_precondition_deletes_nothing_and_is_no_error() {
    let mut script = lists();
    script.push(expect(
        Method::DELETE,
        DELETE_WEB1,
        409,
        status_body(
            409,
            "Conflict",
            "Operation cannot be fulfilled on Pod \"web-1\": Precondition failed: UID in precondition: \
             97687683-4102-4573-bd17-1a071d71b80c, UID in object meta: 11111111-2222",
        ),
    ));
    let (report, seen) = pass(recovering(false), script).await;
    assert_eq!(seen.len(), 4, "no Event for a pod not deleted");
    assert!(
        matches!(&report.recoveries[0].outcome, RecoveryOutcome::Conflict(m) if m.contains("Precondition failed")),
        "{:?}",
        report.recoveries[0].outcome
    );
    assert!(!report.any_errored());
}

#[tokio::test]
async fn dry_run_reports_what_it_would_delete_and_sends_no_delete() {
    let (report, seen) = pass(recovering(true), lists()).await;
    assert!(seen.iter().all(|s| s.method == Method::GET));
    assert_eq!(report.recoveries[0].outcome, RecoveryOutcome::WouldDelete);
    assert_eq!(report.recoveries[0].pod.name, "web-1");
}

/// Without `--recover-stuck-pods` the stuck pod is not deleted, but recorded on the set for GitOps
/// tools (`degraded-reason`, Degraded) in the pass's status write, with one Warning Event.
#[tokio::test]
async fn recovery_off_by_default_sends_no_delete_and_records_the_stuck_pod() {
    let mut stored: Value = serde_json::from_slice(&stuck_sets()).expect("json");
    let mut stored = stored["items"][0].take();
    stored["kind"] = json!("StatefulSet");
    stored["apiVersion"] = json!("apps/v1");
    let mut script = lists();
    script.push(expect(
        Method::PATCH,
        PATCH_WEB,
        200,
        serde_json::to_vec(&stored).expect("json"),
    ));
    script.push(post_event("demo"));
    let (report, seen) = pass(PassOptions::default(), script).await;
    assert!(seen.iter().all(|s| s.method != Method::DELETE));
    assert!(report.recoveries.is_empty());
    let degraded = format!(
        "StuckPod: web-1 not Ready for more than 300s on revision {REV_OLD}, its ordinal runs \
         {REV_NEW}; not deleted: recovery off (--recover-stuck-pods)"
    );
    assert_eq!(
        seen[3].body,
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason",
                "value": degraded}])
    );
    assert_eq!(seen[4].body["reason"], "RolloutDegraded");
    assert_eq!(seen[4].body["type"], "Warning");
    assert_eq!(seen[4].body["note"], degraded.as_str());
}

#[tokio::test]
async fn status_shows_the_stuck_pod_and_whether_recovery_is_on() {
    for (enabled, want) in [
        (true, "deleted this pass"),
        (false, "not deleted: recovery off"),
    ] {
        let (client, server) = mock_client(reads(true));
        let cluster = KubeCluster::new(client, Scope::default(), None);
        let opts = PassOptions {
            pod_reads: PodReads::Scope,
            ..recovering(false)
        };
        let opts = PassOptions {
            gates: GateOptions {
                recover_stuck_pods: enabled,
                ..opts.gates
            },
            ..opts
        };
        let out = status_table(&cluster, &opts, None, now())
            .await
            .expect("status");
        drop(cluster);
        let seen = server.await.expect("script");
        assert!(
            seen.iter().all(|s| s.method == Method::GET),
            "status writes nothing"
        );
        let on = if enabled {
            "with --recover-stuck-pods"
        } else {
            "recovery off"
        };
        assert!(out.contains(&format!("Stuck pods ({on}")), "{out}");
        let line = out
            .lines()
            .find(|l| l.contains("demo/web web-1"))
            .unwrap_or_else(|| panic!("no stuck line in {out}"));
        assert!(
            line.contains(&format!(
                "not Ready for 554s on revision {REV_OLD}, its ordinal runs {REV_NEW}"
            )) && line.contains(want),
            "{line}"
        );
    }
}
