//! What a failure writes (docs/rollback.md): a check at its `failure-limit` or a step past
//! `progress-deadline-seconds` rolls the set back ([`Effect::RollBack`], `on-failure: rollback`, to
//! where [`rolls_back_to`] says) or pauses it ([`Effect::Pause`]).

use jiff::SignedDuration;

use super::effect::Effect;
use super::input::GateInput;
use super::pods::pods_below_partition_ready;
use super::rollback::rolls_back_to;
use super::verdict::{Evaluation, Verdict};
use crate::config::FailedRevision;
use crate::model::reasons::degraded_kind::PROGRESS_DEADLINE;
use crate::model::set;

/// What a failure of kind `kind` (`FailureLimit`, `ProgressDeadline`) with `reason` does: with
/// `on-failure: rollback`, a rollback to `status.currentRevision` ([`Effect::RollBack`]) — unless the
/// set is already stepping back, or has no other revision to return to ([`rolls_back_to`]) —; else the
/// pause
/// ([`Effect::Pause`]).
pub fn on_failure(input: &GateInput<'_>, kind: &'static str, reason: String) -> Effect {
    if let Some(to) = rolls_back_to(input) {
        Effect::RollBack {
            failed: FailedRevision {
                revision: set::update_revision(input.set).to_string(),
                reason: format!("{kind}: {reason}"),
            },
            to: to.to_string(),
        }
    } else {
        Effect::Pause {
            kind,
            reason,
            at: input.now,
        }
    }
}

/// The effects of `PodNotReady` and `StepInProgress` with `progress-deadline-seconds`: a step of this
/// rollout (partition below `spec.replicas`) whose own pods are still not Ready on the new revision (the
/// pods below the partition are) that long after it was written (`last-partition-update`) is a failure
/// ([`on_failure`]).
pub(super) fn progress_deadline(input: &GateInput<'_>, ev: &mut Evaluation) {
    let (Some(deadline), Some(stepped)) = (
        input.config.progress_deadline_seconds,
        input.config.stamps.last_partition_update,
    ) else {
        return;
    };
    let Verdict::Blocked(b) = &ev.verdict else {
        return;
    };
    let stepped_here = set::partition(input.set).unwrap_or(0) < set::replicas(input.set);
    let late = input.now.duration_since(stepped) >= SignedDuration::from_secs(deadline);
    if !(stepped_here && late && pods_below_partition_ready(input.set, input.pods, input.now)) {
        return;
    }
    let reason = format!(
        "the step at {stepped} not done within {deadline} s on revision {}: {}",
        set::update_revision(input.set),
        b.detail
    );
    ev.effects
        .push(on_failure(input, PROGRESS_DEADLINE, reason));
}
