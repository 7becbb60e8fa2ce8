//! The HTTP checks of an `--http-check-config` file reach secured endpoints (issue 45 item 2), as the
//! flags build them (`sts_stepper::commands::checks`): a real TLS server on 127.0.0.1 with a
//! certificate from a CA the test makes is trusted only through the check's `tls.caFile` (or the name
//! of `tls.serverName`); a server requiring client certificates answers only the configured identity,
//! and a rotated certificate is picked up at the next call; basic auth and bearer tokens are read from
//! their files at every call; a wrong one is a 401, an error of the check, never a pass; an unreadable
//! file is an error naming it and no request is sent; a redirect to another address does not take the
//! credentials along. Every server binds 127.0.0.1 and stops when dropped; every call is bounded by
//! the check's 10-second timeout.

use std::path::{Path, PathBuf};

use crate::support::https_server::{GREEN, Guard, HttpsServer};
use crate::support::prometheus::{TestCa, write_file};
use axum::Router;
use axum::response::Redirect;
use axum::routing::get;
use jiff::SignedDuration;
use serde_json::Value;
use sts_stepper::cli::{CheckArgs, HttpCheckArgs};
use sts_stepper::cluster::Checks;
use sts_stepper::commands::checks;
use sts_stepper::gates::check::http::HttpAnswer;
use tempfile::TempDir;

/// `Authorization` of `elastic:changeme`.
const ELASTIC: &str = "Basic ZWxhc3RpYzpjaGFuZ2VtZQ==";

/// An `--http-check-config` file in `dir` holding `entries` (YAML list items, indented by two).
fn config_file(dir: &Path, entries: &str) -> PathBuf {
    let text =
        format!("apiVersion: safe-rollout.dev/v1alpha1\nkind: HttpCheckConfig\nchecks:\n{entries}");
    write_file(dir, "checks.yaml", &text)
}

fn args(config: PathBuf) -> CheckArgs {
    CheckArgs {
        http: HttpCheckArgs {
            http_check_config: Some(config),
            http_check_timeout: SignedDuration::from_secs(10),
            ..HttpCheckArgs::default()
        },
        ..CheckArgs::default()
    }
}

/// The checks the file `entries` configures.
fn clients(dir: &Path, entries: &str) -> Checks {
    checks(&args(config_file(dir, entries))).expect("clients")
}

async fn get_check(checks: &Checks, name: &str) -> HttpAnswer {
    checks.http.as_ref().expect("HTTP checks").get(name).await
}

/// Asserts the check passed the guard and read Elasticsearch's green health.
async fn assert_green(checks: &Checks, name: &str) {
    match get_check(checks, name).await {
        HttpAnswer::Json(json) => {
            assert_eq!(
                json,
                serde_json::from_str::<Value>(GREEN).expect("json"),
                "{name}"
            )
        }
        HttpAnswer::Error(e) => panic!("{name}: expected the green health, got the error {e}"),
    }
}

/// The check's error; a JSON answer fails the test.
async fn error_of(checks: &Checks, name: &str) -> String {
    match get_check(checks, name).await {
        HttpAnswer::Error(e) => e,
        HttpAnswer::Json(json) => panic!("{name}: expected an error, got the answer {json}"),
    }
}

#[tokio::test]
async fn a_private_ca_is_trusted_only_through_the_checks_ca_file() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("es http CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let other = write_file(dir.path(), "other.crt", &TestCa::new("other CA").cert_pem);
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, Guard::default().app()).await;
    let url = server.url("127.0.0.1", "/health");
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: trusted\n    url: {url}\n    tls: {{caFile: {}}}\n  - name: untrusted\n    url: {url}\n  - name: other-ca\n    url: {url}\n    tls: {{caFile: {}}}\n",
            ca_file.display(),
            other.display()
        ),
    );
    assert_green(&checks, "trusted").await;
    for name in ["untrusted", "other-ca"] {
        let e = error_of(&checks, name).await;
        assert!(
            e.starts_with("TLS: ") && e.contains("UnknownIssuer"),
            "{name}: {e}"
        );
    }
}

