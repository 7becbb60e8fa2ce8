//! The Prometheus check, pure part: what its queries returned, and what that means for the check.
//!
//! Semantics follow sts-phased-rollout-operator's Prometheus checks, with Argo Rollouts' split of
//! errors from failures: each configured PromQL query is run against Prometheus' HTTP API
//! (`/api/v1/query`); a **non-empty** result is a success, an **empty** result is a failure (the query
//! says no), and **no answer** (timeout, HTTP error, connection refused, a PromQL error, an unreadable
//! answer) is an error: the check could not be made. A check (every query once) passes when all
//! queries succeed, fails when one answered empty, and errs otherwise when one got no answer. The
//! counting — `success-threshold`, `failure-limit` (a pause), `check-error-limit` (Degraded, no pause)
//! — is shared by every kind of check: [`crate::gates::check`]. Also here: the kind itself
//! ([`Prometheus`], a [`CheckKind`]: gate `PrometheusCheck` and what it asks for).
//!
//! The annotations are read by [`crate::config`]; the query I/O is [`crate::cluster::prometheus`];
//! everything here is plain functions over plain data.

use jiff::Timestamp;
use sts_safe_rollout_rules::annotations as names;

use super::kind::CheckKind;
use super::{self as check, count};
pub use super::{CheckResult, CheckState, Measured, current_state};
use crate::config::check::CheckLimits;
pub use crate::config::check::{CheckConfig, Query};
use crate::gates::effect::StateKey;
use crate::gates::input::GateInput;
pub use crate::gates::probes::QueryOutcome;
use crate::gates::probes::{CheckRead, Need};
use crate::model::degraded::Record;
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::Reason;

/// The gate's name in the check's messages.
pub const KIND: &str = "PrometheusCheck";

/// What the check found, from the `outcomes` of its queries (in `config.queries` order; a query with
/// no outcome was not run: an error). An empty result anywhere is a failure (an answer saying no
/// outweighs a missing one); else the first query without an answer makes it an error.
pub fn measure(config: &CheckConfig, outcomes: &[QueryOutcome]) -> Measured {
    let mut outcomes = outcomes.iter().map(Some).chain(std::iter::repeat(None));
    let mut error = None;
    for q in &config.queries {
        match outcomes.next().flatten() {
            Some(o) if o.passed() => {}
            Some(QueryOutcome::Empty) => {
                return Measured::Failed(format!("{} returned an empty result", q.annotation));
            }
            Some(QueryOutcome::Error(cause)) => {
                error.get_or_insert_with(|| format!("{} got no answer: {cause}", q.annotation));
            }
            _ => {
                error.get_or_insert_with(|| format!("{} was not run", q.annotation));
            }
        }
    }
    error.map_or(Measured::Passed, Measured::Errored)
}

/// The check's result at `now` for a set at `partition` / `update_revision`, from its check `config`,
/// its stored `state` ([`current_state`]) and, when a check was due and ran, the `outcomes` of its
/// queries ([`measure`]); counted by [`check::count`].
pub fn check_result(
    config: &CheckConfig,
    state: Option<&CheckState>,
    outcomes: Option<&[QueryOutcome]>,
    partition: i32,
    update_revision: &str,
    now: Timestamp,
) -> CheckResult {
    let measured = outcomes.map(|o| measure(config, o));
    count(
        KIND,
        &config.limits,
        state,
        measured,
        partition,
        update_revision,
        now,
    )
}

/// The `degraded-reason` this check records for `state` ([`check::degraded`]).
pub fn degraded(config: &CheckConfig, state: &CheckState) -> Option<Record> {
    check::degraded(KIND, &config.limits, state)
}

/// What `PrometheusCheck` reads of the set beside its annotations: the revision its state is pinned to and its
/// queries name.
pub const READS: &[Field] = &[of_set("status.updateRevision")];

/// The Prometheus check as a [`CheckKind`]: gate `PrometheusCheck` over the set's queries.
pub enum Prometheus {}

impl CheckKind for Prometheus {
    type Config = CheckConfig;
    type Answer = [QueryOutcome];
    const REASON: Reason = Reason::PrometheusCheck;
    const STATE: StateKey = StateKey::of(names::PROMETHEUS_CHECK);

    fn config<'a>(input: &GateInput<'a>) -> Option<&'a CheckConfig> {
        input.config.prometheus.as_ref()
    }

    fn answer<'a>(input: &GateInput<'a>) -> Option<&'a [QueryOutcome]> {
        input.probes.prometheus.as_deref()
    }

    fn limits(config: &CheckConfig) -> &CheckLimits {
        &config.limits
    }

    fn measure(config: &CheckConfig, answer: &[QueryOutcome]) -> Measured {
        measure(config, answer)
    }

    fn need(config: &CheckConfig) -> Need {
        Need::Check(CheckRead::Queries(config.queries.clone()))
    }

    fn due(config: &CheckConfig) -> String {
        let n = config.queries.len();
        let noun = if n == 1 { "query" } else { "queries" };
        format!("check due ({n} {noun}), not run yet")
    }
}
