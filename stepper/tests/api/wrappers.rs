//! A wrapper states only what it changes (issue 44 item 6): [`LeaderCluster`] states only
//! `before_write`, and still every write of the `Cluster` trait — the four a pass sends — is refused
//! while this replica does not lead, nothing reaching the cluster behind it, while every read passes.

use http::{Request, Response};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::client::Body;
use kube::core::Selector;
use kube::{Api, Client};
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_stepper::cluster::{Cluster, ClusterError};
use sts_stepper::leader::cluster::LeaderCluster;
use sts_stepper::leader::{LeaderConfig, spawn};
use sts_stepper::plan::events::{EventNote, EventType};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World};
use tower_test::mock;

/// `demo/web`, 3 pods Running and Ready on v1.
fn web() -> SimCluster {
    let shape = SetShape {
        name: "web".into(),
        namespace: "demo".into(),
        replicas: 3,
        pod_management_policy: "OrderedReady".into(),
        min_ready_seconds: 0,
        image: "v1".into(),
    };
    SimCluster::new(World::new(&shape, Timing::default(), true, DEFAULT_PREFIX, 1).expect("world"))
}

/// The action a refused write names, or the outcome that was not a refusal.
fn refused<T: std::fmt::Debug>(r: Result<T, ClusterError>) -> String {
    match r {
        Err(ClusterError::NotLeader { action }) => action,
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test]
async fn a_replica_that_does_not_lead_sends_no_write_of_any_kind_and_reads_everything() {
    // An election whose API server never answers: this replica never leads.
    let (lease_service, _lease_api) = mock::pair::<Request<Body>, Response<Body>>();
    let leases: Api<Lease> = Api::namespaced(
        Client::new(lease_service, "sts-safe-rollout"),
        "sts-safe-rollout",
    );
    let (leadership, election) =
        spawn(leases, LeaderConfig::new("sts-stepper", "replica-b")).expect("valid config");
    assert!(!leadership.is_leader());
    let sim = web();
    let (uid, version) = {
        let pods = sim.world().typed_pods();
        let m = &pods[0].metadata;
        (
            m.uid.clone().expect("uid"),
            m.resource_version.clone().expect("rv"),
        )
    };
    let current = sim.world().status_str("currentRevision");
    let led = LeaderCluster {
        inner: &sim,
        leadership: &leadership,
    };

    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 0}
    ]))
    .expect("patch");
    let note = EventNote {
        reason: "Stepped".into(),
        note: "partition 3 → 2".into(),
        type_: EventType::Normal,
        action: "Step".into(),
    };
    let object = ObjectReference {
        namespace: Some("demo".into()),
        name: Some("web".into()),
        ..ObjectReference::default()
    };
    let actions = [
        refused(led.patch_statefulset("demo", "web", &patch).await),
        refused(led.delete_pod("demo", "web-0", &uid, &version).await),
        refused(led.patch_pod("demo", "web-0", &patch).await),
        refused(led.publish_event(&object, &note).await),
    ];
    assert_eq!(
        actions,
        [
            "patch statefulset demo/web",
            "delete pod demo/web-0",
            "patch pod demo/web-0",
            "publish event Stepped",
        ]
    );
    {
        let world = sim.world();
        assert!(world.writes.is_empty(), "{:?}", world.writes);
        assert!(world.events.is_empty(), "{:?}", world.events);
        assert!(world.pods.values().all(|p| p.deleted_at.is_none()));
    }

    // Every read reaches the simulated API server.
    assert_eq!(led.list_statefulsets().await.expect("list").len(), 1);
    assert_eq!(led.list_pods().await.expect("pods").len(), 3);
    let selector: Selector = [("app", "web")].into_iter().collect();
    let set_pods = led
        .list_set_pods_consistent("demo", &selector, &[])
        .await
        .expect("pods");
    assert_eq!(set_pods.len(), 3);
    assert!(
        led.get_statefulset("demo", "web")
            .await
            .expect("get")
            .is_some()
    );
    let revision = led
        .get_controller_revision("demo", &current)
        .await
        .expect("get")
        .expect("found");
    assert_eq!(revision.metadata.name, Some(current));
    assert!(led.may_delete_pods("demo").await.expect("review"));
    assert!(!led.cached());
    election.abort();
}
