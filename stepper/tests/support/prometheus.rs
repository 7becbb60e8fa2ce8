//! A real Prometheus for tests, and the small servers around it.
//!
//! - [`prometheus_bin`]: `$PROMETHEUS_BIN`, else `prometheus` on `PATH` (Debian's package); absent →
//!   the test fails (`scripts/setup.sh`, run by `make test`, installs it), unless the run accepts
//!   skipping with `ALLOW_SKIP=1`: then a loud `SKIPPED` line on stderr, the test's name appended to the
//!   skip log (`$SKIP_LOG`, else `<target dir>/tmp/test-skips.log`, counted by `make test`) and `None`
//!   (the test then returns).
//! - [`Exporter`]: an HTTP server on 127.0.0.1 serving `/metrics` in the text format, whose series and
//!   values the test sets at any time.
//! - [`PrometheusServer`]: `prometheus` on `127.0.0.1:<free port>` with its TSDB in a temp dir,
//!   scraping one [`Exporter`] every second (job `exporter`), optionally with a `--web.config.file`
//!   for basic auth (bcrypt hash) and/or TLS (certificate from a [`TestCa`]). `start` returns once
//!   `/-/ready` answers 200 and the first scrape has landed; dropping it kills the process (also when
//!   the test panics) and deletes the temp dir.
//! - [`BearerProxy`]: Prometheus checks no bearer tokens (its web config knows basic auth and TLS
//!   client certificates only); in front of it, a token is checked by an auth proxy (kube-rbac-proxy,
//!   an OAuth proxy, a hosted Prometheus' gateway). This is such a proxy: it answers 401 unless
//!   `Authorization: Bearer <token>` matches, forwards everything else to the real Prometheus, and
//!   records the `Authorization` headers it saw.
//! - [`HungServer`]: accepts TCP connections and never answers (for timeouts).
//!
//! Every wait is a bounded poll ([`WAIT`]); every server binds 127.0.0.1 and stops when dropped.
#![allow(dead_code)] // each test crate uses a subset

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use serde_json::Value;
use tempfile::TempDir;
use tokio::task::JoinHandle;

/// Upper bound of every wait (Prometheus ready, a scrape landing, a value showing up).
pub const WAIT: Duration = Duration::from_secs(30);
/// Pause between two polls.
const POLL: Duration = Duration::from_millis(100);
/// The scrape job of the [`Exporter`].
pub const JOB: &str = "exporter";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The `prometheus` binary, or `None` after a loud `SKIPPED` line when the run allows skipping (see the
/// module doc).
///
/// # Panics
/// `$PROMETHEUS_BIN` names no file; or no Prometheus and `ALLOW_SKIP` is not `1`.
pub fn prometheus_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PROMETHEUS_BIN") {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "PROMETHEUS_BIN={} is not a file",
            bin.display()
        );
        return Some(bin);
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("prometheus"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        skip_or_fail("prometheus not installed (Debian package prometheus)");
    }
    found
}

/// A real component this test needs is missing: fails the test, unless `ALLOW_SKIP=1`, where the test's
/// name goes to the skip log and a loud `SKIPPED` line to stderr (the caller then returns).
///
/// # Panics
/// `ALLOW_SKIP` is not `1`.
fn skip_or_fail(message: &str) {
    assert!(
        std::env::var("ALLOW_SKIP").as_deref() == Ok("1"),
        "{message}; run `scripts/setup.sh` to install it, or set ALLOW_SKIP=1 to skip this test"
    );
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_string();
    let log = std::env::var_os("SKIP_LOG").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-skips.log"),
        PathBuf::from,
    );
    let logged = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| writeln!(f, "{}::{test}: {message}", env!("CARGO_CRATE_NAME")));
    assert!(
        logged.is_ok(),
        "cannot append to the skip log {}: {logged:?}",
        log.display()
    );
    // Straight to stderr: the test harness captures `eprintln!` of passing tests.
    let stars = "*".repeat(72);
    let _ = writeln!(
        std::io::stderr(),
        "\n{stars}\nSKIPPED: {test}: {message}\n{stars}"
    );
}

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

/// Spawns `app` on a fresh 127.0.0.1 port; the server stops when the handle is aborted or dropped
/// with its runtime.
async fn serve(app: Router) -> (SocketAddr, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, task)
}

// ---------------------------------------------------------------------------------------------
// Exporter

type Series = Arc<Mutex<BTreeMap<String, f64>>>;

/// A `/metrics` endpoint whose series the test controls: each entry is a series in the text format
/// (`name` or `name{label="v"}`) and its value.
pub struct Exporter {
    addr: SocketAddr,
    series: Series,
    task: JoinHandle<()>,
}

