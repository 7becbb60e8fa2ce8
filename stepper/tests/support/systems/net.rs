//! Ports on 127.0.0.1 and the HTTP calls the harness makes (Patroni's REST API, etcd's JSON gateway).

use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use serde_json::Value;

/// Seconds an HTTP call of the harness may take.
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(3);
/// The lowest port handed out.
const FIRST_PORT: u16 = 15_000;

/// `n` ports of 127.0.0.1 free now, never the same twice in one test binary, and below the kernel's
/// ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`, 32768–60999 by default): a member that
/// restarts binds its port again, which an outgoing connection's ephemeral port could otherwise hold.
/// Where in the range depends on the pid, so two test binaries rarely try the same ports.
pub fn free_ports(n: usize) -> Vec<u16> {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let below = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let span = below.saturating_sub(FIRST_PORT).max(1_000);
    let offset = u16::try_from(std::process::id() % 40).expect("< 40") * (span / 40);
    let mut ports = Vec::with_capacity(n);
    while ports.len() < n {
        let i = NEXT.fetch_add(1, Ordering::Relaxed);
        assert!(i < span, "ran out of ports below {below}");
        let port = FIRST_PORT + (offset + i) % span;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    ports
}

/// A client for one call: no proxy (an `HTTP_PROXY` of CI must not carry 127.0.0.1), [`HTTP_TIMEOUT`].
/// Made per call: a client keeps connections on the runtime that made it, and each test has its own.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(HTTP_TIMEOUT)
        .build()
        .expect("reqwest client")
}

/// Basic-auth credentials: (username, password).
pub type Auth = Option<(String, String)>;

/// Sends `method url` (with `body` as JSON when given, and basic auth when given); returns the status
/// code and the body.
///
/// # Errors
/// The request failed (connection refused, timeout): the error names the URL.
pub async fn call(
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
    auth: &Auth,
) -> Result<(u16, String), String> {
    let mut request = client().request(method.clone(), url);
    if let Some(body) = body {
        request = request
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
    }
    if let Some((user, password)) = auth {
        request = request.basic_auth(user, Some(password));
    }
    let response = request
        .send()
        .await
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let status = response.status().as_u16();
    let text = response
        .text()
        .await
        .map_err(|e| format!("{method} {url}: reading the body: {e}"))?;
    Ok((status, text))
}

/// GET `url` → its JSON body, when the answer is 200.
///
/// # Errors
/// The request failed, the status is not 200, or the body is not JSON.
pub async fn get_json(url: &str) -> Result<Value, String> {
    json_of(url, call(reqwest::Method::GET, url, None, &None).await?)
}

/// POST `body` to `url` → the JSON answer, when the answer is 200.
///
/// # Errors
/// As [`get_json`].
pub async fn post_json(url: &str, body: &Value) -> Result<Value, String> {
    json_of(
        url,
        call(reqwest::Method::POST, url, Some(body), &None).await?,
    )
}

fn json_of(url: &str, (status, text): (u16, String)) -> Result<Value, String> {
    if status != 200 {
        return Err(format!("{url}: HTTP {status}: {}", text.trim()));
    }
    serde_json::from_str(&text).map_err(|e| format!("{url}: not JSON ({e}): {text}"))
}
