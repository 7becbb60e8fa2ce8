//! docs/examples/approve-pods.sh, the worked handshake answerer of docs/approvals.md, run for real
//! (`sh`, the machine's `kubectl` and `jq`) against a small stateful API server on 127.0.0.1: the real
//! "2-stepped-4" StatefulSet and pods (web-4 on `updateRevision`), the discovery documents kubectl asks
//! for, GET and LIST, and PATCH of a pod's labels and annotations (kubectl's merge patches).
//!
//! The step being asked for replaces web-3 and web-2, and web-2 holds `role=primary` (asked to switch
//! over); web-1 carries a request left from another revision. One round of the script must move the role
//! to web-4 (Ready, not asked, already on `updateRevision`), label web-2 a replica, approve web-2 and
//! web-3 for `updateRevision`, and leave web-1 alone: what a person trying the handshake on a real
//! cluster relies on. The script is killed when the test ends, also on a panic.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tempfile::TempDir;

const P: &str = "safe-rollout.dev";

/// What the server stores: the set, and the pods by name.
#[derive(Default)]
struct Store {
    set: Value,
    pods: BTreeMap<String, Value>,
    version: u64,
}

type Shared = Arc<Mutex<Store>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Store> {
    s.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn json_ok(v: Value) -> Response {
    ([("content-type", "application/json")], v.to_string()).into_response()
}

fn not_found(what: &str) -> Response {
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": format!("{what} not found"), "reason": "NotFound", "code": 404});
    (
        StatusCode::NOT_FOUND,
        [("content-type", "application/json")],
        status.to_string(),
    )
        .into_response()
}

/// The discovery documents kubectl reads to map `sts` and `pods` to their resources.
fn discovery() -> Router<Shared> {
    let api = json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]});
    let apis = json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{"name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}]});
    let core = json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [{"name": "pods",
        "singularName": "pod", "namespaced": true, "kind": "Pod", "verbs": ["get", "list", "patch"],
        "shortNames": ["po"]}]});
    let apps = json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "apps/v1",
        "resources": [{"name": "statefulsets", "singularName": "statefulset", "namespaced": true,
        "kind": "StatefulSet", "verbs": ["get", "list", "patch"], "shortNames": ["sts"]}]});
    Router::new()
        .route("/api", get(move || async move { json_ok(api) }))
        .route("/apis", get(move || async move { json_ok(apis) }))
        .route("/api/v1", get(move || async move { json_ok(core) }))
        .route("/apis/apps/v1", get(move || async move { json_ok(apps) }))
}

async fn get_set(State(s): State<Shared>, Path((ns, name)): Path<(String, String)>) -> Response {
    let store = lock(&s);
    if ns == "demo" && store.set["metadata"]["name"] == name.as_str() {
        json_ok(store.set.clone())
    } else {
        not_found(&format!("statefulsets {name:?}"))
    }
}

async fn list_pods(State(s): State<Shared>, Path(ns): Path<String>) -> Response {
    let store = lock(&s);
    let items: Vec<Value> = if ns == "demo" {
        store.pods.values().cloned().collect()
    } else {
        Vec::new()
    };
    json_ok(json!({"kind": "PodList", "apiVersion": "v1",
        "metadata": {"resourceVersion": store.version.to_string()}, "items": items}))
}

async fn get_pod(State(s): State<Shared>, Path((_, name)): Path<(String, String)>) -> Response {
    match lock(&s).pods.get(&name) {
        Some(pod) => json_ok(pod.clone()),
        None => not_found(&format!("pods {name:?}")),
    }
}

