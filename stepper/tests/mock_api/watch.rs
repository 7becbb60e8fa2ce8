//! A stateful mocked API server for kube-rs (tower-test): it holds StatefulSets, pods, PDBs and other
//! objects (an owner) as JSON, answers LISTs (label selectors), GETs, and WATCHes — held open and fed
//! `ADDED` / `MODIFIED` / `DELETED` events as [`WatchApi::set_objects`] moves the cluster to its next
//! state — so `watch`'s real caches (`Caches::start`: kube-rs watchers and reflector stores) fill from
//! it as from a real API server. Writes (PATCH, POST, DELETE) are recorded and answered as a real
//! server would (a PATCH with the object patched, a failed `test` op with 422) but not stored: the
//! cluster's history is the test's, so two steppers can be given the same one.
#![allow(dead_code)] // each test crate uses a subset

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::{Body as AxumBody, Bytes};
use futures::channel::mpsc::{UnboundedSender, unbounded};
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};

/// One write the server received: method, path (no query) and JSON body.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// HTTP method.
    pub method: Method,
    /// Path.
    pub path: String,
    /// JSON body (`Null` when none).
    pub body: Value,
}

/// An open watch: the collection's path (`/api/v1/pods`, `/api/v1/namespaces/demo/pods`) and where its
/// events go.
struct Watcher {
    kind: String,
    namespace: Option<String>,
    selector: Option<String>,
    events: UnboundedSender<Result<Bytes, Infallible>>,
}

#[derive(Default)]
struct State {
    /// The cluster's resourceVersion, bumped at each change.
    version: u64,
    /// (kind's plural, namespace, name) → the object.
    objects: BTreeMap<(String, String, String), Value>,
    /// Objects answered by path (an owner of any kind).
    others: BTreeMap<String, Value>,
    watchers: Vec<Watcher>,
    writes: Vec<Write>,
    watches: usize,
}

/// The server (module doc): a kube [`Client`] to it, and its state.
#[derive(Clone)]
pub struct WatchApi {
    state: Arc<Mutex<State>>,
}

