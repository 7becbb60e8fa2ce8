//! The in-cluster stepper's signs of life that `status` judges its records by: its HA Lease's
//! `renewTime` and its CronJob's `lastSuccessfulTime`, from a mocked API server answering real bodies
//! (the fixtures' 404 and 403), and what a person who may not read them is told.

use crate::common::*;
use crate::mock_api::*;
use serde_json::json;
use sts_stepper::commands::heartbeats;

const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/sts-safe-rollout/leases/sts-stepper";
const CRONJOB: &str = "/apis/batch/v1/namespaces/sts-safe-rollout/cronjobs/sts-stepper";

#[tokio::test]
async fn the_stepper_s_signs_of_life_are_its_lease_and_its_cronjob() {
    let lease = serde_json::to_vec(
        &json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "sts-stepper", "namespace": "sts-safe-rollout"},
        "spec": {"holderIdentity": "sts-stepper-7d9f-abc", "leaseDurationSeconds": 15,
                 "renewTime": "2026-11-23T01:19:58.123456Z"}}),
    )
    .expect("json");
    let (client, server) = mock_client(vec![
        get(LEASE, lease),
        expect(
            http::Method::GET,
            CRONJOB,
            404,
            fixture_body("errors/404-not-found.json"),
        ),
    ]);
    let (beats, _) = heartbeats(&client, "sts-safe-rollout").await;
    drop(client);
    server.await.expect("script");
    assert_eq!(beats.len(), 1);
    assert_eq!(
        beats[0].source,
        "Lease sts-safe-rollout/sts-stepper renewed"
    );
    assert_eq!(beats[0].at.to_string(), "2026-11-23T01:19:58.123456Z");

    let cronjob = serde_json::to_vec(&json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "sts-stepper", "namespace": "sts-safe-rollout"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
        "status": {"lastScheduleTime": "2026-11-23T01:19:00Z", "lastSuccessfulTime": "2026-11-23T01:19:07Z"}}))
    .expect("json");
    let (client, server) = mock_client(vec![
        expect(
            http::Method::GET,
            LEASE,
            404,
            fixture_body("errors/404-not-found.json"),
        ),
        get(CRONJOB, cronjob),
    ]);
    let (beats, _) = heartbeats(&client, "sts-safe-rollout").await;
    drop(client);
    server.await.expect("script");
    assert_eq!(beats.len(), 1);
    assert_eq!(
        beats[0].source,
        "CronJob sts-safe-rollout/sts-stepper last succeeded"
    );
}

#[tokio::test]
async fn a_person_who_may_not_read_the_stepper_s_namespace_is_told_so() {
    let forbidden = fixture_body("errors/403-forbidden-delete-pod.json");
    let (client, server) = mock_client(vec![
        expect(http::Method::GET, LEASE, 403, forbidden.clone()),
        expect(http::Method::GET, CRONJOB, 403, forbidden),
    ]);
    let (beats, why) = heartbeats(&client, "sts-safe-rollout").await;
    drop(client);
    server.await.expect("script");
    assert!(beats.is_empty());
    assert!(
        why.starts_with("Lease sts-safe-rollout/sts-stepper: ")
            && why.contains("; CronJob sts-safe-rollout/sts-stepper: ")
            && why.contains("forbidden")
            && why.ends_with("(the stepper's namespace is --stepper-namespace)"),
        "{why}"
    );
}
