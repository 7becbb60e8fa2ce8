//! The kube client the commands build (`sts_stepper::cluster::kube_client`): kube-rs's stack over
//! the buffered, paced connections of `cluster::read_buffer`, against an API server stand-in over
//! HTTPS on 127.0.0.1 whose certificate a test-made CA issued (rustls on both ends). An answer larger
//! than the read buffer arrives whole; a watch whose connection has turned into a stream (read in
//! batches, the socket's low-water mark raised) still brings every event, the lone small ones too.
//! hyper's read buffer has a fixed size: an answer whose head fits arrives, a longer head is refused.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use futures::stream::BoxStream;
use futures::{StreamExt as _, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::{Api, Config};
use serde_json::json;
use sts_stepper::cluster::kube_client::{HTTP1_READ_BUFFER_BYTES, Stack, client, stack_for};
use sts_stepper::cluster::read_buffer::READ_BUFFER_BYTES;
use sts_stepper::cluster::read_pacing::STREAM_AFTER;
use tokio::sync::mpsc;

use crate::support::https_server::HttpsServer;
use crate::support::test_ca::TestCa;

/// A pod named `name` with an annotation of `pad` bytes.
fn pod(name: &str, pad: usize) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "db", "resourceVersion": "7",
                        "annotations": {"status": "x".repeat(pad)}}})
}

/// The watch's events, sent by the test through a channel, one JSON line each.
fn app(events: std::sync::Arc<tokio::sync::Mutex<Option<mpsc::Receiver<String>>>>) -> Router {
    Router::new().route(
        "/api/v1/namespaces/db/pods",
        get(move |uri: axum::http::Uri| {
            let events = events.clone();
            async move {
                if !uri.query().is_some_and(|q| q.contains("watch=true")) {
                    let items: Vec<_> = (0..20).map(|i| pod(&format!("p-{i}"), 5_000)).collect();
                    let list = json!({"apiVersion": "v1", "kind": "PodList",
                                      "metadata": {"resourceVersion": "7"}, "items": items});
                    return Body::from(list.to_string());
                }
                let rx = events.lock().await.take().expect("one watch");
                let lines = tokio_stream_of(rx).map(|l| Ok::<_, std::io::Error>(l + "\n"));
                Body::from_stream(lines)
            }
        }),
    )
}

fn tokio_stream_of(mut rx: mpsc::Receiver<String>) -> impl futures::Stream<Item = String> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// The API server of [`app`] on 127.0.0.1 over HTTPS with a certificate of `ca`, its watch fed by `events`.
async fn serve(ca: &TestCa, events: mpsc::Receiver<String>) -> HttpsServer {
    let events = std::sync::Arc::new(tokio::sync::Mutex::new(Some(events)));
    HttpsServer::start(ca, &["127.0.0.1"], None, app(events)).await
}

async fn api(server: &HttpsServer, ca: &TestCa) -> Api<Pod> {
    let mut config = Config::new(server.url("127.0.0.1", "").parse().expect("url"));
    config.root_cert = Some(vec![pem_der(&ca.cert_pem)]);
    assert_eq!(stack_for(&config), Stack::Buffered);
    Api::namespaced(client(config).expect("client"), "db")
}

fn pem_der(pem: &str) -> Vec<u8> {
    use tokio_rustls::rustls::pki_types::CertificateDer;
    use tokio_rustls::rustls::pki_types::pem::PemObject as _;
    CertificateDer::from_pem_slice(pem.as_bytes())
        .expect("CA PEM")
        .to_vec()
}

#[tokio::test]
async fn an_answer_larger_than_the_read_buffer_arrives_whole_over_tls() {
    let ca = TestCa::new("kube client test CA");
    let (_tx, rx) = mpsc::channel(1);
    let server = serve(&ca, rx).await;
    let pods = api(&server, &ca)
        .await
        .list(&ListParams::default())
        .await
        .expect("list");
    assert_eq!(pods.items.len(), 20);
    const {
        assert!(
            20 * 5_000 > READ_BUFFER_BYTES,
            "the answer spans several reads"
        )
    };
    let pad = pods.items[19]
        .metadata
        .annotations
        .as_ref()
        .expect("annotations")["status"]
        .len();
    assert_eq!(pad, 5_000);
}

#[tokio::test]
async fn a_watch_read_in_batches_brings_every_event() {
    let ca = TestCa::new("kube client test CA");
    let (tx, rx) = mpsc::channel(16);
    let server = serve(&ca, rx).await;
    let api = api(&server, &ca).await;
    let mut events = api
        .watch(&WatchParams::default(), "7")
        .await
        .expect("watch")
        .boxed();
    let event = |name: &str, pad| json!({"type": "MODIFIED", "object": pod(name, pad)}).to_string();
    let next = async |events: &mut BoxStream<'_, kube::Result<WatchEvent<Pod>>>| -> String {
        let got = tokio::time::timeout(Duration::from_secs(10), TryStreamExt::try_next(events))
            .await
            .expect("no event stuck below the low-water mark")
            .expect("event")
            .expect("stream open");
        match got {
            WatchEvent::Modified(p) => p.metadata.name.expect("name"),
            other => panic!("{other:?}"),
        }
    };
    tx.send(event("first", 10)).await.unwrap();
    assert_eq!(next(&mut events).await, "first");
    // Past STREAM_AFTER without a write: the connection is a stream, read in batches.
    tokio::time::sleep(STREAM_AFTER + Duration::from_millis(200)).await;
    for i in 0..3 {
        tx.send(event(&format!("burst-{i}"), 9_000)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for i in 0..3 {
        assert_eq!(next(&mut events).await, format!("burst-{i}"));
    }
    // A lone small event, far below the low-water mark: read when its batch is due.
    tx.send(event("lone", 10)).await.unwrap();
    assert_eq!(next(&mut events).await, "lone");
    tokio::time::sleep(Duration::from_millis(300)).await;
    tx.send(event("after a quiet spell", 10)).await.unwrap();
    assert_eq!(next(&mut events).await, "after a quiet spell");
}

/// `GET` of a pod whose answer's head is padded (an `x-pad` header) to 1 KiB under hyper's read
/// buffer (pod `fits`) or 1 KiB over it (any other name).
fn padded_heads() -> Router {
    Router::new().route(
        "/api/v1/namespaces/db/pods/{name}",
        get(
            |axum::extract::Path(name): axum::extract::Path<String>| async move {
                let pad = if name == "fits" {
                    HTTP1_READ_BUFFER_BYTES - 1024
                } else {
                    HTTP1_READ_BUFFER_BYTES + 1024
                };
                axum::http::Response::builder()
                    .header("x-pad", "x".repeat(pad))
                    .body(Body::from(pod(&name, 10).to_string()))
                    .expect("response")
            },
        ),
    )
}

#[tokio::test]
async fn a_head_that_fits_the_read_buffer_arrives_and_a_longer_one_is_refused() {
    let ca = TestCa::new("kube client test CA");
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, padded_heads()).await;
    let api = api(&server, &ca).await;
    let pod = api.get("fits").await.expect("a head under the read buffer");
    assert_eq!(pod.metadata.name.as_deref(), Some("fits"));
    let refused = api
        .get("too-long")
        .await
        .expect_err("a head over the read buffer");
    let too_large = std::iter::successors(Some(&refused as &dyn std::error::Error), |e| e.source())
        .any(|e| {
            e.downcast_ref::<hyper::Error>()
                .is_some_and(hyper::Error::is_parse_too_large)
        });
    assert!(too_large, "hyper's limit on a head: {refused:?}");
}
