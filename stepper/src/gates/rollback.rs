//! Rolling back by itself (docs/rollback.md): what a failure does — a check at its `failure-limit`, or a
//! step not done within `progress-deadline-seconds` — by `<prefix>/on-failure`, gate
//! `FailedRevision` over a revision recorded as failed ([`failed_revision`]), where a failure returns the
//! set ([`rolls_back_to`]; what it writes is `gates::failure`'s), and the steps back to the last good
//! revision, which the application checks that just failed do not gate ([`stepping_back`]).
//!
//! A rollback writes back `.spec.template` from the ControllerRevision of `status.currentRevision`
//! (what `kubectl rollout undo` does: kubectl's `statefulSetRollbacker`); the admission policy stages it
//! like any template change and the stepper steps it back under the Kubernetes gates and the
//! application's approvals. Argo Rollouts' `progressDeadlineAbort` and Deployment's
//! `progressDeadlineSeconds` are the models of the deadline.

use super::input::GateInput;
use crate::config::OnFailure;
use crate::model::fields::{Field, set as of_set};
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

/// The revision a failure now returns the set to: `status.currentRevision`, with `on-failure: rollback`,
/// unless the set is already stepping back ([`stepping_back`]) or has no other revision to return to
/// (`None`: the failure pauses it).
pub fn rolls_back_to<'a>(input: &GateInput<'a>) -> Option<&'a str> {
    let (update, current) = (
        set::update_revision(input.set),
        set::current_revision(input.set),
    );
    let can = !stepping_back(input) && !current.is_empty() && update != current;
    (input.config.on_failure == OnFailure::Rollback && can).then_some(current)
}
