//! The gates that read the set's pods and PDBs: `PodNotReady`, `StepInProgress`, `PdbBlocked`.
//!
//! Also here: the pods a step replaces while they are already down, which count for neither.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::input::GateInput;
use crate::model::fields::{Field, pdb, pod, set as of_set};
use crate::model::pods::{PdbView, pod_revision, pod_unready_cause, start_ordinal};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// Gate `PodNotReady` ([`check_pods_ready`]), not counting the pods the step replaces while they are
/// already down ([`down`]).
pub fn pod_not_ready(input: &GateInput<'_>) -> Result<(), Blocked> {
    check_pods_ready_except(input.set, input.pods, input.now, &down(input))
}

/// The ordinals the next step replaces when all of them are already down ([`replaced_while_down`] from
/// the set's partition to [`GateInput::target`]); they count for neither `PodNotReady` nor
/// `PdbBlocked`.
pub fn down(input: &GateInput<'_>) -> BTreeSet<u32> {
    replaced_while_down(
        input.set,
        input.pods,
        input.partition(),
        input.target(),
        input.now,
    )
}

/// Gate `StepInProgress` ([`check_step_done`] at the set's partition).
pub fn step_in_progress(input: &GateInput<'_>) -> Result<(), Blocked> {
    check_step_done(input.set, input.pods, input.partition())
}

/// What a pod is read for, to judge it ready and available, on which revision, terminating
/// (`model::pods::pod_unready_cause`, `pod_revision`): the gates of this file and stuck-pod recovery.
pub const POD_STATE: &[Field] = &[
    pod("metadata.labels.*"),
    pod("metadata.deletionTimestamp"),
    pod("status.phase"),
    pod("status.conditions[type=Ready].status"),
    pod("status.conditions[type=Ready].reason"),
    pod("status.conditions[type=Ready].lastTransitionTime"),
];

/// What `PodNotReady` and `StepInProgress` read beside [`POD_STATE`]: which ordinals the partition and
/// the next step cover, the revisions, `minReadySeconds`, the controller's counts.
pub const READS: &[Field] = &[
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("spec.minReadySeconds"),
    of_set("spec.ordinals"),
    of_set("status"),
];

/// What `PdbBlocked` reads beside [`READS`] and [`POD_STATE`] (the pods' labels, selected): each PDB's
/// selector and budget.
pub const PDB_READS: &[Field] = &[
    pdb("spec.selector"),
    pdb("status.disruptionsAllowed"),
    pdb("status.currentHealthy"),
    pdb("status.desiredHealthy"),
];

/// Gate `PdbBlocked` ([`check_pdbs`]), when `--no-pdb-gate` is not given. The budget of a PDB is spent
/// by the very pods the step replaces: replacing pods that are all already down disrupts no healthy
/// one (the eviction API's `unhealthyPodEvictionPolicy: AlwaysAllow`), so the gate then passes.
pub fn pdb_blocked(input: &GateInput<'_>) -> Result<(), Blocked> {
    if !input.opts.pdb_gate || !down(input).is_empty() {
        return Ok(());
    }
    check_pdbs(input.set, input.pods, input.pdbs)
}

/// Every ordinal in `[start, start + spec.replicas)` ([`start_ordinal`]) has a pod (matched by owner uid and name)
/// that is ready and available at `now` (see [`pod_unready_cause`]). The detail names the lowest failing
/// ordinal (`web-1: ContainersNotReady`) and how many others fail.
pub fn check_pods_ready(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
) -> Result<(), Blocked> {
    check_pods_ready_except(set, pods, now, &BTreeSet::new())
}

/// [`check_pods_ready`], not counting the ordinals in `exempt` (see [`replaced_while_down`]).
pub fn check_pods_ready_except(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
    exempt: &BTreeSet<u32>,
) -> Result<(), Blocked> {
    let name = set::name(set);
    let min_ready = set::min_ready_seconds(set);
    let start = start_ordinal(set);
    let end = start.saturating_add(u32::try_from(set::replicas(set)).unwrap_or(0));
    let mut failures = (start..end)
        .filter(|o| !exempt.contains(o))
        .filter_map(|ordinal| {
            let cause = match pods.get(&ordinal) {
                None => Some("missing".to_string()),
                Some(pod) => pod_unready_cause(pod, min_ready, now),
            };
            cause.map(|c| format!("{name}-{ordinal}: {c}"))
        });
    let Some(first) = failures.next() else {
        return Ok(());
    };
    let more = failures.count();
    let detail = if more == 0 {
        first
    } else {
        format!("{first} (and {more} more)")
    };
    Err(Blocked::new(Reason::PodNotReady, detail))
}

