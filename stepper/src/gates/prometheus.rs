//! The Prometheus check, pure part: its configuration, its stored state, and its [`CheckResult`].
//!
//! Semantics follow sts-phased-rollout-operator's Prometheus checks: each configured PromQL query is
//! run against Prometheus' HTTP API (`/api/v1/query`); a **non-empty** result is a success, an **empty**
//! result is a failure, and **no answer** (timeout, HTTP error, connection refused, a PromQL error) is a
//! failure too (fail closed). A check (every query once) passes when all queries succeed. The gate
//! passes once `<prefix>/success-threshold` checks in a row passed, `<prefix>/check-period-seconds`
//! apart; `<prefix>/failure-limit` failed checks since the last step pause the rollout
//! (`<prefix>/paused: "true"` with `<prefix>/paused-reason`).
//!
//! The counts live in annotation `<prefix>/prometheus-check` on the StatefulSet (see [`CheckState`]),
//! pinned to the partition and `updateRevision` they were counted for, so a CronJob pass and a
//! restarted `watch` continue where the last one stopped, and a step or a new revision starts over.
//! The annotations are read by [`crate::config`]; the query I/O is [`crate::cluster::prometheus`];
//! everything here is plain functions over plain data.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

pub use crate::config::check::{CheckConfig, Query};

/// What one query returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryOutcome {
    /// Non-empty result: this many series (a scalar or string result counts as 1, but a NaN scalar —
    /// `scalar()` of an empty vector — is [`QueryOutcome::Empty`]).
    NonEmpty(usize),
    /// The query ran and returned no series.
    Empty,
    /// No answer: the cause in one line (timeout, connection refused, HTTP 401, PromQL error, …).
    Failed(String),
}

impl QueryOutcome {
    /// True for [`QueryOutcome::NonEmpty`].
    pub fn passed(&self) -> bool {
        matches!(self, QueryOutcome::NonEmpty(_))
    }
}

/// The check's progress, stored as JSON in `<prefix>/prometheus-check`, e.g.
/// `{"updateRevision":"web-7c9f","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:10:42Z"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckState {
    /// `status.updateRevision` the counts belong to.
    pub update_revision: String,
    /// The partition the counts belong to (a step starts over).
    pub partition: i32,
    /// Consecutive passed checks.
    pub successes: u32,
    /// Failed checks since the counts started (at the last step, or at the last pause).
    pub failures: u32,
    /// When the last check ran.
    pub last_check: Timestamp,
    /// Why the last check failed, when it did (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

impl CheckState {
    /// The annotation value (compact JSON).
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The stored [`CheckState`] (`stored`: the `prometheus-check` annotation as written) when it belongs
/// to this observation (same `partition` and `update_revision`); `None` when absent, unreadable (a
/// stepper-owned annotation: starting over only delays the step), or counted for an earlier step or
/// revision.
pub fn current_state(
    stored: Option<&str>,
    partition: i32,
    update_revision: &str,
) -> Option<CheckState> {
    let state: CheckState = serde_json::from_str(stored?).ok()?;
    (state.partition == partition && state.update_revision == update_revision).then_some(state)
}

/// The outcome of the Prometheus check at one moment: what the gate needs or found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckResult {
    /// Enough consecutive checks passed, the last one less than a period ago: the step may go.
    /// `state` is the state to record when it changed in this pass (`None`: unchanged).
    Pass {
        /// The new state, when this pass ran the check.
        state: Option<CheckState>,
    },
    /// A check is due: run these queries and call [`check_result`] again with their outcomes.
    Due,
    /// Not yet: the detail says how far the check is; `state` is the new state when this pass ran a
    /// check (`None`: unchanged).
    Wait {
        /// One line: counts, the last failure, when the next check runs.
        detail: String,
        /// The new state, when this pass ran the check.
        state: Option<CheckState>,
    },
    /// The failed checks reached `failure-limit`: pause the rollout with `reason`.
    Pause {
        /// For `<prefix>/paused-reason` and the Event (one line).
        reason: String,
    },
}

/// The check's result at `now` for a set at `partition` / `update_revision`, from its check `config`,
/// its stored `state` ([`current_state`]) and, when a check was due and ran, the `outcomes` of its
/// queries (in `config.queries` order).
///
/// - A check is due when none ran for this observation, or the last ran ≥ `period_seconds` ago.
/// - Not due: pass when `successes ≥ success_threshold`, else wait.
/// - Due without `outcomes`: [`CheckResult::Due`].
/// - Due with `outcomes`: the check passes when every query returned a non-empty result; a pass adds
///   one to `successes`, a failure sets it to 0 and adds one to `failures`; `failures ≥ failure_limit`
///   → [`CheckResult::Pause`].
pub fn check_result(
    config: &CheckConfig,
    state: Option<&CheckState>,
    outcomes: Option<&[QueryOutcome]>,
    partition: i32,
    update_revision: &str,
    now: Timestamp,
) -> CheckResult {
    let period = SignedDuration::from_secs(i64::from(config.period_seconds));
    let threshold = config.success_threshold;
    if let Some(s) = state {
        let next = s.last_check.checked_add(period).unwrap_or(s.last_check);
        if now < next {
            if s.successes >= threshold {
                return CheckResult::Pass { state: None };
            }
            let wait = (next.duration_since(now)).as_secs().max(1);
            return CheckResult::Wait {
                detail: progress(config, s, &format!("next check in {wait}s")),
                state: None,
            };
        }
    }
    let Some(outcomes) = outcomes else {
        return CheckResult::Due;
    };
    let failed = config
        .queries
        .iter()
        .zip(outcomes.iter().map(Some).chain(std::iter::repeat(None)))
        .find_map(|(q, o)| match o {
            Some(o) if o.passed() => None,
            Some(QueryOutcome::Empty) => Some(format!("{} returned an empty result", q.annotation)),
            Some(QueryOutcome::Failed(cause)) => {
                Some(format!("{} got no answer: {cause}", q.annotation))
            }
            _ => Some(format!("{} was not run", q.annotation)),
        });
    let (successes, failures) = state.map_or((0, 0), |s| (s.successes, s.failures));
    let mut next = CheckState {
        update_revision: update_revision.to_string(),
        partition,
        successes: 0,
        failures,
        last_check: now,
        last_failure: None,
    };
    match failed {
        None => {
            next.successes = successes.saturating_add(1);
            if next.successes >= threshold {
                return CheckResult::Pass { state: Some(next) };
            }
        }
        Some(cause) => {
            next.failures = failures.saturating_add(1);
            if let Some(limit) = config.failure_limit
                && next.failures >= limit
            {
                return CheckResult::Pause {
                    reason: format!(
                        "PrometheusCheck failed {} times (failure-limit {limit}) since the last step; last: {cause}",
                        next.failures
                    ),
                };
            }
            next.last_failure = Some(cause);
        }
    }
    CheckResult::Wait {
        detail: progress(
            config,
            &next,
            &format!("next check in {}s", config.period_seconds),
        ),
        state: Some(next),
    }
}

fn progress(config: &CheckConfig, s: &CheckState, next: &str) -> String {
    let limit = config
        .failure_limit
        .map_or(String::new(), |l| format!(" of limit {l}"));
    let failure = s
        .last_failure
        .as_deref()
        .map_or(String::new(), |f| format!("; last check failed: {f}"));
    format!(
        "{} of {} consecutive checks passed, {} failed{limit}{failure}; {next}",
        s.successes, config.success_threshold, s.failures
    )
}
