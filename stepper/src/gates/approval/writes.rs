//! The writes on the set's pods the approval handshake asks for ([`pod_writes`]): a request on each pod
//! of the step not asked yet, the request of a pod that denied removed, the requests no step makes any
//! more withdrawn.
//!
//! An answer belongs to its question (docs/approvals.md, "One question, one answer"): a new request
//! removes the answers left on the pod, and a withdrawal removes the approval with the request it
//! answered — each key by itself, after a `test` of the value read ([`PodWrite::tests`]). Only the
//! step's own withdrawal ([`withdraw_answered`]) keeps the approval: the pod is about to be replaced,
//! and if the step's write is lost the approval still answers the last question asked.

use std::collections::BTreeMap;
use sts_safe_rollout_rules::annotations as names;

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
    /// withdrawn, with the approval that answered it.
    Withdraw,
    /// The step the pod approved goes in this pass: its request is withdrawn, its approval stays.
    Answered,
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
    /// The answers the write removes, with their values as read (full key, value): the patch `test`s
    /// each before its `remove`, so an answer written since the read is never removed unseen.
    pub tests: Vec<(String, String)>,
    /// Why.
    pub kind: PodWriteKind,
}

/// The writes on the set's pods (`all`, by ordinal) the handshake asks for at `now`, given the step's
/// pods ([`step_pods`](super::step::step_pods)): a request on each pod not asked for this revision and
/// phase, removing the answers on it (an `update-approved` of an earlier question, an empty
/// `update-denied`); the request of a pod that denied removed (answered; the denial stays until the
/// application lifts it); and the request on any other pod withdrawn with its approval.
pub fn pod_writes(
    step: &[StepPod<'_>],
    all: &BTreeMap<u32, &Pod>,
    revision: &str,
    keys: &Keys,
    now: Timestamp,
) -> Vec<PodWrite> {
    let mut writes = Vec::new();
    for p in step {
        match &p.answer {
            Answer::NotAsked => {
                let mut changes = vec![
                    (
                        keys.of(names::UPDATE_REQUESTED).to_string(),
                        Some(revision.to_string()),
                    ),
                    (
                        keys.of(names::UPDATE_REQUESTED_AT).to_string(),
                        Some(now.to_string()),
                    ),
                    (
                        keys.of(names::UPDATE_REQUEST_PHASE).to_string(),
                        Some(p.phase.as_str().to_string()),
                    ),
                ];
                let tests = answers(
                    p.pod,
                    keys,
                    &[
                        keys.of(names::UPDATE_APPROVED),
                        keys.of(names::UPDATE_DENIED),
                    ],
                );
                changes.extend(tests.iter().map(|(k, _)| (k.clone(), None)));
                writes.push(write(p.pod, changes, tests, PodWriteKind::Request(p.phase)));
            }
            Answer::Denied(reason) if p.has_request => writes.push(write(
                p.pod,
                request_removal(p.pod, keys),
                Vec::new(),
                PodWriteKind::Denied(reason.clone()),
            )),
            _ => {}
        }
    }
    for (ordinal, pod) in all {
        if step.iter().any(|p| p.ordinal == *ordinal)
            || pod_annotation(pod, keys.of(names::UPDATE_REQUESTED)).is_none()
        {
            continue;
        }
        let tests = answers(pod, keys, &[keys.of(names::UPDATE_APPROVED)]);
        let mut changes = request_removal(pod, keys);
        changes.extend(tests.iter().map(|(k, _)| (k.clone(), None)));
        writes.push(write(pod, changes, tests, PodWriteKind::Withdraw));
    }
    writes
}

/// The removal of the request's annotations present on `pod`.
fn request_removal(pod: &Pod, keys: &Keys) -> Vec<(String, Option<String>)> {
    [
        keys.of(names::UPDATE_REQUESTED),
        keys.of(names::UPDATE_REQUESTED_AT),
        keys.of(names::UPDATE_REQUEST_PHASE),
    ]
    .into_iter()
    .filter(|k| pod_annotation(pod, k).is_some())
    .map(|k| (k.to_string(), None))
    .collect()
}

/// The answers among `which` present on `pod` (full key, value as read): what a new question or a
/// withdrawal removes. A denial with a reason is never among them (`answer` reads it as
/// [`Answer::Denied`] first: no request is written then); an empty one is no answer, and goes.
fn answers(pod: &Pod, keys: &Keys, which: &[&str]) -> Vec<(String, String)> {
    which
        .iter()
        .filter_map(|k| {
            let value = pod_annotation(pod, k)?;
            let denial = *k == keys.of(names::UPDATE_DENIED);
            (!denial || value.trim().is_empty()).then(|| (k.to_string(), value.to_string()))
        })
        .collect()
}

/// A write on `pod`: its identity and version as read, and what to change.
fn write(
    pod: &Pod,
    changes: Vec<(String, Option<String>)>,
    tests: Vec<(String, String)>,
    kind: PodWriteKind,
) -> PodWrite {
    PodWrite {
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        resource_version: pod.metadata.resource_version.clone().unwrap_or_default(),
        annotated: pod.metadata.annotations.is_some(),
        changes,
        tests,
        kind,
    }
}

/// The writes withdrawing every request on `all` (the set's pods by ordinal): a set with nothing left
/// to step asks nothing.
pub fn withdraw_all(all: &BTreeMap<u32, &Pod>, keys: &Keys, now: Timestamp) -> Vec<PodWrite> {
    pod_writes(&[], all, "", keys, now)
}

/// The writes withdrawing the requests on the step's `pods` that approved (answered, like a denial):
/// written with the step, so no request outlives the step that answered it. The approvals stay: the
/// pods are about to be replaced, and should the step's write be lost, an approval with no request
/// still answers the last question asked.
pub fn withdraw_answered(pods: &[StepPod<'_>], keys: &Keys) -> Vec<PodWrite> {
    pods.iter()
        .filter(|p| p.answer == Answer::Approved && p.has_request)
        .map(|p| {
            write(
                p.pod,
                request_removal(p.pod, keys),
                Vec::new(),
                PodWriteKind::Answered,
            )
        })
        .collect()
}
