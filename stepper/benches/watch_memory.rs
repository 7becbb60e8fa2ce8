//! Resident memory of `watch`'s caches after the initial LIST, at fleet scale: `Caches::start` (the
//! code `watch` runs: one watcher per kind, objects trimmed, pods indexed) against a mocked API server
//! that pages LISTs as a real one does (`limit` / `continue`), with objects shaped like the real
//! fixtures (`fixtures/api/1-staged-*.json`: the pod with its `managedFields`, spec and status,
//! 4.2 kB of JSON; the StatefulSet with `kubectl.kubernetes.io/last-applied-configuration`), each page
//! generated when asked for so the mock holds no list. After every store reported ready, prints this
//! process's `VmRSS` (resident now) and `VmHWM` (peak) from `/proc/self/status`.
//!
//! Run (one scale per process, so the figures are not each other's leftovers):
//! `SETS=10000 PODS_PER_SET=5 cargo bench -p sts-stepper --bench watch_memory` (50,000 pods);
//! `SETS=10000 PODS_PER_SET=20 cargo bench -p sts-stepper --bench watch_memory` (200,000 pods).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::cluster::caches::{Caches, RestartHook};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::config::Keys;

/// The system allocator, counting the bytes allocated and not yet freed: what the process holds, apart
/// from the allocator's own overhead and the memory it keeps after a free (the rest of `VmRSS`).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout` (the caller's contract).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One object of a fixture list (`fixtures/api/<file>`).
fn fixture(file: &str) -> Value {
    let path = format!("{}/../fixtures/api/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Value = serde_json::from_slice(&text).expect("fixture JSON");
    list["items"][0].clone()
}

/// A fixture object as JSON text with holes: `@N@` inside its strings stands for value `N`.
struct Template(Vec<(String, Option<usize>)>);

impl Template {
    fn new(object: &Value) -> Self {
        let text = serde_json::to_string(object).expect("json");
        let mut parts = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find('@') {
            let hole = rest[at + 1..].find('@').and_then(|end| {
                let n = rest[at + 1..at + 1 + end].parse().ok()?;
                Some((n, at + end + 2))
            });
            match hole {
                Some((n, next)) => {
                    parts.push((rest[..at].to_string(), Some(n)));
                    rest = &rest[next..];
                }
                None => {
                    parts.push((rest[..=at].to_string(), None));
                    rest = &rest[at + 1..];
                }
            }
        }
        parts.push((rest.to_string(), None));
        Template(parts)
    }

    fn render(&self, out: &mut Vec<u8>, values: &[&str]) {
        for (text, hole) in &self.0 {
            out.extend_from_slice(text.as_bytes());
            if let Some(n) = hole {
                out.extend_from_slice(values[*n].as_bytes());
            }
        }
    }
}

/// The objects the mock serves, by index: set `i` is `ns-<i % 100>/set-<i>` (uid `uid-<i>`, selector
/// `app=set-<i>`), its pods `set-<i>-<o>`; one PDB per namespace. Rendered from templates straight into
/// the page's bytes, so the mock's own garbage stays small (it shares the process being measured).
struct Fleet {
    sets: usize,
    pods_per_set: usize,
    set: Template,
    pod: Template,
    pdb: Template,
}

/// The holes: 0 set name, 1 pod name, 2 namespace, 3 pod uid, 4 ordinal, 5 set uid.
fn templates(mut set: Value, mut pod: Value, mut pdb: Value) -> (Template, Template, Template) {
    set["metadata"]["name"] = json!("@0@");
    set["metadata"]["namespace"] = json!("@2@");
    set["metadata"]["uid"] = json!("@5@");
    set["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    set["spec"]["selector"] = json!({"matchLabels": {"app": "@0@"}});
    set["spec"]["template"]["metadata"]["labels"] = json!({"app": "@0@"});
    pod["metadata"]["name"] = json!("@1@");
    pod["metadata"]["namespace"] = json!("@2@");
    pod["metadata"]["uid"] = json!("@3@");
    pod["metadata"]["labels"] = json!({"app": "@0@", "apps.kubernetes.io/pod-index": "@4@",
        "controller-revision-hash": "@0@-a", "statefulset.kubernetes.io/pod-name": "@1@"});
    pod["metadata"]["ownerReferences"][0]["name"] = json!("@0@");
    pod["metadata"]["ownerReferences"][0]["uid"] = json!("@5@");
    pdb["metadata"]["namespace"] = json!("@2@");
    (
        Template::new(&set),
        Template::new(&pod),
        Template::new(&pdb),
    )
}

impl Fleet {
    /// Renders object `k` of `kind` into `out`.
    fn render(&self, kind: &str, k: usize, out: &mut Vec<u8>) {
        let (template, i, o) = match kind {
            "statefulsets" => (&self.set, k, 0),
            "pods" => (&self.pod, k / self.pods_per_set, k % self.pods_per_set),
            _ => (&self.pdb, k, 0),
        };
        let (set, pod) = (format!("set-{i}"), format!("set-{i}-{o}"));
        let (ns, pod_uid, set_uid) = (
            format!("ns-{}", i % 100),
            format!("pod-uid-{k}"),
            format!("uid-{i}"),
        );
        template.render(out, &[&set, &pod, &ns, &pod_uid, &o.to_string(), &set_uid]);
    }

    /// One page of a LIST: items `[start, start + limit)`, with the `continue` token of the next page.
    fn page(&self, kind: &str, start: usize, limit: usize) -> Vec<u8> {
        let count = match kind {
            "statefulsets" => self.sets,
            "pods" => self.sets * self.pods_per_set,
            _ => 100.min(self.sets),
        };
        let end = (start + limit).min(count);
        let next = if end < count {
            format!(r#","continue":"{end}""#)
        } else {
            String::new()
        };
        let mut out = format!(
            r#"{{"apiVersion":"v1","kind":"List","metadata":{{"resourceVersion":"9"{next}}},"items":["#
        )
        .into_bytes();
        for k in start..end {
            if k > start {
                out.push(b',');
            }
            self.render(kind, k, &mut out);
        }
        out.extend_from_slice(b"]}");
        out
    }
}

/// A mocked API server: LISTs paged from `fleet`; watches held open (never answered) until exit.
fn mock_client(fleet: Arc<Fleet>) -> Client {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    tokio::spawn(async move {
        let mut watches = Vec::new();
        while let Some((req, send)) = handle.next_request().await {
            let query = req.uri().query().unwrap_or("").to_string();
            let param = |key: &str| {
                query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
                    .map(str::to_string)
            };
            if param("watch").as_deref() == Some("true") {
                watches.push(send);
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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (set, pod, pdb) = templates(
        fixture("1-staged-statefulsets.json"),
        fixture("1-staged-pods.json"),
        fixture("1-staged-pdbs.json"),
    );
    let fleet = Arc::new(Fleet {
        sets: env("SETS", 10_000),
        pods_per_set: env("PODS_PER_SET", 5),
        set,
        pod,
        pdb,
    });
    let pods = fleet.sets * fleet.pods_per_set;
    let mut one_pod = Vec::new();
    fleet.render("pods", 0, &mut one_pod);
    let one_pod = one_pod.len();
    let (rss0, _) = memory();
    let started = Instant::now();
    let client = mock_client(fleet.clone());
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
    let (rss, hwm) = memory();
    assert_eq!(RESTARTS.load(Ordering::Relaxed), 0, "no watch failed");
    println!(
        "watch caches ready: {} StatefulSets, {pods} pods ({one_pod} bytes of JSON each), 100 PDBs in {:.1} s; \
         VmRSS {:.1} MiB (before the caches: {:.1} MiB), VmHWM {:.1} MiB; heap in use {:.1} MiB",
        fleet.sets,
        started.elapsed().as_secs_f64(),
        rss as f64 / 1024.0,
        rss0 as f64 / 1024.0,
        hwm as f64 / 1024.0,
        LIVE.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0),
    );
    // Exit now: a runtime shutting down would end the mock and fail the watches mid-print.
    std::process::exit(0);
}
