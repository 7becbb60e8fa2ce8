//! The `PrometheusCheck` gate against a real Prometheus.
//!
//! Setup (harness: `tests/support/prometheus.rs` and the servers beside it): each test starts its own `prometheus` (Debian's
//! package; `$PROMETHEUS_BIN` or `PATH`) on `127.0.0.1:<free port>` with its TSDB in a temp dir,
//! scraping, every second, a tiny exporter the test runs (axum on 127.0.0.1, `/metrics` whose values
//! the test changes: `sts_test_healthy`, `sts_test_pod_ready{pod="web-N"}`). The harness returns once
//! `/-/ready` answers and the exporter's series are stored; after changing a value, a test waits
//! (bounded polling, through the harness' own HTTP client) until Prometheus shows it. Dropping the
//! harness kills Prometheus (also on a panic) and deletes the temp dir, so the tests run in parallel.
//!
//! The client under test is the stepper's own [`PrometheusClient`]; its outcomes feed the gate's pure
//! [`check_result`], with the state round-tripped through the `<prefix>/prometheus-check` annotation as a
//! CronJob pass would. Credentials: basic auth is Prometheus' own (`--web.config.file` with a bcrypt
//! hash); Prometheus cannot check bearer tokens, so they are checked by a small auth proxy in front of
//! it (as kube-rbac-proxy or a hosted Prometheus' gateway would), which forwards to the real
//! Prometheus; TLS is Prometheus' own, with a certificate from a CA made per test (rcgen).
//!
//! Without `prometheus` installed every test fails (`scripts/setup.sh`, run by `make test`, installs
//! it), unless the run accepts skipping (`ALLOW_SKIP=1`): then each prints a loud `SKIPPED` line, is
//! named in the skip log `make test` counts, and returns.
mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sts_safe_rollout_rules::annotations::{self, PAUSED_REASON, PROMETHEUS_CHECK};
use sts_stepper::cluster::prometheus::{Auth, ConfigError, PrometheusClient, PrometheusConfig};
use sts_stepper::config::{Keys, SetConfig, check_config};
use sts_stepper::gates::prometheus::{
    CheckConfig, CheckResult, CheckState, QueryOutcome, check_result, current_state,
};
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, run_pass_with};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};
use support::prometheus::{
    BearerProxy, Exporter, HungServer, PrometheusServer, StubServer, TestCa, Web, write_file,
};
use support::prometheus_bin::prometheus_bin;

const PREFIX: &str = "safe-rollout.dev";
const PARTITION: i32 = 3;
const REVISION: &str = "web-7d7598bf9d";
const HEALTHY: &str = "sts_test_healthy";

/// The `prometheus` binary, or return from the test (under `ALLOW_SKIP=1`, after the harness logged the
/// skip; otherwise the harness fails the test).
macro_rules! prometheus_or_skip {
    () => {
        match prometheus_bin() {
            Some(bin) => bin,
            None => return,
        }
    };
}

fn pod_ready(ordinal: u32) -> String {
    format!("sts_test_pod_ready{{pod=\"web-{ordinal}\"}}")
}

/// An exporter of a healthy three-pod application.
async fn healthy_app() -> Exporter {
    Exporter::start(&[
        (HEALTHY, 1.0),
        (&pod_ready(0), 1.0),
        (&pod_ready(1), 1.0),
        (&pod_ready(2), 1.0),
    ])
    .await
}

fn client_with(url: &str, auth: Auth, ca_file: Option<PathBuf>) -> PrometheusClient {
    PrometheusClient::new(&PrometheusConfig {
        url: url.to_string(),
        timeout: Duration::from_secs(5),
        auth,
        ca_file,
    })
    .expect("client config")
}

fn client(url: &str) -> PrometheusClient {
    client_with(url, Auth::None, None)
}

#[track_caller]
fn errored(outcome: &QueryOutcome) -> &str {
    match outcome {
        QueryOutcome::Error(cause) => cause,
        other => panic!("expected Error, got {other:?}"),
    }
}

