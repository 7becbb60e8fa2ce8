//! A [`Cluster`] whose writes go through only while this replica leads: reads pass, writes check
//! [`Leadership::is_leader`] right before they are sent, and fail with [`ClusterError::NotLeader`]
//! (nothing sent) once it does not.

use k8s_openapi::api::core::v1::ObjectReference;

use crate::cluster::forward::forward_cluster;
use crate::cluster::{Cluster, ClusterError, DeleteOutcome, PatchOutcome, PodPatched};
use crate::leader::Leadership;
use crate::plan::events::EventNote;

/// `inner`, writing only while `leadership` says this replica leads (docs/design.md, "High
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
            Err(ClusterError::NotLeader { action })
        }
    }
}

impl<C: Cluster> Cluster for LeaderCluster<'_, C> {
    forward_cluster!(
        inner => list_statefulsets,
        list_parsed_statefulsets,
        list_pods,
        list_set_pods,
        list_pdbs,
        list_namespace_pdbs,
        cached,
        get_statefulset,
        list_set_pods_consistent,
        get_owner,
        get_controller_revision,
        may_delete_pods,
        list_namespaces,
    );

    async fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        self.check(format!("patch statefulset {namespace}/{name}"))?;
        self.inner.patch_statefulset(namespace, name, patch).await
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

    async fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PodPatched, ClusterError> {
        self.check(format!("patch pod {namespace}/{name}"))?;
        self.inner.patch_pod(namespace, name, patch).await
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
