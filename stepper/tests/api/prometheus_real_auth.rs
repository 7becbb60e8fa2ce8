//! The stepper's Prometheus client's credentials against a real Prometheus: basic auth checked by
//! Prometheus itself (`--web.config.file` with a bcrypt hash), a bearer token checked by an auth proxy
//! in front of it (Prometheus cannot check tokens; as kube-rbac-proxy or a hosted Prometheus' gateway
//! would), and TLS verified against a CA file (a CA made per test with rcgen).
//!
//! Setup and skipping: `support/prometheus_app.rs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::support::prometheus::{BearerProxy, PrometheusServer, TestCa, Web, write_file};
use crate::support::prometheus_app::{HEALTHY, client, client_with, errored, healthy_app};
use crate::support::prometheus_bin::prometheus_or_skip;
use sts_stepper::cluster::prometheus::{Auth, ConfigError, PrometheusClient, PrometheusConfig};
use sts_stepper::gates::check::prometheus::QueryOutcome;

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
