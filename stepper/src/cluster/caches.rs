//! `watch`'s caches: reflector stores of StatefulSets, StatefulSet pods and PDBs, and a [`Cluster`]
//! that decides from them and confirms each step on a fresh read.
//!
//! One kube-rs watcher per kind and namespace in scope (`watcher::Config` with the scope's label
//! selector for StatefulSets, `statefulset.kubernetes.io/pod-name` for pods), each feeding its own
//! reflector store (updated as `WatchStreamExt::reflect` does; a store is never fed by two watchers). The stores keep
//! only what a pass reads ([`crate::cluster::cached`]: StatefulSets and pods decoded as `CachedSet` and
//! `CachedPod`, their annotations that are not the stepper's and PDBs' metadata dropped with
//! `WatchStreamExt::modify` before the store keeps them), and the pod stores are indexed by controller
//! ([`crate::cluster::pod_index`]), so a pass reads its candidates' pods without scanning the rest; a
//! pod event that changes nothing kept is stored but neither indexed nor yielded to `watch`'s early
//! passes ([`crate::cluster::pod_news`]). A watch that errors or expires re-lists with `watcher::default_backoff()`, logs a warning and counts
//! `sts_safe_rollout_watch_restarts_total{resource}`. Steady state: no LIST per pass.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, stream};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::{Selector, SelectorExt};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tracing::warn;

use crate::cluster::cached::{CachedPod, CachedSet, trim_pdb};
use crate::cluster::kube::{KubeCluster, Scope};
use crate::cluster::pod_index::PodIndex;
use crate::cluster::pod_news;
use crate::cluster::set_list::SetList;
use crate::cluster::wrapper::Wrapper;
use crate::cluster::{Cluster, ClusterError, ParsedSet};
use crate::config::{Keys, SetConfig};
use crate::model::set::POD_NAME_LABEL;

/// The watch events of one kind, after they reached the store (for `watch`'s early passes), the objects
/// as the store keeps them.
pub type Reflected<K> = Pin<Box<dyn Stream<Item = WatchEvent<K>> + Send>>;

/// The three kinds' streams; the stores fill only while these are polled.
pub struct CacheStreams {
    /// StatefulSets.
    pub sets: Reflected<CachedSet>,
    /// StatefulSet pods.
    pub pods: Reflected<CachedPod>,
    /// PodDisruptionBudgets.
    pub pdbs: Reflected<PodDisruptionBudget>,
}

