//! What a check asks the pass to write once its gate was reached, the same for every kind of check
//! (Prometheus, HTTP): the counts in its state annotation, the read when due, the pause after
//! `failure-limit` failures, and the `degraded-reason: CheckErrors: …` record after `check-error-limit`
//! errors in a row.

use sts_safe_rollout_rules::annotations::TRUE;

use super::{CheckResult, CheckState};
use crate::gates::input::GateInput;
use crate::gates::probes::Need;
use crate::gates::verdict::Evaluation;
use crate::model::reasons::degraded_kind::{self, CHECK_ERRORS, FAILURE_LIMIT};

/// One check at its gate: what differs between the kinds of check.
pub(super) struct Reached<'a, N, D> {
    /// The annotation holding the check's counts (`prometheus-check`, `http-check-state`).
    pub state_key: &'a str,
    /// The stored counts for this observation (partition and `updateRevision`).
    pub state: Option<CheckState>,
    /// The check's result at `input.now`.
    pub result: CheckResult,
    /// The read the pass must make when the check is due (built only then).
    pub need: N,
    /// The `CheckErrors: …` record the counts call for (`check-error-limit` errors in a row), if any.
    pub degraded: D,
}

/// Records in `ev` what `reached` asks for: the read when due, the counts to write, or the pause
/// (`paused`, `paused-reason`, and `degraded-reason: FailureLimit: …`) after `failure-limit` failures.
pub(super) fn record<N, D>(input: &GateInput<'_>, ev: &mut Evaluation, reached: Reached<'_, N, D>)
where
    N: FnOnce() -> Need,
    D: Fn(&CheckState) -> Option<String>,
{
    let keys = &input.config.keys;
    let state_key = reached.state_key.to_string();
    match reached.result {
        CheckResult::Pass { state: recorded } => {
            let now = recorded.as_ref().or(reached.state.as_ref());
            check_errors(input, now.and_then(&reached.degraded), ev);
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
        }
        CheckResult::Due => ev.need = Some((reached.need)()),
        CheckResult::Wait {
            state: recorded, ..
        } => {
            // The state this pass recorded, else the stored one the check waited on.
            let now = recorded.as_ref().or(reached.state.as_ref());
            ev.expected_wait = !now.is_some_and(CheckState::last_did_not_pass);
            check_errors(input, now.and_then(&reached.degraded), ev);
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
        }
        CheckResult::Pause { reason } => {
            ev.changes.push((state_key, None));
            ev.changes.push((keys.paused.clone(), Some(TRUE.into())));
            ev.changes.push((
                keys.paused_reason.clone(),
                Some(format!("{reason} (at {})", input.now)),
            ));
            // The record GitOps tools report as Degraded; `resume` removes it with the pause.
            ev.changes.push((
                keys.degraded_reason.clone(),
                Some(format!("{FAILURE_LIMIT}: {reason}")),
            ));
        }
    }
}

/// The `degraded-reason: CheckErrors: …` record: `wanted` written when nothing else is recorded (the
/// value stays as first written until cleared: one `RolloutDegraded` Event per outage), removed once the
/// check got an answer again (`wanted` is `None`). Another kind of record is left alone.
fn check_errors(input: &GateInput<'_>, wanted: Option<String>, ev: &mut Evaluation) {
    let recorded = input.config.stamps.degraded_reason.as_deref();
    let key = &input.config.keys.degraded_reason;
    match wanted {
        Some(value) if recorded.is_none() => ev.changes.push((key.clone(), Some(value))),
        None if recorded.map(degraded_kind::of) == Some(CHECK_ERRORS) => {
            ev.changes.push((key.clone(), None));
        }
        _ => {}
    }
}
