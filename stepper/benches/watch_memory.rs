//! Resident memory of `watch`'s caches after the initial LIST, at fleet scale: `Caches::start` (the
//! code `watch` runs: one watcher per kind, objects trimmed, pods indexed) against a mocked API server
//! that pages LISTs as a real one does (`limit` / `continue`), with objects shaped like the real
//! fixtures (`shared/fixtures/api/1-staged-*.json`: the pod with its `managedFields`, spec and status,
//! 4.2 kB of JSON; the StatefulSet with `kubectl.kubernetes.io/last-applied-configuration`), each page
//! generated when asked for so the mock holds no list. After every store reported ready, prints this
//! process's `VmRSS` (resident now) and `VmHWM` (peak) from `/proc/self/status`.
//!
//! Run (one scale per process, so the figures are not each other's leftovers):
//! `SETS=10000 PODS_PER_SET=5 cargo bench -p sts-stepper --bench watch_memory` (50,000 pods);
//! `SETS=10000 PODS_PER_SET=20 cargo bench -p sts-stepper --bench watch_memory` (200,000 pods).

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::cluster::caches::{Caches, RestartHook};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::config::Keys;

/// One object of a fixture list (`shared/fixtures/api/<file>`).
fn fixture(file: &str) -> Value {
    let path = format!(
        "{}/../../shared/fixtures/api/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let list: Value = serde_json::from_slice(&text).expect("fixture JSON");
    list["items"][0].clone()
}

/// The objects the mock serves, by index: set `i` is `ns-<i % 100>/set-<i>` (uid `uid-<i>`, selector
/// `app=set-<i>`), its pods `set-<i>-<o>`; one PDB per namespace.
struct Fleet {
    sets: usize,
    pods_per_set: usize,
    set: Value,
    pod: Value,
    pdb: Value,
}

impl Fleet {
    fn set(&self, i: usize) -> Value {
        let mut s = self.set.clone();
        let name = format!("set-{i}");
        s["metadata"]["name"] = json!(name);
        s["metadata"]["namespace"] = json!(format!("ns-{}", i % 100));
        s["metadata"]["uid"] = json!(format!("uid-{i}"));
        s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
        s["spec"]["selector"] = json!({"matchLabels": {"app": name}});
        s["spec"]["template"]["metadata"]["labels"] = json!({"app": name});
        s
    }

    fn pod(&self, k: usize) -> Value {
        let (i, o) = (k / self.pods_per_set, k % self.pods_per_set);
        let mut p = self.pod.clone();
        let (set, name) = (format!("set-{i}"), format!("set-{i}-{o}"));
        p["metadata"]["name"] = json!(name);
        p["metadata"]["namespace"] = json!(format!("ns-{}", i % 100));
        p["metadata"]["uid"] = json!(format!("pod-uid-{k}"));
        p["metadata"]["labels"] = json!({"app": set, "apps.kubernetes.io/pod-index": o.to_string(),
            "controller-revision-hash": format!("{set}-a"), "statefulset.kubernetes.io/pod-name": name});
        p["metadata"]["ownerReferences"][0]["name"] = json!(set);
        p["metadata"]["ownerReferences"][0]["uid"] = json!(format!("uid-{i}"));
        p
    }

    fn pdb(&self, n: usize) -> Value {
        let mut d = self.pdb.clone();
        d["metadata"]["namespace"] = json!(format!("ns-{n}"));
        d
    }

    /// One page of a LIST: items `[start, start + limit)` of `count`, with the `continue` token of
    /// the next page.
    fn page(&self, kind: &str, start: usize, limit: usize) -> Vec<u8> {
        let (count, item): (usize, &dyn Fn(usize) -> Value) = match kind {
            "statefulsets" => (self.sets, &|i| self.set(i)),
            "pods" => (self.sets * self.pods_per_set, &|k| self.pod(k)),
            _ => (100.min(self.sets), &|n| self.pdb(n)),
        };
        let end = (start + limit).min(count);
        let items: Vec<Value> = (start..end).map(item).collect();
        let mut metadata = json!({"resourceVersion": "9"});
        if end < count {
            metadata["continue"] = json!(end.to_string());
        }
        serde_json::to_vec(
            &json!({"apiVersion": "v1", "kind": "List", "metadata": metadata,
                                   "items": items}),
        )
        .expect("json")
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
    let fleet = Arc::new(Fleet {
        sets: env("SETS", 10_000),
        pods_per_set: env("PODS_PER_SET", 5),
        set: fixture("1-staged-statefulsets.json"),
        pod: fixture("1-staged-pods.json"),
        pdb: fixture("1-staged-pdbs.json"),
    });
    let pods = fleet.sets * fleet.pods_per_set;
    let one_pod = serde_json::to_vec(&fleet.pod(0)).expect("json").len();
    let (rss0, _) = memory();
    let started = Instant::now();
    let client = mock_client(fleet.clone());
    let keys = Arc::new(Keys::default());
    let hook: RestartHook = Arc::new(|resource| panic!("the {resource} watch failed"));
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
    println!(
        "watch caches ready: {} StatefulSets, {pods} pods ({one_pod} bytes of JSON each), 100 PDBs in {:.1} s; \
         VmRSS {:.1} MiB (before the caches: {:.1} MiB), VmHWM {:.1} MiB",
        fleet.sets,
        started.elapsed().as_secs_f64(),
        rss as f64 / 1024.0,
        rss0 as f64 / 1024.0,
        hwm as f64 / 1024.0,
    );
}
