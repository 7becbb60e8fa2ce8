//! What a check asks the pass to write once its gate was reached, the same for every kind of check
//! (Prometheus, HTTP): the counts in its state annotation, the read when due, the pause after
//! `failure-limit` failures, and the `degraded-reason: CheckErrors: …` record after `check-error-limit`
//! errors in a row.

use super::{CheckResult, CheckState};
use crate::gates::effect::{DegradedOwner, Effect, StateKey};
use crate::gates::failure;
use crate::gates::input::GateInput;
use crate::gates::probes::Need;
use crate::gates::verdict::Evaluation;
use crate::model::degraded::{DegradedKind, Record};

/// One check at its gate: what differs between the kinds of check.
pub(super) struct Reached<N, D> {
    /// The annotation holding the check's counts (`prometheus-check`, `http-check-state`).
    pub state_key: StateKey,
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
pub(super) fn record<N, D>(input: &GateInput<'_>, ev: &mut Evaluation, reached: Reached<N, D>)
where
    N: FnOnce() -> Need,
    D: Fn(&CheckState) -> Option<Record>,
{
    let key = reached.state_key;
    match reached.result {
        CheckResult::Pass { state: recorded } => {
            let now = recorded.as_ref().or(reached.state.as_ref());
            check_errors(now.and_then(&reached.degraded), ev);
            if let Some(state) = recorded {
                ev.effects.push(Effect::CheckState { key, state });
            }
        }
        CheckResult::Due => ev.need = Some((reached.need)()),
        CheckResult::Wait {
            state: recorded, ..
        } => {
            // The state this pass recorded, else the stored one the check waited on.
            let now = recorded.as_ref().or(reached.state.as_ref());
            ev.expected_wait = !now.is_some_and(CheckState::last_did_not_pass);
            check_errors(now.and_then(&reached.degraded), ev);
            if let Some(state) = recorded {
                ev.effects.push(Effect::CheckState { key, state });
            }
        }
        CheckResult::Pause { reason } => {
            match failure::on_failure(input, DegradedKind::FailureLimit, reason) {
                // The rollback's own patch removes the check's state: a rollback not written (its
                // ControllerRevision unread, a conflict) is decided again next pass.
                roll_back @ Effect::RollBack { .. } => ev.effects.push(roll_back),
                pause => {
                    ev.effects.push(Effect::ClearState(key));
                    // With the `FailureLimit` record GitOps tools report as Degraded; `resume` removes both.
                    ev.effects.push(pause);
                }
            }
        }
    }
}

/// The `degraded-reason: CheckErrors: …` record the counts call for (`wanted`), or its removal once
/// the check got an answer again (`None`); `plan::effects` applies the rule every holder of a record
/// shares ([`Effect::Degraded`]).
fn check_errors(wanted: Option<Record>, ev: &mut Evaluation) {
    ev.effects.push(Effect::Degraded {
        owner: DegradedOwner::Check,
        wanted,
    });
}
