//! A cluster in front of another ([`Wrapper`]): it states only what it changes; every other
//! [`Cluster`] call goes to the cluster it wraps, and every write first asks
//! [`Wrapper::before_write`].
//!
//! Two wrappers exist: `watch`'s [`crate::cluster::caches::CachedCluster`] (the snapshot reads from
//! its reflector stores) and [`crate::leader::cluster::LeaderCluster`] (writes only while leading,
//! through `before_write` alone). A wrapper implements `Wrapper`, never `Cluster`: the `impl` below
//! makes it a `Cluster`. A read added to `Cluster` as a provided method over the forwarded ones (a
//! typed GET or LIST, an access question) needs no line here nor in any wrapper.

use std::future::Future;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::Selector;

use crate::cluster::object::Object;
use crate::cluster::{Cluster, ClusterError, DeleteOutcome, ParsedSet, PatchOutcome, PodPatched};
use crate::config::Keys;
use crate::plan::events::EventNote;

/// A [`Cluster`] in front of [`Wrapper::inner`]. Each method defaults to the inner cluster's (the
/// writes after [`Wrapper::before_write`]); a wrapper overrides only the ones it changes, with the
/// meaning [`Cluster`] documents for each.
pub trait Wrapper: Sync {
    /// The cluster this one is in front of.
    type Inner: Cluster;

    /// The cluster this one is in front of: it answers every call the wrapper does not change.
    fn inner(&self) -> &Self::Inner;

    /// Asked before every write is sent (the default writes below; a wrapper that overrides a write
    /// asks it itself): `Err` refuses the write, nothing is sent. `action` names the write
    /// (`patch statefulset demo/web`), built only when needed. The default lets every write through;
    /// [`crate::leader::cluster::LeaderCluster`] refuses them once this replica does not lead.
    fn before_write(&self, action: impl FnOnce() -> String) -> Result<(), ClusterError> {
        let _ = action;
        Ok(())
    }

    /// [`Cluster::list_statefulsets`].
    fn list_statefulsets(
        &self,
    ) -> impl Future<Output = Result<Vec<Arc<StatefulSet>>, ClusterError>> + Send {
        self.inner().list_statefulsets()
    }

    /// [`Cluster::list_parsed_statefulsets`].
    fn list_parsed_statefulsets(
        &self,
        keys: &Arc<Keys>,
    ) -> impl Future<Output = Result<Vec<ParsedSet>, ClusterError>> + Send {
        self.inner().list_parsed_statefulsets(keys)
    }

