//! `watch`'s pod store indexed by owner: the names of the pods each StatefulSet controls, so a pass
//! finds a candidate's pods without scanning every pod (O(pods of the candidates), not O(candidates ×
//! pods)).
//!
//! kube-rs's reflector store has no index (a `HashMap` by name, scanned by `state_filter`), so this one
//! sits beside it and follows the same watch events, applied right after the store applied them, with
//! the store's semantics (`reflector::store::Writer::apply_watcher_event`): `Apply` and `Delete` change
//! it at once; a (re-)list (`Init`, `InitApply`…, `InitDone`) is built aside and swapped in whole at
//! `InitDone`. It holds names only; the pods are read from the store by name, so the two can only
//! disagree for the instant between two updates (a pod just deleted is skipped, one just added is seen
//! by the next pass).
//!
//! Keyed by the uid of the pod's controller StatefulSet (`model::pods::controller_uid`, as the
//! Kubernetes controllers' `PodControllerUIDIndex`): a pass keeps only the pods a candidate controls,
//! so pods without a controller StatefulSet are not indexed.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::Event;

use crate::model::pods::controller_uid;

/// A pod's key: namespace and name.
type PodKey = (String, String);

#[derive(Default)]
struct Index {
    /// Controller uid → its pods.
    by_owner: HashMap<String, BTreeSet<PodKey>>,
    /// Pod → its controller's uid (to move or drop it when it changes or goes).
    owner_of: HashMap<PodKey, String>,
}

impl Index {
    fn insert(&mut self, pod: &Pod) {
        let Some(key) = key(pod) else { return };
        self.remove(&key);
        if let Some(uid) = controller_uid(pod) {
            self.by_owner
                .entry(uid.to_string())
                .or_default()
                .insert(key.clone());
            self.owner_of.insert(key, uid.to_string());
        }
    }

    fn remove(&mut self, key: &PodKey) {
        let Some(uid) = self.owner_of.remove(key) else {
            return;
        };
        if let Some(pods) = self.by_owner.get_mut(&uid) {
            pods.remove(key);
            if pods.is_empty() {
                self.by_owner.remove(&uid);
            }
        }
    }
}

fn key(pod: &Pod) -> Option<PodKey> {
    Some((
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone()?,
    ))
}

/// The index (shared by the watch task that updates it and the passes that read it) and the re-list
/// being built.
#[derive(Clone, Default)]
pub struct PodIndex {
    live: Arc<RwLock<Index>>,
    relist: Arc<RwLock<Option<Index>>>,
}

impl PodIndex {
    /// Applies one watch event, as the pod store just did.
    pub fn apply(&self, event: &Event<Pod>) {
        match event {
            Event::Apply(pod) => write(&self.live).insert(pod),
            Event::Delete(pod) => {
                if let Some(k) = key(pod) {
                    write(&self.live).remove(&k);
                }
            }
            Event::Init => *write(&self.relist) = Some(Index::default()),
            Event::InitApply(pod) => {
                if let Some(index) = write(&self.relist).as_mut() {
                    index.insert(pod);
                }
            }
            Event::InitDone => {
                if let Some(index) = write(&self.relist).take() {
                    *write(&self.live) = index;
                }
            }
        }
    }

    /// The names of the pods in `namespace` that the StatefulSet with uid `owner` controls, sorted.
    pub fn names(&self, namespace: &str, owner: &str) -> Vec<String> {
        let index = self.live.read().unwrap_or_else(|e| e.into_inner());
        index.by_owner.get(owner).map_or_else(Vec::new, |pods| {
            pods.iter()
                .filter(|(ns, _)| ns == namespace)
                .map(|(_, name)| name.clone())
                .collect()
        })
    }
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn pod(name: &str, owner: Option<&str>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = Some(name.into());
        p.metadata.namespace = Some("demo".into());
        p.metadata.owner_references = owner.map(|uid| {
            vec![OwnerReference {
                kind: "StatefulSet".into(),
                name: "web".into(),
                uid: uid.into(),
                controller: Some(true),
                ..OwnerReference::default()
            }]
        });
        p
    }

    #[test]
    fn follows_applies_deletes_and_a_relist_swapped_in_at_init_done() {
        let index = PodIndex::default();
        index.apply(&Event::Apply(pod("web-0", Some("u1"))));
        index.apply(&Event::Apply(pod("web-1", Some("u1"))));
        index.apply(&Event::Apply(pod("orphan", None)));
        assert_eq!(index.names("demo", "u1"), ["web-0", "web-1"]);
        assert!(index.names("other", "u1").is_empty());
        // Re-owned (adopted by another set), then deleted.
        index.apply(&Event::Apply(pod("web-1", Some("u2"))));
        assert_eq!(index.names("demo", "u1"), ["web-0"]);
        assert_eq!(index.names("demo", "u2"), ["web-1"]);
        index.apply(&Event::Delete(pod("web-1", Some("u2"))));
        assert!(index.names("demo", "u2").is_empty());
        // A re-list is served from the old index until InitDone.
        index.apply(&Event::Init);
        index.apply(&Event::InitApply(pod("web-2", Some("u1"))));
        assert_eq!(index.names("demo", "u1"), ["web-0"]);
        index.apply(&Event::InitDone);
        assert_eq!(index.names("demo", "u1"), ["web-2"]);
    }
}