async fn metrics(State(series): State<Series>) -> impl IntoResponse {
    let body: String = lock(&series)
        .iter()
        .map(|(s, v)| format!("{s} {v}\n"))
        .collect();
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}

impl Exporter {
    /// Serves `series` on 127.0.0.1 (a free port).
    pub async fn start(series: &[(&str, f64)]) -> Exporter {
        let series: Series = Arc::new(Mutex::new(
            series.iter().map(|(s, v)| ((*s).to_string(), *v)).collect(),
        ));
        let app = Router::new()
            .route("/metrics", get(metrics))
            .with_state(series.clone());
        let (addr, task) = serve(app).await;
        Exporter { addr, series, task }
    }

    /// `host:port` (the scrape target).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://host:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sets (or adds) one series' value; the next scrape sees it.
    pub fn set(&self, series: &str, value: f64) {
        lock(&self.series).insert(series.to_string(), value);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------------------------
// TLS material

/// A self-signed CA that issues server certificates for 127.0.0.1 / localhost.
pub struct TestCa {
    /// The CA certificate (PEM): what a client's CA file holds.
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("self-signed CA");
        TestCa {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `127.0.0.1` and `localhost`: (certificate PEM, private key PEM).
    pub fn server_cert(&self) -> (String, String) {
        self.server_cert_for(&["127.0.0.1", "localhost"])
    }

    /// A server certificate for `names` (DNS names or IP addresses): (certificate PEM, private key PEM).
    pub fn server_cert_for(&self, names: &[&str]) -> (String, String) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_string()).collect::<Vec<_>>())
                .expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, "prometheus test server");
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &self.issuer).expect("server cert");
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes `contents` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

// ---------------------------------------------------------------------------------------------
// Prometheus

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

// ---------------------------------------------------------------------------------------------
// Bearer-token proxy

struct ProxyState {
    token: String,
    upstream: String,
    client: reqwest::Client,
    seen: Mutex<Vec<Option<String>>>,
}

/// An auth proxy in front of Prometheus that checks `Authorization: Bearer <token>`.
pub struct BearerProxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
    task: JoinHandle<()>,
}

async fn forward(State(p): State<Arc<ProxyState>>, request: Request) -> Response {
    let auth = request
        .headers()
        .get(AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    lock(&p.seen).push(auth.clone());
    if auth.as_deref() != Some(format!("Bearer {}", p.token).as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            [(WWW_AUTHENTICATE, "Bearer")],
            "Unauthorized\n",
        )
            .into_response();
    }
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 1 << 20).await else {
        return (StatusCode::BAD_REQUEST, "unreadable body\n").into_response();
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut upstream = p
        .client
        .request(parts.method, format!("{}{path}", p.upstream))
        .body(body);
    if let Some(ct) = parts.headers.get(CONTENT_TYPE) {
        upstream = upstream.header(CONTENT_TYPE, ct);
    }
    match upstream.send().await {
        Ok(answer) => {
            let status = answer.status();
            let ct = answer.headers().get(CONTENT_TYPE).cloned();
            let body = answer.bytes().await.unwrap_or_default();
            let mut response = (status, body).into_response();
            if let Some(ct) = ct {
                response.headers_mut().insert(CONTENT_TYPE, ct);
            }
            response
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("upstream: {e}\n")).into_response(),
    }
}

impl BearerProxy {
    /// A proxy on 127.0.0.1 (a free port) to `upstream` (e.g. `http://127.0.0.1:9090`) that lets
    /// through only `Authorization: Bearer <token>`.
    pub async fn start(upstream: &str, token: &str) -> BearerProxy {
        let state = Arc::new(ProxyState {
            token: token.to_string(),
            upstream: upstream.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .expect("proxy client"),
            seen: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(forward).with_state(state.clone());
        let (addr, task) = serve(app).await;
        BearerProxy { addr, state, task }
    }

    /// `http://host:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `Authorization` headers of the requests so far (`None`: no header).
    pub fn seen(&self) -> Vec<Option<String>> {
        lock(&self.state.seen).clone()
    }
}

impl Drop for BearerProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------------------------
// A server that never answers

/// Accepts TCP connections on 127.0.0.1 and holds them open without a byte of answer.
pub struct HungServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl HungServer {
    /// Listens on a free port.
    pub async fn start() -> HungServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        HungServer { addr, task }
    }

    /// `http://host:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for HungServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A stub answering every request with `status` and `body` (a load balancer's 503 page, say).
pub struct StubServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl StubServer {
    /// Listens on a free port.
    pub async fn start(status: StatusCode, body: &'static str) -> StubServer {
        let app = Router::new().fallback(move || async move { (status, body) });
        let (addr, task) = serve(app).await;
        StubServer { addr, task }
    }

    /// `http://host:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
