//! What the tests of the `PrometheusCheck` gate against a real Prometheus (`tests/prometheus_real_*.rs`)
//! share: the application they watch and the client under test.
//!
//! Setup (harness: `support/prometheus.rs`): each test starts its own `prometheus` (Debian's package;
//! `$PROMETHEUS_BIN` or `PATH`) on `127.0.0.1:<free port>` with its TSDB in a temp dir, scraping, every
//! second, a tiny exporter the test runs ([`healthy_app`]: axum on 127.0.0.1, `/metrics` whose values
//! the test changes: [`HEALTHY`], [`pod_ready`]). The harness returns once `/-/ready` answers and the
//! exporter's series are stored; after changing a value, a test waits (bounded polling, through the
//! harness' own HTTP client) until Prometheus shows it. Dropping the harness kills Prometheus (also on
//! a panic) and deletes the temp dir, so the tests run in parallel.
//!
//! The client under test is the stepper's own [`PrometheusClient`] ([`client`], [`client_with`]).
//!
//! Without `prometheus` installed every test fails (`scripts/setup.sh`, run by `make test`, installs
//! it), unless the run accepts skipping (`ALLOW_SKIP=1`): then each prints a loud `SKIPPED` line, is
//! named in the skip log `make test` counts, and returns (`prometheus_or_skip!`).
#![allow(dead_code)] // each test crate uses a subset

use std::path::PathBuf;
use std::time::Duration;

use sts_stepper::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use sts_stepper::gates::check::prometheus::QueryOutcome;

use super::local_servers::Exporter;

/// The application's health series: 1 healthy, 0 not.
pub const HEALTHY: &str = "sts_test_healthy";

/// Pod `web-<ordinal>`'s readiness series: 1 Ready, 0 not.
pub fn pod_ready(ordinal: u32) -> String {
    format!("sts_test_pod_ready{{pod=\"web-{ordinal}\"}}")
}

/// An exporter of a healthy three-pod application.
pub async fn healthy_app() -> Exporter {
    Exporter::start(&[
        (HEALTHY, 1.0),
        (&pod_ready(0), 1.0),
        (&pod_ready(1), 1.0),
        (&pod_ready(2), 1.0),
    ])
    .await
}

/// The stepper's client of the Prometheus at `url`, with `auth` and `ca_file`.
pub fn client_with(url: &str, auth: Auth, ca_file: Option<PathBuf>) -> PrometheusClient {
    PrometheusClient::new(&PrometheusConfig {
        url: url.to_string(),
        timeout: Duration::from_secs(5),
        auth,
        ca_file,
    })
    .expect("client config")
}

/// The stepper's client of the Prometheus at `url`, without credentials.
pub fn client(url: &str) -> PrometheusClient {
    client_with(url, Auth::None, None)
}

/// The cause of an outcome that must be an error.
#[track_caller]
pub fn errored(outcome: &QueryOutcome) -> &str {
    match outcome {
        QueryOutcome::Error(cause) => cause,
        other => panic!("expected Error, got {other:?}"),
    }
}