/// `web` in `ns` with these `<prefix>/…` annotations.
fn set(annotations: &[(&str, &str)]) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| (format!("{PREFIX}/{k}"), (*v).to_string()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        ..StatefulSet::default()
    }
}

/// A set's check as successive passes run it: the configuration from its annotations, the state
/// read from and written back to `<prefix>/prometheus-check` between passes.
struct Rollout {
    set: StatefulSet,
    config: CheckConfig,
}

/// The stored `<prefix>/prometheus-check` of `set`, as the stepper reads it.
fn stored(set: &StatefulSet) -> Option<String> {
    SetConfig::parse(set, &Arc::new(Keys::new(PREFIX)))
        .stamps
        .prometheus_check
}

impl Rollout {
    fn new(annotations: &[(&str, &str)]) -> Rollout {
        let set = set(annotations);
        let config = check_config(&set, &Keys::new(PREFIX))
            .expect("valid annotations")
            .expect("a check is configured");
        Rollout { set, config }
    }

    fn state(&self) -> Option<CheckState> {
        current_state(stored(&self.set).as_deref(), PARTITION, REVISION)
    }

    /// One pass at `now`: the verdict, running the queries against `prometheus` when a check is due,
    /// and recording the new state in the annotation.
    async fn pass(&mut self, prometheus: &PrometheusClient, now: Timestamp) -> CheckResult {
        let state = self.state();
        let first = check_result(&self.config, state.as_ref(), None, PARTITION, REVISION, now);
        if first != CheckResult::Due {
            return first;
        }
        let mut outcomes = Vec::new();
        for q in &self.config.queries {
            outcomes.push(prometheus.query(&q.expr).await);
        }
        let v = check_result(
            &self.config,
            state.as_ref(),
            Some(&outcomes),
            PARTITION,
            REVISION,
            now,
        );
        if let CheckResult::Pass { state: Some(s) } | CheckResult::Wait { state: Some(s), .. } = &v
        {
            self.set
                .metadata
                .annotations
                .get_or_insert_default()
                .insert(format!("{PREFIX}/{PROMETHEUS_CHECK}"), s.to_annotation());
        }
        v
    }
}

#[track_caller]
fn waiting(v: &CheckResult) -> (&str, &CheckState) {
    match v {
        CheckResult::Wait {
            detail,
            state: Some(s),
        } => (detail, s),
        other => panic!("expected Wait with a new state, got {other:?}"),
    }
}

