//! The approval webhook's I/O: `POST` of an `UpdateApprovalRequest` (built by the gates,
//! [`crate::gates::webhook_request`]) to the URLs configured by `--webhook NAME=URL`, with `reqwest`.
//!
//! Only these URLs are ever called: a set's `<prefix>/pre-update-webhook` names one, it never carries an
//! address. Each call is bounded by `--webhook-timeout` (connect and answer); redirects are not
//! followed (a 3xx is an answer without a decision); TLS is always verified, against the built-in web
//! PKI roots plus the CA bundle of `--webhook-ca-file` (rustls with ring, as the Prometheus client:
//! [`super::prometheus`]). What the answer means is the gates' ([`read_answer`]): this module only sends
//! and receives.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::ca_bundle::trust_bundle;

use crate::gates::webhook_answer::{WebhookAnswer, read_answer};

/// The webhooks configured on the stepper: name → URL, and one client for them all.
#[derive(Clone, Debug)]
pub struct Webhooks {
    http: reqwest::Client,
    urls: BTreeMap<String, String>,
}

impl Webhooks {
    /// The client for `webhooks` (`NAME=URL` pairs, already checked by `--webhook`'s parser), each
    /// call bounded by `timeout`, trusting the PEM certificates in `ca_file` besides the built-in roots.
    ///
    /// # Errors
    /// A NAME given twice, an unreadable CA file or one without a PEM certificate, a TLS setup reqwest
    /// refuses; each naming the flag.
    pub fn new(
        webhooks: &[(String, String)],
        timeout: Duration,
        ca_file: Option<&Path>,
    ) -> Result<Self, String> {
        let mut urls = BTreeMap::new();
        for (name, url) in webhooks {
            if urls.insert(name.clone(), url.clone()).is_some() {
                return Err(format!(
                    "--webhook: NAME {name:?} given twice; expected each NAME once"
                ));
            }
        }
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = ca_file {
            builder = trust_bundle(builder, path)
                .map_err(|m| format!("--webhook-ca-file {}: {m}", path.display()))?;
        }
        let http = builder
            .build()
            .map_err(|e| format!("building the webhook client: {e}"))?;
        Ok(Webhooks { http, urls })
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.urls.keys().cloned().collect()
    }

    /// POSTs `body` to the URL configured under `name`. Never fails: no decision is
    /// [`WebhookAnswer::Error`] with the cause in one line.
    pub async fn post(&self, name: &str, body: &serde_json::Value) -> WebhookAnswer {
        let Some(url) = self.urls.get(name) else {
            return WebhookAnswer::Error(format!("no --webhook named {name:?}"));
        };
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let response = self
            .http
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(bytes)
            .send()
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => return WebhookAnswer::Error(super::prometheus::one_line(&e)),
        };
        let status = response.status().as_u16();
        match response.bytes().await {
            Ok(body) => read_answer(status, &body),
            Err(e) => WebhookAnswer::Error(format!(
                "HTTP {status}: {}",
                super::prometheus::one_line(&e)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_given_twice_is_refused() {
        let twice = [
            ("db".to_string(), "http://a".to_string()),
            ("db".to_string(), "http://b".to_string()),
        ];
        let e = Webhooks::new(&twice, Duration::from_secs(1), None).expect_err("twice");
        assert!(e.contains("\"db\" given twice"), "{e}");
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        let dir = std::env::temp_dir().join(format!("sts-webhook-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("empty.pem");
        std::fs::write(&path, "no certificate here\n").expect("write");
        let e = Webhooks::new(&[], Duration::from_secs(1), Some(&path)).expect_err("empty");
        assert!(e.starts_with("--webhook-ca-file "), "{e}");
        let missing = dir.join("missing.pem");
        let e = Webhooks::new(&[], Duration::from_secs(1), Some(&missing)).expect_err("missing");
        assert!(e.contains("missing.pem"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
