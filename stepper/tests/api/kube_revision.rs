//! The ControllerRevision GET of `on-failure: rollback` (issue 36) through kube-rs against a mocked API
//! server with the real bodies of `fixtures/api/`: one GET by name, as stored (`data` the strategic
//! merge patch of the template); a revision that is gone is `None`; a 403 names the missing rule and
//! where it is granted; `watch`'s cached cluster and the leader's wrapper send it to the API server,
//! even on a replica that does not lead (a read).

use std::sync::Arc;

use crate::common::*;
use crate::mock_api::*;
use http::{Request, Response};
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::client::Body;
use kube::{Api, Client};
use serde_json::{Value, json};
use sts_stepper::cluster::caches::{CachedCluster, Caches};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::cluster::{Cluster, ClusterError};
use sts_stepper::config::Keys;
use sts_stepper::leader::cluster::LeaderCluster;
use sts_stepper::leader::{LeaderConfig, spawn};
use tower_test::mock;

/// The URI kube-rs GETs ControllerRevision `demo/name` at.
fn revision_uri(name: &str) -> String {
    format!("/apis/apps/v1/namespaces/demo/controllerrevisions/{name}")
}

/// ControllerRevision `name` of the `2-stepped-4` moment as a GET returns it (the LIST's item with
/// its kind).
fn revision_body(name: &str) -> Vec<u8> {
    let items = fixture_list::<Value>("2-stepped-4-controllerrevisions.json");
    let mut item = items
        .into_iter()
        .find(|r| r["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{name} in the fixture"));
    item["kind"] = json!("ControllerRevision");
    item["apiVersion"] = json!("apps/v1");
    serde_json::to_vec(&item).expect("json")
}

#[tokio::test]
async fn one_get_reads_the_revision_as_the_api_server_stores_it() {
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![get(&revision_uri(REV_OLD), revision_body(REV_OLD))],
    );
    let got = cluster
        .get_controller_revision("demo", REV_OLD)
        .await
        .expect("read")
        .expect("found");
    drop(cluster);
    let seen = server.await.expect("script: one GET");
    assert_eq!(seen.len(), 1);
    assert_eq!(got.metadata.name.as_deref(), Some(REV_OLD));
    assert_eq!(got.revision, 1);
    let data = &got.data.expect("data").0;
    let template = &data["spec"]["template"];
    assert_eq!(template["$patch"], "replace", "as Kubernetes stores it");
    assert_eq!(template["spec"]["containers"][0]["image"], "nginx:1.25");
}

#[tokio::test]
async fn a_revision_that_is_gone_is_none() {
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![expect(
            http::Method::GET,
            &revision_uri("web-5c8f9b7d6"),
            404,
            status_body(
                404,
                "NotFound",
                "controllerrevisions.apps \"web-5c8f9b7d6\" not found",
            ),
        )],
    );
    let got = cluster
        .get_controller_revision("demo", "web-5c8f9b7d6")
        .await;
    drop(cluster);
    server.await.expect("script");
    assert_eq!(got, Ok(None));
}

#[tokio::test]
async fn a_forbidden_read_names_the_missing_rule_and_where_it_is_granted() {
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![expect(
            http::Method::GET,
            &revision_uri(REV_OLD),
            403,
            status_body(
                403,
                "Forbidden",
                "controllerrevisions.apps \"web-696dc66855\" is forbidden: User \
                 \"system:serviceaccount:sts-safe-rollout:sts-stepper\" cannot get resource \
                 \"controllerrevisions\" in API group \"apps\" in the namespace \"demo\"",
            ),
        )],
    );
    let got = cluster.get_controller_revision("demo", REV_OLD).await;
    drop(cluster);
    server.await.expect("script");
    let Err(e @ ClusterError::Refused { code: 403, .. }) = &got else {
        panic!("{got:?}");
    };
    assert_eq!(e.reason(), "Refused");
    let text = e.to_string();
    assert!(
        text.starts_with("get controllerrevision demo/web-696dc66855: "),
        "{text}"
    );
    assert!(
        text.contains("cannot get resource \"controllerrevisions\" in API group \"apps\""),
        "{text}"
    );
    assert!(text.contains("deploy/stepper/base/rbac.yaml"), "{text}");
}

#[tokio::test]
async fn the_cached_cluster_and_a_replica_that_does_not_lead_get_it_from_the_api_server() {
    let keys = Arc::new(Keys::default());
    let set = fixture_list::<StatefulSet>("2-stepped-4-statefulsets.json")[0].clone();
    let caches = Caches::listed(
        vec![set],
        fixture_list::<Pod>("2-stepped-4-pods.json"),
        fixture_list::<PodDisruptionBudget>("2-stepped-4-pdbs.json"),
        &keys,
    );
    let (api, server) = mock_cluster(
        Scope::default(),
        vec![
            get(&revision_uri(REV_OLD), revision_body(REV_OLD)),
            get(&revision_uri(REV_NEW), revision_body(REV_NEW)),
        ],
    );
    let cached = CachedCluster {
        caches: &caches,
        api: &api,
    };
    assert!(cached.cached());
    let old = cached.get_controller_revision("demo", REV_OLD).await;
    // An election whose API server never answers: this replica never leads, and still reads.
    let (lease_service, _lease_api) = mock::pair::<Request<Body>, Response<Body>>();
    let leases: Api<Lease> = Api::namespaced(
        Client::new(lease_service, "sts-safe-rollout"),
        "sts-safe-rollout",
    );
    let (leadership, election) =
        spawn(leases, LeaderConfig::new("sts-stepper", "replica-b")).expect("valid config");
    assert!(!leadership.is_leader());
    let led = LeaderCluster {
        inner: &cached,
        leadership: &leadership,
    };
    let new = led.get_controller_revision("demo", REV_NEW).await;
    drop(api);
    let seen = server.await.expect("script: two GETs");
    assert_eq!(seen.len(), 2);
    let name = |r: Result<Option<ControllerRevision>, ClusterError>| {
        r.expect("read").expect("found").metadata.name
    };
    assert_eq!(name(old).as_deref(), Some(REV_OLD));
    assert_eq!(name(new).as_deref(), Some(REV_NEW));
    election.abort();
}
