//! The approval webhook's I/O: `POST` of an `UpdateApprovalRequest` (built by the gates,
//! [`crate::gates::approval::webhook::request`]) to the URLs configured by `--webhook NAME=URL` and the
//! `--webhook-config` file, with `reqwest`.
//!
//! Only these URLs are ever called: a set's `<prefix>/pre-update-webhook` names one, it never carries an
//! address. Each call is bounded by its endpoint's timeout (connect, send and answer: the file's
//! `timeoutSeconds`, else `--webhook-timeout`); redirects are not followed (a 3xx is an answer without
//! a decision, and credentials never go to another address); TLS is always verified, against the
//! built-in web PKI roots plus the entry's `tls.caFile` or else the CA bundle of `--webhook-ca-file`
//! (rustls with ring), with the entry's client certificate when it has one. The entry's credentials
//! (`auth`: basic or a bearer token) and TLS files are read at every call ([`super::endpoint_client`]);
//! an unreadable one is an error of that call, never a call without it. What the answer means is the
//! gates' ([`read_answer`]): this module only sends and receives. The kind of read ([`WebhookPost`])
//! and its client ([`Webhooks`]) of the checks' [`Probe`] trait.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use reqwest::Method;

use super::ca_bundle::read_bundle;
use super::endpoint_client::{EndpointClient, describe};
use super::probe::{Kind, Probe};
use crate::config::Serves;
use crate::config::endpoint_auth::{EndpointAuth, Tls};

use crate::gates::approval::webhook::answer::{WebhookAnswer, read_answer};

/// The approval webhook's kind of read: one POST ([`WebhookCall`]: a `--webhook` NAME and the request
/// body) asked, its [`WebhookAnswer`] answered. Without any `--webhook` every POST is an error saying
/// so.
#[derive(Debug)]
pub enum WebhookPost {}

/// One POST of the approval webhook: the body to the URL configured under the NAME.
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookCall {
    /// The `--webhook` NAME (a set's `<prefix>/pre-update-webhook`).
    pub name: String,
    /// The request, an `UpdateApprovalRequest` ([`crate::gates::approval::webhook::request`]).
    pub body: serde_json::Value,
}

impl Kind for WebhookPost {
    type Request = WebhookCall;
    type Answer = WebhookAnswer;

    fn unconfigured(call: &WebhookCall) -> WebhookAnswer {
        WebhookAnswer::Error(format!(
            "no webhook configured (--webhook {}=URL)",
            call.name
        ))
    }
}

/// POSTs to the configured URLs ([`Webhooks::post`]).
impl Probe<WebhookPost> for Webhooks {
    fn answer(&self, call: &WebhookCall) -> impl Future<Output = WebhookAnswer> + Send {
        self.post(&call.name, &call.body)
    }
}

/// One webhook the stepper may call: the name a set's `<prefix>/pre-update-webhook` selects, its URL,
/// the bound of one call (connect, send and answer), its TLS and credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The name (a DNS label).
    pub name: String,
    /// The http(s) URL.
    pub url: String,
    /// The whole call's bound.
    pub timeout: Duration,
    /// TLS and credentials (`config::endpoint_auth`); the default: the built-in web PKI roots (and
    /// `--webhook-ca-file`), no `Authorization` header.
    pub access: EndpointAuth,
    /// The sets it serves (`serves:`, `--webhook-serves`): a question about another is never sent.
    /// `None` only where no configuration binds it (tests, the simulation): the stepper's start
    /// requires one for every webhook.
    pub serves: Option<Serves>,
}

/// The webhooks configured on the stepper by name, each with its client.
#[derive(Clone, Debug)]
pub struct Webhooks {
    endpoints: BTreeMap<String, (Endpoint, EndpointClient)>,
}

impl Webhooks {
    /// The clients for `endpoints` (names, URLs, `tls` and `auth` already checked by the flags' and
    /// the file's parsers), trusting the PEM certificates in `ca_file` (`--webhook-ca-file`) besides
    /// the built-in roots for every endpoint whose `tls` names no `caFile`.
    ///
    /// # Errors
    /// A name given twice, an unreadable CA file or one without a PEM certificate, a TLS file of an
    /// entry that cannot be read or holds no PEM of its kind, a TLS setup reqwest refuses; each naming
    /// the flag or the webhook, the field and the path.
    pub fn new(endpoints: &[Endpoint], ca_file: Option<&Path>) -> Result<Self, String> {
        if let Some(path) = ca_file {
            // Checked once here, for the flag's message, even with no endpoint to use it.
            read_bundle(path).map_err(|m| format!("--webhook-ca-file {}: {m}", path.display()))?;
        }
        let mut by_name = BTreeMap::new();
        for e in endpoints {
            if by_name.contains_key(&e.name) {
                return Err(format!(
                    "--webhook: NAME {:?} given twice; expected each NAME once",
                    e.name
                ));
            }
            let builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")));
            let access = with_default_ca(&e.access, ca_file);
            let client = EndpointClient::new(&format!("webhook {}", e.name), &access, builder)?;
            by_name.insert(e.name.clone(), (e.clone(), client));
        }
        Ok(Webhooks { endpoints: by_name })
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.endpoints.keys().cloned().collect()
    }

