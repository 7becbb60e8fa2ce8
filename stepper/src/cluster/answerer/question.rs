//! The question a built-in answerer answers: the approval webhook's `UpdateApprovalRequest`
//! (docs/approvals.md, "The request"; built by [`crate::gates::approval::webhook::request`]) read back
//! from its JSON, as any webhook reads it. A built-in answerer is a webhook the stepper runs itself: it
//! sees exactly what an answerer of the user's would, nothing more.

use serde::Deserialize;
use serde_json::Value;

/// The step's phase: `Update` (no pod of the step holds the primary role, as `primary-selector` says)
/// or `Switchover` (one does: move the role away first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Phase {
    /// Replace the pods.
    Update,
    /// Move the role away from the pod marked `primary`, then approve.
    Switchover,
}

/// The set the question is about.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetRef {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.serviceName`: the governing Service, through which `<pod>.<service>.<namespace>.svc`
    /// resolves (Kubernetes: StatefulSet stable network ID). Empty when the set names none.
    #[serde(default)]
    pub service_name: String,
    /// `spec.ordinals.start` (0 when absent).
    #[serde(default)]
    pub start_ordinal: u32,
}

/// One pod of the step.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct StepPod {
    /// The pod's name (`<set>-<ordinal>`).
    pub name: String,
    /// Its ordinal.
    pub ordinal: u32,
    /// True when it matches `primary-selector`.
    #[serde(default)]
    pub primary: bool,
}

/// The partition now (`from`) and after the step (`to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct Partition {
    /// Now.
    pub from: i32,
    /// After the step.
    pub to: i32,
}

/// An `UpdateApprovalRequest`, the fields a built-in answerer reads.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The question's id (16 hex digits), the same on every retry of it.
    pub request_id: String,
    /// The set.
    pub stateful_set: SetRef,
    /// `Update` or `Switchover`.
    pub phase: Phase,
    /// The pods the step replaces, highest ordinal first.
    pub pods: Vec<StepPod>,
    /// `status.updateRevision`.
    pub update_revision: String,
    /// The partition step.
    pub partition: Partition,
    /// `spec.replicas` (a count).
    pub replicas: i32,
}

impl Question {
    /// Reads a request body.
    ///
    /// # Errors
    /// A body that is not an `UpdateApprovalRequest` (a bug of the stepper's, as the gates build it):
    /// the field and the parser's words.
    pub fn read(body: &Value) -> Result<Question, String> {
        Question::deserialize(body).map_err(|e| format!("the UpdateApprovalRequest: {e}"))
    }

    /// Every pod of the set, by name, in ordinal order: `<set>-<start>` … `<set>-<start+replicas-1>`
    /// (Kubernetes: a StatefulSet's pods are named `<set>-<ordinal>`, ordinals from
    /// `spec.ordinals.start`). A member of a system is the pod of the same name.
    pub fn set_pods(&self) -> Vec<(u32, String)> {
        let start = self.stateful_set.start_ordinal;
        let count = u32::try_from(self.replicas.max(0)).unwrap_or(0);
        (start..start.saturating_add(count))
            .map(|o| (o, format!("{}-{o}", self.stateful_set.name)))
            .collect()
    }

    /// True when `name` is one of the step's pods.
    pub fn in_step(&self, name: &str) -> bool {
        self.pods.iter().any(|p| p.name == name)
    }

    /// True when the pod of `ordinal` is already replaced by the rollout (its ordinal at or above the
    /// partition now: Kubernetes StatefulSet controller, pods ≥ partition get `updateRevision`).
    pub fn updated(&self, ordinal: u32) -> bool {
        i64::from(ordinal) >= i64::from(self.partition.from)
    }

    /// The names of the set's pods already replaced by the rollout ([`Question::updated`]) and outside
    /// the step: where the role should go when the step's pod holds it, so that it need not move again.
    pub fn updated_outside_step(&self) -> Vec<String> {
        self.set_pods()
            .into_iter()
            .filter(|(o, name)| self.updated(*o) && !self.in_step(name))
            .map(|(_, name)| name)
            .collect()
    }

    /// `pg-2, pg-1`: the step's pods.
    pub fn step_names(&self) -> String {
        self.pods
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_request_is_read_as_a_webhook_reads_it() {
        let body = json!({
            "apiVersion": "safe-rollout.dev/v1alpha1", "kind": "UpdateApprovalRequest",
            "requestId": "5f0c2a9e41d7b3c8",
            "statefulSet": {"namespace": "db", "name": "pg", "uid": "u", "serviceName": "pg-headless",
                            "startOrdinal": 1},
            "phase": "Switchover",
            "pods": [{"name": "pg-3", "uid": "p", "ordinal": 3, "labels": {}, "primary": true}],
            "currentRevision": "a", "updateRevision": "b",
            "partition": {"from": 4, "to": 3}, "replicas": 3,
            "updatedReplicas": 0, "readyReplicas": 3, "deadline": "2026-11-23T01:30:00Z"
        });
        let q = Question::read(&body).expect("a request");
        assert_eq!(q.phase, Phase::Switchover);
        assert_eq!(q.stateful_set.service_name, "pg-headless");
        let names: Vec<String> = q.set_pods().into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["pg-1", "pg-2", "pg-3"]);
        assert!(q.in_step("pg-3") && !q.in_step("pg-2"));
        assert!(q.updated(4) && !q.updated(3));
        let e = Question::read(&json!({"requestId": 1})).expect_err("not a request");
        assert!(e.starts_with("the UpdateApprovalRequest: "), "{e}");
    }
}
