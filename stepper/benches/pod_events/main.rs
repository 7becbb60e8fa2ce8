//! CPU per pod watch event in `watch` (issue 45 item 5): a fleet of Patroni members, each pod patched
//! every loop by Patroni (its `status` annotation: nothing any gate reads), is a steady stream of
//! MODIFIED events the caches must decode and keep. Measured on the event a v1.36.2 API server sent for
//! such a patch (`fixtures/api/scale/pod-patroni-modified.jsonl`, made each member's by `patroni_pod.rs`):
//! - `pod_event_decode`: the line decoded as kube-client decodes each line of a watch response
//!   (`serde_json::from_str::<WatchEvent<CachedPod>>`), and, for scale, as a typed k8s-openapi `Pod`;
//! - `pod_event_watcher`: the whole path `watch` runs in-process ([`Caches::start`]: kube-client's line
//!   splitting and decode, kube-runtime's watcher, the trim, the news test and pod index, the reflector
//!   store, the stream early passes wake on) over a mocked API server whose pod watch sends MODIFIED
//!   events of 1,000 members, each a new WAL position in Patroni's annotation (`patroni_status_only`) —
//!   and the same events when each also flips the pod's readiness (`ready_flips`, a kept field), so both
//!   sides of the "nothing kept changed" skip are timed. Not included: the TLS, HTTP and socket reads and
//!   the runtime's wakeups of a real connection (BENCHMARKS.md, "CPU per pod watch event").
//!
//! The time reported is this thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not the wall clock: the
//! runtime is single-threaded (the mock, the watcher and the stream run on this thread), so it is the
//! CPU the path costs, whatever else the machine runs.
//!
//! Run: `cargo bench -p sts-stepper --bench pod_events`.

mod patroni_pod;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use http::{Request, Response};
use http_body_util::{BodyExt, StreamBody, combinators::UnsyncBoxBody};
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::client::Body;
use kube::core::WatchEvent;
use serde_json::{Value, json};
use sts_stepper::cluster::cached::CachedPod;
use sts_stepper::cluster::caches::{Caches, RestartHook};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::config::Keys;
use tokio::sync::mpsc;

/// Pods in the fleet the events cycle through.
const PODS: usize = 1000;

/// A response body as the mock sends it: the watch events one chunk each (an HTTP/2 DATA frame each).
type MockBody = UnsyncBoxBody<Bytes, Infallible>;

type Pending = tower_test::mock::SendResponse<Response<MockBody>>;

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The CPU time of `iters` calls of `f` on this thread.
fn cpu<T>(iters: u64, mut f: impl FnMut() -> T) -> Duration {
    let start = thread_cpu();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    thread_cpu() - start
}

fn body(chunks: Vec<Bytes>) -> MockBody {
    let frames = futures::stream::iter(chunks.into_iter().map(|c| Ok(http_body::Frame::data(c))));
    StreamBody::new(frames).boxed_unsync()
}

/// A mocked API server: the pod LIST is `pods`; each pod watch is handed to the bench (`watches`), which
/// answers it with the events of one measurement; the other kinds list empty and their watches stay open.
fn mock_client(pods: Vec<Value>, watches: mpsc::UnboundedSender<Pending>) -> Client {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<MockBody>>();
    tokio::spawn(async move {
        let mut held = Vec::new();
        let list = json!({"kind": "PodList", "apiVersion": "v1",
                          "metadata": {"resourceVersion": "1"}, "items": pods})
        .to_string();
        while let Some((req, send)) = handle.next_request().await {
            let watch = req.uri().query().unwrap_or("").contains("watch=true");
            let is_pods = req.uri().path().ends_with("/pods");
            match (is_pods, watch) {
                (true, true) => {
                    let _ = watches.send(send);
                }
                (false, true) => held.push(send),
                (true, false) => {
                    let b = body(vec![Bytes::from(list.clone())]);
                    send.send_response(Response::new(b));
                }
                (false, false) => {
                    let empty = r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}"#;
                    send.send_response(Response::new(body(vec![Bytes::from(empty)])));
                }
            }
        }
    });
    Client::new(service, "default")
}

