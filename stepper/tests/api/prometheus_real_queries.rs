//! The stepper's Prometheus client against a real Prometheus: which answers pass (a non-empty vector,
//! matrix or scalar), which fail (an empty result, NaN), and which are no answer at all (PromQL errors
//! with Prometheus' message, a stopped Prometheus, a hung server, a 5xx, a page that is not the API's).
//!
//! Setup and skipping: `support/prometheus_app.rs`.

use crate::support::prometheus::{HungServer, PrometheusServer, StubServer, Web};
use crate::support::prometheus_app::{HEALTHY, client, errored, healthy_app};
use crate::support::prometheus_bin::prometheus_or_skip;
use axum::http::StatusCode;
use std::time::Duration;
use sts_stepper::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use sts_stepper::gates::check::prometheus::QueryOutcome;

#[tokio::test]
async fn non_empty_results_pass_and_count_their_series() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    // A trailing slash on the URL is fine.
    let c = client(&format!("{}/", prom.url()));
    assert_eq!(c.endpoint(), format!("{}/api/v1/query", prom.url()));

    assert_eq!(
        c.query("sts_test_pod_ready == 1").await,
        QueryOutcome::NonEmpty(3)
    );
    assert_eq!(c.query(HEALTHY).await, QueryOutcome::NonEmpty(1));
    assert_eq!(
        c.query(r#"up{job="exporter"} == 1"#).await,
        QueryOutcome::NonEmpty(1)
    );
    // A range vector (matrix) and a scalar are answers too.
    assert_eq!(
        c.query("sts_test_healthy[1m]").await,
        QueryOutcome::NonEmpty(1)
    );
    assert_eq!(
        c.query("scalar(sum(sts_test_pod_ready))").await,
        QueryOutcome::NonEmpty(1)
    );
    // `scalar()` of an empty vector is NaN: no data, so it fails like an empty vector.
    assert_eq!(
        c.query(r#"scalar(up{job="nope"} == 1)"#).await,
        QueryOutcome::Empty
    );
}

#[tokio::test]
async fn empty_results_fail() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());

    assert_eq!(c.query("sts_test_healthy == 0").await, QueryOutcome::Empty);
    assert_eq!(
        c.query(r#"up{job="exporter"} == 0"#).await,
        QueryOutcome::Empty
    );
    assert_eq!(
        c.query("sts_test_no_such_metric").await,
        QueryOutcome::Empty
    );

    // The application turns unhealthy: the same query that passed now returns nothing.
    assert_eq!(
        c.query("sts_test_healthy == 1").await,
        QueryOutcome::NonEmpty(1)
    );
    app.set(HEALTHY, 0.0);
    prom.wait_until("sts_test_healthy == 0", true).await;
    assert_eq!(c.query("sts_test_healthy == 1").await, QueryOutcome::Empty);
}

#[tokio::test]
async fn promql_errors_are_errors_with_prometheus_message() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());

    let syntax = c.query("sum(sts_test_pod_ready").await;
    let cause = errored(&syntax);
    assert!(
        cause.contains("400") && cause.contains("bad_data") && cause.contains("parse error"),
        "{cause}"
    );

    let types = c.query("rate(sts_test_healthy)").await;
    let cause = errored(&types);
    assert!(
        cause.contains("bad_data") && cause.contains("range vector"),
        "{cause}"
    );

    // Valid syntax, failing evaluation: 422 execution.
    let exec = c
        .query("sts_test_pod_ready + on() sts_test_pod_ready")
        .await;
    let cause = errored(&exec);
    assert!(
        cause.contains("422") && cause.contains("execution"),
        "{cause}"
    );

    // A URL that is not Prometheus' (the exporter has no /api/v1/query).
    let wrong = client(&app.url()).query(HEALTHY).await;
    let cause = errored(&wrong);
    assert!(
        cause.contains("404") && cause.contains("not a Prometheus API answer"),
        "{cause}"
    );
}

#[tokio::test]
async fn stopped_prometheus_is_no_answer() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let mut prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());
    assert_eq!(c.query(HEALTHY).await, QueryOutcome::NonEmpty(1));

    prom.stop();
    // The first query after the kill may still go out on the pooled keep-alive connection
    // ("connection closed before message completed"); the next one finds the port closed.
    let outcome = c.query(HEALTHY).await;
    assert!(
        errored(&outcome).to_lowercase().contains("connection"),
        "{outcome:?}"
    );
    let outcome = c.query(HEALTHY).await;
    let cause = errored(&outcome);
    assert!(
        cause.to_lowercase().contains("connection refused")
            && cause.contains(&prom.url().replace("http://", "")),
        "{cause}"
    );
    // A fresh client (a restarted stepper) too.
    let outcome = client(&prom.url()).query(HEALTHY).await;
    assert!(
        errored(&outcome)
            .to_lowercase()
            .contains("connection refused"),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn unanswered_5xx_and_unreadable_answers_are_errors() {
    // No Prometheus needed: a listener that accepts and never answers, and a 503 page.
    let hung = HungServer::start().await;
    let c = PrometheusClient::new(&PrometheusConfig {
        url: hung.url(),
        timeout: Duration::from_millis(300),
        auth: Auth::None,
        ca_file: None,
    })
    .expect("client config");
    let outcome = c.query(HEALTHY).await;
    let cause = errored(&outcome).to_lowercase();
    assert!(
        cause.contains("timed out") || cause.contains("timeout"),
        "{cause}"
    );

    let unavailable = StubServer::start(
        StatusCode::SERVICE_UNAVAILABLE,
        "<html>503 Service Temporarily Unavailable</html>",
    )
    .await;
    let outcome = client(&unavailable.url()).query(HEALTHY).await;
    let cause = errored(&outcome);
    assert!(cause.contains("HTTP 503"), "{cause}");

    // Prometheus' own 503 (a query that exceeded --query.timeout) names its error type.
    let timeout = StubServer::start(
        StatusCode::SERVICE_UNAVAILABLE,
        r#"{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}"#,
    )
    .await;
    let outcome = client(&timeout.url()).query(HEALTHY).await;
    let cause = errored(&outcome);
    assert!(
        cause.contains("HTTP 503") && cause.contains("timeout query timed out"),
        "{cause}"
    );

    // A 200 whose body is not the Prometheus API's (a captive portal, a proxy's page): unreadable.
    let garbage = StubServer::start(StatusCode::OK, "<html>sign in</html>").await;
    let outcome = client(&garbage.url()).query(HEALTHY).await;
    let cause = errored(&outcome);
    assert!(
        cause.contains("HTTP 200") && cause.contains("not a Prometheus API answer"),
        "{cause}"
    );
}
