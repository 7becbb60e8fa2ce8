//! The simulated application as the stepper's checks reach it: a [`Probe`] of each kind of read over
//! [`SimCluster`]'s world — its health signal answers the PromQL queries, no HTTP check is configured,
//! and its approval webhook ([`super::webhook`]) answers the POSTs as the stepper's client reports
//! them.

use std::future::Future;

use super::cluster::SimCluster;
use crate::cluster::http_check::HttpGet;
use crate::cluster::prometheus::PromQuery;
use crate::cluster::webhook::{WebhookCall, WebhookPost};
use crate::cluster::{Kind, Probe};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::check::http::HttpAnswer;
use crate::gates::check::prometheus::QueryOutcome;

/// The simulation's Prometheus: every query returns one series while the application is healthy and
/// an empty result while the scenario's application-unhealthy signal is raised.
impl Probe<PromQuery> for SimCluster {
    fn answer(&self, _expr: &str) -> impl Future<Output = QueryOutcome> + Send {
        let outcome = if self.world().app_unhealthy {
            QueryOutcome::Empty
        } else {
            QueryOutcome::NonEmpty(1)
        };
        std::future::ready(outcome)
    }
}

/// The simulation configures no HTTP check.
impl Probe<HttpGet> for SimCluster {
    fn answer(&self, name: &str) -> impl Future<Output = HttpAnswer> + Send {
        std::future::ready(HttpGet::unconfigured(name))
    }
}

/// The approval webhook is the simulated application's ([`super::webhook`]).
impl Probe<WebhookPost> for SimCluster {
    fn answer(&self, call: &WebhookCall) -> impl Future<Output = WebhookAnswer> + Send {
        std::future::ready(self.world().answer_webhook(&call.name, &call.body).answer())
    }
}
