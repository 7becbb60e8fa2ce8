//! What the simulated API server returns on a GET or LIST: the set, its pods, its PDB, typed; every
//! object of a kind, as JSON ([`World::stored`]: what a typed GET or LIST of any kind reads); the
//! set's controller owner.

use std::collections::BTreeMap;

use crate::model::set as sts;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde_json::{Value, json};

use super::kubelet::SimPod;
use super::world::{World, timestamp};
use crate::model::pods::REVISION_LABEL;

impl World {
    /// The stored StatefulSet, typed (what a GET or LIST returns).
    ///
    /// # Errors
    /// The stored object does not parse as a StatefulSet (a bug in the simulation).
    pub fn typed_set(&self) -> Result<StatefulSet, String> {
        serde_json::from_value(self.set.clone()).map_err(|e| format!("stored StatefulSet: {e}"))
    }

    /// Whether the stored set is fully Ready (the shared predicate `is_fully_ready`).
    pub fn fully_ready(&self) -> bool {
        self.typed_set().is_ok_and(|s| sts::is_fully_ready(&s))
    }

    /// The pods as the API server lists them: name `<set>-<ordinal>`, `uid`, `resourceVersion`,
    /// labels `app` and `controller-revision-hash`, the set as controller owner, `deletionTimestamp`
    /// while terminating, phase `Running`/`Pending` and the `Ready` condition with its
    /// `lastTransitionTime` and reason (`NodeNotReady`, `ContainersNotReady`).
    pub fn typed_pods(&self) -> Vec<Pod> {
        let name = self.name();
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            name: name.clone(),
            uid: self.set["metadata"]["uid"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        self.pods
            .values()
            .map(|p| self.typed_pod(p, &owner))
            .collect()
    }

    fn typed_pod(&self, p: &SimPod, owner: &OwnerReference) -> Pod {
        let name = self.name();
        let ready = p.running_and_ready();
        let reason = if ready {
            None
        } else if p.node_is_down(self.t) {
            Some("NodeNotReady".to_string())
        } else {
            Some("ContainersNotReady".to_string())
        };
        let since = p.ready_since.unwrap_or(p.created);
        Pod {
            metadata: ObjectMeta {
                name: Some(format!("{name}-{}", p.ordinal)),
                namespace: Some(self.namespace()),
                uid: Some(p.uid.clone()),
                resource_version: Some(p.resource_version.to_string()),
                labels: Some({
                    let mut labels = BTreeMap::from([
                        ("app".to_string(), name.clone()),
                        (REVISION_LABEL.to_string(), p.revision.clone()),
                    ]);
                    if let Some(role) = self.application.as_ref().and_then(|a| a.role(p.ordinal)) {
                        labels.insert("role".to_string(), role.to_string());
                    }
                    labels
                }),
                annotations: (!p.annotations.is_empty()).then(|| p.annotations.clone()),
                owner_references: Some(vec![owner.clone()]),
                deletion_timestamp: p.deleted_at.map(|d| Time(timestamp(d))),
                ..ObjectMeta::default()
            },
            spec: None,
            status: Some(PodStatus {
                phase: Some(
                    if p.running(self.t) {
                        "Running"
                    } else {
                        "Pending"
                    }
                    .into(),
                ),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    reason,
                    last_transition_time: Some(Time(timestamp(since))),
                    ..PodCondition::default()
                }]),
                ..PodStatus::default()
            }),
        }
    }

    /// The PDB's status (Kubernetes disruption controller, `maxUnavailable`): expected = `spec.replicas`,
    /// desiredHealthy = expected − maxUnavailable, currentHealthy = pods Ready and not terminating,
    /// disruptionsAllowed = max(0, currentHealthy − desiredHealthy). `None` without a PDB.
    pub fn pdb_status(&self) -> Option<PodDisruptionBudgetStatus> {
        let max_unavailable = self.pdb_max_unavailable?;
        let expected = self.replicas();
        let desired = (expected - max_unavailable).max(0);
        let healthy = i32::try_from(
            self.pods
                .values()
                .filter(|p| p.running_and_ready() && !p.terminating())
                .count(),
        )
        .unwrap_or(i32::MAX);
        Some(PodDisruptionBudgetStatus {
            current_healthy: Some(healthy),
            desired_healthy: Some(desired),
            disruptions_allowed: Some((healthy - desired).max(0)),
            expected_pods: Some(expected),
            observed_generation: Some(1),
            ..PodDisruptionBudgetStatus::default()
        })
    }

    /// The PDB as the API server lists it (`<set>-pdb`, selecting `app=<set>`), if any.
    pub fn typed_pdbs(&self) -> Vec<PodDisruptionBudget> {
        let Some(status) = self.pdb_status() else {
            return Vec::new();
        };
        let name = self.name();
        let pdb = json!({
            "metadata": {"name": format!("{name}-pdb"), "namespace": self.namespace()},
            "spec": {"maxUnavailable": self.pdb_max_unavailable, "selector": {"matchLabels": {"app": name}}},
        });
        match serde_json::from_value::<PodDisruptionBudget>(pdb) {
            Ok(mut pdb) => {
                pdb.status = Some(status);
                vec![pdb]
            }
            Err(_) => Vec::new(),
        }
    }

    /// Every object of kind `api_version`/`kind` the API server stores, as a GET or LIST returns it
    /// (JSON): the StatefulSet, its pods, its PDB, its ControllerRevisions. Of any other kind there is
    /// none (the simulation stores no Namespace, Lease, …): a GET of one is a 404, a LIST empty. A
    /// kind the stepper starts reading that the simulation should hold is one arm here.
    pub fn stored(&self, api_version: &str, kind: &str) -> Vec<Value> {
        fn json<T: serde::Serialize>(objects: Vec<T>) -> Vec<Value> {
            objects
                .iter()
                .filter_map(|o| serde_json::to_value(o).ok())
                .collect()
        }
        match (api_version, kind) {
            ("apps/v1", "StatefulSet") => vec![self.set.clone()],
            ("v1", "Pod") => json(self.typed_pods()),
            ("policy/v1", "PodDisruptionBudget") => json(self.typed_pdbs()),
            ("apps/v1", "ControllerRevision") => self
                .revisions
                .iter()
                .map(|r| self.revision_object(r))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The owner `owner` names in `namespace` as MOCO would report it: generation 1, conditions
    /// `Healthy` and `Ready` `True` unless the application-unhealthy signal is raised (`False`, reason
    /// `Unhealthy`). Only the set's own ownerReference exists; `None` for any other (HTTP 404).
    pub fn owner(&self, namespace: &str, owner: &OwnerReference) -> Option<Value> {
        let exists = self.set["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|refs| refs.iter().any(|r| r["uid"] == owner.uid.as_str()));
        if !exists || self.namespace() != namespace {
            return None;
        }
        let (status, reason) = if self.app_unhealthy {
            ("False", "Unhealthy")
        } else {
            ("True", "Healthy")
        };
        let condition = |type_: &str| {
            json!({"type": type_, "status": status, "reason": reason, "observedGeneration": 1,
                "lastTransitionTime": "2026-11-23T00:00:00Z", "message": ""})
        };
        Some(json!({
            "apiVersion": owner.api_version,
            "kind": owner.kind,
            "metadata": {"name": owner.name, "namespace": namespace, "uid": owner.uid, "generation": 1},
            "status": {"conditions": [condition("Healthy"), condition("Ready")]},
        }))
    }
}
