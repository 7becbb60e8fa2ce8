//! The simulated application as the stepper's checks reach it ([`AllProbes`] over [`SimCluster`]'s
//! world): its health signal answers the PromQL queries, its approval webhook ([`super::webhook`])
//! answers the POSTs as the stepper's client reports them, and a check kind the simulation does not
//! model answers as a stepper without that kind's flag would ([`Checks::default`]: an error naming the
//! flag, held fail closed).

use super::cluster::SimCluster;
use crate::cluster::webhook::WebhookCall;
use crate::cluster::{AllProbes, Checks};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::check::prometheus::QueryOutcome;
use crate::gates::{CheckAnswer, CheckRead};

/// The simulation's Prometheus: each of `queries` returns one series while the application is healthy
/// (`unhealthy` false) and an empty result while the scenario's application-unhealthy signal is raised.
pub(super) fn health(queries: usize, unhealthy: bool) -> CheckAnswer {
    let outcome = if unhealthy {
        QueryOutcome::Empty
    } else {
        QueryOutcome::NonEmpty(1)
    };
    CheckAnswer::Queries(vec![outcome; queries])
}

impl AllProbes for SimCluster {
    async fn check(&self, read: &CheckRead) -> CheckAnswer {
        match read {
            CheckRead::Queries(queries) => health(queries.len(), self.world().app_unhealthy),
            other => Checks::default().check(other).await,
        }
    }

    /// The approval webhook is the simulated application's ([`super::webhook`]).
    async fn webhook(&self, call: &WebhookCall) -> WebhookAnswer {
        self.world().answer_webhook(&call.name, &call.body).answer()
    }
}
