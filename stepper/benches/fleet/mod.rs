//! The fleet the stepper's benchmarks run on: StatefulSet `ns-<i % 100>/set-<i>` with its pods and
//! one PDB per namespace, as JSON, and a mocked API server that answers as a real one does.
#![allow(dead_code)] // each bench uses a subset

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, Response};
use jiff::Timestamp;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};

pub const PODS_PER_SET: u32 = 5;

pub fn now() -> Timestamp {
    "2026-11-23T02:00:00Z".parse().expect("time")
}

/// StatefulSet `ns-<i % 100>/set-<i>`: 5 replicas, update staged at partition 5, `extra` annotations.
pub fn set_json(i: usize, extra: &Value) -> Value {
    set_json_with(i, PODS_PER_SET, extra)
}

/// [`set_json`] with `replicas` replicas (update staged at partition `replicas`).
pub fn set_json_with(i: usize, replicas: u32, extra: &Value) -> Value {
    let mut annotations =
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/guarded": "true"});
    if let (Some(a), Some(e)) = (annotations.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": format!("set-{i}"), "namespace": format!("ns-{}", i % 100),
                     "uid": format!("uid-{i}"), "resourceVersion": "7", "generation": 2,
                     "annotations": annotations},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": format!("set-{i}")}},
                 "serviceName": "s", "template": {"metadata": {"labels": {"app": format!("set-{i}")}}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": replicas}}},
        "status": {"replicas": replicas, "observedGeneration": 2, "readyReplicas": replicas,
                   "availableReplicas": replicas, "currentReplicas": replicas,
                   "updatedReplicas": 0, "currentRevision": format!("set-{i}-a"),
                   "updateRevision": format!("set-{i}-b")}
    })
}

pub fn pod_json(i: usize, ordinal: u32) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("set-{i}-{ordinal}"), "namespace": format!("ns-{}", i % 100),
                     "labels": {"app": format!("set-{i}"), "controller-revision-hash": format!("set-{i}-a")},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                          "name": format!("set-{i}"), "uid": format!("uid-{i}"),
                                          "controller": true}]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-23T01:00:00Z"}]}
    })
}

pub fn pdb_json(ns: usize) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget", "namespace": format!("ns-{ns}")},
        "spec": {"selector": {"matchLabels": {"tier": "db"}}, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 5, "desiredHealthy": 4,
                   "expectedPods": 5, "observedGeneration": 1}
    })
}

pub fn list_body(kind: &str, items: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
                               "items": items}),
    )
    .expect("json")
}

/// What the mocked API server of [`candidate_reads`] answered: requests and response bytes, by kind.
#[derive(Default)]
pub struct Served {
    pub requests: AtomicUsize,
    pub pod_requests: AtomicUsize,
    pub lists_all_pods: AtomicUsize,
    pub bytes: AtomicUsize,
    pub pod_bytes: AtomicUsize,
}

/// A mocked API server over `sets` StatefulSets with 5 pods each, answering as a real one: the
/// StatefulSet list; pods of one namespace filtered by `labelSelector=app=set-<i>`; every pod for a
/// cluster-wide pod LIST; the PDB of one namespace.
pub fn fleet_client(
    sets: Arc<Vec<u8>>,
    pods: Arc<Vec<Value>>,
    served: Arc<Served>,
    rt: &tokio::runtime::Runtime,
) -> Client {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    rt.spawn(async move {
        while let Some((req, send)) = handle.next_request().await {
            let path = req.uri().path().to_string();
            let query = req.uri().query().unwrap_or("").to_string();
            let body: Vec<u8> = if path.ends_with("/statefulsets") {
                sets.as_ref().clone()
            } else if path == "/api/v1/pods" {
                served.lists_all_pods.fetch_add(1, Ordering::Relaxed);
                list_body("PodList", pods.as_ref().clone())
            } else if path.ends_with("/pods") {
                let app = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("labelSelector=app%3D"))
                    .expect("a pod read by selector");
                let i: usize = app
                    .strip_prefix("set-")
                    .and_then(|n| n.parse().ok())
                    .expect("set index");
                let items =
                    pods[i * PODS_PER_SET as usize..(i + 1) * PODS_PER_SET as usize].to_vec();
                list_body("PodList", items)
            } else if path.ends_with("/poddisruptionbudgets") {
                let ns: usize = path
                    .split('/')
                    .nth(5)
                    .and_then(|n| n.strip_prefix("ns-"))
                    .and_then(|n| n.parse().ok())
                    .expect("namespace");
                list_body("PodDisruptionBudgetList", vec![pdb_json(ns)])
            } else {
                panic!("unexpected request {} {}", req.method(), req.uri())
            };
            served.requests.fetch_add(1, Ordering::Relaxed);
            served.bytes.fetch_add(body.len(), Ordering::Relaxed);
            if path.ends_with("/pods") {
                served.pod_requests.fetch_add(1, Ordering::Relaxed);
                served.pod_bytes.fetch_add(body.len(), Ordering::Relaxed);
            }
            send.send_response(
                Response::builder()
                    .body(Body::from(body))
                    .expect("response"),
            );
        }
    });
    let _runtime = rt.enter();
    Client::new(service, "default")
}
