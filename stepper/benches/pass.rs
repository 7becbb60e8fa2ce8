//! One pass at scale: the pure plan over 10,000 StatefulSets / 50,000 pods held in memory, a whole
//! pass through the kube-rs client against a mocked API server (JSON decoding included), and the
//! reads of a `once` pass with 0, 1, 10 and 100 candidates among 10,000 StatefulSets / 50,000 pods,
//! counted at the mocked API server in requests and response bytes (issue 12 item 6). The `watch`
//! pass from caches is `benches/watch_pass.rs`.
//!
//! Run: `cargo bench -p sts-stepper --bench pass` (timings and counts); the counts alone, in the
//! debug profile: `cargo test -p sts-stepper --bench pass -- --nocapture`.

mod fleet;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use fleet::*;
use http::{Request, Response};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::cluster::caches::{CachedCluster, Caches};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::config::Keys;
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::pass::{PassOptions, run_pass};
use sts_stepper::plan::{Snapshot, plan};

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
            .map(|v| Arc::new(serde_json::from_value::<StatefulSet>(v).expect("sts")))
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
    //    writes nothing, has no candidate and reads only the StatefulSet list, whatever the number of
    //    sets.
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
            requests, 1,
            "no candidate: the StatefulSet list only, whatever the number of StatefulSets"
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
    candidate_reads(c, &rt);
}

/// 3. The reads of a `once` pass with `candidates` candidates among 10,000 StatefulSets / 50,000
///    pods: every other set is paused (announced); each candidate has a pod NotReady (announced), so
///    the pass reads and writes nothing. Prints requests and response bytes, and checks the targets:
///    no cluster-wide pod LIST, pod bytes ∝ candidates, ≤ 5 % of one cluster-wide pod LIST at 1.
fn candidate_reads(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    const SETS: usize = 10_000;
    let paused =
        json!({"safe-rollout.dev/paused": "true", "safe-rollout.dev/blocked-reason": "Paused"});
    let not_ready = json!({"safe-rollout.dev/blocked-reason": "PodNotReady"});
    let (_, all_pods, _) = lists(SETS, &paused);
    let mut pods = all_pods;
    let all_pod_bytes = list_body("PodList", pods.clone()).len();
    println!(
        "one cluster-wide pod LIST at {SETS} StatefulSets / {} pods: {all_pod_bytes} bytes",
        pods.len()
    );
    for candidates in [0usize, 1, 10, 100] {
        // The candidates are spread over the namespaces: set i lives in ns-(i % 100).
        let sets: Vec<Value> = (0..SETS)
            .map(|i| set_json(i, if i < candidates { &not_ready } else { &paused }))
            .collect();
        for (i, pod) in pods.iter_mut().enumerate() {
            let ready = if i / (PODS_PER_SET as usize) < candidates && i % 5 == 1 {
                "False"
            } else {
                "True"
            };
            pod["status"]["conditions"][0]["status"] = json!(ready);
        }
        let served = Arc::new(Served::default());
        let client = fleet_client(
            Arc::new(list_body("StatefulSetList", sets)),
            Arc::new(pods.clone()),
            served.clone(),
            rt,
        );
        let cluster = KubeCluster::new(client, Scope::default(), None);
        let report = rt
            .block_on(run_pass(&cluster, &PassOptions::default(), now()))
            .expect("pass");
        let blocked = report
            .sets
            .iter()
            .filter(|s| {
                s.blocked_reason() == Some(sts_stepper::model::reasons::Reason::PodNotReady)
            })
            .count();
        assert_eq!(blocked, candidates, "each candidate judged on its own pods");
        let (requests, bytes) = (
            served.requests.load(Ordering::Relaxed),
            served.bytes.load(Ordering::Relaxed),
        );
        let (pod_requests, pod_bytes) = (
            served.pod_requests.load(Ordering::Relaxed),
            served.pod_bytes.load(Ordering::Relaxed),
        );
        println!(
            "once, {candidates} candidates: {requests} requests, {bytes} response bytes; pods: \
             {pod_requests} requests, {pod_bytes} bytes ({:.3} % of one cluster-wide pod LIST)",
            100.0 * pod_bytes as f64 / all_pod_bytes as f64
        );
        assert_eq!(served.lists_all_pods.load(Ordering::Relaxed), 0);
        assert_eq!(pod_requests, candidates, "one pod read per candidate");
        if candidates == 0 {
            assert_eq!(requests, 1);
        }
        if candidates == 1 {
            assert!(
                pod_bytes * 20 <= all_pod_bytes,
                "≤ 5 % of a cluster-wide pod LIST"
            );
        }
        // The same pass in `watch` after warm-up: the stores hold what the first LISTs returned.
        let typed_sets: Vec<StatefulSet> = (0..SETS)
            .map(|i| {
                let extra = if i < candidates { &not_ready } else { &paused };
                serde_json::from_value(set_json(i, extra)).expect("sts")
            })
            .collect();
        let typed_pods: Vec<Pod> = pods
            .iter()
            .map(|p| serde_json::from_value(p.clone()).expect("pod"))
            .collect();
        let typed_pdbs: Vec<PodDisruptionBudget> = (0..100)
            .map(|n| serde_json::from_value(pdb_json(n)).expect("pdb"))
            .collect();
        let caches = Caches::listed(
            typed_sets,
            typed_pods,
            typed_pdbs,
            &Arc::new(Keys::default()),
        );
        let before = served.requests.load(Ordering::Relaxed);
        let cached = CachedCluster {
            caches: &caches,
            api: &cluster,
        };
        let report = rt
            .block_on(run_pass(&cached, &PassOptions::default(), now()))
            .expect("pass");
        assert_eq!(report.sets.len(), SETS);
        let watch_requests = served.requests.load(Ordering::Relaxed) - before;
        println!(
            "watch after warm-up, {candidates} candidates: {watch_requests} requests, 0 bytes"
        );
        assert_eq!(watch_requests, 0, "steady state: no LIST per pass");
        if candidates == 100 {
            c.bench_function(
                "once over mocked API, 10000 statefulsets, 100 candidates",
                |b| {
                    b.iter(|| {
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
