//! A `watch` pass from caches at 10,000 StatefulSets, with 1 and 100 candidates, at 50,000 and
//! 200,000 pods (issue 21 item 4): the caches as the first LIST leaves them (objects trimmed, pods
//! indexed by controller), no request to the API server.
//!
//! Run: `cargo bench -p sts-stepper --bench watch_pass`. Before timing, each case prints the heap
//! allocations of one pass (counted by [`Counting`]: a figure the machine's noise does not move) and,
//! with `ALLOC_SITES=N`, where every `N`th of them was made.

mod fleet;

use std::alloc::{GlobalAlloc, Layout, System};
use std::backtrace::Backtrace;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// The system allocator, counting allocations (`alloc` and `realloc` calls) while [`COUNTING`] is on,
/// and with `ALLOC_SITES=N` in the environment keeping the backtrace of every `N`th one
/// ([`print_sites`]; a build with symbols: `CARGO_PROFILE_BENCH_DEBUG=line-tables-only
/// CARGO_PROFILE_BENCH_STRIP=false`).
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// `ALLOC_SITES`, read before counting (0: no backtraces).
static SAMPLE_EVERY: AtomicU64 = AtomicU64::new(0);
static SITES: Mutex<Vec<Backtrace>> = Mutex::new(Vec::new());
thread_local!(
    /// This thread is taking a backtrace: its own allocations are neither counted nor sampled.
    static IN_SAMPLE: Cell<bool> = const { Cell::new(false) }
);

impl Counting {
    fn count(&self) {
        if !COUNTING.load(Ordering::Relaxed) || IN_SAMPLE.with(Cell::get) {
            return;
        }
        let n = ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        let every = SAMPLE_EVERY.load(Ordering::Relaxed);
        if every > 0 && n.is_multiple_of(every) {
            IN_SAMPLE.with(|f| f.set(true));
            let site = Backtrace::force_capture();
            SITES.lock().expect("sites").push(site);
            IN_SAMPLE.with(|f| f.set(false));
        }
    }
}

// SAFETY: every call is passed on to `System` with the caller's arguments, unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.count();
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (the caller's contract).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.count();
        // SAFETY: the caller's contract for `GlobalAlloc::realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The sampled allocation sites, most frequent first, each as its three innermost stepper frames.
fn print_sites() {
    let sites = std::mem::take(&mut *SITES.lock().expect("sites"));
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for site in &sites {
        let text = site.to_string();
        let frames: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("sts_stepper::") && !l.trim_start().starts_with("at "))
            .take(3)
            .map(str::trim)
            .collect();
        *by.entry(frames.join(" <- ")).or_default() += 1;
    }
    let mut by: Vec<_> = by.into_iter().collect();
    by.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    for (frames, n) in by.iter().take(25) {
        println!("{n:6} {frames}");
    }
}

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
            SAMPLE_EVERY.store(
                std::env::var("ALLOC_SITES")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
                Ordering::Relaxed,
            );
            ALLOCATIONS.store(0, Ordering::Relaxed);
            COUNTING.store(true, Ordering::Relaxed);
            let counted = rt.block_on(run_pass(&cached, &PassOptions::default(), now()));
            COUNTING.store(false, Ordering::Relaxed);
            assert!(counted.is_ok(), "the counted pass");
            let allocations = ALLOCATIONS.load(Ordering::Relaxed);
            print_sites();
            println!(
                "{SETS} statefulsets / {} pods, {candidates} candidates: {allocations} allocations \
                 per pass ({:.1} per set)",
                SETS * pods_per_set as usize,
                allocations as f64 / SETS as f64
            );
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
