//! The small HTTP servers around a real Prometheus, each on a free port of 127.0.0.1 and stopped when
//! dropped (also usable without one).
//!
//! - [`Exporter`]: serves `/metrics` in the text format, whose series and values the test sets at any
//!   time (what the Prometheus scrapes).
//! - [`BearerProxy`]: Prometheus checks no bearer tokens (its web config knows basic auth and TLS
//!   client certificates only); in front of it, a token is checked by an auth proxy (kube-rbac-proxy,
//!   an OAuth proxy, a hosted Prometheus' gateway). This is such a proxy: it answers 401 unless
//!   `Authorization: Bearer <token>` matches, forwards everything else upstream, and records the
//!   `Authorization` headers it saw.
//! - [`HungServer`]: accepts TCP connections and never answers (for timeouts).
//! - [`StubServer`]: answers every request with one status and body (a load balancer's 503 page).
#![allow(dead_code)] // each test crate uses a subset

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::task::JoinHandle;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