fn t(seconds: i64) -> Timestamp {
    let t0: Timestamp = "2026-11-23T05:00:00Z".parse().expect("time");
    t0 + SignedDuration::from_secs(seconds)
}

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
async fn success_threshold_counts_consecutive_checks_across_passes() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());
    let mut rollout = Rollout::new(&[
        ("prometheus-query", "sts_test_healthy == 1"),
        ("prometheus-query-2", "sum(sts_test_pod_ready) >= 3"),
        ("success-threshold", "3"),
        ("check-period-seconds", "30"),
    ]);
    assert_eq!(rollout.config.queries.len(), 2);

    let v = rollout.pass(&c, t(0)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (1, 0), "{detail}");
    assert!(
        detail.contains("1 of 3 consecutive checks passed"),
        "{detail}"
    );

    // Not due yet: nothing is queried, the stored count stands.
    let v = rollout.pass(&c, t(10)).await;
    assert!(
        matches!(&v, CheckResult::Wait { detail, state: None } if detail.contains("next check in 20s")),
        "{v:?}"
    );

    let v = rollout.pass(&c, t(30)).await;
    assert_eq!(waiting(&v).1.successes, 2);

    // One pod goes unready: the second query turns empty, the count starts over.
    app.set(&pod_ready(2), 0.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", false).await;
    let v = rollout.pass(&c, t(60)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (0, 1), "{detail}");
    let failure = s.last_failure.as_deref().unwrap_or_default();
    assert!(
        failure.contains("prometheus-query-2 returned an empty result"),
        "{failure}"
    );

    app.set(&pod_ready(2), 1.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", true).await;
    for (i, now) in [90, 120].into_iter().enumerate() {
        let v = rollout.pass(&c, t(now)).await;
        let s = waiting(&v).1;
        assert_eq!((s.successes, s.failures), (i as u32 + 1, 1));
    }
    let v = rollout.pass(&c, t(150)).await;
    let CheckResult::Pass { state: Some(s) } = &v else {
        panic!("expected Pass with a new state, got {v:?}");
    };
    assert_eq!(s.successes, 3);
    // Within the period the stored passes still hold, without a query.
    assert_eq!(
        rollout.pass(&c, t(170)).await,
        CheckResult::Pass { state: None }
    );
    // A step (new partition) starts over: the stored state is not this observation's.
    assert_eq!(
        current_state(stored(&rollout.set).as_deref(), PARTITION - 1, REVISION),
        None
    );
}

#[tokio::test]
async fn failure_limit_counts_empty_results_and_no_answer_apart() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let mut prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());
    let mut rollout = Rollout::new(&[
        ("prometheus-query-1", "sum(sts_test_pod_ready) >= 3"),
        ("success-threshold", "2"),
        ("failure-limit", "2"),
        ("check-period-seconds", "10"),
    ]);

    assert_eq!(waiting(&rollout.pass(&c, t(0)).await).1.successes, 1);

    app.set(&pod_ready(1), 0.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", false).await;
    let v = rollout.pass(&c, t(10)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (0, 1));
    assert!(detail.contains("1 failed of limit 2"), "{detail}");

    // A success in between resets the successes, not the failures since the last step.
    app.set(&pod_ready(1), 1.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", true).await;
    let v = rollout.pass(&c, t(20)).await;
    assert_eq!((waiting(&v).1.successes, waiting(&v).1.failures), (1, 1));

    // No answer is an error, not a failure (issue 29 item 3): counted apart, never a pause.
    prom.stop();
    let v = rollout.pass(&c, t(30)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures, s.errors), (0, 1, 1));
    assert!(
        detail.contains("1 failed of limit 2, 1 in a row got no answer")
            && detail
                .contains("last check errored: safe-rollout.dev/prometheus-query-1 got no answer")
            && detail.to_lowercase().contains("connection"),
        "{detail}"
    );
    let v = rollout.pass(&c, t(40)).await;
    assert_eq!(waiting(&v).1.errors, 2, "{v:?}");
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

#[tokio::test]
async fn basic_auth_checked_by_prometheus() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let web = Web {
        basic_auth: Some(("stepper".into(), "c0rrect horse".into())),
        tls: None,
    };
    let prom = PrometheusServer::start(&bin, &app, web).await;
    let basic = |file: PathBuf| Auth::Basic {
        username: "stepper".into(),
        password_file: file,
    };
    // As mounted from a Secret made with `kubectl create secret --from-file`: a trailing newline.
    let right = write_file(prom.dir(), "password", "c0rrect horse\n");
    let wrong = write_file(prom.dir(), "wrong-password", "battery staple\n");

    let c = client_with(&prom.url(), basic(right), None);
    assert_eq!(c.query(HEALTHY).await, QueryOutcome::NonEmpty(1));

    for auth in [basic(wrong), Auth::None] {
        let outcome = client_with(&prom.url(), auth.clone(), None)
            .query(HEALTHY)
            .await;
        let cause = errored(&outcome);
        assert!(cause.contains("401"), "{auth:?}: {cause}");
    }

    let missing = prom.dir().join("no-such-file");
    let outcome = client_with(&prom.url(), basic(missing.clone()), None)
        .query(HEALTHY)
        .await;
    let cause = errored(&outcome);
    assert!(
        cause.contains("--prometheus-password-file") && cause.contains(&*missing.to_string_lossy()),
        "{cause}"
    );
}

