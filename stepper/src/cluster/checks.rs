//! The checks' clients as the flags configure them ([`Checks`], one `Option` per kind of read), and
//! what a pass reads through ([`AllProbes`]: a [`Probe`] of every kind).

use std::future::Future;

use super::answerer::Answerers;
use super::http_check::{HttpChecks, HttpGet};
use super::probe::Probe;
use super::prometheus::{PromQuery, PrometheusClient};
use super::webhook::{WebhookCall, WebhookPost, Webhooks};
use crate::config::{Served, check, http_check, webhook};
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
    /// The built-in answerers of `--answerer-config` (`None` without the file): a set's
    /// `pre-update-webhook` may name one as it names a webhook; the names are one namespace.
    pub answerers: Option<Answerers>,
}

impl Checks {
    /// Each name a set's `pre-update-webhook` may give, with its kind: `webhook`, or the built-in
    /// answerer's (`patroni`, …).
    pub fn approval_kinds(&self) -> Vec<(String, &'static str)> {
        let mut kinds: Vec<(String, &'static str)> = (self.webhooks.iter())
            .flat_map(Webhooks::names)
            .map(|n| (n, "webhook"))
            .collect();
        if let Some(a) = &self.answerers {
            kinds.extend(
                a.names()
                    .into_iter()
                    .filter_map(|n| Some((n.clone(), a.get(&n)?.kind()))),
            );
        }
        kinds
    }

    /// The endpoints configured, by the flag a set's annotation names them under
    /// ([`crate::config::Served`]): `--prometheus-url` when set, the HTTP checks' names, the names a
    /// `pre-update-webhook` may give ([`Checks::approval_names`]).
    pub fn served(&self) -> Served {
        let mut served = Served::default();
        if self.prometheus.is_some() {
            served.insert(&check::PROMETHEUS_FLAG, Vec::new());
        }
        let http = self.http.as_ref().map(HttpChecks::names);
        served.insert(&http_check::FLAG, http.unwrap_or_default());
        served.insert(&webhook::FLAG, self.approval_names());
        served
    }

    /// The names a set's `pre-update-webhook` may give: the webhooks' and the built-in answerers',
    /// sorted.
    pub fn approval_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.webhooks.iter().flat_map(Webhooks::names).collect();
        names.extend(self.answerers.iter().flat_map(Answerers::names));
        names.sort();
        names
    }
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

/// A call to a name of `--answerer-config` is answered by that built-in answerer, any other by the
/// webhooks.
impl Probe<WebhookPost> for Checks {
    async fn answer(&self, call: &WebhookCall) -> WebhookAnswer {
        match &self.answerers {
            Some(a) if a.get(&call.name).is_some() => a.answer(&call.name, &call.body).await,
            _ => self.webhooks.answer(call).await,
        }
    }
}