/// Called with the resource (`statefulsets`, `pods`, `poddisruptionbudgets`) each time its watch fails
/// and re-lists (`watch` counts it in `sts_safe_rollout_watch_restarts_total`).
pub type RestartHook = Arc<dyn Fn(&'static str) + Send + Sync>;

/// The reflector stores, one per kind and namespace in scope (one per kind without `--namespace`),
/// each pod store with its index by controller.
pub struct Caches {
    sets: Vec<Store<CachedSet>>,
    pods: Vec<(Store<CachedPod>, PodIndex)>,
    pdbs: Vec<Store<PodDisruptionBudget>>,
    /// The keys the set stores parse under ([`CachedSet::keep`]).
    keys: Arc<Keys>,
    /// The sets as a pass lists them ([`SetList`]), rebuilt only after a set store changed.
    listed: SetList,
}

impl Caches {
    /// Starts the watches of `scope` (they run while the returned streams are polled); `keys` says which
    /// annotations the stores keep and parse ([`CachedSet::keep`]); `on_restart` hears of each watch
    /// that failed and re-lists.
    pub fn start(
        client: &Client,
        scope: &Scope,
        keys: &Arc<Keys>,
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
        let sets_keys = keys.clone();
        let sets = Kind {
            resource: "statefulsets",
            config: sets_config,
            trim: move |s: &mut CachedSet| s.keep(&sets_keys),
        };
        let pod_keys = keys.clone();
        let pods = Kind {
            resource: "pods",
            config: watcher::Config::default().labels(POD_NAME_LABEL),
            trim: move |p: &mut CachedPod| p.keep(&pod_keys),
        };
        let pdbs = Kind {
            resource: "poddisruptionbudgets",
            config: watcher::Config::default(),
            trim: trim_pdb,
        };
        let (mut set_stores, mut pod_stores, mut pdb_stores) = (vec![], vec![], vec![]);
        let (mut s, mut p, mut d) = (vec![], vec![], vec![]);
        let listed = SetList::default();
        for ns in namespaces {
            let (store, stream) =
                sets.watch(client, ns, on_restart, (|_, _| true, listed.on_change()));
            set_stores.push(store);
            s.push(stream);
            let index = PodIndex::default();
            let updates = index.clone();
            let news = move |store: &Store<CachedPod>, e: &WatchEvent<CachedPod>| {
                pod_news::before_store(store, &updates, e)
            };
            let (store, stream) = pods.watch(client, ns, on_restart, (news, |_| ()));
            pod_stores.push((store, index));
            p.push(stream);
            let (store, stream) = pdbs.watch(client, ns, on_restart, (|_, _| true, |_| ()));
            pdb_stores.push(store);
            d.push(stream);
        }
        (
            Caches::new(set_stores, pod_stores, pdb_stores, keys, listed),
            CacheStreams {
                sets: Box::pin(stream::select_all(s)),
                pods: Box::pin(stream::select_all(p)),
                pdbs: Box::pin(stream::select_all(d)),
            },
        )
    }

    /// Caches over these stores (one per kind and namespace), the pod stores with their index.
    pub(super) fn new(
        sets: Vec<Store<CachedSet>>,
        pods: Vec<(Store<CachedPod>, PodIndex)>,
        pdbs: Vec<Store<PodDisruptionBudget>>,
        keys: &Arc<Keys>,
        listed: SetList,
    ) -> Self {
        Caches {
            sets,
            pods,
            pdbs,
            keys: keys.clone(),
            listed,
        }
    }

    /// Waits until every store has had its first complete list.
    pub async fn ready(&self) {
        for s in &self.sets {
            let _ = s.wait_until_ready().await;
        }
        for (s, _) in &self.pods {
            let _ = s.wait_until_ready().await;
        }
        for s in &self.pdbs {
            let _ = s.wait_until_ready().await;
        }
    }

    /// The pods of `namespace` that the StatefulSets `owners` (uids) control and `selector` matches,
    /// from the index: O(those pods), whatever the number of pods cached.
    fn owned_pods(&self, namespace: &str, selector: &Selector, owners: &[String]) -> Vec<Pod> {
        let mut found = Vec::new();
        for (store, index) in &self.pods {
            for owner in owners {
                for name in index.names(owner) {
                    // The index is a hint: the pod must still be there, and still this owner's.
                    let Some(pod) = store.get(&ObjectRef::new(&name).within(namespace)) else {
                        continue;
                    };
                    if pod.controller_uid() != Some(owner.as_str()) {
                        continue;
                    }
                    let pod = Pod::from(pod.as_ref());
                    if selector.matches(pod.metadata.labels.as_ref().unwrap_or(&Default::default()))
                    {
                        found.push(pod);
                    }
                }
            }
        }
        found
    }
}

/// How one kind is watched and what its store keeps.
struct Kind<T> {
    resource: &'static str,
    config: watcher::Config,
    trim: T,
}

impl<T> Kind<T> {
    /// The store and event stream of this kind in `ns` (all namespaces: `None`): each object trimmed,
    /// handed to `before` with the store as it is (the pod index: never behind the store, so caches
    /// found ready have their index built; [`pod_news`]), stored, then, if `before` said it is news,
    /// handed to `after` (the set list's change count: bumped once the store has the change) and
    /// yielded.
    fn watch<K>(
        &self,
        client: &Client,
        ns: Option<&str>,
        on_restart: &RestartHook,
        (mut before, mut after): (
            impl FnMut(&Store<K>, &WatchEvent<K>) -> bool + Send + 'static,
            impl FnMut(&WatchEvent<K>) + Send + 'static,
        ),
    ) -> (Store<K>, Reflected<K>)
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
        K::DynamicType: Default + Eq + std::hash::Hash + Clone,
        T: Fn(&mut K) + Clone + Send + 'static,
    {
        let api: Api<K> = match ns {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let (store, mut writer) = reflector::store();
        let held = store.clone();
        let on_restart = on_restart.clone();
        let resource = self.resource;
        let trim = self.trim.clone();
        // `WatchStreamExt::reflect`'s store update, with the news decided in between.
        let stream = watcher::watcher(api, self.config.clone())
            .default_backoff()
            .modify(move |o| trim(o))
            .filter_map(move |ev| {
                std::future::ready(match ev {
                    Ok(e) => {
                        let news = before(&held, &e);
                        writer.apply_watcher_event(&e);
                        news.then(|| {
                            after(&e);
                            e
                        })
                    }
                    Err(e) => {
                        warn!(resource, error = %e, "watch failed: re-listing with backoff");
                        on_restart(resource);
                        None
                    }
                })
            });
        (store, Box::pin(stream))
    }
}

/// Every object of `stores` matching `keep`, made a `T` by `into`.
fn state<K, T>(stores: &[Store<K>], keep: impl Fn(&K) -> bool, into: impl Fn(&K) -> T) -> Vec<T>
where
    K: kube::runtime::reflector::Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    stores
        .iter()
        .flat_map(|s| s.state())
        .filter(|o| keep(o))
        .map(|o| into(o.as_ref()))
        .collect()
}

/// A [`Cluster`] that reads `caches` and writes through `api` (the API server; the simulated one in
/// the simulation's `watch` mode). Its reads are as fresh as the watches ([`Cluster::cached`]): a
/// step is written only after [`Cluster::get_statefulset`] and [`Cluster::list_set_pods_consistent`]
/// — consistent reads through `api` — confirm it.
pub struct CachedCluster<'a, A: Cluster = KubeCluster> {
    /// The stores.
    pub caches: &'a Caches,
    /// The API server, for writes, the owner and ControllerRevision reads and the fresh reads before a
    /// step.
    pub api: &'a A,
}

