//! `watch`'s pod store indexed by owner: the names of the pods each StatefulSet controls, so a pass
//! finds a candidate's pods without scanning every pod (O(pods of the candidates), not O(candidates ×
//! pods)).
//!
//! kube-rs's reflector store has no index (a `HashMap` by name, scanned by `state_filter`), so this one
//! sits beside it and follows the same watch events, applied right before the store applies them (so
//! it is never behind the store: caches found ready by `Caches::ready` have their index built), with
//! the store's semantics (`reflector::store::Writer::apply_watcher_event`): `Apply` and `Delete` change
//! it at once; a (re-)list (`Init`, `InitApply`…, `InitDone`) is built aside and swapped in whole at
//! `InitDone`.
//!
//! Keyed by the uid of the pod's controller StatefulSet ([`CachedPod::controller_uid`], as the
//! Kubernetes controllers' `PodControllerUIDIndex`): a pass keeps only the pods a candidate controls,
//! so pods without a controller StatefulSet are not indexed. It holds names only, and is a hint: the
//! caller reads each pod from the store and keeps it only if it is still there and still controlled by
//! that uid. A pod that changed controller (orphaned, adopted) stays listed under its old one until it
//! is deleted or the next re-list, and is skipped there.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use kube::runtime::watcher::Event;

use crate::cluster::cached::CachedPod;

/// Controller uid → the names of its pods (a StatefulSet's pods share its namespace).
type Index = HashMap<String, BTreeSet<String>>;

/// The index (shared by the watch task that updates it and the passes that read it) and the re-list
/// being built.
#[derive(Clone, Default)]
pub struct PodIndex {
    live: Arc<RwLock<Index>>,
    relist: Arc<RwLock<Option<Index>>>,
}

fn insert(index: &mut Index, pod: &CachedPod) {
    if let (Some(uid), Some(name)) = (pod.controller_uid(), pod.metadata.name.as_ref()) {
        index
            .entry(uid.to_string())
            .or_default()
            .insert(name.clone());
    }
}

fn remove(index: &mut Index, pod: &CachedPod) {
    let (Some(uid), Some(name)) = (pod.controller_uid(), pod.metadata.name.as_ref()) else {
        return;
    };
    if let Some(names) = index.get_mut(uid) {
        names.remove(name);
        if names.is_empty() {
            index.remove(uid);
        }
    }
}

impl PodIndex {
    /// Applies one watch event, as the pod store just did.
    pub fn apply(&self, event: &Event<CachedPod>) {
        match event {
            Event::Apply(pod) => insert(&mut write(&self.live), pod),
            Event::Delete(pod) => remove(&mut write(&self.live), pod),
            Event::Init => *write(&self.relist) = Some(Index::default()),
            Event::InitApply(pod) => {
                if let Some(index) = write(&self.relist).as_mut() {
                    insert(index, pod);
                }
            }
            Event::InitDone => {
                if let Some(index) = write(&self.relist).take() {
                    *write(&self.live) = index;
                }
            }
        }
    }

    /// The names of the pods indexed under the StatefulSet with uid `owner`, sorted (a hint: module
    /// doc).
    pub fn names(&self, owner: &str) -> Vec<String> {
        let index = self.live.read().unwrap_or_else(|e| e.into_inner());
        index
            .get(owner)
            .map_or_else(Vec::new, |names| names.iter().cloned().collect())
    }
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, owner: Option<&str>) -> CachedPod {
        let owners = owner.map(|uid| {
            json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid,
                    "controller": true}])
        });
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "demo",
                                                   "ownerReferences": owners}}))
        .expect("pod")
    }

    #[test]
    fn follows_applies_deletes_and_a_relist_swapped_in_at_init_done() {
        let index = PodIndex::default();
        index.apply(&Event::Apply(pod("web-0", Some("u1"))));
        index.apply(&Event::Apply(pod("web-1", Some("u1"))));
        index.apply(&Event::Apply(pod("orphan", None)));
        assert_eq!(index.names("u1"), ["web-0", "web-1"]);
        index.apply(&Event::Delete(pod("web-1", Some("u1"))));
        assert_eq!(index.names("u1"), ["web-0"]);
        // Adopted by another set: listed under both until a re-list (the caller checks the store).
        index.apply(&Event::Apply(pod("web-0", Some("u2"))));
        assert_eq!(index.names("u2"), ["web-0"]);
        assert_eq!(index.names("u1"), ["web-0"]);
        // A re-list is served from the old index until InitDone, then replaces it.
        index.apply(&Event::Init);
        index.apply(&Event::InitApply(pod("web-2", Some("u1"))));
        assert_eq!(index.names("u1"), ["web-0"]);
        index.apply(&Event::InitDone);
        assert_eq!(index.names("u1"), ["web-2"]);
        assert!(index.names("u2").is_empty());
    }
}