/// True when every pod with index below the partition (`[start, start + min(partition, replicas))`,
/// the pods no step has touched yet) exists and is ready and available at `now`: a `PodNotReady` then
/// concerns only pods the last step is replacing, which is the normal course of a step (its Event is
/// `Normal`, not `Warning`).
pub fn pods_below_partition_ready(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
) -> bool {
    let replicas = u32::try_from(set::replicas(set)).unwrap_or(0);
    let partition = u32::try_from(set::partition(set).unwrap_or(0)).unwrap_or(0);
    let start = start_ordinal(set);
    let min_ready = set::min_ready_seconds(set);
    (start..start.saturating_add(partition.min(replicas))).all(|o| {
        pods.get(&o)
            .is_some_and(|p| pod_unready_cause(p, min_ready, now).is_none())
    })
}

/// Every pod with index (`ordinal − start`) in `[min(partition, replicas),
/// replicas)` carries label
/// `controller-revision-hash == status.updateRevision` (Kubernetes StatefulSet controller: pods with
/// ordinal ≥ partition get `updateRevision`). Missing pods are left to `PodNotReady`.
pub fn check_step_done(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    partition: i32,
) -> Result<(), Blocked> {
    let name = set::name(set);
    let replicas = u32::try_from(set::replicas(set)).unwrap_or(0);
    let start = start_ordinal(set);
    let from = start.saturating_add(u32::try_from(partition).unwrap_or(0).min(replicas));
    let end = start.saturating_add(replicas);
    let update_revision = set
        .status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref())
        .unwrap_or("");
    // Highest ordinal first: the controller replaces pods from the top down.
    for ordinal in (from..end).rev() {
        let Some(pod) = pods.get(&ordinal) else {
            continue;
        };
        let revision = pod_revision(pod);
        if revision != Some(update_revision) {
            return Err(Blocked::new(
                Reason::StepInProgress,
                format!(
                    "{name}-{ordinal}: on revision {}, want updateRevision {update_revision}",
                    revision.unwrap_or("<none>")
                ),
            ));
        }
    }
    Ok(())
}

/// No PodDisruptionBudget of the set's namespace that selects one of its pods has
/// `status.disruptionsAllowed < 1` (a missing status counts as 0: fail closed).
pub fn check_pdbs(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
) -> Result<(), Blocked> {
    for view in pdbs {
        if view.pdb.metadata.namespace != set.metadata.namespace {
            continue;
        }
        if !pods.values().any(|p| view.selects(p)) {
            continue;
        }
        let status = view.pdb.status.as_ref();
        let allowed = status.and_then(|s| s.disruptions_allowed).unwrap_or(0);
        if allowed < 1 {
            return Err(Blocked::new(
                Reason::PdbBlocked,
                format!(
                    "PodDisruptionBudget {}: disruptionsAllowed {allowed} (currentHealthy {}, desiredHealthy {})",
                    view.pdb.metadata.name.as_deref().unwrap_or("<unnamed>"),
                    status.and_then(|s| s.current_healthy).unwrap_or(0),
                    status.and_then(|s| s.desired_healthy).unwrap_or(0),
                ),
            ));
        }
    }
    Ok(())
}

/// The ordinals a step from `partition` to `to` makes the controller replace — index (`ordinal − start`)
/// in `[to, min(partition, replicas))` and not on `status.updateRevision` (Kubernetes StatefulSet
/// controller: pods ≥ partition get updateRevision) — when **every one of them is already missing or not
/// ready** at `now`; empty otherwise.
///
/// Those pods do not block the step (`PodNotReady`, `PdbBlocked`): replacing a pod that is down takes
/// nothing more down, and it is the only way forward when a pod stuck on a bad revision sits below a
/// partition restaged by a fixing re-apply or a rollback (the controller never replaces a pod below the
/// partition by itself). A Ready pod among them keeps the gates as they are: stepping would take it down
/// while another is down, which is MOCO's incident.
pub fn replaced_while_down(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    partition: i32,
    to: i32,
    now: Timestamp,
) -> BTreeSet<u32> {
    let replicas = u32::try_from(set::replicas(set)).unwrap_or(0);
    let start = start_ordinal(set);
    let from = u32::try_from(partition).unwrap_or(0).min(replicas);
    let to = u32::try_from(to).unwrap_or(0).min(from);
    let update_revision = set
        .status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref());
    let min_ready = set::min_ready_seconds(set);
    let replaced: BTreeSet<u32> = (start.saturating_add(to)..start.saturating_add(from))
        .filter(|o| {
            pods.get(o)
                .is_none_or(|p| pod_revision(p) != update_revision)
        })
        .collect();
    let all_down = replaced.iter().all(|o| {
        pods.get(o)
            .is_none_or(|p| pod_unready_cause(p, min_ready, now).is_some())
    });
    if all_down { replaced } else { BTreeSet::new() }
}
