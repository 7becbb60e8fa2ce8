//! The rollback's write (`on-failure: rollback`, docs/rollback.md): GET the ControllerRevision
//! `status.currentRevision` names, then ONE patch writing its template back over `.spec.template`, pinned
//! to the generation and revisions read, with the record (`failed-revision`, `degraded-reason:
//! RolledBack: …`) and the gates' state removed; then the Warning `RolledBack` Event. What `kubectl
//! rollout undo` does (kubectl's `statefulSetRollbacker` applies the ControllerRevision's data), with
//! the stepper's record.

use serde_json::json;

use crate::cluster::{Cluster, ClusterError, PatchOutcome};
use crate::gates::StateKey;
use crate::model::reasons::degraded_kind::ROLLED_BACK;
use crate::plan::SetPlan;
use crate::plan::degraded;
use crate::plan::effects::Rollback;
use crate::plan::events::EventNote;
use crate::plan::patch::{fold_annotations, ptr, test};
use crate::plan::rollback::{rollback_patch, template_of};

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

/// The `degraded-reason` of a rollback: `RolledBack: revision web-7d… failed (FailureLimit: …); back to
/// revision web-6d…`. Any value reads as Degraded (GitOps health, `status`); it stays while
/// `failed-revision` is recorded.
pub fn degraded_value(rb: &Rollback) -> String {
    degraded::value(
        ROLLED_BACK,
        &format!(
            "revision {} failed ({}); back to revision {}",
            rb.failed.revision, rb.failed.reason, rb.to
        ),
    )
}

/// Writes `rb` for plan `p`: reads the ControllerRevision `rb.to`, writes the rollback patch carrying
/// the plan's status annotations (pinned to the set's `resourceVersion` as read), and publishes the
/// plan's status Events and `RolledBack`.
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
    let keys = &p.config.keys;
    let mut patch = rollback_patch(&p.set, &template, &rb.failed, keys);
    // The pass's status annotations ride in the same write (one write, as a step carries them), then
    // the record, last, so it wins over them.
    if let Some(status) = &p.status_annotations {
        patch.0.extend(status.0.iter().cloned());
    }
    let mut changes = vec![(keys.degraded_reason.clone(), Some(degraded_value(rb)))];
    changes.extend(StateKey::ALL.map(|k| (k.key(keys).to_string(), None)));
    fold_annotations(&p.set, &changes, &mut patch);
    // Pinned to the whole object as read: a person's pause or resume since the read (an annotation:
    // no new generation) makes the write fail, and the next pass decides on what they did.
    if let Some(rv) = &p.set.metadata.resource_version {
        patch
            .0
            .insert(0, test(ptr(&["metadata", "resourceVersion"]), json!(rv)));
    }
    match cluster
        .patch_statefulset(&p.namespace, &p.name, &patch)
        .await?
    {
        PatchOutcome::Applied(_) => {
            let event = EventNote::rolled_back(&rb.failed.revision, &rb.to, &rb.failed.reason);
            let mut errors = Vec::new();
            for ev in p.status_events.iter().chain([&event]) {
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
