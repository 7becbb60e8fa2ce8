//! A mocked API server for kube-rs (tower-test, as kube-rs's controller-rs `fixtures.rs` does): a
//! script of expected requests with their answers, and the named request scenarios of a pass.
#![allow(dead_code)] // each test crate uses a subset

pub mod moments;
pub mod watch;

use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::pass::{PassOptions, PassReport, PodReads, run_pass, run_pass_with};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

use crate::common::{fixture_body, now};

/// One expected request and the answer the mock API server gives.
pub struct Expect {
    /// HTTP method.
    pub method: Method,
    /// Path and query, as kube-rs sends it.
    pub uri: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// Answer body; empty for a POST: the request body is echoed (the API server returns the object).
    pub response: Vec<u8>,
}

/// `method uri` answered with `status` and `response`.
pub fn expect(method: Method, uri: &str, status: u16, response: Vec<u8>) -> Expect {
    Expect {
        method,
        uri: uri.into(),
        status,
        response,
    }
}

/// `GET uri` answered 200 with `response`.
pub fn get(uri: &str, response: Vec<u8>) -> Expect {
    expect(Method::GET, uri, 200, response)
}

/// `PATCH uri` answered with `status` and `response`.
pub fn patch(uri: &str, status: u16, response: Vec<u8>) -> Expect {
    expect(Method::PATCH, uri, status, response)
}

pub fn post_event(ns: &str) -> Expect {
    Expect {
        method: Method::POST,
        uri: format!("/apis/events.k8s.io/v1/namespaces/{ns}/events?"),
        status: 201,
        response: Vec::new(), // filled with the request body (the API server echoes the object)
    }
}

pub fn status_body(code: u16, reason: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "code": code}),
    )
    .expect("json")
}

pub const STS_ALL: &str = "/apis/apps/v1/statefulsets?";
pub const PODS_ALL: &str = "/api/v1/pods?";
pub const PDBS_ALL: &str = "/apis/policy/v1/poddisruptionbudgets?";
/// The GET of `demo/web` a step's fresh read starts with.
pub const GET_WEB: &str = "/apis/apps/v1/namespaces/demo/statefulsets/web";
pub const PATCH_WEB: &str =
    "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper";

/// A recorded request: method, URI (asserted on arrival) and JSON body (Null when empty).
#[derive(Debug)]
pub struct Seen {
    /// HTTP method.
    pub method: Method,
    /// Path and query.
    pub uri: String,
    /// JSON body.
    pub body: Value,
}

/// Serves `script` in order, asserting each request's method and URI, and fails if a request comes
/// that the script does not expect or if the client goes away before the script is done. Returns the
/// requests seen.
pub fn serve(
    handle: Handle<Request<Body>, Response<Body>>,
    script: Vec<Expect>,
) -> JoinHandle<Vec<Seen>> {
    tokio::spawn(async move {
        let mut handle = handle;
        let mut seen = Vec::new();
        for (i, exp) in script.into_iter().enumerate() {
            let (req, send) = handle.next_request().await.unwrap_or_else(|| {
                panic!(
                    "request {i} ({} {}) never came; saw {seen:#?}",
                    exp.method, exp.uri
                )
            });
            let method = req.method().clone();
            let uri = req.uri().to_string();
            let bytes = req
                .into_body()
                .collect()
                .await
                .expect("request body")
                .to_bytes();
            let body: Value = if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).expect("request body is JSON")
            };
            assert_eq!(
                (&method, uri.as_str()),
                (&exp.method, exp.uri.as_str()),
                "request {i}"
            );
            let response = if exp.method == Method::POST && exp.response.is_empty() {
                bytes.to_vec()
            } else {
                exp.response
            };
            send.send_response(
                Response::builder()
                    .status(StatusCode::from_u16(exp.status).expect("status"))
                    .header("content-type", "application/json")
                    .body(Body::from(response))
                    .expect("response"),
            );
            seen.push(Seen { method, uri, body });
        }
        if let Some((req, _)) = handle.next_request().await {
            panic!("unexpected extra request {} {}", req.method(), req.uri());
        }
        seen
    })
}

/// `GET /api/v1/namespaces/{ns}/pods` with `labelSelector` = `selector` (URL-encoded): the pods of
/// one StatefulSet, as a pass reads them for a candidate.
pub fn set_pods(ns: &str, selector: &str, response: Vec<u8>) -> Expect {
    let encoded = selector.replace('=', "%3D").replace(',', "%2C");
    get(
        &format!("/api/v1/namespaces/{ns}/pods?&labelSelector={encoded}"),
        response,
    )
}