    /// Each webhook bound to the sets it serves, with them.
    pub fn bound(&self) -> impl Iterator<Item = (&str, &Serves)> {
        (self.endpoints.iter()).filter_map(|(n, (e, _))| Some((n.as_str(), e.serves.as_ref()?)))
    }

    /// The longest call bound among the endpoints (`None` without any): the default `--check-deadline`
    /// gives a call started late in a pass its whole bound.
    pub fn longest_timeout(&self) -> Option<Duration> {
        self.endpoints.values().map(|(e, _)| e.timeout).max()
    }

    /// POSTs `body` to the URL configured under `name`. Never fails: no decision is
    /// [`WebhookAnswer::Error`] with the cause in one line.
    pub async fn post(&self, name: &str, body: &serde_json::Value) -> WebhookAnswer {
        let Some((endpoint, client)) = self.endpoints.get(name) else {
            return WebhookAnswer::Error(format!("no --webhook named {name:?}"));
        };
        if let Some(serves) = &endpoint.serves {
            let of = |key: &str| body["statefulSet"][key].as_str().unwrap_or_default();
            let (namespace, set) = (of("namespace"), of("name"));
            if !serves.admits(namespace, set) {
                return WebhookAnswer::Error(format!(
                    "webhook {name:?} serves {serves}, not {namespace}/{set}: not called"
                ));
            }
        }
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let request = match client.request(Method::POST, &endpoint.url) {
            Ok(r) => r,
            Err(e) => return WebhookAnswer::Error(e),
        };
        let response = request
            .timeout(endpoint.timeout)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(bytes)
            .send()
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => return WebhookAnswer::Error(describe(&e)),
        };
        let status = response.status().as_u16();
        match response.bytes().await {
            Ok(body) => read_answer(status, &body),
            Err(e) => WebhookAnswer::Error(format!("HTTP {status}: {}", describe(&e))),
        }
    }
}

/// `access` with `--webhook-ca-file` as its `tls.caFile` when it names none (no `tls` at all: the flag's
/// CA alone). The flag is then read again at every call, as an entry's own CA file.
fn with_default_ca(access: &EndpointAuth, ca_file: Option<&Path>) -> EndpointAuth {
    let Some(path) = ca_file else {
        return access.clone();
    };
    let mut access = access.clone();
    let tls = access.tls.get_or_insert_with(Tls::default);
    if tls.ca_file.is_none() {
        tls.ca_file = Some(path.to_path_buf());
    }
    access
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(name: &str, url: &str, seconds: u64) -> Endpoint {
        Endpoint {
            serves: None,
            name: name.into(),
            url: url.into(),
            timeout: Duration::from_secs(seconds),
            access: EndpointAuth::default(),
        }
    }

    /// A webhook bound to `e2e/cache` is not called for `manual/cache`: the refusal names both, and
    /// comes before any connection (nothing listens on port 9: a call would fail otherwise).
    #[tokio::test]
    async fn a_question_about_a_set_it_does_not_serve_is_never_sent() {
        let mut e = endpoint("cache", "http://127.0.0.1:9/approve", 1);
        e.serves = Some(Serves::parse(&["e2e/cache"], "serves").expect("valid"));
        let hooks = Webhooks::new(&[e], None).expect("client");
        let body =
            |ns: &str| serde_json::json!({"statefulSet": {"namespace": ns, "name": "cache"}});
        match hooks.post("cache", &body("manual")).await {
            WebhookAnswer::Error(e) => assert_eq!(
                e,
                "webhook \"cache\" serves e2e/cache, not manual/cache: not called"
            ),
            other => panic!("{other:?}"),
        }
        match hooks.post("cache", &body("e2e")).await {
            WebhookAnswer::Error(e) => assert!(!e.contains("not called"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_name_given_twice_is_refused() {
        let twice = [endpoint("db", "http://a", 1), endpoint("db", "http://b", 1)];
        let e = Webhooks::new(&twice, None).expect_err("twice");
        assert!(e.contains("\"db\" given twice"), "{e}");
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        let dir = std::env::temp_dir().join(format!("sts-webhook-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("empty.pem");
        std::fs::write(&path, "no certificate here\n").expect("write");
        let e = Webhooks::new(&[], Some(&path)).expect_err("empty");
        assert!(e.starts_with("--webhook-ca-file "), "{e}");
        let missing = dir.join("missing.pem");
        let e = Webhooks::new(&[], Some(&missing)).expect_err("missing");
        assert!(e.contains("missing.pem"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_longest_timeout_bounds_the_pass() {
        let none = Webhooks::new(&[], None).expect("none");
        assert_eq!(none.longest_timeout(), None);
        let two = [
            endpoint("db", "http://a", 10),
            endpoint("kafka", "http://b", 45),
        ];
        let client = Webhooks::new(&two, None).expect("two");
        assert_eq!(client.longest_timeout(), Some(Duration::from_secs(45)));
        assert_eq!(client.names(), ["db", "kafka"]);
    }
}