/// The MODIFIED lines of the fleet's pods, two rounds (each pod's WAL position moves between them):
/// with `ready_flips`, each pod's `Ready` condition also flips between the rounds (a kept field).
fn lines(captured: &str, ready_flips: bool) -> Vec<Bytes> {
    let mut lines = Vec::new();
    for round in 0..2u64 {
        for n in 0..PODS {
            let line = patroni_pod::modified(
                captured,
                n,
                50_331_648 + round * 4096,
                2 + round,
                ready_flips && round == 1,
            );
            lines.push(Bytes::from(line));
        }
    }
    lines
}

fn decode(c: &mut Criterion) {
    let line = patroni_pod::captured();
    eprintln!("one event: {} bytes", line.len());
    let mut g = c.benchmark_group("pod_event_decode");
    g.bench_function("cached_pod", |b| {
        b.iter_custom(|iters| {
            cpu(iters, || {
                serde_json::from_str::<WatchEvent<CachedPod>>(&line).expect("event")
            })
        })
    });
    g.bench_function("k8s_openapi_pod", |b| {
        b.iter_custom(|iters| {
            cpu(iters, || {
                serde_json::from_str::<WatchEvent<Pod>>(&line).expect("event")
            })
        })
    });
    g.finish();
}

fn watcher(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let captured = patroni_pod::captured();
    let mut g = c.benchmark_group("pod_event_watcher");
    for (name, ready_flips) in [("patroni_status_only", false), ("ready_flips", true)] {
        let lines = lines(&captured, ready_flips);
        let listed = (0..PODS)
            .map(|n| patroni_pod::object(&captured, n))
            .collect();
        let (tx, mut watches) = mpsc::unbounded_channel();
        let yielded = Arc::new(AtomicUsize::new(0));
        let caches = rt.block_on(async {
            let client = mock_client(listed, tx);
            let hook: RestartHook = Arc::new(|_| {});
            let keys = Arc::new(Keys::default());
            let (caches, streams) = Caches::start(&client, &Scope::default(), &keys, &hook);
            let y = yielded.clone();
            let pods = streams.pods.map(move |_| {
                y.fetch_add(1, Ordering::Relaxed);
            });
            for mut s in [
                streams.sets.map(|_| ()).boxed(),
                pods.boxed(),
                streams.pdbs.map(|_| ()).boxed(),
            ] {
                tokio::spawn(async move { while s.next().await.is_some() {} });
            }
            caches.ready().await;
            caches
        });
        let before = yielded.load(Ordering::Relaxed);
        let (mut next, mut sent) = (0usize, 0u64);
        let mut pending: Option<Pending> = None;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let chunks: Vec<Bytes> = (0..iters as usize)
                    .map(|k| lines[(next + k) % lines.len()].clone())
                    .collect();
                next = (next + iters as usize) % lines.len();
                sent += iters;
                rt.block_on(async {
                    let watch = match pending.take() {
                        Some(w) => w,
                        None => watches.recv().await.expect("the pod watch"),
                    };
                    let start = thread_cpu();
                    watch.send_response(Response::new(body(chunks)));
                    // The watcher watches again once the stream ended: every event went through.
                    let again = watches.recv().await.expect("the pod watch again");
                    let spent = thread_cpu() - start;
                    // Answered by the next measurement (the watcher waits on it).
                    pending = Some(again);
                    spent
                })
            })
        });
        drop(caches);
        eprintln!(
            "{name}: {} of {sent} pod events reached the stream a pass wakes on",
            yielded.load(Ordering::Relaxed) - before
        );
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(8));
    targets = decode, watcher
}
criterion_main!(benches);
