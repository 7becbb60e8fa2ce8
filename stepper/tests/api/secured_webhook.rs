//! The approval webhooks of a `--webhook-config` file reach secured answerers (issue 45 item 2), as the
//! flags build them (`sts_stepper::commands::checks`): an answerer over TLS with a certificate from a CA
//! the test makes, requiring a client certificate of another and basic auth, approves only a call
//! that brings both — without the certificate, or with a wrong password (a 401), the call is an
//! error, never a decision; the entry's `auth` token is read at every call and an unreadable
//! credential file is an error naming it, with no request sent; an entry's own `tls.caFile` replaces
//! `--webhook-ca-file`, which serves the entries that name none. Every server binds 127.0.0.1 and
//! stops when dropped; every call is bounded by the webhooks' 10-second timeout.

use std::path::{Path, PathBuf};

use crate::support::https_server::{Guard, HttpsServer};
use crate::support::prometheus::{TestCa, write_file};
use jiff::SignedDuration;
use serde_json::json;
use sts_stepper::cli::{CheckArgs, WebhookArgs};
use sts_stepper::cluster::Checks;
use sts_stepper::commands::checks;
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use tempfile::TempDir;

/// `Authorization` of `stepper:s3cret`.
const STEPPER: &str = "Basic c3RlcHBlcjpzM2NyZXQ=";

/// The webhooks of a `--webhook-config` file in `dir` holding `entries` (YAML list items), with
/// `--webhook-ca-file ca_file`.
fn clients(dir: &Path, entries: &str, ca_file: Option<PathBuf>) -> Checks {
    let text =
        format!("apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\nwebhooks:\n{entries}");
    let args = CheckArgs {
        webhook: WebhookArgs {
            webhook_config: Some(write_file(dir, "webhooks.yaml", &text)),
            webhook_ca_file: ca_file,
            webhook_timeout: SignedDuration::from_secs(10),
            ..WebhookArgs::default()
        },
        ..CheckArgs::default()
    };
    checks(&args).expect("clients")
}

async fn call(checks: &Checks, name: &str) -> WebhookAnswer {
    let webhooks = checks.webhooks.as_ref().expect("webhooks configured");
    webhooks.post(name, &json!({"apiVersion": "test"})).await
}

async fn assert_approved(checks: &Checks, name: &str) {
    match call(checks, name).await {
        WebhookAnswer::Decided(a) => {
            assert_eq!(
                (a.decision, a.reason.as_str()),
                (Decision::Approve, "authenticated"),
                "{name}"
            )
        }
        other => panic!("{name}: expected Approve, got {other:?}"),
    }
}

/// The call's error; a decision fails the test.
async fn error_of(checks: &Checks, name: &str) -> String {
    match call(checks, name).await {
        WebhookAnswer::Error(e) => e,
        other => panic!("{name}: expected an error, never a decision; got {other:?}"),
    }
}

#[tokio::test]
async fn a_client_certificate_and_basic_auth_are_both_needed_for_an_approval() {
    let dir = TempDir::new().expect("temp dir");
    let (ca, client_ca) = (TestCa::new("approver CA"), TestCa::new("client CA"));
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let (cert, key) = client_ca.client_cert("sts-stepper");
    let cert_file = write_file(dir.path(), "tls.crt", &cert);
    let key_file = write_file(dir.path(), "tls.key", &key);
    let password = write_file(dir.path(), "password", "s3cret\n");
    let guard = Guard::expecting(Some(STEPPER));
    let server = HttpsServer::start(&ca, &["localhost"], Some(&client_ca), guard.app()).await;
    let url = server.url("localhost", "/approve");
    let auth = format!(
        "auth: {{basic: {{username: stepper, passwordFile: {}}}}}",
        password.display()
    );
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: db\n    serves: [\"*/*\"]\n    url: {url}\n    tls: {{caFile: {0}, certFile: {1}, keyFile: {2}}}\n    {auth}\n  - name: no-cert\n    serves: [\"*/*\"]\n    url: {url}\n    tls: {{caFile: {0}}}\n    {auth}\n",
            ca_file.display(),
            cert_file.display(),
            key_file.display()
        ),
        None,
    );
    assert_approved(&checks, "db").await;
    // Refused in the handshake (`TLS: … CertificateRequired`, or the connection closed first): an
    // error, and the answerer never sees the call (`guard.seen()` below).
    error_of(&checks, "no-cert").await;

    std::fs::write(&password, "wrong").expect("a wrong password");
    let e = error_of(&checks, "db").await;
    assert!(e.starts_with("HTTP 401"), "a wrong password: {e}");
    assert_eq!(
        guard.seen(),
        [STEPPER, "Basic c3RlcHBlcjp3cm9uZw=="],
        "only the calls with the certificate reached the answerer"
    );
}