#[tokio::test]
async fn server_name_is_the_name_verified_when_the_url_has_another() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("es http CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let server = HttpsServer::start(
        &ca,
        &["logs-es-http.search.svc"],
        None,
        Guard::default().app(),
    )
    .await;
    let url = server.url("127.0.0.1", "/health");
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: named\n    url: {url}\n    tls: {{caFile: {0}, serverName: logs-es-http.search.svc}}\n  - name: by-address\n    url: {url}\n    tls: {{caFile: {0}}}\n  - name: wrong-name\n    url: {url}\n    tls: {{caFile: {0}, serverName: other.search.svc}}\n",
            ca_file.display()
        ),
    );
    assert_green(&checks, "named").await;
    for name in ["by-address", "wrong-name"] {
        let e = error_of(&checks, name).await;
        assert!(
            e.starts_with("TLS: ") && e.contains("certificate"),
            "{name}: {e}"
        );
    }
}

#[tokio::test]
async fn a_server_requiring_client_certificates_answers_only_the_configured_identity() {
    let dir = TempDir::new().expect("temp dir");
    let (ca, client_ca, impostor_ca) = (
        TestCa::new("server CA"),
        TestCa::new("client CA"),
        TestCa::new("impostor CA"),
    );
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let (cert, key) = client_ca.client_cert("sts-stepper");
    let (bad_cert, bad_key) = impostor_ca.client_cert("sts-stepper");
    let good = (
        write_file(dir.path(), "good.crt", &cert),
        write_file(dir.path(), "good.key", &key),
    );
    let rotating = (
        write_file(dir.path(), "tls.crt", &bad_cert),
        write_file(dir.path(), "tls.key", &bad_key),
    );
    let guard = Guard::default();
    let server = HttpsServer::start(&ca, &["127.0.0.1"], Some(&client_ca), guard.app()).await;
    let url = server.url("127.0.0.1", "/health");
    let entry = |name: &str, files: Option<&(PathBuf, PathBuf)>| match files {
        None => format!(
            "  - name: {name}\n    url: {url}\n    tls: {{caFile: {}}}\n",
            ca_file.display()
        ),
        Some((c, k)) => format!(
            "  - name: {name}\n    url: {url}\n    tls: {{caFile: {}, certFile: {}, keyFile: {}}}\n",
            ca_file.display(),
            c.display(),
            k.display()
        ),
    };
    let entries = [
        entry("identity", Some(&good)),
        entry("none", None),
        entry("rotating", Some(&rotating)),
    ];
    let checks = clients(dir.path(), &entries.concat());

    assert_green(&checks, "identity").await;
    // Refused in the handshake: TLS 1.3 tells the client by an alert (`TLS: … CertificateRequired`)
    // that the server's closing the connection may overtake; an error either way, and no request
    // reaches the app.
    error_of(&checks, "none").await;
    error_of(&checks, "rotating").await;
    assert_eq!(
        guard.seen().len(),
        1,
        "only the configured identity got through"
    );

    // The Secret is renewed with a certificate the server trusts: the next call presents it.
    std::fs::write(&rotating.0, &cert).expect("rotate the certificate");
    let e = error_of(&checks, "rotating").await;
    assert!(
        e.contains("tls.certFile of HTTP check rotating") && e.contains("tls.keyFile"),
        "a certificate and a key that do not match (caught mid-rotation) is an error: {e}"
    );
    std::fs::write(&rotating.1, &key).expect("rotate the key");
    assert_green(&checks, "rotating").await;
    assert_eq!(guard.seen().len(), 2, "the renewed identity got through");

    // The key is gone: an error naming the field and the file.
    std::fs::remove_file(&rotating.1).expect("remove the key");
    let e = error_of(&checks, "rotating").await;
    assert!(
        e.starts_with("reading tls.keyFile of HTTP check rotating ") && e.contains("tls.key"),
        "{e}"
    );
}

