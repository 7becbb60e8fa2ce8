//! What a failure writes (docs/rollback.md): a check at its `failure-limit` or a step past
//! `progress-deadline-seconds` rolls the set back ([`Effect::RollBack`], `on-failure: rollback`, to
//! where [`rolls_back_to`] says) or pauses it ([`Effect::Pause`]).

use jiff::{SignedDuration, Timestamp};

use super::effect::Effect;
use super::input::GateInput;
use super::pods::pods_below_partition_ready;
use super::rollback::{rolls_back_to, stepping_back};
use super::verdict::{Evaluation, Verdict};
use crate::config::FailedRevision;
use crate::model::degraded::DegradedKind;
use crate::model::fields::{Field, pod};
use crate::model::pods::{pod_revision, start_ordinal};
use crate::model::set;

/// What the progress deadline reads beside the pod gates' fields: when each pod was created (a pod
/// created again after a step back counts from its creation, `progress_deadline`).
pub const READS: &[Field] = &[pod("metadata.creationTimestamp")];

/// What a failure of kind `kind` (`FailureLimit`, `ProgressDeadline`) with `reason` does: with
/// `on-failure: rollback`, a rollback to `status.currentRevision` ([`Effect::RollBack`]) — unless the
/// set is already stepping back, or has no other revision to return to ([`rolls_back_to`]) —; else the
/// pause
/// ([`Effect::Pause`]).
pub fn on_failure(input: &GateInput<'_>, kind: DegradedKind, reason: String) -> Effect {
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
    let stepped = match step_back_clock(input, stepped) {
        Some(since) => since,
        None => return, // a pod of the failed revision is being returned, not waited for
    };
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
        .push(on_failure(input, DegradedKind::ProgressDeadline, reason));
}

/// When a step's deadline counts from (`stepped`: its `last-partition-update`). While the set steps
/// back from a failed revision ([`stepping_back`], docs/rollback.md, "An image that never starts"): a
/// pod still on that revision is returned by the stepper (`gates::recovery`), not waited for, so no
/// deadline runs (`None`); and a pod at or above the partition created after the step (returned, then
/// created again by the StatefulSet controller) counts from its creation. Otherwise `stepped`.
fn step_back_clock(input: &GateInput<'_>, stepped: Timestamp) -> Option<Timestamp> {
    let Some(failed) = input
        .config
        .stamps
        .failed_revision
        .as_ref()
        .filter(|_| stepping_back(input))
    else {
        return Some(stepped);
    };
    let start = start_ordinal(input.set);
    let replicas = u32::try_from(set::replicas(input.set)).unwrap_or(0);
    let pods = input.pods.range(start..start.saturating_add(replicas));
    if pods
        .clone()
        .any(|(_, p)| pod_revision(p) == Some(failed.revision.as_str()))
    {
        return None;
    }
    let partition = u32::try_from(input.partition().max(0)).unwrap_or(0);
    let created = pods
        .filter(|(o, _)| **o >= start.saturating_add(partition))
        .filter_map(|(_, p)| p.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .max();
    Some(created.map_or(stepped, |c| c.max(stepped)))
}
