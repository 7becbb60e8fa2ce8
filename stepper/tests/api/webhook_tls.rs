//! The approval webhook's client as the flags build it (`sts_stepper::commands::checks`): an answerer
//! over HTTPS with a certificate from a private CA, trusted only through `--webhook-ca-file` (a real
//! TLS handshake, rustls on both ends; without the CA, or for a name the certificate does not carry, the
//! call is an error, never a decision); and the webhooks of a `--webhook-config` file, merged with the
//! `--webhook` flags, each with its own `timeoutSeconds`. Every server binds 127.0.0.1 and stops when
//! dropped; the hung one is bounded by the file's 1-second timeout.

use std::path::PathBuf;
use std::sync::Arc;

use crate::support::https_server::HttpsServer;
use crate::support::prometheus::{HungServer, TestCa, write_file};
use axum::Router;
use axum::routing::post;
use jiff::SignedDuration;
use serde_json::json;
use sts_stepper::cli::{CheckArgs, WebhookArgs};
use sts_stepper::cluster::Checks;
use sts_stepper::commands::{check_options, checks};
use sts_stepper::config::webhook;
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use sts_stepper::pass::PassOptions;
use tempfile::TempDir;
use tokio::net::TcpListener;

/// An HTTPS answerer on 127.0.0.1 whose certificate (for `names`) `ca` issued; it answers every POST
/// `Approve`.
struct HttpsAnswerer(HttpsServer);

