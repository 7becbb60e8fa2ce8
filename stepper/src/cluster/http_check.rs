//! The `HttpCheck` gate's I/O: `GET` of the URLs configured by `--http-check NAME=URL` with `reqwest`.
//!
//! Only these URLs are ever called: a set's `<prefix>/http-check` annotation names one, it never
//! carries an address. An answer is usable when its status is 2xx and its body JSON
//! ([`HttpAnswer::Json`]); anything else — a timeout, a refused connection, another status, a body
//! that is not JSON — is [`HttpAnswer::Error`] with the cause in one line: an error of the check,
//! never a failure. TLS is always verified against the built-in web PKI roots (rustls with ring, as
//! the Prometheus client: [`super::prometheus`]). The kind of read ([`HttpGet`]) and its client
//! ([`HttpChecks`]) of the checks' [`Probe`] trait.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use super::probe::{Kind, Probe};
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

/// The checks configured on the stepper: name → URL, and one client for them all.
#[derive(Clone, Debug)]
pub struct HttpChecks {
    http: reqwest::Client,
    urls: BTreeMap<String, String>,
}

impl HttpChecks {
    /// The client for `checks` (`NAME=URL` pairs, already checked by `--http-check`'s parser), each
    /// request bounded by `timeout` (connect and answer).
    ///
    /// # Errors
    /// A NAME given twice, or a TLS setup reqwest refuses.
    pub fn new(checks: &[(String, String)], timeout: Duration) -> Result<Self, String> {
        let mut urls = BTreeMap::new();
        for (name, url) in checks {
            if urls.insert(name.clone(), url.clone()).is_some() {
                return Err(format!(
                    "--http-check: NAME {name:?} given twice; expected each NAME once"
                ));
            }
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("building the HTTP check client: {e}"))?;
        Ok(HttpChecks { http, urls })
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.urls.keys().cloned().collect()
    }

    /// GETs the URL configured under `name`. Never fails: no usable answer is [`HttpAnswer::Error`].
    pub async fn get(&self, name: &str) -> HttpAnswer {
        let Some(url) = self.urls.get(name) else {
            return HttpAnswer::Error(format!("no --http-check named {name:?}"));
        };
        match self.try_get(url).await {
            Ok(json) => HttpAnswer::Json(json),
            Err(cause) => HttpAnswer::Error(cause),
        }
    }

    async fn try_get(&self, url: &str) -> Result<serde_json::Value, String> {
        let response = self
            .http
            .get(url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| super::prometheus::one_line(&e))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| super::prometheus::one_line(&e))?;
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
        serde_json::from_slice(&body)
            .map_err(|e| format!("HTTP {status}: not JSON ({e}): {}", head()))
    }
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