#[tokio::test]
async fn basic_auth_is_read_from_its_files_and_a_wrong_password_is_an_error() {
    let dir = TempDir::new().expect("temp dir");
    let ca = TestCa::new("es http CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let password = write_file(dir.path(), "elastic", "changeme\n");
    let username = write_file(dir.path(), "username", "elastic");
    let guard = Guard::expecting(Some(ELASTIC));
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, guard.app()).await;
    let url = server.url("127.0.0.1", "/health");
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: es\n    url: {url}\n    tls: {{caFile: {0}}}\n    auth: {{basic: {{username: elastic, passwordFile: {1}}}}}\n  - name: es-secret\n    url: {url}\n    tls: {{caFile: {0}}}\n    auth: {{basic: {{usernameFile: {2}, passwordFile: {1}}}}}\n  - name: anonymous\n    url: {url}\n    tls: {{caFile: {0}}}\n",
            ca_file.display(),
            password.display(),
            username.display()
        ),
    );
    assert_green(&checks, "es").await;
    assert_green(&checks, "es-secret").await;
    let e = error_of(&checks, "anonymous").await;
    assert!(e.starts_with("HTTP 401"), "no credentials: {e}");
    std::fs::write(&password, "wrong").expect("a wrong password");
    let e = error_of(&checks, "es").await;
    assert!(e.starts_with("HTTP 401"), "a wrong password: {e}");
    assert_eq!(
        guard.seen(),
        [ELASTIC, ELASTIC, "", "Basic ZWxhc3RpYzp3cm9uZw=="],
        "the user name and the file's password, its trailing newline trimmed"
    );
}

#[tokio::test]
async fn a_rotated_token_is_picked_up_and_an_unreadable_one_sends_nothing() {
    let dir = TempDir::new().expect("temp dir");
    let token = write_file(dir.path(), "token", "first\n");
    let ca = TestCa::new("approver CA");
    let ca_file = write_file(dir.path(), "ca.crt", &ca.cert_pem);
    let guard = Guard::expecting(Some("Bearer first"));
    let server = HttpsServer::start(&ca, &["127.0.0.1"], None, guard.app()).await;
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: db\n    url: {}\n    tls: {{caFile: {}}}\n    auth: {{bearerTokenFile: {}}}\n",
            server.url("127.0.0.1", "/health"),
            ca_file.display(),
            token.display()
        ),
    );
    assert_green(&checks, "db").await;
    std::fs::write(&token, "second").expect("rotate");
    guard.expect(Some("Bearer second"));
    assert_green(&checks, "db").await;
    guard.expect(Some("Bearer third"));
    let e = error_of(&checks, "db").await;
    assert!(
        e.starts_with("HTTP 401"),
        "a stale token is an error, never a pass: {e}"
    );
    std::fs::remove_file(&token).expect("remove");
    let e = error_of(&checks, "db").await;
    assert!(
        e.starts_with("reading auth.bearerTokenFile of HTTP check db ") && e.contains("token"),
        "{e}"
    );
    assert_eq!(
        guard.seen(),
        ["Bearer first", "Bearer second", "Bearer second"],
        "no request without the token"
    );
}

/// Serves `app` over plain HTTP on 127.0.0.1; returns `host:port`. The task ends with the test's
/// runtime.
async fn serve_plain(app: Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

#[tokio::test]
async fn a_redirect_to_another_address_does_not_take_the_credentials() {
    let dir = TempDir::new().expect("temp dir");
    let token = write_file(dir.path(), "token", "secret");
    let elsewhere = Guard::default();
    let other = serve_plain(elsewhere.app()).await;
    let here = Guard::expecting(Some("Bearer secret"));
    let redirects = Router::new()
        .route(
            "/away",
            get(move || async move { Redirect::temporary(&format!("http://{other}/health")) }),
        )
        .route("/moved", get(|| async { Redirect::temporary("/health") }))
        .merge(here.app());
    let addr = serve_plain(redirects).await;
    let checks = clients(
        dir.path(),
        &format!(
            "  - name: away\n    url: http://{addr}/away\n    auth: {{bearerTokenFile: {0}}}\n  - name: moved\n    url: http://{addr}/moved\n    auth: {{bearerTokenFile: {0}}}\n",
            token.display()
        ),
    );
    let e = error_of(&checks, "away").await;
    assert!(
        e.starts_with("HTTP 307"),
        "a redirect elsewhere is the answer: {e}"
    );
    assert!(elsewhere.seen().is_empty(), "the other address got nothing");
    assert_green(&checks, "moved").await;
    assert_eq!(
        here.seen(),
        ["Bearer secret"],
        "the same address's redirect is followed"
    );
}
