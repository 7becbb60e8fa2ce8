//! The checks' clients behind one trait ([`Prometheus`]): the `PrometheusCheck` gate's PromQL queries,
//! the `HttpCheck` gate's GETs and the approval webhook's POSTs, as the flags configure them
//! ([`Checks`]), or none ([`NoPrometheus`]: every read fails, so a set that needs one never steps).

use std::future::Future;

use crate::cluster::http_check;
use crate::cluster::webhook::Webhooks;
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::check::http::HttpAnswer;
use crate::gates::check::prometheus::QueryOutcome;

/// PromQL instant queries for the `PrometheusCheck` gate ([`crate::gates::check::prometheus`]). Implemented by
/// [`crate::cluster::prometheus::PrometheusClient`] (the HTTP API), by [`NoPrometheus`] (no
/// `--prometheus-url`: every query fails, so a set with a check never steps — fail closed), and by the
/// simulation (its application-health signal).
///
/// The same source answers the `HttpCheck` gate's GETs ([`Prometheus::http_check`]) and the approval
/// webhook's POSTs ([`Prometheus::webhook`]): by default none is configured (fail closed); [`Checks`]
/// holds the clients the flags configure. (One trait for every outbound read of a pass, so the pass and
/// its callers take one parameter, not one per kind of endpoint.)
pub trait Prometheus: Sync {
    /// Runs `expr` now. Never fails: no answer is [`QueryOutcome::Error`].
    fn query(&self, expr: &str) -> impl Future<Output = QueryOutcome> + Send;

    /// GETs the URL configured under the `--http-check` `name`. Never fails: no usable answer is
    /// [`HttpAnswer::Error`]. By default no HTTP check is configured.
    fn http_check(&self, name: &str) -> impl Future<Output = HttpAnswer> + Send {
        std::future::ready(HttpAnswer::Error(format!(
            "no HTTP check configured (--http-check {name}=URL)"
        )))
    }

    /// POSTs `body` to the URL configured under the `--webhook` `name`. Never fails: no decision is
    /// [`WebhookAnswer::Error`]. By default no webhook is configured.
    fn webhook(
        &self,
        name: &str,
        _body: &serde_json::Value,
    ) -> impl Future<Output = WebhookAnswer> + Send {
        std::future::ready(WebhookAnswer::Error(format!(
            "no webhook configured (--webhook {name}=URL)"
        )))
    }
}

/// The checks' clients the flags configure: Prometheus (`--prometheus-url`, `None` without it) and
/// the HTTP checks (`--http-check`, `None` without any), the approval webhooks (`--webhook`, `None`
/// without any).
#[derive(Clone, Debug, Default)]
pub struct Checks {
    /// The Prometheus client.
    pub prometheus: Option<crate::cluster::prometheus::PrometheusClient>,
    /// The HTTP checks' client.
    pub http: Option<http_check::HttpChecks>,
    /// The approval webhooks' client.
    pub webhooks: Option<Webhooks>,
}

impl Prometheus for Checks {
    async fn query(&self, expr: &str) -> QueryOutcome {
        self.prometheus.query(expr).await
    }

    async fn http_check(&self, name: &str) -> HttpAnswer {
        match &self.http {
            Some(http) => http.get(name).await,
            None => NoPrometheus.http_check(name).await,
        }
    }

    async fn webhook(&self, name: &str, body: &serde_json::Value) -> WebhookAnswer {
        match &self.webhooks {
            Some(webhooks) => webhooks.post(name, body).await,
            None => NoPrometheus.webhook(name, body).await,
        }
    }
}

/// No Prometheus configured: every query is [`QueryOutcome::Error`] saying so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoPrometheus;

impl Prometheus for NoPrometheus {
    fn query(&self, _expr: &str) -> impl Future<Output = QueryOutcome> + Send {
        std::future::ready(QueryOutcome::Error(
            "no Prometheus configured (--prometheus-url)".into(),
        ))
    }
}

impl Prometheus for crate::cluster::prometheus::PrometheusClient {
    fn query(&self, expr: &str) -> impl Future<Output = QueryOutcome> + Send {
        crate::cluster::prometheus::PrometheusClient::query(self, expr)
    }
}

/// `None` (no `--prometheus-url`) behaves as [`NoPrometheus`].
impl Prometheus for Option<crate::cluster::prometheus::PrometheusClient> {
    async fn query(&self, expr: &str) -> QueryOutcome {
        match self {
            Some(client) => client.query(expr).await,
            None => NoPrometheus.query(expr).await,
        }
    }
}
