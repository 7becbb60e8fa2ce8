//! The approval webhook's request (docs/approvals.md, "Webhook"): the versioned JSON the stepper POSTs,
//! built from the set and the pods its next step would replace ([`crate::gates::approval::step::step_pods`]). Pure:
//! the client only sends it.
//!
//! A question's [`Question::key`] is a hash of what it asks (namespace, name, `metadata.generation`,
//! `updateRevision`, the partition step, the phase). Its `requestId` ([`Question::request_id`]) is a
//! hash of that key and the time the question was first asked, which the record `webhook-state` keeps
//! (`gates::approval::webhook::state`): every retry of one question carries the same id, and a new
//! question (a step, a new revision, the role moved) a new one — so is the same question asked again
//! after another (A → B → A: a revert, `kubectl rollout undo`; Update → Switchover → Update as the
//! primary role comes and goes), never a reuse of what the application concluded before the other
//! question was asked: it may key its work on the id (docs/approvals.md, "One question, one answer").
//! The generation is part of the key too (Kubernetes: every change of `.spec` increments
//! `metadata.generation`; the gates ask only once the controller observed it, so every retry of one
//! question reads the same): a revert is a new question even when the record of the one between was
//! never written.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};

use crate::gates::approval::step::{Phase, StepPod};
use crate::model::pods::start_ordinal;
use crate::model::set;

/// The request's `apiVersion`.
pub const API_VERSION: &str = "safe-rollout.dev/v1alpha1";
/// The request's `kind`.
pub const KIND: &str = "UpdateApprovalRequest";

/// What one request asks: the set's step and the pods it replaces.
#[derive(Clone, Debug, PartialEq)]
pub struct Question<'a> {
    /// The set as read.
    pub set: &'a StatefulSet,
    /// The pods the step replaces, in the controller's order ([`crate::gates::approval::step::step_pods`]).
    pub pods: &'a [StepPod<'a>],
    /// The partition now, and after the step.
    pub partition: (i32, i32),
}

impl Question<'_> {
    /// `Switchover` when a pod of the step holds the primary role, else `Update`.
    pub fn phase(&self) -> Phase {
        if self.pods.iter().any(|p| p.primary) {
            Phase::Switchover
        } else {
            Phase::Update
        }
    }

    /// The pods' names, in the step's order.
    pub fn pod_names(&self) -> Vec<String> {
        self.pods.iter().map(|p| p.name.to_string()).collect()
    }

    /// The question's key ([`request_id`] over what it asks): the same for every retry of it, and for
    /// the same question asked again later.
    pub fn key(&self) -> String {
        let meta = &self.set.metadata;
        request_id(&[
            meta.namespace.as_deref().unwrap_or(""),
            set::name(self.set),
            &meta.generation.unwrap_or(0).to_string(),
            set::update_revision(self.set),
            &self.partition.0.to_string(),
            &self.partition.1.to_string(),
            self.phase().as_str(),
        ])
    }

    /// The `requestId` of this question first asked at `first_asked` ([`request_id`] over [`Self::key`]
    /// and that time, RFC 3339).
    pub fn request_id(&self, first_asked: Timestamp) -> String {
        request_id(&[&self.key(), &first_asked.to_string()])
    }

    /// The request body, with its `requestId` (`id`) and `deadline` (first asked +
    /// `approval-timeout-seconds`).
    pub fn body(&self, id: &str, deadline: Timestamp) -> Value {
        let meta = &self.set.metadata;
        let status = self.set.status.as_ref();
        let count = |f: fn(&k8s_openapi::api::apps::v1::StatefulSetStatus) -> Option<i32>| {
            status.and_then(f).unwrap_or(0)
        };
        let pods: Vec<Value> = self
            .pods
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "uid": p.pod.metadata.uid.as_deref().unwrap_or(""),
                    "ordinal": p.ordinal,
                    "labels": p.pod.metadata.labels.clone().unwrap_or_default(),
                    "primary": p.primary,
                })
            })
            .collect();
        json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "requestId": id,
            "statefulSet": {
                "namespace": meta.namespace.as_deref().unwrap_or(""),
                "name": set::name(self.set),
                "uid": meta.uid.as_deref().unwrap_or(""),
                "serviceName": self.set.spec.as_ref().and_then(|s| s.service_name.as_deref()).unwrap_or(""),
                "startOrdinal": start_ordinal(self.set),
            },
            "phase": self.phase().as_str(),
            "pods": pods,
            "currentRevision": status.and_then(|s| s.current_revision.as_deref()).unwrap_or(""),
            "updateRevision": set::update_revision(self.set),
            "partition": {"from": self.partition.0, "to": self.partition.1},
            "replicas": set::replicas(self.set),
            "updatedReplicas": count(|s| s.updated_replicas),
            "readyReplicas": count(|s| s.ready_replicas),
            "deadline": deadline.to_string(),
        })
    }
}

/// A stable id of `parts`: FNV-1a (64 bits) over them, each followed by a NUL, as 16 hex digits. Stable
/// across builds and versions (unlike the standard library's hasher), so a restarted stepper sends the
/// same id for the same question.
pub fn request_id(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_stable_and_tells_questions_apart() {
        let id = request_id(&["demo", "web", "web-7d", "5", "4", "Update"]);
        assert_eq!(
            id,
            request_id(&["demo", "web", "web-7d", "5", "4", "Update"])
        );
        assert_eq!(id.len(), 16);
        for other in [
            ["demo", "web", "web-7d", "5", "4", "Switchover"],
            ["demo", "web", "web-8e", "5", "4", "Update"],
            ["demo", "web", "web-7d", "4", "3", "Update"],
            ["demo", "we", "bweb-7d", "5", "4", "Update"],
        ] {
            assert_ne!(id, request_id(&other), "{other:?}");
        }
        // FNV-1a's published value for the empty input, before the separator.
        assert_eq!(request_id(&[]), "cbf29ce484222325");
    }
}