/// kubectl `label` and `annotate` send a merge patch of `metadata` (JSON merge patch and strategic merge
/// patch agree on maps of strings).
async fn patch_pod(
    State(s): State<Shared>,
    Path((_, name)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let Ok(patch) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let mut store = lock(&s);
    store.version += 1;
    let version = store.version.to_string();
    let Some(pod) = store.pods.get_mut(&name) else {
        return not_found(&format!("pods {name:?}"));
    };
    json_patch::merge(pod, &patch);
    pod["metadata"]["resourceVersion"] = json!(version);
    json_ok(pod.clone())
}

/// The API server on a free port of 127.0.0.1 with `set` and `pods`.
async fn serve(set: Value, pods: Vec<Value>) -> (String, Shared, tokio::task::JoinHandle<()>) {
    // A LIST's items come without `kind` and `apiVersion`; a GET of one object carries them.
    let typed = |mut v: Value, kind: &str, api_version: &str| {
        v["kind"] = json!(kind);
        v["apiVersion"] = json!(api_version);
        v
    };
    let store: Shared = Arc::new(Mutex::new(Store {
        set: typed(set, "StatefulSet", "apps/v1"),
        pods: pods
            .into_iter()
            .map(|p| {
                let name = p["metadata"]["name"].as_str().unwrap_or("").to_string();
                (name, typed(p, "Pod", "v1"))
            })
            .collect(),
        version: 100,
    }));
    let app = discovery()
        .route(
            "/apis/apps/v1/namespaces/{ns}/statefulsets/{name}",
            get(get_set),
        )
        .route("/api/v1/namespaces/{ns}/pods", get(list_pods))
        .route(
            "/api/v1/namespaces/{ns}/pods/{name}",
            get(get_pod).patch(patch_pod),
        )
        .fallback(|| async { not_found("path") })
        .with_state(store.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, store, task)
}

/// The script, killed when dropped.
struct Script(Child);

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pod(items: &[Value], name: &str) -> Value {
    items
        .iter()
        .find(|p| p["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} in the fixture"))
}

fn note(pod: &mut Value, key: &str, value: &str) {
    pod["metadata"]["annotations"][format!("{P}/{key}")] = json!(value);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_script_moves_the_primary_then_approves() {
    let sets: Value =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let list: Value = serde_json::from_slice(&fixture_body("2-stepped-4-pods.json")).expect("json");
    let items = list["items"].as_array().expect("items").clone();
    let mut pods = Vec::new();
    for name in ["web-0", "web-1", "web-2", "web-3", "web-4"] {
        let mut p = pod(&items, name);
        p["metadata"]["labels"]["role"] = json!(if name == "web-2" {
            "primary"
        } else {
            "replica"
        });
        p["metadata"]["annotations"] = json!({});
        match name {
            "web-1" => note(&mut p, "update-requested", REV_OLD),
            "web-2" | "web-3" => {
                note(&mut p, "update-requested", REV_NEW);
                note(&mut p, "update-requested-at", "2026-11-23T01:20:00Z");
                let phase = if name == "web-2" {
                    "Switchover"
                } else {
                    "Update"
                };
                note(&mut p, "update-request-phase", phase);
            }
            _ => {}
        }
        pods.push(p);
    }
    let (url, store, server) = serve(sets["items"][0].clone(), pods).await;

    let home = TempDir::new().expect("temp dir");
    let kubeconfig = home.path().join("config");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{url}\"}}}}]\n\
             contexts: [{{name: fake, context: {{cluster: fake, user: fake}}}}]\ncurrent-context: fake\n\
             users: [{{name: fake, user: {{}}}}]\n"
        ),
    )
    .expect("kubeconfig");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/examples/approve-pods.sh"
    );
    let log = home.path().join("stderr.log");
    let _script = Script(
        Command::new("sh")
            .args([script, "demo", "web"])
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", home.path())
            .env("INTERVAL", "0.2")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("sh runs the script"),
    );

    let approved = |p: &Value| p["metadata"]["annotations"][format!("{P}/update-approved")].clone();
    let role = |p: &Value| p["metadata"]["labels"]["role"].clone();
    let start = Instant::now();
    loop {
        let done = {
            let s = lock(&store);
            approved(&s.pods["web-2"]) == json!(REV_NEW)
                && approved(&s.pods["web-3"]) == json!(REV_NEW)
        };
        if done {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the script approved nothing within 60 s; its stderr: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let s = lock(&store);
    assert_eq!(
        role(&s.pods["web-4"]),
        json!("primary"),
        "the role moved to the updated pod"
    );
    assert_eq!(role(&s.pods["web-2"]), json!("replica"));
    let primaries = s
        .pods
        .values()
        .filter(|p| role(p) == json!("primary"))
        .count();
    assert_eq!(primaries, 1);
    assert_eq!(
        approved(&s.pods["web-1"]),
        Value::Null,
        "another revision's request is not answered"
    );
    assert_eq!(approved(&s.pods["web-0"]), Value::Null);
    drop(s);
    server.abort();
}
