//! The checks' clients as the flags configure them ([`Checks`], one `Option` per kind of read), and
//! what a pass reads through ([`AllProbes`]: a [`Probe`] of every kind).

use std::future::Future;

use super::http_check::{HttpChecks, HttpGet};
use super::probe::Probe;
use super::prometheus::{PromQuery, PrometheusClient};
use super::webhook::{WebhookCall, WebhookPost, Webhooks};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::check::http::HttpAnswer;
use crate::gates::check::prometheus::QueryOutcome;

/// Everything a pass reads outbound: a [`Probe`] of each kind — PromQL queries ([`PromQuery`]), the
/// HTTP checks' GETs ([`HttpGet`]), the approval webhooks' POSTs ([`WebhookPost`]). The pass and the
/// commands take one `P: AllProbes` ([`Checks`]; the simulation's application; tests' stand-ins), not
/// one parameter per kind. Implemented by every type that implements the three.
pub trait AllProbes: Probe<PromQuery> + Probe<HttpGet> + Probe<WebhookPost> {}

impl<T: Probe<PromQuery> + Probe<HttpGet> + Probe<WebhookPost>> AllProbes for T {}

/// The checks' clients the flags configure, one per kind of read: Prometheus (`--prometheus-url`,
/// `None` without it), the HTTP checks (`--http-check`, `None` without any), the approval webhooks
/// (`--webhook`, `None` without any). Each read goes to its kind's client; a kind with none answers
/// its [`super::probe::Kind::unconfigured`] error. `Checks::default()`: none configured, every read
/// an error (a set that needs one never steps — fail closed).
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// The Prometheus client.
    pub prometheus: Option<PrometheusClient>,
    /// The HTTP checks' client.
    pub http: Option<HttpChecks>,
    /// The approval webhooks' client.
    pub webhooks: Option<Webhooks>,
}

impl Probe<PromQuery> for Checks {
    fn answer(&self, expr: &str) -> impl Future<Output = QueryOutcome> + Send {
        self.prometheus.answer(expr)
    }
}

impl Probe<HttpGet> for Checks {
    fn answer(&self, name: &str) -> impl Future<Output = HttpAnswer> + Send {
        self.http.answer(name)
    }
}

impl Probe<WebhookPost> for Checks {
    fn answer(&self, call: &WebhookCall) -> impl Future<Output = WebhookAnswer> + Send {
        self.webhooks.answer(call)
    }
}
