//! A real Prometheus for tests.
//!
//! [`PrometheusServer`]: `prometheus` ([`prometheus_bin`](super::prometheus_bin::prometheus_bin)) on
//! `127.0.0.1:<free port>` with its TSDB in a temp dir, scraping one [`Exporter`] every second (job
//! `exporter`), optionally with a `--web.config.file` for basic auth (bcrypt hash) and/or TLS
//! (certificate from a [`TestCa`]). `start` returns once `/-/ready` answers 200 and the first scrape
//! has landed; dropping it kills the process (also when the test panics) and deletes the temp dir.
//!
//! The small servers around it (`support/local_servers.rs`) and the TLS material (`support/test_ca.rs`)
//! are re-exported here. Every wait is a bounded poll ([`WAIT`]); every server binds 127.0.0.1 and
//! stops when dropped.
#![allow(dead_code)] // each test crate uses a subset

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

#[allow(unused_imports)] // each test crate uses a subset
pub use super::local_servers::{BearerProxy, Exporter, HungServer, StubServer};
pub use super::test_ca::{TestCa, write_file};

/// Upper bound of every wait (Prometheus ready, a scrape landing, a value showing up).
pub const WAIT: Duration = Duration::from_secs(30);
/// Pause between two polls.
const POLL: Duration = Duration::from_millis(100);
/// The scrape job of the [`Exporter`].
pub const JOB: &str = "exporter";

