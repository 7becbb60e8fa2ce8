//! A scripted mock API server (tower-test, as kube-rs's controller-rs tests do): each expected request
//! (method, URI) in order, with the answer to give; the requests seen are returned with their bodies.
#![allow(dead_code)] // each test crate uses a subset

use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

/// One expected request and the answer.
pub struct Expect {
    /// HTTP method.
    pub method: Method,
    /// Path and query, as kube-rs sends it.
    pub uri: String,
    /// HTTP status of the answer.
    pub status: u16,
    /// Answer body; empty for a 2xx POST/PUT/PATCH: the request body is echoed.
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

/// A 201 POST of an Event in `ns` (events.k8s.io/v1), answered with the Event itself.
pub fn post_event(ns: &str) -> Expect {
    expect(
        Method::POST,
        &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events?"),
        201,
        Vec::new(),
    )
}

/// A `Status` body with `code`, `reason` and `message`.
pub fn status_body(code: u16, reason: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": if code < 300 { "Success" } else { "Failure" },
        "message": message, "reason": reason, "code": code}),
    )
    .expect("json")
}

/// A request the mock saw: method, URI and JSON body (`Null` when empty).
#[derive(Debug)]
pub struct Seen {
    /// HTTP method.
    pub method: Method,
    /// Path and query.
    pub uri: String,
    /// JSON body.
    pub body: Value,
}

/// A kube client whose API server plays `script` in order, asserting each request's method and URI,
/// and failing on a request the script does not expect or one that never comes (once the client is
/// dropped). Await the handle for the requests seen.
pub fn mock_client(script: Vec<Expect>) -> (Client, JoinHandle<Vec<Seen>>) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (
        Client::new(service, "default"),
        tokio::spawn(play(handle, script)),
    )
}

async fn play(mut handle: Handle<Request<Body>, Response<Body>>, script: Vec<Expect>) -> Vec<Seen> {
    let mut seen: Vec<Seen> = Vec::new();
    for (i, exp) in script.into_iter().enumerate() {
        let Some((req, send)) = handle.next_request().await else {
            panic!(
                "request {i} ({} {}) never came; saw {seen:#?}",
                exp.method, exp.uri
            );
        };
        let method = req.method().clone();
        let uri = req.uri().to_string();
        let bytes = req.into_body().collect().await.expect("body").to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("request body is JSON")
        };
        assert_eq!(
            (&method, uri.as_str()),
            (&exp.method, exp.uri.as_str()),
            "request {i}; saw {seen:#?}"
        );
        let echo = exp.response.is_empty() && exp.method != Method::GET && exp.status < 300;
        let response = if echo { bytes.to_vec() } else { exp.response };
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
        panic!(
            "unexpected extra request {} {}; saw {seen:#?}",
            req.method(),
            req.uri()
        );
    }
    seen
}
