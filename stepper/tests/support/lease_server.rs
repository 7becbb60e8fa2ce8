//! An in-memory API server that keeps one Lease with `resourceVersion` preconditions (409 on a stale
//! PUT), answers at once on tokio's (virtual) clock, and can cut a candidate off (its requests never
//! answer); and the election candidates that talk to it.
#![allow(dead_code)] // each test crate uses a subset

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use http::{Method, Request, Response};
use http_body_util::BodyExt;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kube::client::Body;
use kube::{Api, Client};
use serde_json::{Value, json};
use sts_stepper::leader::{LeaderConfig, Leadership, spawn};
use tokio::time::Instant;

/// The Lease's namespace.
pub const NS: &str = "sts-safe-rollout";
/// The Lease's name.
pub const LEASE: &str = "sts-stepper";

/// One request the API server answered: who sent it, when (virtual), and the HTTP status.
#[derive(Clone, Debug)]
pub struct Logged {
    pub who: &'static str,
    pub method: Method,
    pub at: Instant,
    pub status: u16,
}

pub type Mutation = Box<dyn FnOnce(&mut Value) + Send>;

/// The API server's one Lease and what it answered.
#[derive(Default)]
pub struct Store {
    pub lease: Option<Value>,
    pub resource_version: u64,
    pub log: Vec<Logged>,
    /// Applied (as another writer's update) just before the next PUT is judged.
    pub before_next_put: Option<Mutation>,
}

fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

impl Store {
    fn bump(&mut self, lease: &mut Value) {
        self.resource_version += 1;
        lease["metadata"]["resourceVersion"] = json!(self.resource_version.to_string());
    }

    fn handle(&mut self, method: &Method, path: &str, body: &[u8]) -> (u16, Value) {
        let collection = format!("/apis/coordination.k8s.io/v1/namespaces/{NS}/leases");
        let named = format!("{collection}/{LEASE}");
        let sent: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        match (method.as_str(), path) {
            ("GET", p) if p == named => match &self.lease {
                Some(lease) => (200, lease.clone()),
                None => (
                    404,
                    status_body(404, "NotFound", "leases \"sts-stepper\" not found"),
                ),
            },
            ("POST", p) if p == collection => {
                if self.lease.is_some() {
                    return (409, status_body(409, "AlreadyExists", "already exists"));
                }
                let mut lease = sent;
                self.bump(&mut lease);
                self.lease = Some(lease.clone());
                (201, lease)
            }
            ("PUT", p) if p == named => {
                let mut stored = self.lease.clone().expect("PUT on a Lease that exists");
                if let Some(mutate) = self.before_next_put.take() {
                    mutate(&mut stored);
                    self.bump(&mut stored);
                    self.lease = Some(stored.clone());
                }
                let precondition = sent["metadata"]["resourceVersion"].as_str();
                assert!(
                    precondition.is_some(),
                    "every PUT carries a resourceVersion: {sent}"
                );
                if precondition != stored["metadata"]["resourceVersion"].as_str() {
                    return (
                        409,
                        status_body(409, "Conflict", "the object has been modified"),
                    );
                }
                let mut lease = sent;
                self.bump(&mut lease);
                self.lease = Some(lease.clone());
                (200, lease)
            }
            (m, p) => panic!("unexpected request {m} {p}"),
        }
    }

    pub fn spec(&self) -> LeaseSpec {
        let lease: Lease =
            serde_json::from_value(self.lease.clone().expect("a Lease")).expect("a valid Lease");
        lease.spec.expect("spec")
    }
}

pub type Shared = Arc<Mutex<Store>>;

/// A kube-rs client whose requests `store` answers at once, or never while `cut` is set.
pub fn client(store: Shared, who: &'static str, cut: Arc<AtomicBool>) -> Client {
    let service = tower::service_fn(move |req: Request<Body>| {
        let (store, cut) = (store.clone(), cut.clone());
        async move {
            if cut.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            let (parts, body) = req.into_parts();
            let bytes = body.collect().await.expect("request body").to_bytes();
            let mut store = store.lock().expect("store");
            let (status, answer) = store.handle(&parts.method, parts.uri.path(), &bytes);
            store.log.push(Logged {
                who,
                method: parts.method.clone(),
                at: Instant::now(),
                status,
            });
            let response = Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&answer).expect("json")))
                .expect("response");
            Ok::<_, Infallible>(response)
        }
    });
    Client::new(service, NS)
}

/// A candidate `who` with client-go's default timings; its `cut` switch.
pub fn candidate(store: &Shared, who: &'static str) -> (Leadership, Arc<AtomicBool>) {
    let cut = Arc::new(AtomicBool::new(false));
    let leases: Api<Lease> = Api::namespaced(client(store.clone(), who, cut.clone()), NS);
    let (leadership, _task) = spawn(leases, LeaderConfig::new(LEASE, who)).expect("valid config");
    (leadership, cut)
}