#[tokio::test]
async fn credentials_are_read_at_every_call_and_an_unreadable_file_sends_nothing() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("approver CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let token = write_file(dir.path(), "token", "one\n");
    let username = write_file(dir.path(), "username", "stepper\n");
    let password = write_file(dir.path(), "password", "s3cret");
    let guard = Guard::expecting(Some("Bearer one"));
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, guard.app()).await;
    let url = server.url("127.0.0.1", "/approve");
    // No tls in the entries: --webhook-ca-file is their CA.
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: tok\n    serves: [\"*/*\"]\n    url: {url}\n    auth: {{bearerTokenFile: {}}}\n  - name: pw\n    serves: [\"*/*\"]\n    url: {url}\n    auth: {{basic: {{usernameFile: {}, passwordFile: {}}}}}\n",
            token.display(),
            username.display(),
            password.display()
        ),
        Some(ca_file),
    );
    assert_approved(&checks, "tok").await;
    std::fs::write(&token, "two").expect("rotate");
    guard.expect(Some("Bearer two"));
    assert_approved(&checks, "tok").await;

    guard.expect(Some(STEPPER));
    assert_approved(&checks, "pw").await;
    std::fs::remove_file(&username).expect("remove");
    let e = error_of(&checks, "pw").await;
    assert!(
        e.starts_with("reading auth.basic.usernameFile of webhook pw ") && e.contains("username"),
        "{e}"
    );
    std::fs::remove_file(&token).expect("remove");
    let e = error_of(&checks, "tok").await;
    assert!(
        e.starts_with("reading auth.bearerTokenFile of webhook tok "),
        "{e}"
    );
    assert_eq!(
        guard.seen(),
        ["Bearer one", "Bearer two", STEPPER],
        "no request without its credentials"
    );
}

#[tokio::test]
async fn an_entrys_own_ca_replaces_the_flags() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("approver CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let other = write_file(dir.path(), "other.crt", &TestCa::new("other CA").cert_pem);
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, Guard::default().app()).await;
    let url = server.url("127.0.0.1", "/approve");
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: own\n    serves: [\"*/*\"]\n    url: {url}\n    tls: {{caFile: {}}}\n  - name: flag\n    serves: [\"*/*\"]\n    url: {url}\n",
            ca_file.display()
        ),
        Some(other),
    );
    assert_approved(&checks, "own").await;
    let e = error_of(&checks, "flag").await;
    assert!(e.starts_with("TLS: ") && e.contains("UnknownIssuer"), "{e}");

    // A CA file unreadable at start stops the stepper, naming the field, the webhook and the path.
    let missing = dir.path().join("missing.crt");
    let text = format!(
        "apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\nwebhooks:\n  - name: db\n    serves: [\"*/*\"]\n    url: {url}\n    tls: {{caFile: {}}}\n",
        missing.display()
    );
    let args = CheckArgs {
        webhook: WebhookArgs {
            webhook_config: Some(write_file(dir.path(), "bad.yaml", &text)),
            ..WebhookArgs::default()
        },
        ..CheckArgs::default()
    };
    let e = match sts_stepper::commands::checks(&args) {
        Ok(_) => panic!("an unreadable CA file must stop the stepper"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.starts_with("reading tls.caFile of webhook db ") && e.contains("missing.crt"),
        "{e}"
    );
}
