//! Builders for the `OwnerNotHealthy` gate: `web` owned by MySQLCluster `db` and gated on its
//! `<prefix>/owner-condition`, the owner's conditions in `metav1.Condition` shape, and a MOCO
//! MySQLCluster as its API returns it.
#![allow(dead_code)] // each test crate uses a subset

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::{Value, json};
use sts_stepper::gates::OwnerProbe;

use super::plans::{annotate, key};
use super::set_json;

/// The uid of the owner `db`.
pub const OWNER_UID: &str = "uid-owner";

/// The controller ownerReference to MySQLCluster `db`, as JSON.
pub fn owner_ref_json() -> Value {
    json!({"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster", "name": "db",
           "uid": OWNER_UID, "controller": true, "blockOwnerDeletion": true})
}

/// [`owner_ref_json`] as an `OwnerReference`.
pub fn owner_ref() -> OwnerReference {
    serde_json::from_value(owner_ref_json()).expect("valid OwnerReference")
}

/// `web` (3 replicas, staged at partition 3, initialized) owned by MySQLCluster `db`, gated on
/// `condition`.
pub fn owned_set_json(condition: &str) -> Value {
    let mut v = annotate(
        set_json("web", 3, Some(3), 0),
        &[
            (&key("owner-condition"), condition),
            (&key("initialized"), "true"),
        ],
    );
    v["metadata"]["ownerReferences"] = json!([owner_ref_json()]);
    v
}

/// A condition in `metav1.Condition` shape; `og` is its `observedGeneration` (omitted when None,
/// as `omitempty` does).
pub fn cond(type_: &str, status: &str, og: Option<i64>) -> Value {
    let mut c = json!({"type": type_, "status": status,
                       "lastTransitionTime": "2026-11-23T01:00:00Z", "reason": type_, "message": ""});
    if let Some(g) = og {
        c["observedGeneration"] = json!(g);
    }
    c
}

/// A condition in `metav1.Condition` shape with its `reason` and `message`.
pub fn cond_why(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "lastTransitionTime": "2026-11-23T01:00:00Z",
           "reason": reason, "message": message})
}

/// MySQLCluster `db` at `metadata.generation` `generation` and `status.observedGeneration`
/// `status_observed` (each when given), with `conditions`.
pub fn owner_obj(
    generation: Option<i64>,
    status_observed: Option<i64>,
    conditions: Value,
) -> Value {
    let mut v = json!({"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster",
                       "metadata": {"name": "db", "namespace": "ns", "uid": OWNER_UID},
                       "status": {"conditions": conditions}});
    if let Some(g) = generation {
        v["metadata"]["generation"] = json!(g);
    }
    if let Some(o) = status_observed {
        v["status"]["observedGeneration"] = json!(o);
    }
    v
}

/// The owner, read.
pub fn found(v: Value) -> OwnerProbe {
    OwnerProbe::Found(v)
}

/// A MOCO MySQLCluster (`moco.cybozu.com/v1beta2`) as its API returns it: `metav1.Condition`s
/// Initialized, Available, Healthy, StatefulSetReady, ReconcileSuccess (MOCO sets no
/// `observedGeneration` on them and no `status.observedGeneration`; it records
/// `status.reconcileInfo.generation`).
pub fn moco_cluster(healthy: &str, reason: &str, message: &str) -> Value {
    let c = |t: &str, s: &str, r: &str, m: &str| {
        json!({"type": t, "status": s, "lastTransitionTime": "2026-11-23T00:40:12Z",
               "reason": r, "message": m})
    };
    json!({
        "apiVersion": "moco.cybozu.com/v1beta2",
        "kind": "MySQLCluster",
        "metadata": {"name": "db", "namespace": "ns", "uid": OWNER_UID, "generation": 4,
                     "resourceVersion": "918273", "creationTimestamp": "2026-11-20T09:00:00Z",
                     "finalizers": ["moco.cybozu.com/mysqlcluster"]},
        "spec": {"replicas": 3,
                 "podTemplate": {"spec": {"containers": [{"name": "mysqld",
                                                          "image": "ghcr.io/cybozu-go/moco/mysql:8.4.3"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "mysql-data"},
                                           "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}]},
        "status": {
            "conditions": [
                c("Initialized", "True", "Initialized", ""),
                c("Available", "True", "Available", ""),
                c("Healthy", healthy, reason, message),
                c("StatefulSetReady", "True", "StatefulSetReady", ""),
                c("ReconcileSuccess", "True", "ReconcileSuccess", "")
            ],
            "currentPrimaryIndex": 0,
            "syncedReplicas": 3,
            "errantReplicas": 0,
            "backup": {},
            "reconcileInfo": {"lastReconcileTime": "2026-11-23T01:19:30Z", "generation": 4,
                              "reconcileVersion": 1}
        }
    })
}
