//! A [`Cluster`] whose writes go through only while this replica leads: reads pass, writes check
//! [`Leadership::is_leader`] right before they are sent.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::Selector;

use crate::cluster::{Cluster, ClusterError, DeleteOutcome, PatchOutcome};
use crate::events::EventNote;
use crate::leader::Leadership;

/// `inner`, writing only while `leadership` says this replica leads (DESIGN.md, "High
/// availability"): a replica that lost the Lease mid-pass stops writing at its next write, within the
/// renew deadline, whatever the pass in flight decided.
pub struct LeaderCluster<'a, C> {
    /// The cluster that reads and writes.
    pub inner: &'a C,
    /// This replica's election.
    pub leadership: &'a Leadership,
}

impl<C: Cluster> LeaderCluster<'_, C> {
    fn check(&self, action: String) -> Result<(), ClusterError> {
        if self.leadership.is_leader() {
            Ok(())
        } else {
            Err(ClusterError::Unexpected {
                action,
                message: "not the leader (the Lease is held by another replica): nothing written"
                    .into(),
            })
        }
    }
}

impl<C: Cluster> Cluster for LeaderCluster<'_, C> {
    async fn list_statefulsets(&self) -> Result<Vec<StatefulSet>, ClusterError> {
        self.inner.list_statefulsets().await
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        self.inner.list_pods().await
    }

    async fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
    ) -> Result<Vec<Pod>, ClusterError> {
        self.inner.list_set_pods(namespace, selector).await
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.inner.list_pdbs().await
    }

    async fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.inner.list_namespace_pdbs(namespace).await
    }

    fn cached(&self) -> bool {
        self.inner.cached()
    }

    async fn get_statefulset(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<StatefulSet>, ClusterError> {
        self.inner.get_statefulset(namespace, name).await
    }

    async fn list_set_pods_consistent(
        &self,
        namespace: &str,
        selector: &Selector,
    ) -> Result<Vec<Pod>, ClusterError> {
        self.inner
            .list_set_pods_consistent(namespace, selector)
            .await
    }

    async fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        self.check(format!("patch statefulset {namespace}/{name}"))?;
        self.inner.patch_statefulset(namespace, name, patch).await
    }

    async fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> Result<Option<serde_json::Value>, ClusterError> {
        self.inner.get_owner(namespace, owner).await
    }

    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> Result<DeleteOutcome, ClusterError> {
        self.check(format!("delete pod {namespace}/{name}"))?;
        self.inner
            .delete_pod(namespace, name, uid, resource_version)
            .await
    }

    async fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> Result<(), ClusterError> {
        self.check(format!("publish event {}", event.reason))?;
        self.inner.publish_event(object, event).await
    }
}
