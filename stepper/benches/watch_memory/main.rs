//! Resident memory of `watch`'s caches after the initial LIST and after re-lists, at fleet scale:
//! `Caches::start` (the code `watch` runs: one watcher per kind, objects trimmed, pods indexed) against a
//! mocked API server that pages LISTs as a real one does (`limit` / `continue`), with objects shaped as a
//! real API server returns them (`fixtures/api/scale/`, captured from Kubernetes v1.36.2: a server-side
//! applied StatefulSet with its `managedFields`, a Running pod — or, `POD_SHAPE=pending`, a pod as
//! kube-controller-manager creates it), each page generated when asked for so the mock holds no list.
//! Every pod carries an annotation of another owner, and each set's highest pod the approval
//! handshake's request and answer (`update-requested`, `-at`, `-phase`, `update-approved`: the pod the
//! next step asks; the caches keep the stepper's annotations, not the others).
//! After every store reported ready, prints this process's `VmRSS` (resident now) and `VmHWM` (peak)
//! from `/proc/self/status` and the heap in use; then `RELISTS` times (default 10) ends every watch with
//! the `410 Gone` a real API server sends when the resource version expired, waits until each watcher
//! re-listed and watches again, and prints the same figures.
//!
//! The allocator is the binary's (`sts_stepper::commands::alloc::Global`), counted.
//!
//! Run (one scale per process, so the figures are not each other's leftovers), as the image's binary is
//! built (BENCHMARKS.md, "Resident memory"):
//! `SETS=10000 PODS_PER_SET=5 cargo bench --profile image --target x86_64-unknown-linux-musl -p sts-stepper --bench watch_memory`.

mod fleet;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use kube::core::{Expression, Selector};
use sts_stepper::cluster::Cluster;
use sts_stepper::cluster::caches::{CachedCluster, Caches, RestartHook};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::commands::alloc::Global;
use sts_stepper::config::Keys;

use fleet::{Fleet, fixture, templates};

/// The binary's allocator, counting the bytes allocated and not yet freed: what the process holds, apart
/// from the allocator's own overhead and the memory it keeps after a free (the rest of `VmRSS`).
struct Counting;

