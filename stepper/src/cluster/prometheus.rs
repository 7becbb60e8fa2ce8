//! The `PrometheusCheck` gate's I/O: PromQL instant queries over Prometheus' HTTP API with `reqwest`.
//!
//! `POST <url>/api/v1/query` (form `query=<expr>`, as Grafana sends long queries), answer
//! `{"status":"success","data":{"resultType":…,"result":…}}`. Credentials are read from files on every
//! query (mounted from a Secret, so a rotated Secret is picked up without a restart). TLS is always
//! verified, against the built-in web PKI roots plus an optional CA file. The kind of read
//! ([`PromQuery`]) and its client ([`PrometheusClient`]) of the checks' [`Probe`] trait.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::ca_bundle::trust_bundle;
use super::probe::{Kind, Probe};
use crate::gates::check::prometheus::QueryOutcome;

/// The `PrometheusCheck` gate's kind of read: one PromQL instant query, its expression asked, its
/// [`QueryOutcome`] answered. Without `--prometheus-url` every query is an error saying so.
#[derive(Debug)]
pub enum PromQuery {}

impl Kind for PromQuery {
    type Request = str;
    type Answer = QueryOutcome;

    fn unconfigured(_expr: &str) -> QueryOutcome {
        QueryOutcome::Error("no Prometheus configured (--prometheus-url)".into())
    }
}

/// Queries over the HTTP API ([`PrometheusClient::query`]).
impl Probe<PromQuery> for PrometheusClient {
    fn answer(&self, expr: &str) -> impl Future<Output = QueryOutcome> + Send {
        self.query(expr)
    }
}

/// How the stepper authenticates to Prometheus.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Auth {
    /// No credentials.
    #[default]
    None,
    /// `Authorization: Bearer <token>`, the token read from this file (trailing newline trimmed).
    BearerTokenFile(PathBuf),
    /// HTTP basic auth: this username, the password read from this file (trailing newline trimmed).
    Basic {
        /// The username.
        username: String,
        /// File holding the password.
        password_file: PathBuf,
    },
}

/// Everything needed to reach Prometheus (the stepper's `--prometheus-*` flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrometheusConfig {
    /// Base URL, e.g. `http://prometheus.monitoring:9090` or `https://example.org/prometheus`.
    pub url: String,
    /// Timeout of one query, request and answer (seconds granularity is enough; default 10 s).
    pub timeout: Duration,
    /// Credentials.
    pub auth: Auth,
    /// PEM file with CA certificates trusted besides the built-in roots (a private CA).
    pub ca_file: Option<PathBuf>,
}

/// A configured Prometheus HTTP API client.
#[derive(Clone, Debug)]
pub struct PrometheusClient {
    http: reqwest::Client,
    endpoint: String,
    auth: Auth,
}

/// Why a client could not be built (bad flags).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--prometheus-url` is not an http(s) URL.
    #[error(
        "--prometheus-url {url:?}: expected an http:// or https:// URL such as http://prometheus.monitoring:9090"
    )]
    Url {
        /// The value given.
        url: String,
    },
    /// The CA file cannot be read or holds no PEM certificate.
    #[error("--prometheus-ca-file {path}: {message}")]
    CaFile {
        /// The file.
        path: String,
        /// The cause.
        message: String,
    },
    /// reqwest refused the TLS configuration.
    #[error("building the Prometheus HTTP client: {0}")]
    Client(String),
}

