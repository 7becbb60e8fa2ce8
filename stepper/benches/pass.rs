//! One pass at scale: the pure plan over 10,000 StatefulSets / 50,000 pods held in memory, and a
//! whole pass through the kube-rs client against a mocked API server (JSON decoding included), which
//! also counts the API requests a pass issues for 10 → 10,000 StatefulSets.
//!
//! Run: `cargo bench -p sts-stepper --bench pass`

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use http::{Request, Response};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::kube_cluster::{KubeCluster, Scope};
use sts_stepper::pass::{PassOptions, run_pass};
use sts_stepper::plan::{Snapshot, plan};

const PODS_PER_SET: u32 = 5;

fn now() -> Timestamp {
    "2026-11-23T02:00:00Z".parse().expect("time")
}

/// StatefulSet `ns-<i % 100>/set-<i>`: 5 replicas, update staged at partition 5, `extra` annotations.
fn set_json(i: usize, extra: &Value) -> Value {
    let mut annotations = json!({"safe-rollout.dev/initialized": "true"});
    if let (Some(a), Some(e)) = (annotations.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": format!("set-{i}"), "namespace": format!("ns-{}", i % 100),
                     "uid": format!("uid-{i}"), "resourceVersion": "7", "generation": 2,
                     "annotations": annotations},
        "spec": {"replicas": PODS_PER_SET, "selector": {"matchLabels": {"app": format!("set-{i}")}},
                 "serviceName": "s", "template": {"metadata": {"labels": {"app": format!("set-{i}")}}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": PODS_PER_SET}}},
        "status": {"replicas": PODS_PER_SET, "observedGeneration": 2, "readyReplicas": PODS_PER_SET,
                   "availableReplicas": PODS_PER_SET, "currentReplicas": PODS_PER_SET,
                   "updatedReplicas": 0, "currentRevision": format!("set-{i}-a"),
                   "updateRevision": format!("set-{i}-b")}
    })
}

fn pod_json(i: usize, ordinal: u32) -> Value {
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

fn pdb_json(ns: usize) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget", "namespace": format!("ns-{ns}")},
        "spec": {"selector": {"matchLabels": {"tier": "db"}}, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 5, "desiredHealthy": 4,
                   "expectedPods": 5, "observedGeneration": 1}
    })
}

fn lists(sets: usize, extra: &Value) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let s = (0..sets).map(|i| set_json(i, extra)).collect();
    let p = (0..sets)
        .flat_map(|i| (0..PODS_PER_SET).map(move |o| pod_json(i, o)))
        .collect();
    let b = (0..100.min(sets)).map(pdb_json).collect();
    (s, p, b)
}

fn snapshot(sets: usize) -> Snapshot {
    let (s, p, b) = lists(sets, &json!({}));
    Snapshot {
        statefulsets: s
            .into_iter()
            .map(|v| serde_json::from_value::<StatefulSet>(v).expect("sts"))
            .collect(),
        pods: p
            .into_iter()
            .map(|v| serde_json::from_value::<Pod>(v).expect("pod"))
            .collect(),
        pdbs: b
            .into_iter()
            .map(|v| serde_json::from_value(v).expect("pdb"))
            .collect(),
        ..Snapshot::default()
    }
}

fn list_body(kind: &str, items: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
                               "items": items}),
    )
    .expect("json")
}

/// A mocked API server answering LISTs from prepared bodies and counting every request.
fn mock_client(
    bodies: Arc<[Vec<u8>; 3]>,
    count: Arc<AtomicUsize>,
    rt: &tokio::runtime::Runtime,
) -> Client {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    rt.spawn(async move {
        while let Some((req, send)) = handle.next_request().await {
            count.fetch_add(1, Ordering::Relaxed);
            let path = req.uri().path().to_string();
            let body = if path.ends_with("/statefulsets") {
                bodies[0].clone()
            } else if path.ends_with("/pods") {
                bodies[1].clone()
            } else if path.ends_with("/poddisruptionbudgets") {
                bodies[2].clone()
            } else {
                panic!("unexpected request {} {}", req.method(), req.uri())
            };
            send.send_response(
                Response::builder()
                    .body(Body::from(body))
                    .expect("response"),
            );
        }
    });
    let _runtime = rt.enter(); // the client's buffer task needs a runtime
    Client::new(service, "default")
}

fn bench(c: &mut Criterion) {
    let opts = GateOptions::default();

    // 1. The decision alone: 10,000 StatefulSets, 50,000 pods, 100 PDBs in memory.
    let snap = snapshot(10_000);
    let plans = plan(&snap, &opts, now());
    assert!(
        plans
            .iter()
            .all(|p| matches!(p.verdict, Verdict::Step { from: 5, to: 4, .. }))
    );
    c.bench_function("decide 10000 statefulsets / 50000 pods", |b| {
        b.iter(|| black_box(plan(black_box(&snap), &opts, now())))
    });

    // 2. Requests per pass against the mock: every set paused and already announced, so the pass
    //    writes nothing and only reads. The count must stay 3 whatever the number of sets.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let paused =
        json!({"safe-rollout.dev/paused": "true", "safe-rollout.dev/blocked-reason": "Paused"});
    for sets in [10usize, 1_000, 10_000] {
        let (s, p, b) = lists(sets, &paused);
        let bodies = Arc::new([
            list_body("StatefulSetList", s),
            list_body("PodList", p),
            list_body("PodDisruptionBudgetList", b),
        ]);
        let count = Arc::new(AtomicUsize::new(0));
        let cluster = KubeCluster::new(
            mock_client(bodies, count.clone(), &rt),
            Scope::default(),
            None,
        );
        let report = rt
            .block_on(run_pass(&cluster, &PassOptions::default(), now()))
            .expect("pass");
        assert_eq!(report.sets.len(), sets);
        let requests = count.load(Ordering::Relaxed);
        println!(
            "API requests per pass with {sets} StatefulSets / {} pods: {requests}",
            sets * 5
        );
        assert_eq!(
            requests, 3,
            "requests per pass must not grow with the number of StatefulSets"
        );
        if sets == 10_000 {
            c.bench_function(
                "pass over mocked API 10000 statefulsets / 50000 pods (decode + decide)",
                |bch| {
                    bch.iter(|| {
                        rt.block_on(run_pass(&cluster, &PassOptions::default(), now()))
                            .expect("pass")
                    })
                },
            );
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
