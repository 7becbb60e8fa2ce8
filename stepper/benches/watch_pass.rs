//! A `watch` pass from caches at 10,000 StatefulSets, with 1 and 100 candidates, at 50,000 and
//! 200,000 pods (issue 21 item 4): the caches as the first LIST leaves them (objects trimmed, pods
//! indexed by controller), no request to the API server.
//!
//! Run: `cargo bench -p sts-stepper --bench watch_pass`.

mod fleet;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use criterion::{Criterion, criterion_group, criterion_main};
use fleet::*;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::json;
use sts_stepper::cluster::caches::{CachedCluster, Caches};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::config::Keys;
use sts_stepper::pass::{PassOptions, run_pass};

/// A `watch` pass from caches (`caches::CachedCluster` over stores as the first LIST leaves them:
///    trimmed, pods indexed by controller) with 1 and 100 candidates among 10,000 StatefulSets with
///    `pods_per_set` pods each (5: 50,000 pods; 20: 200,000): the candidates' pods come from the
///    index, so the pass costs O(StatefulSets) + O(the candidates' pods), not O(candidates × pods).
fn cache_passes(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rt = &rt;
    const SETS: usize = 10_000;
    let paused =
        json!({"safe-rollout.dev/paused": "true", "safe-rollout.dev/blocked-reason": "Paused"});
    let not_ready = json!({"safe-rollout.dev/blocked-reason": "PodNotReady"});
    for pods_per_set in [5u32, 20] {
        for candidates in [1usize, 100] {
            let sets: Vec<StatefulSet> = (0..SETS)
                .map(|i| {
                    let extra = if i < candidates { &not_ready } else { &paused };
                    serde_json::from_value(set_json_with(i, pods_per_set, extra)).expect("sts")
                })
                .collect();
            let pods: Vec<Pod> = (0..SETS)
                .flat_map(|i| (0..pods_per_set).map(move |o| (i, o)))
                .map(|(i, o)| {
                    let mut pod = pod_json(i, o);
                    if i < candidates && o == 1 {
                        pod["status"]["conditions"][0]["status"] = json!("False");
                    }
                    serde_json::from_value(pod).expect("pod")
                })
                .collect();
            let pdbs: Vec<PodDisruptionBudget> = (0..100)
                .map(|n| serde_json::from_value(pdb_json(n)).expect("pdb"))
                .collect();
            let caches = Caches::listed(sets, pods, pdbs, &Arc::new(Keys::default()));
            let served = Arc::new(Served::default());
            let api = KubeCluster::new(
                fleet_client(
                    Arc::new(Vec::new()),
                    Arc::new(Vec::new()),
                    served.clone(),
                    rt,
                ),
                Scope::default(),
                None,
            );
            let cached = CachedCluster {
                caches: &caches,
                api: &api,
            };
            let report = rt
                .block_on(run_pass(&cached, &PassOptions::default(), now()))
                .expect("pass");
            let blocked = report
                .sets
                .iter()
                .filter(|s| {
                    s.blocked_reason() == Some(sts_stepper::model::reasons::Reason::PodNotReady)
                })
                .count();
            assert_eq!(blocked, candidates, "each candidate judged on its own pods");
            assert_eq!(served.requests.load(Ordering::Relaxed), 0, "no request");
            c.bench_function(
                &format!(
                    "watch pass from caches, 10000 statefulsets / {} pods, {candidates} candidates",
                    SETS * pods_per_set as usize
                ),
                |b| {
                    b.iter(|| {
                        rt.block_on(run_pass(&cached, &PassOptions::default(), now()))
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
    targets = cache_passes
}
criterion_main!(benches);