#[tokio::test]
async fn bearer_token_checked_by_an_auth_proxy() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let proxy = BearerProxy::start(&prom.url(), "tok-3f9a").await;
    let token =
        |name: &str, value: &str| Auth::BearerTokenFile(write_file(prom.dir(), name, value));

    let c = client_with(&proxy.url(), token("token", "tok-3f9a\n"), None);
    assert_eq!(
        c.query("sts_test_pod_ready == 1").await,
        QueryOutcome::NonEmpty(3)
    );
    assert_eq!(proxy.seen(), [Some("Bearer tok-3f9a".to_string())]);

    let wrong = client_with(&proxy.url(), token("wrong", "tok-0000\n"), None)
        .query(HEALTHY)
        .await;
    assert!(errored(&wrong).contains("401"), "{wrong:?}");
    let none = client(&proxy.url()).query(HEALTHY).await;
    assert!(errored(&none).contains("401"), "{none:?}");
    assert_eq!(
        proxy.seen()[1..],
        [Some("Bearer tok-0000".to_string()), None]
    );

    // An unreadable token file: no request at all.
    let missing = Auth::BearerTokenFile(prom.dir().join("no-such-token"));
    let outcome = client_with(&proxy.url(), missing, None)
        .query(HEALTHY)
        .await;
    assert!(
        errored(&outcome).contains("--prometheus-bearer-token-file"),
        "{outcome:?}"
    );
    assert_eq!(proxy.seen().len(), 3);
}

#[tokio::test]
async fn tls_verified_against_the_ca_file() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let ca = Arc::new(TestCa::new("sts-stepper test CA"));
    let web = Web {
        basic_auth: Some(("stepper".into(), "over-tls".into())),
        tls: Some(ca.clone()),
    };
    let prom = PrometheusServer::start(&bin, &app, web).await;
    assert!(prom.url().starts_with("https://"));
    let auth = Auth::Basic {
        username: "stepper".into(),
        password_file: write_file(prom.dir(), "password", "over-tls"),
    };
    let ca_file = write_file(prom.dir(), "ca.pem", &ca.cert_pem);
    let other_ca = write_file(
        prom.dir(),
        "other-ca.pem",
        &TestCa::new("some other CA").cert_pem,
    );

    let c = client_with(&prom.url(), auth.clone(), Some(ca_file));
    assert_eq!(c.query(HEALTHY).await, QueryOutcome::NonEmpty(1));

    // Without the CA file (web PKI roots only), or with another CA: the certificate is refused.
    for ca_file in [None, Some(other_ca)] {
        let outcome = client_with(&prom.url(), auth.clone(), ca_file.clone())
            .query(HEALTHY)
            .await;
        let cause = errored(&outcome);
        assert!(cause.contains("certificate"), "{ca_file:?}: {cause}");
    }

    // Plain HTTP to the TLS port.
    let plain = client_with(&prom.url().replace("https://", "http://"), auth, None)
        .query(HEALTHY)
        .await;
    assert!(errored(&plain).contains("HTTP 400"), "{plain:?}");

    // A CA file that holds no certificate, or none at all: the client is not built.
    let not_pem = write_file(prom.dir(), "not-pem.txt", "hello\n");
    for path in [not_pem, prom.dir().join("no-such-ca.pem")] {
        let built = PrometheusClient::new(&PrometheusConfig {
            url: prom.url(),
            timeout: Duration::from_secs(5),
            auth: Auth::None,
            ca_file: Some(path.clone()),
        });
        assert!(
            matches!(&built, Err(e @ ConfigError::CaFile { .. })
                if e.to_string().contains(&*path.to_string_lossy())),
            "{path:?}: {built:?}"
        );
    }
}

/// One virtual second of the simulated cluster and a stepper pass at it.
async fn sim_second(
    cluster: &SimCluster,
    prometheus: &PrometheusClient,
    opts: &PassOptions,
    t: i64,
) -> Outcome {
    cluster.world().tick(t);
    let report = run_pass_with(cluster, prometheus, opts, timestamp(t))
        .await
        .expect("pass");
    assert_eq!(report.sets.len(), 1);
    report.sets[0].outcome.clone()
}

fn sim_annotation(cluster: &SimCluster, name: &str) -> Option<String> {
    cluster.world().set["metadata"]["annotations"][annotations::key(PREFIX, name)]
        .as_str()
        .map(str::to_string)
}