/// The snapshot reads from the stores; every other call — the writes, the owner, ControllerRevision
/// and namespace reads (never cached), the access reviews and the fresh reads before a step — goes to
/// `api` ([`Wrapper`]'s defaults); the uid + resourceVersion preconditions of `delete_pod` refuse a
/// pod the cache saw stale.
impl<A: Cluster> Wrapper for CachedCluster<'_, A> {
    type Inner = A;

    fn inner(&self) -> &A {
        self.api
    }

    /// From the store, sorted by namespace and name (the store has no order): the objects the store
    /// built, shared, not copied; sorted again only after a watch event ([`SetList`]).
    async fn list_statefulsets(&self) -> Result<Vec<Arc<StatefulSet>>, ClusterError> {
        let list = self.caches.listed.get(&self.caches.sets, &self.caches.keys);
        Ok(list.iter().map(|(s, _)| s.clone()).collect())
    }

    /// [`CachedCluster::list_statefulsets`] with the configs the store parsed once per watch event
    /// when `keys` are the caches' own (the same prefix), else parsed now.
    async fn list_parsed_statefulsets(
        &self,
        keys: &Arc<Keys>,
    ) -> Result<Vec<ParsedSet>, ClusterError> {
        let list = self.caches.listed.get(&self.caches.sets, &self.caches.keys);
        if Arc::ptr_eq(keys, &self.caches.keys) || **keys == *self.caches.keys {
            return Ok(list.to_vec());
        }
        Ok(list
            .iter()
            .map(|(s, _)| (s.clone(), Arc::new(SetConfig::parse(s, keys))))
            .collect())
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        let stores: Vec<Store<CachedPod>> =
            self.caches.pods.iter().map(|(s, _)| s.clone()).collect();
        Ok(state(&stores, |_| true, |p| Pod::from(p)))
    }

    /// From the index: the pods `owners` control (the only ones a pass keeps) that `selector` matches.
    async fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> Result<Vec<Pod>, ClusterError> {
        Ok(self.caches.owned_pods(namespace, selector, owners))
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(state(&self.caches.pdbs, |_| true, Clone::clone))
    }

    async fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(state(
            &self.caches.pdbs,
            |p| p.metadata.namespace.as_deref() == Some(namespace),
            Clone::clone,
        ))
    }

    fn cached(&self) -> bool {
        true
    }
}
