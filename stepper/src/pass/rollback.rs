//! The rollback's write (`on-failure: rollback`, docs/rollback.md): GET the ControllerRevision
//! `status.currentRevision` names, then ONE patch writing its template back over `.spec.template`, pinned
//! to the generation and revisions read, with the record (`failed-revision`, `degraded-reason:
//! RolledBack: …`) and the gates' state removed; then the Warning `RolledBack` Event. What `kubectl
//! rollout undo` does (kubectl's `statefulSetRollbacker` applies the ControllerRevision's data), with
//! the stepper's record. The write and its Events are the plan's (`plan::rollback::write`, a
//! `SetWrite`): this only fetches the template and sends.

use crate::cluster::{Cluster, ClusterError, PatchOutcome};
use crate::plan::SetPlan;
use crate::plan::effects::Rollback;
use crate::plan::rollback::template_of;

/// What became of a rollback.
#[derive(Debug)]
pub enum RollbackWrite {
    /// Written (with the pass's status annotations): the template of `to` is back; the Events are
    /// published, those that could not be are here.
    Written(Vec<ClusterError>),
    /// A `test` op failed: the set changed since the read (a new apply, another stepper); decided
    /// again next pass.
    Conflict(String),
}

/// Writes `rb` for plan `p`: reads the ControllerRevision `rb.to`, sends the plan's one write with its
/// template (`plan::rollback::write`, carrying the plan's status annotations), and publishes its Events
/// (the pass's, then `RolledBack`).
///
/// # Errors
/// The ControllerRevision's GET failing, its absence (pruned past `spec.revisionHistoryLimit`) or a
/// revision without a template (`ClusterError::Unexpected` naming it), or the patch refused or
/// failed: nothing is rolled back; the check stays at its limit, so the next pass decides again.
pub async fn roll_back<C: Cluster>(
    cluster: &C,
    p: &SetPlan,
    rb: &Rollback,
) -> Result<RollbackWrite, ClusterError> {
    let action = format!("roll back statefulset {}/{}", p.namespace, p.name);
    let unexpected = |message: String| ClusterError::Unexpected {
        action: action.clone(),
        message,
    };
    let revision = cluster
        .get_controller_revision(&p.namespace, &rb.to)
        .await?
        .ok_or_else(|| {
            unexpected(format!(
                "controllerrevision {} not found (pruned past spec.revisionHistoryLimit?): no \
                 template to return to",
                rb.to
            ))
        })?;
    let template = template_of(&revision).map_err(|e| unexpected(e.to_string()))?;
    let patch = p.write.patch(&p.set, Some(&template)).ok_or_else(|| {
        unexpected("the plan's write is not a rollback: nothing to write".to_string())
    })?;
    match cluster
        .patch_statefulset(&p.namespace, &p.name, &patch)
        .await?
    {
        PatchOutcome::Applied(_) => {
            let mut errors = Vec::new();
            for ev in p.events() {
                errors.extend(cluster.publish_event(&p.reference(), ev).await.err());
            }
            Ok(RollbackWrite::Written(errors))
        }
        PatchOutcome::Conflict(msg) => Ok(RollbackWrite::Conflict(msg)),
    }
}

/// `web-7d… → web-6d…`: a rollback's revisions, failed → last good.
pub fn label(rb: &Rollback) -> String {
    format!("{} → {}", rb.failed.revision, rb.to)
}
