//! Pod predicates: ordinal, ownership, revision, readiness, availability, PDB selection.
//!
//! One-line contracts, kept apart from the gates as Kubernetes keeps `stateful_set_utils.go` apart from
//! the StatefulSet controller's algorithm.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::{Selector, SelectorExt};

/// The pod label the StatefulSet controller sets to the revision a pod was created from
/// (Kubernetes `apps/v1` `ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// A PodDisruptionBudget with its label selector parsed once per pass.
#[derive(Clone, Debug)]
pub struct PdbView<'a> {
    /// The PDB as listed.
    pub pdb: &'a PodDisruptionBudget,
    /// Its selector; `None` when `spec.selector` is absent (policy/v1: a null selector selects no pod)
    /// or cannot be parsed. An empty selector (`{}`) selects every pod of the namespace (policy/v1).
    pub selector: Option<Selector>,
}

impl<'a> PdbView<'a> {
    /// Parses the PDB's selector.
    pub fn new(pdb: &'a PodDisruptionBudget) -> Self {
        let selector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .and_then(|s| Selector::try_from(s).ok());
        PdbView { pdb, selector }
    }

    /// True when the PDB selects `pod` (a null selector selects none; `{}` selects all).
    pub fn selects(&self, pod: &Pod) -> bool {
        let Some(selector) = &self.selector else {
            return false;
        };
        match &pod.metadata.labels {
            Some(labels) => selector.matches(labels),
            None => selector.selects_all(),
        }
    }
}

/// The pod ordinal encoded in its name `<set-name>-<ordinal>` (Kubernetes StatefulSet controller,
/// `getOrdinal`), as a number so `web-10` sorts after `web-9`. `None` for any other name: `web-x-1`,
/// `web-01` (never produced by the controller), `web-`.
pub fn ordinal(set_name: &str, pod_name: &str) -> Option<u32> {
    let digits = pod_name.strip_prefix(set_name)?.strip_prefix('-')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

/// True when the pod's controller ownerReference is the StatefulSet with this `uid`.
pub fn owned_by(pod: &Pod, uid: &str) -> bool {
    pod.metadata.owner_references.as_ref().is_some_and(|refs| {
        refs.iter()
            .any(|r| r.controller == Some(true) && r.kind == "StatefulSet" && r.uid == uid)
    })
}

/// The uid of the StatefulSet controlling this pod, if any (the key pods are grouped by).
pub fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true) && r.kind == "StatefulSet")
        .map(|r| r.uid.as_str())
}

/// The set's pods by ordinal: pods owned by the set's uid whose name is `<set-name>-<ordinal>`.
/// Pods of another StatefulSet with a similar name (`web-x-1`, or `web-1` of another `web`) never count.
pub fn pods_by_ordinal<'a>(
    set: &StatefulSet,
    pods: impl IntoIterator<Item = &'a Pod>,
) -> BTreeMap<u32, &'a Pod> {
    let (Some(name), Some(uid)) = (set.metadata.name.as_deref(), set.metadata.uid.as_deref())
    else {
        return BTreeMap::new();
    };
    pods.into_iter()
        .filter(|p| p.metadata.namespace == set.metadata.namespace && owned_by(p, uid))
        .filter_map(|p| Some((ordinal(name, p.metadata.name.as_deref()?)?, p)))
        .collect()
}

/// Why one pod is not ready-and-available at `now`, or `None` when it is: Running, condition `Ready`
/// `True`, no `deletionTimestamp`, and Ready since at least `min_ready_seconds` (Kubernetes
/// `podutil.IsPodAvailable`: Ready `lastTransitionTime + minReadySeconds <= now`).
pub fn pod_unready_cause(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> Option<String> {
    if pod.metadata.deletion_timestamp.is_some() {
        return Some("terminating".into());
    }
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown");
    if phase != "Running" {
        return Some(format!("phase {phase}"));
    }
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    let Some(ready) = ready else {
        return Some("no Ready condition".into());
    };
    if ready.status != "True" {
        return Some(ready.reason.clone().unwrap_or_else(|| "NotReady".into()));
    }
    if min_ready_seconds > 0 {
        let Some(since) = ready.last_transition_time.as_ref() else {
            return Some("Ready without lastTransitionTime, cannot judge minReadySeconds".into());
        };
        let ready_for = now.duration_since(since.0);
        if ready_for < SignedDuration::from_secs(i64::from(min_ready_seconds)) {
            return Some(format!(
                "not available yet: Ready for {}s of minReadySeconds {min_ready_seconds}",
                ready_for.as_secs().max(0)
            ));
        }
    }
    None
}

/// `spec.ordinals.start`, 0 when absent (Kubernetes StatefulSetStartOrdinal, GA in 1.31): the set's
/// pods are `<name>-<start>` … `<name>-<start + replicas − 1>`, and the partition counts from `start`
/// (the controller compares it with the pod's index `ordinal − start`).
pub fn start_ordinal(set: &StatefulSet) -> u32 {
    set.spec
        .as_ref()
        .and_then(|s| s.ordinals.as_ref())
        .and_then(|o| o.start)
        .and_then(|s| u32::try_from(s).ok())
        .unwrap_or(0)
}

/// The revision the pod was created from: its `controller-revision-hash` label, `None` when absent.
pub fn pod_revision(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}
