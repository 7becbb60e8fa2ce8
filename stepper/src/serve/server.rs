//! The `watch` HTTP endpoints: `/metrics` (OpenMetrics text) and `/healthz`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use jiff::Timestamp;

use crate::serve::metrics::Metrics;

/// OpenMetrics text content type.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Liveness: the loop records the Unix second its last pass ended; `/healthz` fails when that is older
/// than `max_age_seconds` (a stuck loop), so the kubelet restarts the stepper.
#[derive(Clone, Debug)]
pub struct Health {
    /// Unix seconds at which the last pass ended (or the loop started).
    pub last_pass: Arc<AtomicI64>,
    /// Allowed age in seconds (3 × `--interval`, at least 300).
    pub max_age_seconds: i64,
}

#[derive(Clone)]
struct AppState {
    metrics: Arc<Metrics>,
    health: Health,
}

/// The router: `GET /metrics`, `GET /healthz`.
pub fn router(metrics: Arc<Metrics>, health: Health) -> Router {
    Router::new()
        .route("/metrics", get(metrics_handler))
        .route("/healthz", get(healthz))
        .with_state(AppState { metrics, health })
}

async fn metrics_handler(State(s): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, OPENMETRICS)], s.metrics.encode())
}

async fn healthz(State(s): State<AppState>) -> impl IntoResponse {
    let age = Timestamp::now().as_second() - s.health.last_pass.load(Ordering::Relaxed);
    if age <= s.health.max_age_seconds {
        (StatusCode::OK, "ok\n".to_string())
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("no pass for {age}s (limit {}s)\n", s.health.max_age_seconds),
        )
    }
}

/// Serves the router on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    health: Health,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    if let Err(e) = axum::serve(listener, router(metrics, health))
        .with_graceful_shutdown(shutdown)
        .await
    {
        tracing::error!(error = %e, "metrics server stopped");
    }
}