    /// [`Cluster::list_pods`].
    fn list_pods(&self) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        self.inner().list_pods()
    }

    /// [`Cluster::list_set_pods`].
    fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        self.inner().list_set_pods(namespace, selector, owners)
    }

    /// [`Cluster::cached`].
    fn cached(&self) -> bool {
        self.inner().cached()
    }

    /// [`Cluster::get_statefulset`].
    fn get_statefulset(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<StatefulSet>, ClusterError>> + Send {
        self.inner().get_statefulset(namespace, name)
    }

    /// [`Cluster::list_set_pods_consistent`].
    fn list_set_pods_consistent(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        self.inner()
            .list_set_pods_consistent(namespace, selector, owners)
    }

    /// [`Cluster::list_pdbs`].
    fn list_pdbs(
        &self,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        self.inner().list_pdbs()
    }

    /// [`Cluster::list_namespace_pdbs`].
    fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        self.inner().list_namespace_pdbs(namespace)
    }

    /// [`Cluster::get_owner`].
    fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, ClusterError>> + Send {
        self.inner().get_owner(namespace, owner)
    }

    /// [`Cluster::get`].
    fn get<K: Object>(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<K>, ClusterError>> + Send {
        self.inner().get(namespace, name)
    }

    /// [`Cluster::list`].
    fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> impl Future<Output = Result<Vec<K>, ClusterError>> + Send {
        self.inner().list(namespace, labels)
    }

    /// [`Cluster::can_i`].
    fn can_i<K: Object>(
        &self,
        verb: &str,
        namespace: &str,
    ) -> impl Future<Output = Result<bool, ClusterError>> + Send {
        self.inner().can_i::<K>(verb, namespace)
    }

    /// [`Cluster::patch_statefulset`], after [`Wrapper::before_write`].
    fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PatchOutcome, ClusterError>> + Send {
        async move {
            self.before_write(|| format!("patch statefulset {namespace}/{name}"))?;
            self.inner().patch_statefulset(namespace, name, patch).await
        }
    }

    /// [`Cluster::delete_pod`], after [`Wrapper::before_write`].
    fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> impl Future<Output = Result<DeleteOutcome, ClusterError>> + Send {
        async move {
            self.before_write(|| format!("delete pod {namespace}/{name}"))?;
            self.inner()
                .delete_pod(namespace, name, uid, resource_version)
                .await
        }
    }

    /// [`Cluster::patch_pod`], after [`Wrapper::before_write`].
    fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PodPatched, ClusterError>> + Send {
        async move {
            self.before_write(|| format!("patch pod {namespace}/{name}"))?;
            self.inner().patch_pod(namespace, name, patch).await
        }
    }

    /// [`Cluster::publish_event`], after [`Wrapper::before_write`].
    fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send {
        async move {
            self.before_write(|| format!("publish event {}", event.reason))?;
            self.inner().publish_event(object, event).await
        }
    }
}

/// Every wrapper is a [`Cluster`]: each call is the wrapper's method of the same name.
impl<W: Wrapper> Cluster for W {
    fn list_statefulsets(
        &self,
    ) -> impl Future<Output = Result<Vec<Arc<StatefulSet>>, ClusterError>> + Send {
        Wrapper::list_statefulsets(self)
    }

    fn list_parsed_statefulsets(
        &self,
        keys: &Arc<Keys>,
    ) -> impl Future<Output = Result<Vec<ParsedSet>, ClusterError>> + Send {
        Wrapper::list_parsed_statefulsets(self, keys)
    }

    fn list_pods(&self) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        Wrapper::list_pods(self)
    }

    fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        Wrapper::list_set_pods(self, namespace, selector, owners)
    }

    fn cached(&self) -> bool {
        Wrapper::cached(self)
    }

    fn get_statefulset(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<StatefulSet>, ClusterError>> + Send {
        Wrapper::get_statefulset(self, namespace, name)
    }

    fn list_set_pods_consistent(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        Wrapper::list_set_pods_consistent(self, namespace, selector, owners)
    }

    fn list_pdbs(
        &self,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        Wrapper::list_pdbs(self)
    }

    fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        Wrapper::list_namespace_pdbs(self, namespace)
    }

    fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, ClusterError>> + Send {
        Wrapper::get_owner(self, namespace, owner)
    }

    fn get<K: Object>(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<K>, ClusterError>> + Send {
        Wrapper::get(self, namespace, name)
    }

    fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> impl Future<Output = Result<Vec<K>, ClusterError>> + Send {
        Wrapper::list(self, namespace, labels)
    }

    fn can_i<K: Object>(
        &self,
        verb: &str,
        namespace: &str,
    ) -> impl Future<Output = Result<bool, ClusterError>> + Send {
        Wrapper::can_i::<K>(self, verb, namespace)
    }

    fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PatchOutcome, ClusterError>> + Send {
        Wrapper::patch_statefulset(self, namespace, name, patch)
    }

    fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> impl Future<Output = Result<DeleteOutcome, ClusterError>> + Send {
        Wrapper::delete_pod(self, namespace, name, uid, resource_version)
    }

    fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PodPatched, ClusterError>> + Send {
        Wrapper::patch_pod(self, namespace, name, patch)
    }

    fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send {
        Wrapper::publish_event(self, object, event)
    }
}
