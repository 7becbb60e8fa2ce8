//! `watch`'s caches: reflector stores of StatefulSets, StatefulSet pods and PDBs, and a [`Cluster`]
//! that decides from them and confirms each step on a fresh read.
//!
//! One kube-rs watcher per kind and namespace in scope (`watcher::Config` with the scope's label
//! selector for StatefulSets, `statefulset.kubernetes.io/pod-name` for pods), each feeding its own
//! reflector store (`WatchStreamExt::reflect`; a store is never fed by two watchers). A watch that
//! errors or expires re-lists with `watcher::default_backoff()`, logs a warning and counts
//! `sts_safe_rollout_watch_restarts_total{resource}`. Steady state: no LIST per pass.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, stream};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::{Selector, SelectorExt};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tracing::warn;

use crate::cluster::forward::forward_cluster;
use crate::cluster::kube::{KubeCluster, Scope};
use crate::cluster::{Cluster, ClusterError};
use crate::model::set::POD_NAME_LABEL;

/// The watch events of one kind, after they reached the store (for `watch`'s early passes).
pub type Reflected<K> = Pin<Box<dyn Stream<Item = WatchEvent<K>> + Send>>;

/// The three kinds' streams; the stores fill only while these are polled.
pub struct CacheStreams {
    /// StatefulSets.
    pub sets: Reflected<StatefulSet>,
    /// StatefulSet pods.
    pub pods: Reflected<Pod>,
    /// PodDisruptionBudgets.
    pub pdbs: Reflected<PodDisruptionBudget>,
}

/// Called with the resource (`statefulsets`, `pods`, `poddisruptionbudgets`) each time its watch fails
/// and re-lists (`watch` counts it in `sts_safe_rollout_watch_restarts_total`).
pub type RestartHook = Arc<dyn Fn(&'static str) + Send + Sync>;

/// The reflector stores, one per kind and namespace in scope (one per kind without `--namespace`).
pub struct Caches {
    sets: Vec<Store<StatefulSet>>,
    pods: Vec<Store<Pod>>,
    pdbs: Vec<Store<PodDisruptionBudget>>,
}

impl Caches {
    /// Starts the watches of `scope` (they run while the returned streams are polled); `on_restart`
    /// hears of each watch that failed and re-lists.
    pub fn start(
        client: &Client,
        scope: &Scope,
        on_restart: &RestartHook,
    ) -> (Caches, CacheStreams) {
        let namespaces: Vec<Option<&str>> = if scope.namespaces.is_empty() {
            vec![None]
        } else {
            scope.namespaces.iter().map(|n| Some(n.as_str())).collect()
        };
        let mut sets_config = watcher::Config::default();
        if let Some(l) = &scope.label_selector {
            sets_config = sets_config.labels(l);
        }
        let pods_config = watcher::Config::default().labels(POD_NAME_LABEL);
        let (sets, s) = kind(
            client,
            &namespaces,
            &sets_config,
            "statefulsets",
            on_restart,
        );
        let (pods, p) = kind(client, &namespaces, &pods_config, "pods", on_restart);
        let (pdbs, d) = kind(
            client,
            &namespaces,
            &watcher::Config::default(),
            "poddisruptionbudgets",
            on_restart,
        );
        (
            Caches { sets, pods, pdbs },
            CacheStreams {
                sets: s,
                pods: p,
                pdbs: d,
            },
        )
    }

    /// Caches over stores filled elsewhere (each by its own reflector; tests fill them with
    /// `reflector::store::Writer::apply_watcher_event`).
    pub fn from_stores(
        sets: Vec<Store<StatefulSet>>,
        pods: Vec<Store<Pod>>,
        pdbs: Vec<Store<PodDisruptionBudget>>,
    ) -> Self {
        Caches { sets, pods, pdbs }
    }

    /// Waits until every store has had its first complete list.
    pub async fn ready(&self) {
        for s in &self.sets {
            let _ = s.wait_until_ready().await;
        }
        for s in &self.pods {
            let _ = s.wait_until_ready().await;
        }
        for s in &self.pdbs {
            let _ = s.wait_until_ready().await;
        }
    }
}

/// The stores and the merged stream of one kind over `namespaces`.
fn kind<K>(
    client: &Client,
    namespaces: &[Option<&str>],
    config: &watcher::Config,
    resource: &'static str,
    on_restart: &RestartHook,
) -> (Vec<Store<K>>, Reflected<K>)
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    let mut stores = Vec::new();
    let mut streams = Vec::new();
    for ns in namespaces {
        let api: Api<K> = match ns {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let (store, writer) = reflector::store();
        let on_restart = on_restart.clone();
        streams.push(Box::pin(
            watcher::watcher(api, config.clone())
                .default_backoff()
                .reflect(writer)
                .filter_map(move |ev| {
                    std::future::ready(match ev {
                        Ok(e) => Some(e),
                        Err(e) => {
                            warn!(resource, error = %e, "watch failed: re-listing with backoff");
                            on_restart(resource);
                            None
                        }
                    })
                }),
        ) as Reflected<K>);
        stores.push(store);
    }
    (stores, Box::pin(stream::select_all(streams)))
}

/// Every object of `stores` matching `keep`, cloned.
fn state<K, F>(stores: &[Store<K>], keep: F) -> Vec<K>
where
    K: kube::runtime::reflector::Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
    F: Fn(&K) -> bool,
{
    stores
        .iter()
        .flat_map(|s| s.state())
        .filter(|o| keep(o))
        .map(|o| (*o).clone())
        .collect()
}

/// A [`Cluster`] that reads `caches` and writes through `api`. Its reads are as fresh as the
/// watches ([`Cluster::cached`]): a step is written only after [`Cluster::get_statefulset`] and
/// [`Cluster::list_set_pods_consistent`] — consistent reads through `api` — confirm it.
pub struct CachedCluster<'a> {
    /// The stores.
    pub caches: &'a Caches,
    /// The API server, for writes, the owner reads and the fresh reads before a step.
    pub api: &'a KubeCluster,
}

impl Cluster for CachedCluster<'_> {
    /// From the store, sorted by namespace and name (the store has no order).
    async fn list_statefulsets(&self) -> Result<Vec<StatefulSet>, ClusterError> {
        let mut sets = state(&self.caches.sets, |_| true);
        sets.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        Ok(sets)
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        Ok(state(&self.caches.pods, |_| true))
    }

    async fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
    ) -> Result<Vec<Pod>, ClusterError> {
        Ok(state(&self.caches.pods, |p| {
            p.metadata.namespace.as_deref() == Some(namespace)
                && selector.matches(p.metadata.labels.as_ref().unwrap_or(&Default::default()))
        }))
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(state(&self.caches.pdbs, |_| true))
    }

    async fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(state(&self.caches.pdbs, |p| {
            p.metadata.namespace.as_deref() == Some(namespace)
        }))
    }

    fn cached(&self) -> bool {
        true
    }

    // Writes, the owner read and the fresh reads before a step go to the API server; the uid +
    // resourceVersion preconditions of `delete_pod` refuse a pod the cache saw stale.
    forward_cluster!(
        api => get_statefulset,
        list_set_pods_consistent,
        patch_statefulset,
        get_owner,
        delete_pod,
        publish_event,
    );
}
