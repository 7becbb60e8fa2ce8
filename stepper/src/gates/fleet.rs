//! The gates that read beyond the set: `GroupBusy` and `OwnerNotHealthy`.
//!
//! `GroupBusy` reads the rollout group's holder; `OwnerNotHealthy` the controller owner the pass read.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::input::GateInput;
use super::probes::{Need, OwnerProbe};
use super::verdict::{Evaluation, Verdict};
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `GroupBusy` reads of the sets of a rollout group beside their annotations: which one started
/// its rollout and whether it is done (replicas, partition, revisions, readiness).
pub const GROUP_READS: &[Field] = &[
    of_set("metadata.generation"),
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("spec.minReadySeconds"),
    of_set("status"),
];

/// What `OwnerNotHealthy` reads of the set: its controller ownerReference (the object to GET).
pub const OWNER_READS: &[Field] = &[
    of_set("metadata.ownerReferences[].apiVersion"),
    of_set("metadata.ownerReferences[].kind"),
    of_set("metadata.ownerReferences[].name"),
    of_set("metadata.ownerReferences[].uid"),
    of_set("metadata.ownerReferences[].controller"),
];

/// Gate `GroupBusy` ([`check_group`]), for a set with a `<prefix>/rollout-group`.
pub fn group_busy(input: &GateInput<'_>) -> Result<(), Blocked> {
    match &input.config.rollout_group {
        Some(group) => check_group(input.set, group, input.fleet.group_holder),
        None => Ok(()),
    }
}

/// Gate `OwnerNotHealthy`, for a set with a `<prefix>/owner-condition`: the set has a controller owner,
/// the pass read it ([`crate::gates::Need::Owner`] until then), and [`check_owner`] passes.
pub fn owner_not_healthy(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some(condition) = input.config.owner_condition.as_deref() else {
        return Ok(());
    };
    let set = input.set;
    let Some(owner_ref) = set::controller_owner(set) else {
        return Err(Blocked::new(
            Reason::OwnerNotHealthy,
            format!(
                "{}: no controller ownerReference to read condition {condition} from",
                set::name(set)
            ),
        ));
    };
    let Some(owner) = &input.probes.owner else {
        return Err(Blocked::new(
            Reason::OwnerNotHealthy,
            format!("{} {}: not read yet", owner_ref.kind, owner_ref.name),
        ));
    };
    check_owner(set, condition, owner_ref, owner)
}

/// The holder of a rollout group: among `members` (the guarded StatefulSets of one namespace with
/// one `<prefix>/rollout-group` value) those with a staged update, the first by (started rollout
/// first, then name). Grafana rollout-operator's pattern: one set of a group at a time, a started one
/// is finished before the next starts, the rest go in name order. `None` when no member is staged.
pub fn group_holder<'a>(
    members: impl IntoIterator<Item = &'a StatefulSet>,
) -> Option<&'a StatefulSet> {
    members
        .into_iter()
        .filter(|s| set::has_staged_update(s))
        .min_by(|a, b| {
            (!set::rollout_started(a), a.metadata.name.as_deref())
                .cmp(&(!set::rollout_started(b), b.metadata.name.as_deref()))
        })
}

/// Passes when the set has no group, nothing holds it, or the set is the holder.
pub fn check_group(
    set: &StatefulSet,
    group: &str,
    holder: Option<&StatefulSet>,
) -> Result<(), Blocked> {
    let Some(holder) = holder else {
        return Ok(());
    };
    if holder.metadata.uid == set.metadata.uid && holder.metadata.name == set.metadata.name {
        return Ok(());
    }
    let status = holder.status.as_ref();
    Err(Blocked::new(
        Reason::GroupBusy,
        format!(
            "rollout-group {group}: {} rolls out first (updated {}/{}, partition {})",
            set::name(holder),
            status.and_then(|s| s.updated_replicas).unwrap_or(0),
            set::replicas(holder),
            set::partition(holder).unwrap_or(0)
        ),
    ))
}

/// The controller owner `owner` read by the pass has condition `condition`
/// with `status: "True"`, for its current generation: the condition's `observedGeneration`, else
/// `status.observedGeneration`, else MOCO's `status.reconcileInfo.generation`, when present, equals
/// `metadata.generation` (a condition about an older spec says nothing). The object read must be the
/// one referenced (same uid, when the object reports one).
pub fn check_owner(
    set: &StatefulSet,
    condition: &str,
    owner_ref: &OwnerReference,
    owner: &OwnerProbe,
) -> Result<(), Blocked> {
    let who = format!("{} {}", owner_ref.kind, owner_ref.name);
    let blocked = |detail: String| Err(Blocked::new(Reason::OwnerNotHealthy, detail));
    let object = match owner {
        OwnerProbe::Found(o) => o,
        OwnerProbe::NotFound => return blocked(format!("{who}: not found")),
        OwnerProbe::Failed(cause) => return blocked(format!("{who}: cannot read: {cause}")),
    };
    let uid = object.pointer("/metadata/uid").and_then(|v| v.as_str());
    if uid.is_some_and(|u| u != owner_ref.uid) {
        return blocked(format!(
            "{who}: uid {} is not the owner {} that {} references (replaced?)",
            uid.unwrap_or(""),
            owner_ref.uid,
            set::name(set)
        ));
    }
    let generation = object
        .pointer("/metadata/generation")
        .and_then(|v| v.as_i64());
    let found = object
        .pointer("/status/conditions")
        .and_then(|v| v.as_array())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(|t| t.as_str()) == Some(condition))
        });
    let Some(c) = found else {
        return blocked(format!(
            "{who}: no condition {condition} in status.conditions"
        ));
    };
    let status = c
        .get("status")
        .and_then(|v| v.as_str())
        .unwrap_or("Unknown");
    if status != "True" {
        let why = [c.get("reason"), c.get("message")]
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .filter(|v| !v.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        };
        return blocked(format!("{who}: condition {condition} is {status}{why}"));
    }
    // The condition's own `observedGeneration` (metav1.Condition), else the status' (the common
    // convention), else MOCO's `status.reconcileInfo.generation` (the generation MOCO last reconciled).
    let observed = c
        .get("observedGeneration")
        .or_else(|| object.pointer("/status/observedGeneration"))
        .or_else(|| object.pointer("/status/reconcileInfo/generation"))
        .and_then(|v| v.as_i64());
    if let (Some(observed), Some(generation)) = (observed, generation)
        && observed != generation
    {
        return blocked(format!(
            "{who}: condition {condition} is True for generation {observed}, but the owner is at generation {generation}"
        ));
    }
    Ok(())
}

/// What `OwnerNotHealthy` asks the pass to read once it blocks without its read: GET the controller
/// owner ([`Need::Owner`]).
pub(super) fn owner_need(input: &GateInput<'_>, ev: &mut Evaluation) {
    let blocked = matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::OwnerNotHealthy);
    if blocked && input.probes.owner.is_none() {
        ev.need = set::controller_owner(input.set).cloned().map(Need::Owner);
    }
}
