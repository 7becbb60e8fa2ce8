//! Only the leader writes (issue 12 item 3): a pass through [`LeaderCluster`] reads as any pass, and
//! sends no write at all while this replica does not hold the Lease; the set is then `NotLeader`, not
//! an API error (issue 29 item 5).

use crate::common::*;
use crate::mock_api;
use http::{Method, Request, Response};
use kube::client::Body;
use kube::{Api, Client};
use serde_json::Value;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::leader::cluster::LeaderCluster;
use sts_stepper::leader::{LeaderConfig, Leadership, spawn};
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use sts_stepper::serve::metrics::Metrics;
use tower_test::mock;

/// The reads of a pass over the staged moment, where `demo/web` is the one candidate.
fn staged_reads() -> Vec<mock_api::Expect> {
    mock_api::script(
        vec![mock_api::get(
            mock_api::STS_ALL,
            fixture_body("1-staged-statefulsets.json"),
        )],
        mock_api::web_candidate_reads(
            fixture_body("1-staged-pods.json"),
            fixture_body("1-staged-pdbs.json"),
        ),
    )
}

#[tokio::test]
async fn a_replica_without_the_lease_reads_but_writes_nothing() {
    // An election whose API server never answers: this replica never leads.
    let (lease_service, _lease_api) = mock::pair::<Request<Body>, Response<Body>>();
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(
        Client::new(lease_service, "sts-safe-rollout"),
        "sts-safe-rollout",
    );
    let (leadership, election) =
        spawn(leases, LeaderConfig::new("sts-stepper", "replica-b")).expect("valid config");
    assert!(!leadership.is_leader());
    let (cluster, server) = mock_api::mock_cluster(Scope::default(), staged_reads());
    let guarded = LeaderCluster {
        inner: &cluster,
        leadership: &leadership,
    };
    let report = run_pass(&guarded, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    let seen = server.await.expect("script: the reads, and no write");
    assert!(seen.iter().all(|s| s.method == Method::GET));
    let web = &report.sets[0];
    // Not an API error: its own outcome, no error, nothing blocked, nothing counted.
    assert_eq!(
        web.outcome,
        Outcome::NotLeader("patch statefulset demo/web".into())
    );
    assert_eq!(web.error, None);
    assert_eq!(web.error_reason(), None);
    assert_eq!(web.blocked_reason(), None);
    assert!(web.news, "logged at INFO");
    assert!(!report.any_errored(), "`once` would exit 0");
    let metrics = Metrics::new();
    metrics.observe(&report, 0.1, 1.0);
    let text = metrics.encode();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("sts_safe_rollout_errors_total{")),
        "{text}"
    );
    assert!(text.contains(r#"sts_safe_rollout_passes_total{result="ok"} 1"#));
    election.abort();
}

#[tokio::test]
async fn the_sole_replica_steps() {
    let leadership = Leadership::sole();
    let mut stored: Value =
        serde_json::from_slice(&fixture_body("1-staged-statefulsets.json")).expect("json");
    let mut set = stored["items"][0].take();
    set["kind"] = "StatefulSet".into();
    set["apiVersion"] = "apps/v1".into();
    set["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 4.into();
    let script = mock_api::script(
        staged_reads(),
        [
            mock_api::patch(
                mock_api::PATCH_WEB,
                200,
                serde_json::to_vec(&set).expect("json"),
            ),
            mock_api::post_event("demo"),
        ],
    );
    let (cluster, server) = mock_api::mock_cluster(Scope::default(), script);
    let guarded = LeaderCluster {
        inner: &cluster,
        leadership: &leadership,
    };
    let report = run_pass(&guarded, &PassOptions::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    server.await.expect("script");
    assert_eq!(report.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
}