impl HttpsAnswerer {
    async fn start(ca: &TestCa, names: &[&str]) -> HttpsAnswerer {
        let app = Router::new().route(
            "/approve",
            post(|| async { r#"{"decision": "Approve", "reason": "over TLS"}"# }),
        );
        HttpsAnswerer(HttpsServer::start(ca, names, None, app).await)
    }

    fn url(&self, host: &str) -> String {
        self.0.url(host, "/approve")
    }
}

/// The checks' flags with these webhook flags and no other check.
fn with_webhooks(webhook: WebhookArgs) -> CheckArgs {
    CheckArgs {
        webhook,
        ..CheckArgs::default()
    }
}

/// The clients `--webhook` flags `webhooks`, a `--webhook-config` file and a `--webhook-ca-file` give.
fn clients(webhooks: &[(&str, String)], config: Option<PathBuf>, ca: Option<PathBuf>) -> Checks {
    let args = with_webhooks(WebhookArgs {
        webhook: webhooks
            .iter()
            .map(|(n, u)| ((*n).to_string(), u.clone()))
            .collect(),
        webhook_serves: webhooks
            .iter()
            .map(|(n, _)| ((*n).to_string(), "*/*".to_string()))
            .collect(),
        webhook_config: config,
        webhook_ca_file: ca,
        webhook_timeout: SignedDuration::from_secs(60),
        answerer_config: None,
    });
    checks(&args).expect("clients")
}

async fn call(checks: &Checks, name: &str) -> WebhookAnswer {
    let webhooks = checks.webhooks.as_ref().expect("webhooks configured");
    webhooks.post(name, &json!({"apiVersion": "test"})).await
}

#[tokio::test]
async fn a_private_ca_is_trusted_only_through_the_ca_file() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("approver test CA");
    let ca_file = write_file(dir.path(), "ca.pem", &ca.cert_pem);
    let server = HttpsAnswerer::start(&ca, &["127.0.0.1", "localhost"]).await;

    for host in ["127.0.0.1", "localhost"] {
        let trusted = clients(&[("db", server.url(host))], None, Some(ca_file.clone()));
        match call(&trusted, "db").await {
            WebhookAnswer::Decided(a) => {
                assert_eq!(a.decision, Decision::Approve);
                assert_eq!(a.reason, "over TLS");
            }
            other => panic!("{host}: expected Approve over TLS, got {other:?}"),
        }
    }

    // The built-in web PKI roots alone do not know the private CA: an error, not a decision.
    let untrusted = clients(&[("db", server.url("127.0.0.1"))], None, None);
    let WebhookAnswer::Error(e) = call(&untrusted, "db").await else {
        panic!("an untrusted certificate must be an error");
    };
    assert!(
        e.contains("certificate") || e.contains("UnknownIssuer"),
        "{e}"
    );

    // Another CA's bundle does not help either.
    let other = write_file(dir.path(), "other.pem", &TestCa::new("other CA").cert_pem);
    let wrong = clients(&[("db", server.url("127.0.0.1"))], None, Some(other));
    assert!(matches!(call(&wrong, "db").await, WebhookAnswer::Error(_)));

    // A certificate for `localhost` only, called as 127.0.0.1: the name is verified too.
    let named = HttpsAnswerer::start(&ca, &["localhost"]).await;
    let by_address = clients(&[("db", named.url("127.0.0.1"))], None, Some(ca_file));
    let WebhookAnswer::Error(e) = call(&by_address, "db").await else {
        panic!("a certificate for another name must be an error");
    };
    assert!(e.contains("certificate"), "{e}");
}

#[tokio::test]
async fn the_config_file_adds_webhooks_with_their_own_timeouts() {
    let dir = TempDir::new().expect("temp dir");
    let hung = HungServer::start().await;
    let ca = TestCa::new("approver test CA");
    let server = HttpsAnswerer::start(&ca, &["localhost"]).await;
    let file = write_file(
        dir.path(),
        "webhooks.yaml",
        &format!(
            "apiVersion: safe-rollout.dev/v1alpha1
kind: WebhookConfig
webhooks:
  - name: slow
    serves: [\"*/*\"]
    url: {}/approve
    timeoutSeconds: 1
  - name: db
    serves: [\"*/*\"]
    url: {}
",
            hung.url(),
            server.url("localhost"),
        ),
    );
    let ca_file = write_file(dir.path(), "ca.pem", &ca.cert_pem);
    let flags = [("kafka", "http://127.0.0.1:9/can-roll".to_string())];
    let checks = clients(&flags, Some(file.clone()), Some(ca_file));
    let webhooks = checks.webhooks.as_ref().expect("configured");
    assert_eq!(webhooks.names(), ["db", "kafka", "slow"]);
    assert_eq!(
        webhooks.longest_timeout(),
        Some(std::time::Duration::from_secs(60)),
        "kafka has the flag's 60 s"
    );

    assert!(matches!(
        call(&checks, "db").await,
        WebhookAnswer::Decided(a) if a.decision == Decision::Approve
    ));
    // `slow` never answers: its own 1-second bound ends the call (the flag's is 60 s).
    let WebhookAnswer::Error(e) = call(&checks, "slow").await else {
        panic!("a hung webhook must be an error");
    };
    assert!(e.contains("timed out") || e.contains("timeout"), "{e}");

    // A name in both the file and a flag is refused at start, naming both.
    let args = with_webhooks(WebhookArgs {
        webhook: vec![("db".into(), "http://127.0.0.1:9/x".into())],
        webhook_config: Some(file),
        ..WebhookArgs::default()
    });
    let e = checks_error(&args);
    assert!(
        e.contains("\"db\" is configured both by --webhook and in --webhook-config"),
        "{e}"
    );
    // A file that is not the schema is refused at start, naming the flag, the path and the field.
    let bad = write_file(
        dir.path(),
        "bad.yaml",
        "apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\nwebhooks:\n  - name: db\n    serves: [\"*/*\"]\n    uri: http://x\n",
    );
    let args = with_webhooks(WebhookArgs {
        webhook_config: Some(bad.clone()),
        ..WebhookArgs::default()
    });
    let e = checks_error(&args);
    assert!(
        e.starts_with(&format!("--webhook-config {}: ", bad.display())) && e.contains("`uri`"),
        "{e}"
    );
}

fn checks_error(args: &CheckArgs) -> String {
    match checks(args) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// The default `--check-deadline` gives the slowest webhook its whole bound twice, also when that bound
/// is a `--webhook-config` entry's own `timeoutSeconds`; a given `--check-deadline` stands.
#[test]
fn a_files_longer_timeout_stretches_the_default_deadline() {
    let dir = TempDir::new().expect("temp dir");
    let file = write_file(
        dir.path(),
        "webhooks.yaml",
        "apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\nwebhooks:\n  - name: kafka\n    serves: [\"*/*\"]\n    url: http://127.0.0.1:9/can-roll\n    timeoutSeconds: 45\n",
    );
    let mut args = with_webhooks(WebhookArgs {
        webhook_config: Some(file),
        ..WebhookArgs::default()
    });
    let deadline = |args: &CheckArgs| {
        let mut opts = PassOptions::default();
        check_options(args, &checks(args).expect("clients"), &mut opts);
        let names = opts
            .gates
            .served
            .names(webhook::FLAG.flag)
            .map(<[String]>::to_vec);
        (opts.probes.deadline, names)
    };
    let (d, names) = deadline(&args);
    assert_eq!(d, Some(std::time::Duration::from_secs(90)));
    assert_eq!(names, Some(vec!["kafka".to_string()]));
    args.check_deadline = Some(SignedDuration::from_secs(20));
    assert_eq!(deadline(&args).0, Some(std::time::Duration::from_secs(20)));
}

/// A `bearerTokenFile` is sent as `Authorization: Bearer`, read at every call (a rotated Secret is
/// picked up without a restart); an unreadable file is an error of the call, which is then not made.
#[tokio::test]
async fn a_bearer_token_file_is_read_at_every_call() {
    let dir = TempDir::new().expect("temp dir");
    let expected = Arc::new(std::sync::Mutex::new("first".to_string()));
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (want, record) = (expected.clone(), seen.clone());
    let app = Router::new().route(
        "/approve",
        post(move |headers: axum::http::HeaderMap| {
            let (want, record) = (want.clone(), record.clone());
            async move {
                let got = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                record.lock().expect("lock").push(got.clone());
                let wanted = format!("Bearer {}", want.lock().expect("lock"));
                if got == wanted {
                    (axum::http::StatusCode::OK, r#"{"decision": "Approve"}"#)
                } else {
                    (axum::http::StatusCode::UNAUTHORIZED, "no")
                }
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/approve", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let token = write_file(dir.path(), "token", "first\n");
    let file = write_file(
        dir.path(),
        "webhooks.yaml",
        &format!(
            "apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\nwebhooks:\n  - name: db\n    serves: [\"*/*\"]\n    url: {url}\n    bearerTokenFile: {}\n",
            token.display()
        ),
    );
    let checks = clients(&[], Some(file), None);
    let approved = |a: &WebhookAnswer| matches!(a, WebhookAnswer::Decided(a) if a.decision == Decision::Approve);
    assert!(approved(&call(&checks, "db").await));

    // The Secret rotates: the next call sends the new token.
    *expected.lock().expect("lock") = "second".into();
    std::fs::write(&token, "second").expect("rotate");
    assert!(approved(&call(&checks, "db").await));

    // The file is gone: an error naming it, and no call made.
    std::fs::remove_file(&token).expect("remove");
    let WebhookAnswer::Error(e) = call(&checks, "db").await else {
        panic!("an unreadable token file must be an error");
    };
    assert!(
        e.contains("bearerTokenFile of webhook db") && e.contains("token"),
        "{e}"
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        ["Bearer first", "Bearer second"],
        "the token is the file's, trailing newline trimmed"
    );
    server.abort();
}