/// Polls `probe` every [`POLL`] until it returns `Some`, for at most [`WAIT`].
///
/// # Panics
/// Nothing within [`WAIT`]: names `what` and the last `Err` of the probe.
pub async fn poll<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        let last = match probe().await {
            Ok(v) => return v,
            Err(e) => e,
        };
        assert!(
            Instant::now() < deadline,
            "waited {WAIT:?} for {what}; last: {last}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// What the Prometheus under test requires of its clients (`--web.config.file`).
#[derive(Default)]
pub struct Web {
    /// Basic auth: this user with this password (stored as a bcrypt hash).
    pub basic_auth: Option<(String, String)>,
    /// Serve HTTPS with a certificate issued by this CA.
    pub tls: Option<Arc<TestCa>>,
}

/// A running `prometheus` (see the module doc).
pub struct PrometheusServer {
    child: Option<Child>,
    port: u16,
    web: Web,
    /// The harness' own client (trusts the test CA, sends the basic-auth credentials).
    http: reqwest::Client,
    dir: TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

impl PrometheusServer {
    /// Starts `bin` scraping `exporter` every second, with `web`'s requirements; returns once it is
    /// ready and has stored the exporter's series.
    ///
    /// # Panics
    /// Prometheus does not start or not scrape within [`WAIT`] (with the tail of its log).
    pub async fn start(bin: &Path, exporter: &Exporter, web: Web) -> PrometheusServer {
        let dir = tempfile::Builder::new()
            .prefix("sts-stepper-prometheus-")
            .tempdir()
            .expect("temp dir");
        write_file(
            dir.path(),
            "prometheus.yml",
            &format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: {JOB}\n    static_configs:\n      - targets: ['{}']\n",
                exporter.addr()
            ),
        );
        let mut web_config = String::new();
        if let Some(ca) = &web.tls {
            let (cert, key) = ca.server_cert();
            let cert = write_file(dir.path(), "server.pem", &cert);
            let key = write_file(dir.path(), "server.key", &key);
            web_config.push_str(&format!(
                "tls_server_config:\n  cert_file: {}\n  key_file: {}\n",
                cert.display(),
                key.display()
            ));
        }
        if let Some((user, password)) = &web.basic_auth {
            // Cost 4, the minimum: the hash is checked on every request.
            let hash = bcrypt::hash(password, 4).expect("bcrypt hash");
            web_config.push_str(&format!("basic_auth_users:\n  {user}: '{hash}'\n"));
        }
        let web_file =
            (!web_config.is_empty()).then(|| write_file(dir.path(), "web.yml", &web_config));

        let mut http = reqwest::Client::builder().timeout(Duration::from_secs(5));
        if let Some(ca) = &web.tls {
            http = http.add_root_certificate(
                reqwest::Certificate::from_pem(ca.cert_pem.as_bytes()).expect("CA PEM"),
            );
        }
        let http = http.build().expect("harness HTTP client");

        let mut server = PrometheusServer {
            child: None,
            port: 0,
            web,
            http,
            dir,
        };
        // The free port is released before Prometheus binds it: another test may take it in
        // between, so "address already in use" is retried on a new port.
        for attempt in 1..=5 {
            server.port = free_port();
            let log = std::fs::File::create(server.log_path()).expect("log file");
            let mut args = vec![
                format!(
                    "--config.file={}",
                    server.dir.path().join("prometheus.yml").display()
                ),
                format!(
                    "--storage.tsdb.path={}",
                    server.dir.path().join("data").display()
                ),
                format!("--web.listen-address=127.0.0.1:{}", server.port),
                "--log.level=info".to_string(),
            ];
            if let Some(web_file) = &web_file {
                args.push(format!("--web.config.file={}", web_file.display()));
            }
            let child = Command::new(bin)
                .args(&args)
                .current_dir(server.dir.path())
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log file"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
            server.child = Some(child);
            match server.wait_ready().await {
                Ok(()) => break,
                Err(exited) => {
                    server.stop();
                    let log = server.log_tail();
                    assert!(
                        log.contains("address already in use") && attempt < 5,
                        "prometheus exited before it was ready ({exited}); log:\n{log}"
                    );
                }
            }
        }
        let expr = format!("{{job=\"{JOB}\",__name__!~\"up|scrape_.*\"}}");
        server.wait_until(&expr, true).await;
        server
    }

    /// `Ok` once `/-/ready` answers 200; `Err` when the process exited first.
    async fn wait_ready(&mut self) -> Result<(), String> {
        let url = format!("{}/-/ready", self.url());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(status.to_string());
            }
            let answer = self.authorized(self.http.get(&url)).send().await;
            let last = match answer {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) => format!("HTTP {}", r.status()),
                Err(e) => e.to_string(),
            };
            assert!(
                Instant::now() < deadline,
                "prometheus not ready within {WAIT:?} (last: {last}); log:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(POLL).await;
        }
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.web.basic_auth {
            Some((user, password)) => request.basic_auth(user, Some(password)),
            None => request,
        }
    }

    /// `http(s)://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        let scheme = if self.web.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The temp dir (credentials and CA files of a test can go there too).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("prometheus.log")
    }

    /// The last lines of Prometheus' log.
    pub fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.log_path()) {
            let _ = f.read_to_string(&mut text);
        }
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// The number of series `expr` returns now, through the harness' own client (independent of
    /// the client under test).
    pub async fn series(&self, expr: &str) -> Result<usize, String> {
        let url = format!("{}/api/v1/query", self.url());
        let answer = self
            .authorized(self.http.get(&url).query(&[("query", expr)]))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = answer.status();
        let body = json_body(answer)
            .await
            .map_err(|e| format!("HTTP {status}: {e}"))?;
        match &body["data"]["result"] {
            Value::Array(items) if status.is_success() => Ok(items.len()),
            _ => Err(format!("HTTP {status}: {body}")),
        }
    }

    /// Waits until `expr` returns a non-empty (`non_empty`) or an empty result.
    pub async fn wait_until(&self, expr: &str, non_empty: bool) {
        let what = format!(
            "`{expr}` to return {} result",
            if non_empty { "a non-empty" } else { "an empty" }
        );
        poll(&what, || async {
            match self.series(expr).await? {
                n if (n > 0) == non_empty => Ok(()),
                n => Err(format!("{n} series")),
            }
        })
        .await;
    }

    /// Kills the process (it no longer answers; its port refuses connections).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The body as JSON (reqwest's `json` feature is not enabled).
async fn json_body(answer: reqwest::Response) -> Result<Value, String> {
    let bytes = answer.bytes().await.map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}