impl WatchApi {
    /// A server holding nothing yet, and a client to it (the server runs while the client does).
    pub fn start() -> (WatchApi, Client) {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<AxumBody>>();
        let api = WatchApi {
            state: Arc::default(),
        };
        let served = api.clone();
        tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                let answer = served.answer(req).await;
                send.send_response(answer);
            }
        });
        (api, Client::new(service, "default"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the cluster to `objects` (kind's plural, object): each new object is `ADDED`, each
    /// changed one `MODIFIED`, each gone one `DELETED`, with a new resourceVersion, to every watch of
    /// its kind; `others` are served by path as they are (an owner of any kind).
    pub fn set_objects(&self, objects: Vec<(&str, Value)>, others: BTreeMap<String, Value>) {
        let mut st = self.lock();
        st.others = others;
        let mut next: BTreeMap<(String, String, String), Value> = BTreeMap::new();
        for (kind, o) in objects {
            let key = (
                kind.to_string(),
                o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                o["metadata"]["name"].as_str().unwrap_or("").to_string(),
            );
            next.insert(key, o);
        }
        let gone: Vec<_> = (st.objects.keys())
            .filter(|k| !next.contains_key(*k))
            .cloned()
            .collect();
        for (kind, namespace, name) in gone {
            delete(&mut st, &kind, &namespace, &name);
        }
        for (key, mut o) in next {
            let before = st.objects.get(&key).cloned();
            if let Some(b) = &before {
                o["metadata"]["resourceVersion"] = b["metadata"]["resourceVersion"].clone();
                if *b == o {
                    continue; // unchanged: no event
                }
            }
            st.version += 1;
            o["metadata"]["resourceVersion"] = json!(st.version.to_string());
            let event = if before.is_some() {
                "MODIFIED"
            } else {
                "ADDED"
            };
            send(&mut st, &key.0, event, &o);
            st.objects.insert(key, o);
        }
    }

    /// The objects held now, by (kind's plural, namespace, name): their resourceVersions.
    pub fn versions(&self) -> BTreeMap<(String, String, String), String> {
        let st = self.lock();
        st.objects
            .iter()
            .map(|(k, o)| {
                (
                    k.clone(),
                    o["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    }

    /// The object served at `path` (`/api/v1/namespaces/demo/pods/web-0`), as it is now.
    pub fn object(&self, path: &str) -> Option<Value> {
        let (kind, namespace, name) = parse_path(path);
        let key = (kind, namespace.unwrap_or_default(), name?);
        self.lock().objects.get(&key).cloned()
    }

    /// The writes received since the last call.
    pub fn take_writes(&self) -> Vec<Write> {
        std::mem::take(&mut self.lock().writes)
    }

    /// How many watches were opened so far.
    pub fn watches(&self) -> usize {
        self.lock().watches
    }

    /// Waits (10 s at most) until `n` watches have been opened: an event goes only to the watches
    /// open when it happens (no replay from a resourceVersion), so a test changes the cluster after
    /// the caches' watches (sets, pods, PDBs: 3) are open, not merely after their first LIST.
    ///
    /// # Panics
    /// If fewer than `n` are opened within 10 s.
    pub async fn watching(&self, n: usize) {
        let opened = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while self.watches() < n {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        });
        opened.await.expect("the watches open");
    }

    async fn answer(&self, req: Request<Body>) -> Response<AxumBody> {
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let query: BTreeMap<String, String> = req
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), decode(v)))
            .collect();
        let bytes = req
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let (kind, namespace, name) = parse_path(&path);
        let mut st = self.lock();
        if method == Method::GET && query.get("watch").is_some_and(|w| w == "true" || w == "1") {
            let (tx, rx) = unbounded();
            st.watches += 1;
            st.watchers.push(Watcher {
                kind,
                namespace,
                selector: query.get("labelSelector").cloned(),
                events: tx,
            });
            return Response::new(AxumBody::from_stream(rx));
        }
        if method != Method::GET {
            st.writes.push(Write {
                method: method.clone(),
                path: path.clone(),
                body: body.clone(),
            });
        }
        if method == Method::GET
            && let Some(o) = st.others.get(&path)
        {
            return ok(o.clone());
        }
        match (method, name) {
            (Method::GET, None) => {
                let items: Vec<Value> = (st.objects.iter())
                    .filter(|((k, ns, _), o)| {
                        *k == kind
                            && namespace.as_ref().is_none_or(|n| n == ns)
                            && matches(query.get("labelSelector"), o)
                    })
                    .map(|(_, o)| o.clone())
                    .collect();
                ok(json!({"apiVersion": "v1", "kind": "List",
                          "metadata": {"resourceVersion": st.version.to_string()},
                          "items": items}))
            }
            (Method::GET, Some(name)) => {
                let key = (kind, namespace.unwrap_or_default(), name);
                match st.objects.get(&key) {
                    Some(o) => ok(o.clone()),
                    None => status(404, "NotFound", "not found"),
                }
            }
            (Method::PATCH, Some(name)) => {
                let key = (kind, namespace.unwrap_or_default(), name);
                let Some(mut o) = st.objects.get(&key).cloned() else {
                    return status(404, "NotFound", "not found");
                };
                let patch: json_patch::Patch = match serde_json::from_value(body) {
                    Ok(p) => p,
                    Err(e) => return status(400, "BadRequest", &e.to_string()),
                };
                match json_patch::patch(&mut o, &patch) {
                    Ok(()) => ok(o),
                    Err(e) => status(422, "Invalid", &e.to_string()),
                }
            }
            (Method::POST, _) => created(body),
            (Method::DELETE, _) => ok(json!({"kind": "Status", "status": "Success"})),
            _ => status(405, "MethodNotAllowed", "not served"),
        }
    }
}

/// Removes an object: `DELETED` to the watches of its kind.
fn delete(st: &mut State, kind: &str, namespace: &str, name: &str) {
    let key = (kind.to_string(), namespace.to_string(), name.to_string());
    if let Some(mut o) = st.objects.remove(&key) {
        st.version += 1;
        o["metadata"]["resourceVersion"] = json!(st.version.to_string());
        send(st, kind, "DELETED", &o);
    }
}

/// Sends a watch event of `o` (of `kind`) to the watches that see it; a watch whose client went away
/// is dropped.
fn send(st: &mut State, kind: &str, event: &str, o: &Value) {
    let line = format!("{}\n", json!({"type": event, "object": o}));
    let ns = o["metadata"]["namespace"].as_str().unwrap_or("");
    st.watchers.retain(|w| {
        if w.kind != kind
            || w.namespace.as_deref().is_some_and(|n| n != ns)
            || !matches(w.selector.as_ref(), o)
        {
            return true;
        }
        w.events
            .unbounded_send(Ok(Bytes::from(line.clone())))
            .is_ok()
    });
}

/// `/api/v1/namespaces/demo/pods/web-0` → (`pods`, `Some(demo)`, `Some(web-0)`); a collection of all
/// namespaces has no namespace.
fn parse_path(path: &str) -> (String, Option<String>, Option<String>) {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let start = if parts.first() == Some(&"api") { 2 } else { 3 };
    let rest = parts.get(start..).unwrap_or_default();
    match rest {
        ["namespaces", ns, kind] => (kind.to_string(), Some(ns.to_string()), None),
        ["namespaces", ns, kind, name, ..] => (
            kind.to_string(),
            Some(ns.to_string()),
            Some(name.to_string()),
        ),
        [kind] => (kind.to_string(), None, None),
        _ => (String::new(), None, None),
    }
}

/// Whether `o`'s labels match a label selector of `k=v`, `k==v`, `k!=v`, `k` and `!k` terms.
fn matches(selector: Option<&String>, o: &Value) -> bool {
    let labels = &o["metadata"]["labels"];
    selector.is_none_or(|s| {
        s.split(',').filter(|t| !t.is_empty()).all(|term| {
            if let Some((k, v)) = term.split_once("!=") {
                labels[k] != json!(v)
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                labels[k] == json!(v)
            } else if let Some(k) = term.strip_prefix('!') {
                labels.get(k).is_none()
            } else {
                labels.get(term).is_some()
            }
        })
    })
}

/// A query value, percent-decoded (`%2F` → `/`, `+` → space).
fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn ok(body: Value) -> Response<AxumBody> {
    respond(200, body)
}

fn created(body: Value) -> Response<AxumBody> {
    respond(201, body)
}

fn status(code: u16, reason: &str, message: &str) -> Response<AxumBody> {
    respond(
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": reason, "code": code}),
    )
}

fn respond(code: u16, body: Value) -> Response<AxumBody> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(AxumBody::from(
            serde_json::to_vec(&body).unwrap_or_default(),
        ))
        .unwrap_or_default()
}