static INNER: Global = Global;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { INNER.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `INNER` with `layout` (the caller's contract).
        unsafe { INNER.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The watch event a real API server sends when a watch's resource version is too old (then it ends
/// the watch): the watcher re-lists.
const GONE: &str = concat!(
    r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
    r#""message":"too old resource version: 9 (10)","reason":"Expired","code":410}}"#,
    "\n"
);

/// Watch requests the mock received (each watcher sends one after every complete LIST).
static WATCHES: AtomicUsize = AtomicUsize::new(0);

/// A mocked API server: LISTs paged from `fleet`; watches held open (never answered) until `expire`
/// says to end them all with [`GONE`].
fn mock_client(fleet: Arc<Fleet>, mut expire: tokio::sync::mpsc::Receiver<()>) -> Client {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    tokio::spawn(async move {
        let mut watches: Vec<tower_test::mock::SendResponse<Response<Body>>> = Vec::new();
        loop {
            let (req, send) = tokio::select! {
                next = handle.next_request() => match next {
                    Some(pair) => pair,
                    None => break,
                },
                Some(()) = expire.recv() => {
                    for send in watches.drain(..) {
                        let gone = Response::builder().body(Body::from(GONE.as_bytes().to_vec()));
                        send.send_response(gone.expect("response"));
                    }
                    continue;
                }
            };
            let query = req.uri().query().unwrap_or("").to_string();
            let param = |key: &str| {
                query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
                    .map(str::to_string)
            };
            if param("watch").as_deref() == Some("true") {
                watches.push(send);
                WATCHES.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            let kind = req
                .uri()
                .path()
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string();
            let start = param("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
            let limit = param("limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(usize::MAX);
            let body = fleet.page(&kind, start, limit);
            send.send_response(
                Response::builder()
                    .body(Body::from(body))
                    .expect("response"),
            );
        }
    });
    Client::new(service, "default")
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `VmRSS`, `VmHWM` and the heap in use, in MiB, as one line's end.
fn figures() -> String {
    let (rss, hwm) = memory();
    format!(
        "VmRSS {:.1} MiB, VmHWM {:.1} MiB; heap in use {:.1} MiB",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
        LIVE.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0),
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let pod_shape = match std::env::var("POD_SHAPE").as_deref() {
        Ok("pending") => "scale/pod-pending-kcm.json",
        _ => "scale/pod-running.json",
    };
    let (set, pod, asked, pdb) = templates(
        fixture("scale/statefulset-server-side-applied.json"),
        fixture(pod_shape),
        fixture("1-staged-pdbs.json"),
    );
    let fleet = Arc::new(Fleet {
        sets: env("SETS", 10_000),
        pods_per_set: env("PODS_PER_SET", 5),
        set,
        pod,
        asked,
        pdb,
    });
    let pods = fleet.sets * fleet.pods_per_set;
    let (mut one_set, mut one_pod) = (Vec::new(), Vec::new());
    fleet.render("statefulsets", 0, &mut one_set);
    fleet.render("pods", fleet.pods_per_set - 1, &mut one_pod);
    let (rss0, _) = memory();
    let started = Instant::now();
    let (expire, expired) = tokio::sync::mpsc::channel(1);
    let client = mock_client(fleet.clone(), expired);
    let keys = Arc::new(Keys::default());
    static RESTARTS: AtomicUsize = AtomicUsize::new(0);
    let hook: RestartHook = Arc::new(|_| {
        RESTARTS.fetch_add(1, Ordering::Relaxed);
    });
    let (caches, streams) = Caches::start(&client, &Scope::default(), &keys, &hook);
    for mut s in [
        streams.sets.map(|_| ()).boxed(),
        streams.pods.map(|_| ()).boxed(),
        streams.pdbs.map(|_| ()).boxed(),
    ] {
        tokio::spawn(async move { while s.next().await.is_some() {} });
    }
    caches.ready().await;
    assert_eq!(RESTARTS.load(Ordering::Relaxed), 0, "no watch failed");
    // The asked pod is kept with the stepper's annotations, and only those.
    let api = KubeCluster::new(client.clone(), Scope::default(), None);
    let cached = CachedCluster {
        caches: &caches,
        api: &api,
    };
    let selector: Selector = Expression::Equal("app".into(), "set-0".into()).into();
    let set_pods = cached
        .list_set_pods("ns-0", &selector, &["uid-0".to_string()])
        .await
        .expect("cached");
    let asked = format!("set-0-{}", fleet.pods_per_set - 1);
    let notes = (set_pods.iter())
        .find(|p| p.metadata.name.as_deref() == Some(asked.as_str()))
        .and_then(|p| p.metadata.annotations.clone())
        .expect("the asked pod, annotated");
    assert_eq!(
        notes.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "safe-rollout.dev/update-approved",
            "safe-rollout.dev/update-request-phase",
            "safe-rollout.dev/update-requested",
            "safe-rollout.dev/update-requested-at",
        ],
        "the caches keep the stepper's annotations, not the application's"
    );
    println!(
        "watch caches ready: {} StatefulSets ({} bytes of JSON each), {pods} pods ({} bytes the asked one, {pod_shape}), \
         100 PDBs in {:.1} s; before the caches VmRSS {:.1} MiB; {}",
        fleet.sets,
        one_set.len(),
        one_pod.len(),
        started.elapsed().as_secs_f64(),
        rss0 as f64 / 1024.0,
        figures(),
    );
    // Each watcher sends its first watch right after its first LIST; wait for the three.
    let watching = |n: usize| async move {
        let deadline = Instant::now() + std::time::Duration::from_secs(300);
        while WATCHES.load(Ordering::SeqCst) < n {
            assert!(
                Instant::now() < deadline,
                "the watchers did not watch again"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    watching(3).await;
    for cycle in 1..=env("RELISTS", 10) {
        let seen = WATCHES.load(Ordering::SeqCst);
        let relist = Instant::now();
        expire.send(()).await.expect("the mock runs");
        watching(seen + 3).await;
        println!(
            "re-list {cycle:2}: {:.1} s; {}",
            relist.elapsed().as_secs_f64(),
            figures()
        );
    }
    assert_eq!(
        RESTARTS.load(Ordering::Relaxed),
        3 * env("RELISTS", 10),
        "each expired watch re-listed once"
    );
    // Exit now: a runtime shutting down would end the mock and fail the watches mid-print.
    std::process::exit(0);
}
