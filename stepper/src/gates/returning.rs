//! Returning the pods a re-apply left on a failed revision (docs/rollback.md, "A re-apply before the
//! steps back are done").
//!
//! After a rollback the stepper steps the set back to `status.currentRevision`. When the failed
//! template is applied again before that is done (a GitOps sync), `status.updateRevision` is the
//! failed revision once more, the policy stages it (partition = `spec.replicas`) and gate
//! `FailedRevision` holds it. The pods not yet stepped back then sit below the partition on the failed
//! revision, which the StatefulSet controller never replaces there (Kubernetes StatefulSet
//! controller: pods ≥ partition get `updateRevision`; a pod below it is only *created* from
//! `currentRevision`). So the stepper deletes them, one per pass, highest ordinal first (the
//! controller's order), and the controller creates each again from `status.currentRevision`.
//!
//! Each return is judged as the step back it stands for: the gates run on a view of the set
//! ([`view`]) whose update revision is `status.currentRevision` and whose next step replaces exactly
//! the pod returned — so the pods are Ready, the PDB allows it, the application is asked (a primary
//! switches over first) and the checks that failed are not asked again ([`super::rollback::stepping_back`]
//! holds on the view). The DELETE (uid and resourceVersion preconditions) is `pass::returning`'s.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::input::GateInput;
pub use super::return_pod::{Return, ReturnPod};
use super::verdict::{Evaluation, Verdict};
use crate::config::SetConfig;
use crate::model::pods::{pod_revision, start_ordinal};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// The pod of `input`'s set to return ([`ReturnPod`]), when a failed revision is recorded, it is
/// `status.updateRevision` again and is not `status.currentRevision`, and a pod below the partition
/// (and below `spec.replicas`) runs it: the one with the highest ordinal that is not terminating. A pod
/// without a name, uid or resourceVersion is never one (it cannot be pinned).
pub fn pod_to_return(input: &GateInput<'_>) -> Option<ReturnPod> {
    let failed = input.config.stamps.failed_revision.as_ref()?;
    let (update, current) = (
        set::update_revision(input.set),
        set::current_revision(input.set),
    );
    if update != failed.revision || current.is_empty() || current == update {
        return None;
    }
    let start = start_ordinal(input.set);
    let below = u32::try_from(input.partition().min(set::replicas(input.set)).max(0)).unwrap_or(0);
    let on_failed: Vec<(u32, &Pod)> = input
        .pods
        .range(start..start.saturating_add(below))
        .rev()
        .filter(|(_, p)| p.metadata.deletion_timestamp.is_none())
        .filter(|(_, p)| pod_revision(p) == Some(update))
        .map(|(&o, &p)| (o, p))
        .collect();
    let (ordinal, pod) = *on_failed.first()?;
    Some(ReturnPod {
        name: pod.metadata.name.clone()?,
        uid: pod.metadata.uid.clone()?,
        resource_version: pod.metadata.resource_version.clone()?,
        ordinal,
        revision: update.to_string(),
        to: current.to_string(),
        left: on_failed.len(),
    })
}

/// True when a set blocked `FailedRevision` may have pods to return, as the StatefulSet list tells:
/// more pods on `status.updateRevision` (`status.updatedReplicas`) than the partition leaves above it.
/// Such a set gets its pods read.
pub fn may_return(set: &StatefulSet, config: &SetConfig) -> bool {
    let updated = set
        .status
        .as_ref()
        .and_then(|s| s.updated_replicas)
        .unwrap_or(0);
    let replicas = set::replicas(set);
    let above = replicas - set::partition(set).unwrap_or(0).clamp(0, replicas);
    config
        .stamps
        .failed_revision
        .as_ref()
        .is_some_and(|f| f.revision == set::update_revision(set))
        && updated > above
}

/// The set and annotations the gates judge the return of `pod` on: `status.updateRevision` is
/// `status.currentRevision`, the partition is one above the pod's index (`ordinal −
/// spec.ordinals.start`), the step is one pod and there is no canary plan, so the next step replaces
/// exactly `pod`; `status.updatedReplicas` counts the pods on `status.currentRevision`.
pub fn view(input: &GateInput<'_>, pod: &ReturnPod) -> (StatefulSet, SetConfig) {
    let mut set = input.set.clone();
    let index = pod.ordinal - start_ordinal(input.set);
    let on_current = input
        .pods
        .values()
        .filter(|p| pod_revision(p) == Some(pod.to.as_str()))
        .count();
    if let Some(status) = set.status.as_mut() {
        status.update_revision = Some(pod.to.clone());
        status.updated_replicas = Some(i32::try_from(on_current).unwrap_or(i32::MAX));
    }
    if let Some(rolling) = set
        .spec
        .as_mut()
        .and_then(|s| s.update_strategy.as_mut())
        .and_then(|u| u.rolling_update.as_mut())
    {
        rolling.partition = Some(i32::try_from(index).unwrap_or(i32::MAX).saturating_add(1));
    }
    let mut config = input.config.clone();
    config.step = Ok(1);
    config.pause_at = None;
    (set, config)
}

/// The view the gates judge a return on ([`view`]) and the pod returned ([`pod_to_return`]); `None`
/// with no pod to return: `FailedRevision`'s rerun (`gates::table::Rerun`).
pub(super) fn rerun_view(input: &GateInput<'_>) -> Option<(StatefulSet, SetConfig, ReturnPod)> {
    let pod = pod_to_return(input)?;
    let (set, config) = view(input, &pod);
    Some((set, config, pod))
}

/// What the gates of the step back (`back`, [`evaluate_input`](super::evaluate_input) on [`view`]) say
/// about returning `pod`, folded into the set's evaluation `ev` (held `FailedRevision`): what they ask
/// to read and write (the approval requests, the webhook's record, the approval note) becomes the
/// set's (but for writes on the pod deleted this pass), and [`Evaluation::returning`] says whether
/// the pod is deleted this pass. The verdict stays
/// `FailedRevision`, its detail naming the pod and, when held, the gate that holds it.
pub(super) fn judge(ev: &mut Evaluation, pod: ReturnPod, back: Evaluation) {
    let held = match back.verdict {
        Verdict::Step { .. } => None,
        Verdict::Blocked(b) => Some(b),
        // Unreachable: the view stages a step; fail closed anyway.
        other => Some(Blocked::new(
            Reason::NotObserved,
            format!("the step back reads {other:?}"),
        )),
    };
    if let Verdict::Blocked(b) = &mut ev.verdict {
        let what = match &held {
            None => "deleted this pass".to_string(),
            Some(h) => format!("held by {}", h.reason.as_str()),
        };
        b.detail = format!(
            "{}; returning {} to {} ({} pod(s) left on it): {what}",
            b.detail, pod.name, pod.to, pod.left
        );
    }
    ev.need = back.need;
    ev.effects.extend(back.effects);
    // The pod deleted takes its annotations with it: a write on it (the step's withdrawal of its
    // answered request) would only change its resourceVersion and fail the DELETE's precondition.
    ev.pod_writes = (back.pod_writes.into_iter())
        .filter(|w| held.is_some() || w.name != pod.name)
        .collect();
    ev.approval_wait = back.approval_wait;
    ev.returning = Some(Box::new(Return { pod, held }));
}
