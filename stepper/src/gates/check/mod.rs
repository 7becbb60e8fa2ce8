//! The gated checks — the Prometheus check ([`prometheus`], gate `PrometheusCheck`) and the HTTP check
//! ([`http`], gate `HttpCheck`) — and the counting they share, whatever they ask: a check's stored
//! state, and what one more check — or none — means for the step (what that asks the pass to write is
//! `effects`'s).
//!
//! After Argo Rollouts' analysis: a check **passes** (every measurement said yes), **fails** (a
//! measurement answered no: an empty PromQL result) or **errs** (a measurement could not be made: a
//! timeout, a refused connection, a 5xx, an unreadable answer). The gate passes once
//! `success-threshold` checks in a row passed, `check-period-seconds` apart. A failure resets the
//! successes and counts toward `failure-limit` (failures since the last step pause the rollout). An
//! error holds the step too (it resets the successes: nothing was measured), but counts apart, as
//! consecutive errors: `check-error-limit` of them record the rollout as Degraded
//! (`degraded-reason: CheckErrors: …`) without pausing it, and the next answer clears them. A monitoring
//! outage thus never pauses rollouts for a person to resume (Argo's `consecutiveErrorLimit`).
//!
//! The counts live in one annotation per check kind (`<prefix>/prometheus-check`: [`CheckState`]),
//! pinned to the partition and `updateRevision` they were counted for, so a CronJob pass and a
//! restarted `watch` continue where the last one stopped, and a step or a new revision starts over.
//! Plain functions over plain data.

mod effects;
pub mod http;
pub mod kind;
pub mod prometheus;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

pub use crate::config::check::CheckLimits;
use crate::gates::input::GateInput;
use crate::gates::rollback;
use crate::model::degraded::{DegradedKind, Record};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What one check (every measurement of it once) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Measured {
    /// Every measurement said yes.
    Passed,
    /// A measurement answered no; why, naming it (`… returned an empty result`).
    Failed(String),
    /// No measurement said no, but one could not be made; why, naming it (`… got no answer: …`).
    Errored(String),
}

/// A check's progress, stored as JSON, e.g.
/// `{"updateRevision":"web-7c9f","partition":3,"successes":1,"failures":0,"errors":2,"lastCheck":"2026-11-23T01:10:42Z","lastError":"…"}`
/// (`errors`, `lastFailure`, `lastError` only when set).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Consecutive checks that could not be made (reset by any answer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u32,
    /// When the last check ran.
    pub last_check: Timestamp,
    /// Why the last check failed, when it did (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    /// Why the last check could not be made, when it could not (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl CheckState {
    /// The annotation value (compact JSON).
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// True when the last check did not pass (it failed or erred).
    pub fn last_did_not_pass(&self) -> bool {
        self.last_failure.is_some() || self.last_error.is_some()
    }
}

/// The stored [`CheckState`] (`stored`: the annotation as written) when it belongs to this observation
/// (same `partition` and `update_revision`); `None` when absent, unreadable (a stepper-owned
/// annotation: starting over only delays the step), or counted for an earlier step or revision.
pub fn current_state(
    stored: Option<&str>,
    partition: i32,
    update_revision: &str,
) -> Option<CheckState> {
    let state: CheckState = serde_json::from_str(stored?).ok()?;
    (state.partition == partition && state.update_revision == update_revision).then_some(state)
}