/// `GET /apis/policy/v1/namespaces/{ns}/poddisruptionbudgets`: the PDBs of a candidate's namespace.
pub fn namespace_pdbs(ns: &str, response: Vec<u8>) -> Expect {
    get(
        &format!("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets?"),
        response,
    )
}

/// The reads of one candidate `demo/web` (selector `app=web`, as in the fixtures): its pods, then the
/// PDBs of `demo`.
pub fn web_candidate_reads(pods: Vec<u8>, pdbs: Vec<u8>) -> [Expect; 2] {
    [
        set_pods("demo", "app=web", pods),
        namespace_pdbs("demo", pdbs),
    ]
}

/// An empty `kind` list body (`PodList`, `StatefulSetList`, …).
pub fn empty_list(kind: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"kind": kind, "apiVersion": "v1", "metadata": {}, "items": []}))
        .expect("json")
}

/// Runs one pass against the mock with `script`, returning the report and the requests seen.
pub async fn pass_with(
    scope: Scope,
    opts: PassOptions,
    script: Vec<Expect>,
) -> (Result<PassReport, String>, Vec<Seen>) {
    let (cluster, server) = mock_cluster(scope, script);
    let report = run_pass(&cluster, &opts, now())
        .await
        .map_err(|e| e.to_string());
    drop(cluster);
    let seen = server.await.expect("mock API server script");
    (report, seen)
}

/// [`pass_with`] over all namespaces with the default options.
pub async fn pass_in_default_scope(script: Vec<Expect>) -> (Result<PassReport, String>, Vec<Seen>) {
    pass_with(Scope::default(), PassOptions::default(), script).await
}

/// A kube client whose API server plays `script` ([`serve`]). Await the handle for the requests seen.
pub fn mock_client(script: Vec<Expect>) -> (Client, JoinHandle<Vec<Seen>>) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), serve(handle, script))
}

/// A [`KubeCluster`] in `scope` over [`mock_client`].
pub fn mock_cluster(scope: Scope, script: Vec<Expect>) -> (KubeCluster, JoinHandle<Vec<Seen>>) {
    let (client, server) = mock_client(script);
    (KubeCluster::new(client, scope, None), server)
}

/// `first`, then the requests of `rest`: a script from named parts.
pub fn script(first: Vec<Expect>, rest: impl IntoIterator<Item = Expect>) -> Vec<Expect> {
    let mut all = first;
    all.extend(rest);
    all
}

/// One pass over the set `web` (a moment-2 StatefulSet as JSON, named `web` in `demo`) with the
/// checks' clients `checks`: the API server expects the StatefulSet LIST, `web`'s pod and PDB reads
/// when `candidate`, one PATCH of `web` (answered with `web`, stepped to partition 3 when `steps`) and
/// `events` Events. Returns the report, the PATCH's body and the bodies of the requests after it (the
/// Events).
pub async fn pass_over_web(
    checks: &Checks,
    opts: &PassOptions,
    web: Value,
    (candidate, steps): (bool, bool),
    events: usize,
) -> (PassReport, Value, Vec<Value>) {
    let mut stored = web.clone();
    stored["kind"] = json!("StatefulSet");
    stored["apiVersion"] = json!("apps/v1");
    if steps {
        stored["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    }
    let list = json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": [web]});
    let reads: Vec<Expect> = if candidate {
        web_candidate_reads(
            fixture_body("2-stepped-4-pods.json"),
            fixture_body("2-stepped-4-pdbs.json"),
        )
        .into_iter()
        .collect()
    } else {
        Vec::new()
    };
    let mut expected = script(
        vec![get(
            "/apis/apps/v1/statefulsets?",
            serde_json::to_vec(&list).expect("json"),
        )],
        reads,
    );
    let at = expected.len();
    expected.push(patch(
        "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
        200,
        serde_json::to_vec(&stored).expect("json"),
    ));
    expected.extend((0..events).map(|_| post_event("demo")));
    let (cluster, server) = mock_cluster(Scope::default(), expected);
    let report = run_pass_with(&cluster, checks, opts, now())
        .await
        .expect("pass");
    drop(cluster);
    let seen = server.await.expect("mock API server script");
    let after = seen[at + 1..].iter().map(|s| s.body.clone()).collect();
    (report, seen[at].body.clone(), after)
}

/// The options of the single-set commands (`status`, `step`, `wait`) on `demo/web`: its own pods read.
pub fn web_pods() -> PassOptions {
    PassOptions {
        pod_reads: PodReads::Set {
            namespace: "demo".into(),
            name: "web".into(),
        },
        ..PassOptions::default()
    }
}
