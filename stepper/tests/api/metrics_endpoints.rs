//! `watch`'s `/metrics` and `/healthz` endpoints (no network: the router is called in-process): the
//! OpenMetrics text, and `/healthz` failing once no pass ran for too long.
use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use jiff::Timestamp;
use sts_stepper::serve::metrics::Metrics;
use sts_stepper::serve::server::{Health, OPENMETRICS, router};
use tower::ServiceExt;

async fn get(app: axum::Router, path: &str) -> (StatusCode, String, String) {
    let resp = app
        .oneshot(Request::get(path).body(Body::empty()).expect("request"))
        .await
        .expect("response");
    let status = resp.status();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    (status, ctype, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn metrics_and_healthz_endpoints() {
    let metrics = Arc::new(Metrics::new());
    let fresh = Health {
        last_pass: Arc::new(AtomicI64::new(Timestamp::now().as_second())),
        max_age_seconds: 300,
    };
    let (status, ctype, body) = get(router(metrics.clone(), fresh.clone()), "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ctype, OPENMETRICS);
    assert!(
        body.contains("# TYPE sts_safe_rollout_pass_duration_seconds histogram"),
        "{body}"
    );
    let (status, _, body) = get(router(metrics.clone(), fresh), "/healthz").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
    let stale = Health {
        last_pass: Arc::new(AtomicI64::new(Timestamp::now().as_second() - 3600)),
        max_age_seconds: 300,
    };
    let (status, _, body) = get(router(metrics, stale), "/healthz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.starts_with("no pass for"), "{body}");
}