/// The outcome of a check at one moment: what the gate needs or found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckResult {
    /// Enough consecutive checks passed, the last one less than a period ago: the step may go.
    /// `state` is the state to record when it changed in this pass (`None`: unchanged).
    Pass {
        /// The new state, when this pass ran the check.
        state: Option<CheckState>,
    },
    /// A check is due: make it and call [`count`] again with what it found.
    Due,
    /// Not yet: the detail says how far the check is; `state` is the new state when this pass ran a
    /// check (`None`: unchanged).
    Wait {
        /// One line: counts, the last failure or error, when the next check runs.
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

/// The check `kind` (`PrometheusCheck`, named in messages) at `now` for a set at `partition` /
/// `update_revision`, counted under `limits`, from its stored `state` ([`current_state`]) and, when a
/// check was due and made, what it found (`measured`).
///
/// - A check is due when none ran for this observation, or the last ran ≥ `period_seconds` ago.
/// - Not due: pass when `successes ≥ success_threshold`, else wait.
/// - Due without `measured`: [`CheckResult::Due`].
/// - Passed: one more success, errors back to 0. Failed: successes and errors to 0, one more failure;
///   `failures ≥ failure_limit` → [`CheckResult::Pause`]. Errored: successes to 0, one more error,
///   failures unchanged (never a pause: [`degraded`] says when it is recorded).
pub fn count(
    kind: &str,
    limits: &CheckLimits,
    state: Option<&CheckState>,
    measured: Option<Measured>,
    partition: i32,
    update_revision: &str,
    now: Timestamp,
) -> CheckResult {
    let period = SignedDuration::from_secs(i64::from(limits.period_seconds));
    let threshold = limits.success_threshold;
    if let Some(s) = state {
        let next = s.last_check.checked_add(period).unwrap_or(s.last_check);
        if now < next {
            if s.successes >= threshold {
                return CheckResult::Pass { state: None };
            }
            let wait = (next.duration_since(now)).as_secs().max(1);
            return CheckResult::Wait {
                detail: progress(limits, s, &format!("next check in {wait}s")),
                state: None,
            };
        }
    }
    let Some(measured) = measured else {
        return CheckResult::Due;
    };
    let prior = state.cloned().unwrap_or_default();
    let mut next = CheckState {
        update_revision: update_revision.to_string(),
        partition,
        successes: 0,
        failures: prior.failures,
        errors: 0,
        last_check: now,
        last_failure: None,
        last_error: None,
    };
    match measured {
        Measured::Passed => {
            next.successes = prior.successes.saturating_add(1);
            if next.successes >= threshold {
                return CheckResult::Pass { state: Some(next) };
            }
        }
        Measured::Failed(cause) => {
            next.failures = prior.failures.saturating_add(1);
            if let Some(limit) = limits.failure_limit
                && next.failures >= limit
            {
                return CheckResult::Pause {
                    reason: format!(
                        "{kind} failed {} times (failure-limit {limit}) since the last step; last: {cause}",
                        next.failures
                    ),
                };
            }
            next.last_failure = Some(cause);
        }
        Measured::Errored(cause) => {
            next.errors = prior.errors.saturating_add(1);
            next.last_error = Some(cause);
        }
    }
    CheckResult::Wait {
        detail: progress(
            limits,
            &next,
            &format!("next check in {}s", limits.period_seconds),
        ),
        state: Some(next),
    }
}

/// The `degraded-reason` record the check `kind` calls for while `state` has at least `error_limit`
/// consecutive errors, e.g. `CheckErrors: PrometheusCheck got no answer 4 times in a row
/// (check-error-limit 4); last: safe-rollout.dev/prometheus-query got no answer: timeout`; `None`
/// below the limit.
pub fn degraded(kind: &str, limits: &CheckLimits, state: &CheckState) -> Option<Record> {
    (state.errors >= limits.error_limit).then(|| {
        Record::new(
            DegradedKind::CheckErrors,
            format!(
                "{kind} got no answer {} times in a row (check-error-limit {}); last: {}",
                state.errors,
                limits.error_limit,
                state.last_error.as_deref().unwrap_or("-")
            ),
        )
    })
}

fn progress(limits: &CheckLimits, s: &CheckState, next: &str) -> String {
    let limit = limits
        .failure_limit
        .map_or(String::new(), |l| format!(" of limit {l}"));
    let errors = if s.errors > 0 {
        format!(
            ", {} in a row got no answer (check-error-limit {})",
            s.errors, limits.error_limit
        )
    } else {
        String::new()
    };
    let last = match (&s.last_failure, &s.last_error) {
        (Some(f), _) => format!("; last check failed: {f}"),
        (None, Some(e)) => format!("; last check errored: {e}"),
        (None, None) => String::new(),
    };
    format!(
        "{} of {} consecutive checks passed, {} failed{limit}{errors}{last}; {next}",
        s.successes, limits.success_threshold, s.failures
    )
}

/// A check gate's answer from its check's `result` (`reason`: `PrometheusCheck` or `HttpCheck`, for
/// the set of `input`): passes on [`CheckResult::Pass`]; else blocks with one line — `due()` while
/// a check is due and not run yet, the counts while waiting, the pause after `failure-limit` failures.
pub(super) fn gate_answer(
    input: &GateInput<'_>,
    reason: Reason,
    result: CheckResult,
    due: impl FnOnce() -> String,
) -> Result<(), Blocked> {
    let detail = match result {
        CheckResult::Pass { .. } => return Ok(()),
        CheckResult::Due => due(),
        CheckResult::Wait { detail, .. } => detail,
        CheckResult::Pause { reason } => match rollback::rolls_back_to(input) {
            Some(to) => format!("{reason}: rolling back to revision {to}"),
            None => format!("{reason}: rollout paused"),
        },
    };
    Err(Blocked::new(
        reason,
        format!("{}: {detail}", set::name(input.set)),
    ))
}
