//! What the pass reads for the I/O gates ([`Probes`]: each kind's answer, [`OwnerProbe`],
//! [`QueryOutcome`], [`HttpAnswer`], the webhook's [`WebhookAnswer`]) and what a gate asks it to read
//! ([`Need`]): the controller owner, the Prometheus queries, the HTTP check's GET, the approval
//! webhook's POST. Plain data, so the gates that ask and judge (`fleet`, `check`, `approval`) and the
//! I/O side that reads (`cluster`, `pass`) share one vocabulary.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::Value;

pub use super::approval::webhook::answer::WebhookAnswer;
use crate::config::SetConfig;
use crate::config::check::Query;

/// What the pass read for the `OwnerNotHealthy` gate.
#[derive(Clone, Debug, PartialEq)]
pub enum OwnerProbe {
    /// The owner object as the API server returned it (any group/version/kind, as JSON).
    Found(serde_json::Value),
    /// No object of that kind and name (HTTP 404).
    NotFound,
    /// The owner could not be read: the cause in one line (RBAC, an unknown kind, a 5xx).
    Failed(String),
}

/// What one query returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryOutcome {
    /// Non-empty result: this many series (a scalar or string result counts as 1, but a NaN scalar —
    /// `scalar()` of an empty vector — is [`QueryOutcome::Empty`]).
    NonEmpty(usize),
    /// The query ran and returned no series: a failure.
    Empty,
    /// No answer: the cause in one line (timeout, connection refused, HTTP 401 or 503, PromQL error, an
    /// answer that is not the Prometheus API's, …): an error, not a failure.
    Error(String),
}

impl QueryOutcome {
    /// True for [`QueryOutcome::NonEmpty`].
    pub fn passed(&self) -> bool {
        matches!(self, QueryOutcome::NonEmpty(_))
    }
}

/// What the endpoint answered.
#[derive(Clone, Debug, PartialEq)]
pub enum HttpAnswer {
    /// A 2xx answer whose body is JSON.
    Json(Value),
    /// No usable answer: the cause in one line (timeout, connection refused, HTTP 500, not JSON, …).
    Error(String),
}

/// Results of a set's I/O gates, gathered by the pass ([`Need`]) before the final verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probes {
    /// The owner, when read (`None`: not read in this pass).
    pub owner: Option<OwnerProbe>,
    /// The outcomes of the Prometheus queries run in this pass, in the check's query order (`None`:
    /// not run).
    pub prometheus: Option<Vec<QueryOutcome>>,
    /// The HTTP check's answer read in this pass (`None`: not read).
    pub http: Option<HttpAnswer>,
    /// The approval webhook's answer to this pass's POST (`None`: not called).
    pub webhook: Option<WebhookAnswer>,
}

/// A read the pass must do before the set's verdict is final (the I/O gates run only for sets that
/// pass every gate before them).
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// GET the controller owner (for `OwnerNotHealthy`).
    Owner(OwnerReference),
    /// A check kind's read, when its check is due (for its gate: `PrometheusCheck`, `HttpCheck`).
    Check(CheckRead),
    /// POST `body` (an `UpdateApprovalRequest`, [`super::approval::webhook::request`]) to the URL configured under
    /// the `--webhook` name `name` (for `ApprovalPending`).
    Webhook {
        /// The `--webhook` NAME.
        name: String,
        /// The request.
        body: serde_json::Value,
        /// The record the request was built on: `<prefix>/webhook-state` (full key) and its value as
        /// read (its `requestId` is the request's). From `watch`'s caches the POST is made only while a
        /// fresh read of the set shows the same value: a late cache never asks under another id.
        record: (String, Option<String>),
    },
}

/// A check kind's read, as its gate asks it when the check is due (`CheckKind::need`): one variant per
/// kind, the one place the pass, the clients and the simulation learn a kind's read from. The pass
/// runs every kind's the same way ([`CheckRead::parts`], [`CheckRead::unanswered`]); the checks'
/// clients answer it (`cluster::AllProbes::check`).
#[derive(Clone, Debug, PartialEq)]
pub enum CheckRead {
    /// Run these queries (the Prometheus check).
    Queries(Vec<Query>),
    /// GET the URL configured under this `--http-check` name (the HTTP check).
    Http(String),
}

/// What a check kind's read answered ([`CheckRead`]'s answer, variant for variant); it fills the kind's
/// field of [`Probes`] ([`Probes::record`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CheckAnswer {
    /// The queries' outcomes, in the read's order.
    Queries(Vec<QueryOutcome>),
    /// The endpoint's answer.
    Http(HttpAnswer),
}

impl CheckRead {
    /// The read in parts that each hold one `--check-concurrency` slot: a Prometheus check's queries one
    /// each (in order; their answers are joined back with [`CheckAnswer::join`]), any other read whole.
    pub fn parts(self) -> Vec<CheckRead> {
        match self {
            CheckRead::Queries(queries) => queries
                .into_iter()
                .map(|q| CheckRead::Queries(vec![q]))
                .collect(),
            whole => vec![whole],
        }
    }

    /// Its answer when the read got none (`cause`: the pass's deadline cut it, no client of the kind):
    /// an error of its check, never a failure.
    pub fn unanswered(&self, cause: &str) -> CheckAnswer {
        match self {
            CheckRead::Queries(queries) => CheckAnswer::Queries(
                queries
                    .iter()
                    .map(|_| QueryOutcome::Error(cause.into()))
                    .collect(),
            ),
            CheckRead::Http(_) => CheckAnswer::Http(HttpAnswer::Error(cause.into())),
        }
    }

    /// What the read is, for a log line: the query's annotation, the HTTP check's name.
    pub fn label(&self) -> String {
        match self {
            CheckRead::Queries(queries) => (queries.iter())
                .map(|q| q.annotation.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            CheckRead::Http(name) => format!("http-check {name}"),
        }
    }
}

impl CheckAnswer {
    /// The causes of its parts that are no answer (a query's, the HTTP check's error).
    pub fn errors(&self) -> Vec<&str> {
        match self {
            CheckAnswer::Queries(outcomes) => outcomes
                .iter()
                .filter_map(|o| match o {
                    QueryOutcome::Error(cause) => Some(cause.as_str()),
                    _ => None,
                })
                .collect(),
            CheckAnswer::Http(HttpAnswer::Error(cause)) => vec![cause],
            CheckAnswer::Http(_) => Vec::new(),
        }
    }

    /// Joins `part`, the answer to a later part of the same read ([`CheckRead::parts`]), after `self`;
    /// an answer of another kind replaces it.
    pub fn join(&mut self, part: CheckAnswer) {
        match (self, part) {
            (CheckAnswer::Queries(got), CheckAnswer::Queries(more)) => got.extend(more),
            (this, part) => *this = part,
        }
    }
}

impl Probes {
    /// Records `answer` in its kind's field.
    pub fn record(&mut self, answer: CheckAnswer) {
        match answer {
            CheckAnswer::Queries(outcomes) => self.prometheus = Some(outcomes),
            CheckAnswer::Http(answer) => self.http = Some(answer),
        }
    }
}

/// True when a set with annotations `config` can ever need a read ([`Need`]): only the I/O gates ask,
/// and only for a set with `<prefix>/owner-condition` (`OwnerNotHealthy`) or an endpoint its annotations
/// name ([`SetConfig::named_endpoints`]: a Prometheus check, an HTTP check, an approval webhook). The
/// pass asks the others for nothing.
pub fn may_need_reads(config: &SetConfig) -> bool {
    config.owner_condition.is_some() || config.named_endpoints().next().is_some()
}
