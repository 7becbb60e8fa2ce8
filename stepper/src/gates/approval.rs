//! The application's say before a step (docs/approvals.md), decided over the pods one step would
//! replace: the approval handshake's answers on them and the primary's place among them.
//!
//! Kubernetes StatefulSet controller: lowering the partition from `from` to `to` replaces, at once and
//! asking no one, every pod with ordinal in `[start + to, start + from)` not on `updateRevision`
//! (`stateful_set_control.go`; `start` is `spec.ordinals.start`). So the stepper asks those pods, and
//! only those, before it writes the step.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::config::{Keys, PrimarySelector};
use crate::model::pods::{pod_revision, start_ordinal};
use crate::model::set;

/// What the request on a pod asks of the application (`<prefix>/update-request-phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Approve replacing this pod with the update revision.
    Update,
    /// This pod holds the primary role (`<prefix>/primary-selector`): move the role to another pod,
    /// then approve.
    Switchover,
}

impl Phase {
    /// The annotation value: `Update` or `Switchover`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Update => "Update",
            Phase::Switchover => "Switchover",
        }
    }
}

/// Where one pod of the step stands in the handshake for revision `updateRevision`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `update-approved` names the revision.
    Approved,
    /// `update-denied` is set (non-empty): the reason, as written. A denial stands whatever revision
    /// it answered, until the application removes it.
    Denied(String),
    /// Asked for this revision and phase (`update-requested`), not answered yet; `at`: when asked
    /// (`update-requested-at`; `None` when unreadable, which counts as asked now).
    Asked {
        /// When the stepper asked.
        at: Option<Timestamp>,
    },
    /// Not asked for this revision and phase: a request is due.
    NotAsked,
}

/// One pod the next step would replace.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPod<'a> {
    /// The pod as read.
    pub pod: &'a Pod,
    /// `metadata.name`.
    pub name: &'a str,
    /// Its ordinal.
    pub ordinal: u32,
    /// The pod matches `<prefix>/primary-selector`.
    pub primary: bool,
    /// What the request on it asks.
    pub phase: Phase,
    /// Its answer so far.
    pub answer: Answer,
    /// It carries a request of the stepper (`update-requested`, any revision).
    pub has_request: bool,
}

/// The annotation `key` of `pod`, when present.
pub fn pod_annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// The pods a step of `set` from partition `from` to `to` replaces (the module's rule), in descending
/// ordinal order (the controller's): those that exist; a missing pod has no one to ask.
pub fn step_pods<'a>(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &'a Pod>,
    (from, to): (i32, i32),
    primary: Option<&PrimarySelector>,
    keys: &Keys,
) -> Vec<StepPod<'a>> {
    let replicas = u32::try_from(set::replicas(set)).unwrap_or(0);
    let start = start_ordinal(set);
    let from = u32::try_from(from).unwrap_or(0).min(replicas);
    let to = u32::try_from(to).unwrap_or(0).min(from);
    let revision = set::update_revision(set);
    (start.saturating_add(to)..start.saturating_add(from))
        .rev()
        .filter_map(|ordinal| {
            let pod = *pods.get(&ordinal)?;
            if pod_revision(pod) == Some(revision) {
                return None; // already updated: the step does not replace it
            }
            let is_primary = primary.is_some_and(|p| {
                pod.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|labels| p.matches(labels))
            });
            let phase = if is_primary {
                Phase::Switchover
            } else {
                Phase::Update
            };
            Some(StepPod {
                pod,
                name: pod.metadata.name.as_deref().unwrap_or(""),
                ordinal,
                primary: is_primary,
                phase,
                answer: answer(pod, keys, revision, phase),
                has_request: pod_annotation(pod, &keys.update_requested).is_some(),
            })
        })
        .collect()
}

/// The handshake's state on `pod` for `revision`, asked with `phase`. A pod asked to switch over
/// (it holds the primary role) is never approved while it holds it: its approval counts once the role
/// moved and it is asked `Update`; a request of another revision or phase is not this one.
pub fn answer(pod: &Pod, keys: &Keys, revision: &str, phase: Phase) -> Answer {
    let get = |key: &str| pod_annotation(pod, key);
    if let Some(reason) = get(&keys.update_denied).filter(|r| !r.trim().is_empty()) {
        return Answer::Denied(reason.trim().to_string());
    }
    if phase == Phase::Update && get(&keys.update_approved) == Some(revision) {
        return Answer::Approved;
    }
    if get(&keys.update_requested) == Some(revision)
        && get(&keys.update_request_phase).unwrap_or(Phase::Update.as_str()) == phase.as_str()
    {
        let at = get(&keys.update_requested_at).and_then(|t| t.parse().ok());
        return Answer::Asked { at };
    }
    Answer::NotAsked
}

/// What the handshake concludes for one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Every pod of the step approved the revision.
    Approved,
    /// A pod denied: its name and reason.
    Denied {
        /// The pod.
        pod: String,
        /// `update-denied`, as written.
        reason: String,
    },
    /// Waiting for answers from `pods` (names), asked at `since` (the earliest request; `None`: being
    /// asked in this pass), for `waited` seconds.
    Waiting {
        /// The pods not answered yet, in the step's order.
        pods: Vec<String>,
        /// Seconds since the earliest request (0 when asked in this pass).
        waited: i64,
        /// The earliest request of the pods waited for (`None`: asked in this pass).
        since: Option<Timestamp>,
        /// Past `approval-timeout-seconds`.
        timed_out: bool,
    },
}

/// The handshake over `pods` (from [`step_pods`]) at `now`, with `timeout` seconds
/// (`approval-timeout-seconds`). The first denial decides; then any pod not approved (a pod holding
/// the primary role is never approved while it holds it: its approval waits for the switchover).
pub fn handshake(pods: &[StepPod<'_>], now: Timestamp, timeout: i64) -> Handshake {
    if let Some((pod, reason)) = pods.iter().find_map(|p| match &p.answer {
        Answer::Denied(r) => Some((p.name, r)),
        _ => None,
    }) {
        return Handshake::Denied {
            pod: pod.to_string(),
            reason: reason.clone(),
        };
    }
    let waiting: Vec<&StepPod<'_>> = pods
        .iter()
        .filter(|p| p.answer != Answer::Approved || p.primary)
        .collect();
    if waiting.is_empty() {
        return Handshake::Approved;
    }
    let since = waiting
        .iter()
        .filter_map(|p| match p.answer {
            Answer::Asked { at } => at,
            _ => None,
        })
        .min();
    let waited = since.map_or(0, |t| now.duration_since(t).as_secs().max(0));
    Handshake::Waiting {
        pods: waiting.iter().map(|p| p.name.to_string()).collect(),
        waited,
        since,
        timed_out: waited > timeout,
    }
}

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
