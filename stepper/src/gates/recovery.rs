//! Stuck-pod recovery (opt-in, `--recover-stuck-pods`): which pod of a set to delete, as a pure decision.
//!
//! Kubernetes issue #67250: with `podManagementPolicy: OrderedReady`, when a pod on a bad revision never
//! becomes Ready and the template is then fixed or rolled back, the StatefulSet controller waits for that
//! pod forever (it never replaces a pod that is not Running and Ready); Kubernetes' documentation
//! ("forced rollback") asks a person to delete it. docs/design.md, "Stuck-rollout recovery (opt-in)": a pod
//! not Ready for `<prefix>/recover-after-seconds` that runs a revision its ordinal should no longer run is
//! deleted, one pod per set per pass, only when no other pod of the set is down. The I/O (the DELETE with
//! uid and resourceVersion preconditions, the Event) is in [`crate::pass::recovery`].

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::config::SetConfig;
use crate::model::fields::{Field, pod, set as of_set};
use crate::model::pods::{pod_revision, pod_unready_cause, start_ordinal};
use crate::model::set;

/// What stuck-pod recovery reads beside each pod's state (`gates::on_pods::POD_STATE`): when a pod
/// was created (its clock when it never became Ready), the partition and the revisions.
pub const READS: &[Field] = &[
    pod("metadata.creationTimestamp"),
    of_set("metadata.generation"),
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("spec.ordinals"),
    of_set("status"),
];

/// Seconds a pod must have been not Ready before it is recovered when the set has no
/// `<prefix>/recover-after-seconds` annotation (with `--recover-stuck-pods`).
pub const DEFAULT_RECOVER_AFTER_SECONDS: i64 = 300;

/// A pod that is not Ready and runs a revision its ordinal should no longer run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckPod {
    /// `metadata.name` (`web-4`).
    pub name: String,
    /// `metadata.uid`: the DELETE's precondition.
    pub uid: String,
    /// `metadata.resourceVersion`: the DELETE's precondition.
    pub resource_version: String,
    /// The pod's ordinal.
    pub ordinal: u32,
    /// The revision it runs (its `controller-revision-hash` label).
    pub revision: String,
    /// The revision its ordinal should run: `currentRevision` below the partition, `updateRevision`
    /// at or above it (Kubernetes StatefulSet controller: pods ≥ partition get `updateRevision`).
    pub expected_revision: String,
    /// Seconds since it stopped being Ready: from its Ready condition's `lastTransitionTime`, or its
    /// `creationTimestamp` when it never had a Ready condition (a pod stuck Pending).
    pub not_ready_seconds: i64,
    /// It runs the revision the set was rolled back from (`<prefix>/failed-revision`) while the set
    /// steps back ([`crate::gates::rollback::stepping_back`]): known bad, so it is returned at once —
    /// no `recover-after-seconds` wait, no `--recover-stuck-pods` needed ([`decide`]).
    pub failed_revision: bool,
}

/// What recovery does with a set's stuck pod this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Delete it now (with its uid and resourceVersion as preconditions).
    Delete,
    /// Not yet: it has been not Ready for less than the set's `recover-after-seconds`.
    Wait {
        /// Seconds left before it is deleted.
        remaining_seconds: i64,
    },
    /// Not this pass, and why (another pod down, the set paused, recovery off, …).
    Hold(String),
}

impl std::fmt::Display for Action {
    /// What happens to the stuck pod, as `status` shows it: `deleted this pass`, `deleted in 200s`,
    /// `not deleted: <why>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Delete => write!(f, "deleted this pass"),
            Action::Wait { remaining_seconds } => write!(f, "deleted in {remaining_seconds}s"),
            Action::Hold(why) => write!(f, "not deleted: {why}"),
        }
    }
}

/// A set's stuck pod and what recovery does with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The stuck pod (the one with the highest ordinal when several are).
    pub pod: StuckPod,
    /// What happens to it.
    pub action: Action,
}

/// The revision the pod with set index `index` (`ordinal − spec.ordinals.start`) should run:
/// `currentRevision` when `index < partition`, else `updateRevision`. `None` before the controller
/// reported both revisions.
pub fn expected_revision(set: &StatefulSet, index: u32) -> Option<&str> {
    let status = set.status.as_ref()?;
    let partition = u32::try_from(set::partition(set).unwrap_or(0).max(0)).unwrap_or(0);
    if index < partition {
        status.current_revision.as_deref()
    } else {
        status.update_revision.as_deref()
    }
}

/// True when the pod's `Ready` condition is `True`.
fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// When the pod stopped being Ready: its Ready condition's `lastTransitionTime`, else its
/// `creationTimestamp`.
fn not_ready_since(pod: &Pod) -> Option<Timestamp> {
    let ready = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .and_then(|c| c.last_transition_time.as_ref());
    ready
        .or(pod.metadata.creation_timestamp.as_ref())
        .map(|t| t.0)
}

/// The set's stuck pods at `now`, highest ordinal first: in `[start, start + replicas)`, not
/// terminating, not Ready, and on a revision other than [`expected_revision`]. A pod without a
/// revision label, uid or resourceVersion is never one (it cannot be judged or pinned).
pub fn stuck_pods(set: &StatefulSet, pods: &BTreeMap<u32, &Pod>, now: Timestamp) -> Vec<StuckPod> {
    let start = start_ordinal(set);
    let end = start.saturating_add(u32::try_from(set::replicas(set)).unwrap_or(0));
    pods.range(start..end)
        .rev()
        .filter(|(_, p)| p.metadata.deletion_timestamp.is_none() && !is_ready(p))
        .filter_map(|(&ordinal, p)| {
            let revision = pod_revision(p)?;
            let expected = expected_revision(set, ordinal - start)?;
            if revision == expected {
                return None;
            }
            Some(StuckPod {
                name: p.metadata.name.clone()?,
                uid: p.metadata.uid.clone()?,
                resource_version: p.metadata.resource_version.clone()?,
                ordinal,
                revision: revision.to_string(),
                expected_revision: expected.to_string(),
                not_ready_seconds: not_ready_since(p)
                    .map_or(0, |t| now.duration_since(t).as_secs().max(0)),
                failed_revision: false,
            })
        })
        .collect()
}

