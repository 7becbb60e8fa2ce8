//! The pods one step would replace (docs/approvals.md), which the application is asked about: each
//! pod's place (the primary's, [`Phase`]) and its answer to the handshake so far ([`Answer`]).
//!
//! Kubernetes StatefulSet controller: lowering the partition from `from` to `to` replaces, at once and
//! asking no one, every pod with ordinal in `[start + to, start + from)` not on `updateRevision`
//! (`stateful_set_control.go`; `start` is `spec.ordinals.start`). So the stepper asks those pods, and
//! only those, before it writes the step.

use std::collections::BTreeMap;
use sts_safe_rollout_rules::annotations as names;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::config::{Keys, PrimarySelector};
use crate::gates::input::GateInput;
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
                has_request: pod_annotation(pod, keys.of(names::UPDATE_REQUESTED)).is_some(),
            })
        })
        .collect()
}

/// The handshake's state on `pod` for `revision`, asked with `phase`. A pod asked to switch over
/// (it holds the primary role) is never approved while it holds it: its approval counts once the role
/// moved and it is asked `Update`; a request of another revision or phase is not this one.
///
/// An answer belongs to its question (docs/approvals.md, "One question, one answer"): an
/// `update-approved` naming `revision` counts only while the pod carries no request, or a request of
/// that same revision (either phase: a pod asked to switch over approves once the role moved). Under a
/// request of another revision the last question asked of the pod was not about `revision`, so an
/// approval of it — left from before that question, or written late for an older one — answers nothing:
/// the pod is asked again ([`Answer::NotAsked`]), and that request removes the stale approval
/// ([`super::writes::pod_writes`]).
pub fn answer(pod: &Pod, keys: &Keys, revision: &str, phase: Phase) -> Answer {
    let get = |key: &str| pod_annotation(pod, key);
    if let Some(reason) = get(keys.of(names::UPDATE_DENIED)).filter(|r| !r.trim().is_empty()) {
        return Answer::Denied(reason.trim().to_string());
    }
    let asked_of = get(keys.of(names::UPDATE_REQUESTED));
    if phase == Phase::Update
        && get(keys.of(names::UPDATE_APPROVED)) == Some(revision)
        && asked_of.is_none_or(|asked| asked == revision)
    {
        return Answer::Approved;
    }
    if get(keys.of(names::UPDATE_REQUESTED)) == Some(revision)
        && get(keys.of(names::UPDATE_REQUEST_PHASE)).unwrap_or(Phase::Update.as_str())
            == phase.as_str()
    {
        let at = get(keys.of(names::UPDATE_REQUESTED_AT)).and_then(|t| t.parse().ok());
        return Answer::Asked { at };
    }
    Answer::NotAsked
}

/// The pods the next step would replace, read for the handshake and the primary's selector.
pub fn pods_of<'a>(input: &GateInput<'a>) -> Vec<StepPod<'a>> {
    step_pods(
        input.set,
        input.pods,
        (input.partition(), input.target()),
        input.config.primary.as_ref(),
        &input.config.keys,
    )
}
