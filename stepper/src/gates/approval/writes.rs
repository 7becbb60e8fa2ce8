//! The writes on the set's pods the approval handshake asks for ([`pod_writes`]): a request on each pod
//! of the step not asked yet, the request of a pod that denied removed, the requests no step makes any
//! more withdrawn.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use super::step::{Answer, Phase, StepPod, pod_annotation};
use crate::config::Keys;

/// Why the handshake writes on a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodWriteKind {
    /// Ask the application (`update-requested`, `update-requested-at`, `update-request-phase`).
    Request(Phase),
    /// The pod denied (`update-denied`, the reason): its request is answered, so it is removed; the
    /// denial stays until the application removes it, and then the pod is asked again.
    Denied(String),
    /// The pod carries a request no step of this revision makes (a new revision, another step):
    /// withdrawn.
    Withdraw,
}

/// A write on one pod: its annotations set (`Some`) or removed (`None`), by full key, as a JSON Patch
/// of one op per key pinned to the pod's uid and `resourceVersion` (`plan::patch::pod_patch`: a pod
/// recreated or changed since the read is not written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodWrite {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` as read (pinned by the patch).
    pub uid: String,
    /// `metadata.resourceVersion` as read (pinned by the patch).
    pub resource_version: String,
    /// `metadata.annotations` was present on the pod as read (else the patch adds the map, which the
    /// pinned `resourceVersion` says is still absent).
    pub annotated: bool,
    /// The annotation changes.
    pub changes: Vec<(String, Option<String>)>,
    /// Why.
    pub kind: PodWriteKind,
}

/// The writes on the set's pods (`all`, by ordinal) the handshake asks for at `now`, given the step's
/// pods ([`step_pods`]): a request on each pod not asked for this revision and phase; the request of a
/// pod that denied removed (answered); and the request on any other pod withdrawn.
pub fn pod_writes(
    step: &[StepPod<'_>],
    all: &BTreeMap<u32, &Pod>,
    revision: &str,
    keys: &Keys,
    now: Timestamp,
) -> Vec<PodWrite> {
    let request_keys = [
        &keys.update_requested,
        &keys.update_requested_at,
        &keys.update_request_phase,
    ];
    // The request's annotations present on `pod`, to remove.
    let withdraw = |pod: &Pod| {
        request_keys
            .iter()
            .filter(|k| pod_annotation(pod, k).is_some())
            .map(|k| ((*k).clone(), None))
            .collect()
    };
    let write = |pod: &Pod, changes, kind| PodWrite {
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        resource_version: pod.metadata.resource_version.clone().unwrap_or_default(),
        annotated: pod.metadata.annotations.is_some(),
        changes,
        kind,
    };
    let mut writes = Vec::new();
    for p in step {
        match &p.answer {
            Answer::NotAsked => writes.push(write(
                p.pod,
                vec![
                    (keys.update_requested.clone(), Some(revision.to_string())),
                    (keys.update_requested_at.clone(), Some(now.to_string())),
                    (
                        keys.update_request_phase.clone(),
                        Some(p.phase.as_str().to_string()),
                    ),
                ],
                PodWriteKind::Request(p.phase),
            )),
            Answer::Denied(reason) if p.has_request => writes.push(write(
                p.pod,
                withdraw(p.pod),
                PodWriteKind::Denied(reason.clone()),
            )),
            _ => {}
        }
    }
    for (ordinal, pod) in all {
        if step.iter().any(|p| p.ordinal == *ordinal)
            || pod_annotation(pod, &keys.update_requested).is_none()
        {
            continue;
        }
        writes.push(write(pod, withdraw(pod), PodWriteKind::Withdraw));
    }
    writes
}

/// The writes withdrawing every request on `all` (the set's pods by ordinal): a set with nothing left
/// to step asks nothing.
pub fn withdraw_all(all: &BTreeMap<u32, &Pod>, keys: &Keys, now: Timestamp) -> Vec<PodWrite> {
    pod_writes(&[], all, "", keys, now)
}

/// The writes withdrawing the requests on the step's `pods` that approved (answered, like a denial):
/// written with the step, so no request outlives the step that answered it.
pub fn withdraw_answered(pods: &[StepPod<'_>], keys: &Keys) -> Vec<PodWrite> {
    let step: Vec<StepPod<'_>> = pods
        .iter()
        .filter(|p| p.answer == Answer::Approved && p.has_request)
        .cloned()
        .collect();
    let all: BTreeMap<u32, &Pod> = step.iter().map(|p| (p.ordinal, p.pod)).collect();
    pod_writes(&[], &all, "", keys, Timestamp::UNIX_EPOCH)
}