/// The ordinals in `[start, start + replicas)` other than `except` whose pod is missing or not ready
/// ([`pod_unready_cause`], `minReadySeconds` not counted), with the cause.
fn other_pods_down(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    except: u32,
    now: Timestamp,
) -> Vec<String> {
    let start = start_ordinal(set);
    let end = start.saturating_add(u32::try_from(set::replicas(set)).unwrap_or(0));
    let name = set::name(set);
    (start..end)
        .filter(|&o| o != except)
        .filter_map(|o| match pods.get(&o) {
            None => Some(format!("{name}-{o}: missing")),
            Some(p) => pod_unready_cause(p, 0, now).map(|c| format!("{name}-{o}: {c}")),
        })
        .collect()
}

/// True when `set` steps back from the revision `config`'s `failed-revision` records (the stepper
/// rolled it back: `status.updateRevision == status.currentRevision`, not the failed one) and a pod on
/// that failed revision is not Ready, as the StatefulSet list tells (fewer Ready pods than replicas):
/// its pods are read, with `--recover-stuck-pods` or without, so that [`decide`] can return that pod.
pub fn may_have_failed_pod(set: &StatefulSet, config: &SetConfig) -> bool {
    let failed = config.stamps.failed_revision.as_ref();
    let (update, current) = (set::update_revision(set), set::current_revision(set));
    let stepping_back = failed.is_some_and(|f| f.revision != update) && update == current;
    stepping_back && may_have_stuck_pod(set, config)
}

/// The recovery decision for one guarded set at `now` (`enabled`: `--recover-stuck-pods`): its stuck
/// pod with the highest ordinal, if any, and whether to delete it (`None` for a set the stepper does
/// not manage: `OnDelete`, or `force-rolling-update`). Held when recovery is off, the set is (a person or a failed Prometheus check holds the rollout, and may be looking at that
/// very pod: a pause stops every write of the stepper to the set), its `recover-after-seconds` is
/// unreadable, the controller has not observed its spec (the revisions in its status may be stale), or
/// another pod of the set is down (deleting would take a second pod down). Waits until the pod has been
/// not Ready for `recover-after-seconds` ([`DEFAULT_RECOVER_AFTER_SECONDS`] when absent).
///
/// A pod on the revision the set was rolled back from, while it steps back
/// ([`may_have_failed_pod`], docs/rollback.md, "An image that never starts"), is returned at once: on
/// or off, without the wait (the revision was just declared failed, and with `OrderedReady` the
/// StatefulSet controller never replaces a pod that is not Running and Ready, kubernetes#67250), held
/// only as any recovery is (paused, not observed, another pod down).
pub fn decide(
    set: &StatefulSet,
    config: &SetConfig,
    pods: &BTreeMap<u32, &Pod>,
    enabled: bool,
    now: Timestamp,
) -> Option<Finding> {
    if !config.guarded(set) {
        return None;
    }
    let mut pod = stuck_pods(set, pods, now).into_iter().next()?;
    pod.failed_revision = may_have_failed_pod(set, config)
        && config
            .stamps
            .failed_revision
            .as_ref()
            .is_some_and(|f| f.revision == pod.revision);
    let hold = |why: String| Action::Hold(why);
    let observed = set.status.as_ref().and_then(|s| s.observed_generation);
    let action = if !enabled && !pod.failed_revision {
        hold("recovery off (--recover-stuck-pods)".into())
    } else if config.paused {
        hold("the rollout is paused".into())
    } else if let (false, Err(e)) = (pod.failed_revision, &config.recover_after_seconds) {
        hold(e.to_string())
    } else if observed.is_none() || observed != set.metadata.generation {
        hold("the controller has not observed the spec yet".into())
    } else {
        let down = other_pods_down(set, pods, pod.ordinal, now);
        let after = if pod.failed_revision {
            0
        } else {
            recover_after_seconds(config)
        };
        if !down.is_empty() {
            hold(format!("another pod is down: {}", down.join(", ")))
        } else if pod.not_ready_seconds < after {
            Action::Wait {
                remaining_seconds: after - pod.not_ready_seconds,
            }
        } else {
            Action::Delete
        }
    };
    Some(Finding { pod, action })
}

/// The set's `recover-after-seconds`: the annotation's value, or [`DEFAULT_RECOVER_AFTER_SECONDS`]
/// when absent or unreadable. Seconds.
pub fn recover_after_seconds(config: &SetConfig) -> i64 {
    config
        .recover_after_seconds
        .clone()
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_RECOVER_AFTER_SECONDS)
}

/// True when recovery may find a stuck pod in `set` (its annotations read once into `config`): a
/// guarded set with fewer Ready pods than `spec.replicas` (a stuck pod is not Ready). With
/// `--recover-stuck-pods`, a pass reads the pods of these sets too (besides the step candidates').
pub fn may_have_stuck_pod(set: &StatefulSet, config: &SetConfig) -> bool {
    let ready = set.status.as_ref().and_then(|st| st.ready_replicas);
    config.guarded(set) && ready.unwrap_or(0) < set::replicas(set)
}
