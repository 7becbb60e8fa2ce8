//! Rolling back by itself (docs/rollback.md): what a failure does — a check at its `failure-limit`, or a
//! step not done within `progress-deadline-seconds` — by `<prefix>/on-failure` ([`on_failure`]), gate
//! `FailedRevision` over a revision recorded as failed ([`failed_revision`]), and the steps back to the
//! last good revision, which the application checks that just failed do not gate ([`stepping_back`]).
//!
//! A rollback writes back `.spec.template` from the ControllerRevision of `status.currentRevision`
//! (what `kubectl rollout undo` does: kubectl's `statefulSetRollbacker`); the admission policy stages it
//! like any template change and the stepper steps it back under the Kubernetes gates and the
//! application's approvals. Argo Rollouts' `progressDeadlineAbort` and Deployment's
//! `progressDeadlineSeconds` are the models of the deadline.

use jiff::SignedDuration;

use super::effect::Effect;
use super::input::GateInput;
use super::pods::pods_below_partition_ready;
use super::verdict::{Evaluation, Verdict};
use crate::config::{FailedRevision, OnFailure};
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::degraded_kind::PROGRESS_DEADLINE;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What gate `FailedRevision` and the rollback read: the set's revisions (its annotations, the
/// `failed-revision` record among them, are the config's).
pub const READS: &[Field] = &[
    of_set("status.updateRevision"),
    of_set("status.currentRevision"),
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
];

/// Gate `FailedRevision`: passes unless `status.updateRevision` is the revision `failed-revision`
/// records (the failed template applied again, e.g. by a GitOps sync): it is held until the template
/// changes to another revision or a person retries it (`kubectl safe-rollout resume NAME --retry`).
pub fn failed_revision(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some(failed) = &input.config.stamps.failed_revision else {
        return Ok(());
    };
    if set::update_revision(input.set) != failed.revision {
        return Ok(());
    }
    let name = set::name(input.set);
    Err(Blocked::new(
        Reason::FailedRevision,
        format!(
            "{name}: revision {} was rolled back ({}); held until the template changes or \
             `kubectl safe-rollout resume {name} --retry`",
            failed.revision, failed.reason
        ),
    ))
}

/// True while the set steps back to its last good revision after a rollback: a failed revision is
/// recorded, it is not the update revision, and the update revision is `status.currentRevision` (the
/// revert, staged by the policy). The application checks that failed are not asked again then; the
/// Kubernetes gates and the approvals are.
pub fn stepping_back(input: &GateInput<'_>) -> bool {
    let update = set::update_revision(input.set);
    input
        .config
        .stamps
        .failed_revision
        .as_ref()
        .is_some_and(|f| f.revision != update)
        && update == set::current_revision(input.set)
}

/// What a failure of kind `kind` (`FailureLimit`, `ProgressDeadline`) with `reason` does: with
/// `on-failure: rollback`, a rollback to `status.currentRevision` ([`Effect::RollBack`]) — unless the
/// set is already stepping back, or has no other revision to return to —; else the pause
/// ([`Effect::Pause`]).
pub fn on_failure(input: &GateInput<'_>, kind: &'static str, reason: String) -> Effect {
    let (update, current) = (
        set::update_revision(input.set),
        set::current_revision(input.set),
    );
    let can_roll_back = !stepping_back(input) && !current.is_empty() && update != current;
    if input.config.on_failure == OnFailure::Rollback && can_roll_back {
        Effect::RollBack {
            failed: FailedRevision {
                revision: update.to_string(),
                reason: format!("{kind}: {reason}"),
            },
            to: current.to_string(),
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