#[derive(Deserialize)]
struct ApiAnswer {
    status: String,
    #[serde(default)]
    data: Option<ApiData>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct ApiData {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Value,
}

impl PrometheusClient {
    /// Builds the client.
    ///
    /// # Errors
    /// A URL that is not http(s), an unreadable CA file, a TLS setup reqwest refuses.
    pub fn new(config: &PrometheusConfig) -> Result<Self, ConfigError> {
        let url = config.url.trim_end_matches('/');
        let valid = ["http://", "https://"]
            .iter()
            .any(|s| url.starts_with(s) && url.len() > s.len());
        if !valid || url.contains(char::is_whitespace) {
            return Err(ConfigError::Url {
                url: config.url.clone(),
            });
        }
        let mut builder = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = &config.ca_file {
            builder = trust_bundle(builder, path).map_err(|message| ConfigError::CaFile {
                path: path.display().to_string(),
                message,
            })?;
        }
        let http = builder
            .build()
            .map_err(|e| ConfigError::Client(e.to_string()))?;
        Ok(PrometheusClient {
            http,
            endpoint: format!("{url}/api/v1/query"),
            auth: config.auth.clone(),
        })
    }

    /// The query endpoint, `<url>/api/v1/query`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Runs one instant query. Never fails: no answer is [`QueryOutcome::Error`] with the cause in
    /// one line (connection refused, timeout, HTTP status and Prometheus' error, an unreadable
    /// credentials file, an answer that is not the Prometheus API's).
    pub async fn query(&self, expr: &str) -> QueryOutcome {
        match self.try_query(expr).await {
            Ok(outcome) => outcome,
            Err(cause) => QueryOutcome::Error(cause),
        }
    }

    async fn try_query(&self, expr: &str) -> Result<QueryOutcome, String> {
        let mut request = self.http.post(&self.endpoint).form(&[("query", expr)]);
        match &self.auth {
            Auth::None => {}
            Auth::BearerTokenFile(path) => {
                request = request.bearer_auth(read_secret(path, "--prometheus-bearer-token-file")?);
            }
            Auth::Basic {
                username,
                password_file,
            } => {
                let password = read_secret(password_file, "--prometheus-password-file")?;
                request = request.basic_auth(username, Some(password));
            }
        }
        let response = request.send().await.map_err(|e| one_line(&e))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| one_line(&e))?;
        let answer: Option<ApiAnswer> = serde_json::from_slice(&body).ok();
        match answer {
            Some(a) if a.status == "success" && status.is_success() => {
                let data = a.data.ok_or("Prometheus answered success without data")?;
                Ok(count(&data))
            }
            Some(a) => Err(format!(
                "HTTP {status}: {} {}",
                a.error_type.unwrap_or_default(),
                a.error.unwrap_or_default()
            )
            .trim_end()
            .to_string()),
            None => {
                let text = String::from_utf8_lossy(&body);
                let text = text.trim();
                let mut head: String = text.chars().take(200).collect();
                if head.len() < text.len() {
                    head.push('…');
                }
                Err(format!(
                    "HTTP {status}: not a Prometheus API answer: {}",
                    head.replace('\n', " ")
                ))
            }
        }
    }
}

fn count(data: &ApiData) -> QueryOutcome {
    match (data.result_type.as_str(), &data.result) {
        ("vector" | "matrix", Value::Array(items)) if items.is_empty() => QueryOutcome::Empty,
        ("vector" | "matrix", Value::Array(items)) => QueryOutcome::NonEmpty(items.len()),
        (_, Value::Null) => QueryOutcome::Empty,
        // `scalar(v)` of an empty vector is NaN: no data, as an empty vector would be.
        ("scalar", Value::Array(pair))
            if pair
                .get(1)
                .and_then(Value::as_str)
                .is_some_and(|v| v == "NaN") =>
        {
            QueryOutcome::Empty
        }
        // scalar / string: one value.
        _ => QueryOutcome::NonEmpty(1),
    }
}

/// The secret in the file at `path` (a token, a password), without its trailing newline; read at every
/// use, so a rotated Secret or projected token is picked up.
///
/// # Errors
/// The file cannot be read: `reading <what> <path>: <cause>`.
pub(crate) fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim_end_matches(['\n', '\r']).to_string())
        .map_err(|e| format!("reading {what} {}: {e}", path.display()))
}

/// The error and its sources on one line (reqwest's top-level message alone says only
/// "error sending request").
pub(crate) fn one_line(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}
