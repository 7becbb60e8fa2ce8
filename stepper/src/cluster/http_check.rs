//! The `HttpCheck` gate's I/O: `GET` of the URLs configured by `--http-check NAME=URL` and the
//! `--http-check-config` file, with `reqwest`.
//!
//! Only these URLs are ever called: a set's `<prefix>/http-check` annotation names one, it never
//! carries an address. An answer is usable when its status is 2xx and its body JSON
//! ([`HttpAnswer::Json`]); anything else — a timeout, a refused connection, a failed TLS handshake,
//! another status (a 401 of wrong credentials), a body that is not JSON, an unreadable credential
//! file — is [`HttpAnswer::Error`] with the cause in one line: an error of the check, never a failure
//! and never a pass. TLS is always verified, against the built-in web PKI roots and the check's own
//! `tls` (rustls with ring); its credentials and TLS files are read at every call
//! ([`super::endpoint_client`]). Redirects are followed (at most 10), only to the same scheme, host and
//! port when the check carries credentials or a client certificate. The kind of read ([`HttpGet`])
//! and its client ([`HttpChecks`]) of the checks' [`Probe`] trait.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use reqwest::Method;

use super::endpoint_client::{EndpointClient, describe, same_origin_redirects};
use super::probe::{Kind, Probe};
use crate::config::endpoint_auth::EndpointAuth;
use crate::gates::check::http::HttpAnswer;

/// The `HttpCheck` gate's kind of read: one GET of the URL configured under a `--http-check` NAME,
/// the NAME asked, its [`HttpAnswer`] answered. Without any `--http-check` every GET is an error
/// saying so.
#[derive(Debug)]
pub enum HttpGet {}

impl Kind for HttpGet {
    type Request = str;
    type Answer = HttpAnswer;

    fn unconfigured(name: &str) -> HttpAnswer {
        HttpAnswer::Error(format!(
            "no HTTP check configured (--http-check {name}=URL)"
        ))
    }
}

/// GETs of the configured URLs ([`HttpChecks::get`]).
impl Probe<HttpGet> for HttpChecks {
    fn answer(&self, name: &str) -> impl Future<Output = HttpAnswer> + Send {
        self.get(name)
    }
}

/// One HTTP check the stepper may GET: the name a set's `<prefix>/http-check` selects, its URL, the
/// bound of one GET, its TLS and credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpEndpoint {
    /// The name (a DNS label).
    pub name: String,
    /// The http(s) URL.
    pub url: String,
    /// The whole GET's bound (connect and answer).
    pub timeout: Duration,
    /// TLS and credentials (`config::endpoint_auth`).
    pub access: EndpointAuth,
}

/// The checks configured on the stepper by name, each with its client.
#[derive(Clone, Debug)]
pub struct HttpChecks {
    checks: BTreeMap<String, (HttpEndpoint, EndpointClient)>,
}

impl HttpChecks {
    /// The client for `checks` (`NAME=URL` pairs, already checked by `--http-check`'s parser), each
    /// request bounded by `timeout` (connect and answer), without TLS settings or credentials.
    ///
    /// # Errors
    /// As [`HttpChecks::with_endpoints`].
    pub fn new(checks: &[(String, String)], timeout: Duration) -> Result<Self, String> {
        let endpoints: Vec<HttpEndpoint> = checks
            .iter()
            .map(|(name, url)| HttpEndpoint {
                name: name.clone(),
                url: url.clone(),
                timeout,
                access: EndpointAuth::default(),
            })
            .collect();
        Self::with_endpoints(&endpoints)
    }

    /// The clients for `endpoints` (names, URLs, `tls` and `auth` already checked by the flags' and
    /// the file's parsers).
    ///
    /// # Errors
    /// A NAME given twice, a TLS file that cannot be read or holds no PEM of its kind, a TLS setup
    /// reqwest refuses; each naming the check (and the field and the path).
    pub fn with_endpoints(endpoints: &[HttpEndpoint]) -> Result<Self, String> {
        let mut checks = BTreeMap::new();
        for e in endpoints {
            if checks.contains_key(&e.name) {
                return Err(format!(
                    "--http-check: NAME {:?} given twice; expected each NAME once",
                    e.name
                ));
            }
            let mut builder = reqwest::Client::builder()
                .timeout(e.timeout)
                .connect_timeout(e.timeout)
                .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")));
            if e.access.carries_credentials() {
                builder = builder.redirect(same_origin_redirects());
            }
            let client =
                EndpointClient::new(&format!("HTTP check {}", e.name), &e.access, builder)?;
            checks.insert(e.name.clone(), (e.clone(), client));
        }
        Ok(HttpChecks { checks })
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.checks.keys().cloned().collect()
    }

    /// The longest GET bound among the checks (`None` without any): the default `--check-deadline`
    /// gives a GET started late in a pass its whole bound.
    pub fn longest_timeout(&self) -> Option<Duration> {
        self.checks.values().map(|(e, _)| e.timeout).max()
    }

    /// GETs the URL configured under `name`. Never fails: no usable answer is [`HttpAnswer::Error`].
    pub async fn get(&self, name: &str) -> HttpAnswer {
        let Some((endpoint, client)) = self.checks.get(name) else {
            return HttpAnswer::Error(format!("no --http-check named {name:?}"));
        };
        match try_get(client, &endpoint.url).await {
            Ok(json) => HttpAnswer::Json(json),
            Err(cause) => HttpAnswer::Error(cause),
        }
    }
}

async fn try_get(client: &EndpointClient, url: &str) -> Result<serde_json::Value, String> {
    let response = client
        .request(Method::GET, url)?
        .header("Accept", "application/json")
        .send()
        .await
        .map_err(|e| describe(&e))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| describe(&e))?;
    let head = || {
        let text = String::from_utf8_lossy(&body);
        let mut head: String = text.trim().chars().take(200).collect();
        if head.len() < text.trim().len() {
            head.push('…');
        }
        head.replace('\n', " ")
    };
    if !status.is_success() {
        return Err(format!("HTTP {status}: {}", head()).trim_end().to_string());
    }
    serde_json::from_slice(&body).map_err(|e| format!("HTTP {status}: not JSON ({e}): {}", head()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_given_twice_is_refused() {
        let twice = [
            ("es".to_string(), "http://a".to_string()),
            ("es".to_string(), "http://b".to_string()),
        ];
        let e = HttpChecks::new(&twice, Duration::from_secs(1)).expect_err("twice");
        assert!(e.contains("\"es\" given twice"), "{e}");
    }
}