/// The whole stepper pass (`run_pass_with`) over a simulated cluster, gated by the real Prometheus:
/// steps while the query returns a result, stops when it turns empty, pauses at the failure limit,
/// and finishes the rollout once the application is healthy and a person lifted the pause.
#[tokio::test]
async fn stepper_pass_steps_only_while_the_query_returns_a_result() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());

    let shape = SetShape {
        name: "web".into(),
        namespace: "demo".into(),
        replicas: 3,
        pod_management_policy: "Parallel".into(),
        min_ready_seconds: 0,
        image: "app:v1".into(),
    };
    let mut world =
        World::new(&shape, Timing::default(), true, PREFIX, 1).expect("the policy admits it");
    // A template change, staged by the policy at partition = replicas, with a check.
    let mut new = world.set.clone();
    new["spec"]["template"] = template("web", "app:v2");
    for (name, value) in [
        ("prometheus-query", "sts_test_healthy == 1"),
        ("success-threshold", "2"),
        ("check-period-seconds", "5"),
        ("failure-limit", "3"),
    ] {
        new["metadata"]["annotations"][annotations::key(PREFIX, name)] = value.into();
    }
    world.write(new, "apply").expect("the policy admits it");
    assert_eq!(world.partition(), 3);
    let cluster = SimCluster::new(world);
    let opts = PassOptions::default();
    let partition = |cluster: &SimCluster| cluster.world().partition();

    // Healthy: the check counts two passed checks, five seconds apart, then the stepper steps.
    let mut t = 0;
    let mut checks_before_step = 0;
    while partition(&cluster) == 3 {
        assert!(t < 120, "no step within 120 s while healthy");
        match sim_second(&cluster, &c, &opts, t).await {
            Outcome::Blocked(b) if b.reason == Reason::PrometheusCheck => checks_before_step += 1,
            Outcome::Stepped { from: 3, to: 2 } => {}
            other => panic!("t={t}: unexpected {other}"),
        }
        t += 1;
    }
    assert!(
        checks_before_step >= 5,
        "stepped after {checks_before_step} blocked passes; the second check is 5 s after the first"
    );

    // Unhealthy: no step; three failed checks pause the rollout.
    app.set(HEALTHY, 0.0);
    prom.wait_until("sts_test_healthy == 0", true).await;
    let mut last = None;
    while sim_annotation(&cluster, annotations::PAUSED).is_none() {
        assert!(
            t < 300,
            "not paused within 300 s while unhealthy; last: {last:?}"
        );
        let outcome = sim_second(&cluster, &c, &opts, t).await;
        assert!(
            !matches!(outcome, Outcome::Stepped { .. }),
            "t={t}: stepped while the query is empty"
        );
        last = Some(outcome);
        t += 1;
    }
    assert_eq!(partition(&cluster), 2);
    let reason = sim_annotation(&cluster, PAUSED_REASON).unwrap_or_default();
    assert!(
        reason.contains("failure-limit 3") && reason.contains("returned an empty result"),
        "{reason}"
    );
    for _ in 0..30 {
        let outcome = sim_second(&cluster, &c, &opts, t).await;
        assert!(
            matches!(&outcome, Outcome::Blocked(b) if b.reason == Reason::Paused),
            "t={t}: {outcome}"
        );
        t += 1;
    }

    // Healthy again and the pause lifted by a person: the rollout completes.
    app.set(HEALTHY, 1.0);
    prom.wait_until("sts_test_healthy == 1", true).await;
    {
        let mut world = cluster.world();
        let mut new = world.set.clone();
        let annotations = new["metadata"]["annotations"]
            .as_object_mut()
            .expect("annotations");
        annotations.remove(&annotations::key(PREFIX, annotations::PAUSED));
        annotations.remove(&annotations::key(PREFIX, PAUSED_REASON));
        world.write(new, "annotate").expect("metadata-only change");
    }
    let start = t;
    while !cluster.world().rollout_complete() {
        assert!(t < start + 300, "rollout not complete within 300 s");
        sim_second(&cluster, &c, &opts, t).await;
        t += 1;
    }
    assert_eq!(partition(&cluster), 0);
}
