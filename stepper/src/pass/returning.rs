//! The return of a pod a re-apply left on a failed revision (I/O; the decision is
//! [`crate::gates::returning`]): DELETE it with uid and resourceVersion preconditions, so a pod
//! recreated or changed since the read is never deleted, then the Warning `ReturnedPod` Event. The
//! StatefulSet controller creates it again from `status.currentRevision` (its ordinal is below the
//! partition). A plan decided on `watch`'s caches is decided again on a fresh read first
//! ([`crate::pass::fresh`]), as a step is.

use crate::cluster::{Cluster, ClusterError, DeleteOutcome};
use crate::gates::returning::ReturnPod;
use crate::pass::report::Outcome;
use crate::plan::SetPlan;
use crate::plan::events::EventNote;

/// The outcome's words for `pod`: `web-3 (web-7d… → web-6d…)`.
pub fn label(pod: &ReturnPod) -> String {
    format!("{} ({} → {})", pod.name, pod.revision, pod.to)
}

/// Deletes `pod` of plan `p`'s set and publishes `ReturnedPod` (an Event that could not be published is
/// returned beside the outcome). A failed precondition or a pod already gone is
/// [`Outcome::Conflict`]: nothing deleted, decided again next pass.
///
/// # Errors
/// The DELETE failed (a 403 names the missing RBAC rule: `delete` on pods); [`ClusterError::NotLeader`]
/// when this replica lost the Lease.
pub async fn return_pod<C: Cluster>(
    cluster: &C,
    p: &SetPlan,
    pod: &ReturnPod,
) -> Result<(Outcome, Option<ClusterError>), ClusterError> {
    match cluster
        .delete_pod(&p.namespace, &pod.name, &pod.uid, &pod.resource_version)
        .await?
    {
        DeleteOutcome::Deleted => {
            let note = EventNote::returned(&pod.name, &pod.revision, &pod.to, pod.left);
            let event_error = cluster.publish_event(&p.reference(), &note).await.err();
            Ok((Outcome::Returned(label(pod)), event_error))
        }
        DeleteOutcome::Conflict(msg) => Ok((Outcome::Conflict(msg), None)),
    }
}
