//! `watch`'s caches fed by hand: [`CacheFeed`] applies the watch events a watcher would bring — each
//! object decoded as the watches decode it, trimmed, stored in the kube-rs reflector store, indexed —
//! exactly as [`Caches::start`]'s watchers do, for the simulation's `watch` mode (`sim::watched`), the
//! tests and the benchmarks ([`Caches::listed`]). The stores, the index and the sorted set list are the
//! ones a pass reads ([`crate::cluster::caches::CachedCluster`]).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::watcher::Event as WatchEvent;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cluster::cached::{CachedPod, CachedSet, trim_pdb};
use crate::cluster::caches::Caches;
use crate::cluster::pod_index::PodIndex;
use crate::cluster::pod_news;
use crate::cluster::set_list::SetList;
use crate::config::Keys;

/// The writing side of one [`Caches`] (module doc).
pub struct CacheFeed {
    sets: Writer<CachedSet>,
    pods: Writer<CachedPod>,
    pdbs: Writer<PodDisruptionBudget>,
    keys: Arc<Keys>,
    index: PodIndex,
    /// Bumps the caches' [`SetList`] after each set event (so a pass sorts the sets again).
    set_changed: OnSetEvent,
}

/// What runs after a set store applied an event.
type OnSetEvent = Box<dyn FnMut(&WatchEvent<CachedSet>) + Send>;

impl Caches {
    /// Empty caches (not ready: no list yet) and the feed that fills them; `keys` says which
    /// annotations they keep and parse, as [`Caches::start`]'s.
    pub fn fed(keys: &Arc<Keys>) -> (Caches, CacheFeed) {
        let (set_store, sets) = reflector::store();
        let (pod_store, pods) = reflector::store();
        let (pdb_store, pdbs) = reflector::store();
        let index = PodIndex::default();
        let listed = SetList::default();
        let set_changed = Box::new(listed.on_change());
        (
            Caches::new(
                vec![set_store],
                vec![(pod_store, index.clone())],
                vec![pdb_store],
                keys,
                listed,
            ),
            CacheFeed {
                sets,
                pods,
                pdbs,
                keys: keys.clone(),
                index,
                set_changed,
            },
        )
    }

    /// Caches as one complete LIST of these objects leaves them: each decoded from its JSON and kept
    /// (the pods indexed) exactly as [`Caches::start`]'s watches do (tests and benchmarks).
    ///
    /// # Panics
    /// If an object does not serialize to JSON its cached form decodes (never for k8s-openapi objects).
    pub fn listed(
        sets: Vec<StatefulSet>,
        pods: Vec<Pod>,
        pdbs: Vec<PodDisruptionBudget>,
        keys: &Arc<Keys>,
    ) -> Self {
        let (caches, mut feed) = Caches::fed(keys);
        feed.list(sets, pods, pdbs);
        caches
    }
}

impl CacheFeed {
    /// A complete LIST of every kind (a watcher's first list, or a re-list): the stores hold exactly
    /// these objects afterwards, and are ready.
    pub fn list(&mut self, sets: Vec<StatefulSet>, pods: Vec<Pod>, pdbs: Vec<PodDisruptionBudget>) {
        for event in listing(sets) {
            self.set(event);
        }
        for event in listing(pods) {
            self.pod(event);
        }
        for event in listing(pdbs) {
            self.pdb(event);
        }
    }

    /// One watch event of a StatefulSet (as the API server sends it).
    pub fn set(&mut self, event: WatchEvent<StatefulSet>) {
        let keys = self.keys.clone();
        let mut event = cached::<CachedSet, _>(event);
        trim(&mut event, |s| s.keep(&keys));
        self.sets.apply_watcher_event(&event);
        (self.set_changed)(&event);
    }

    /// One watch event of a pod; true when it is news to a pass ([`pod_news`]: `Caches::start`'s
    /// watches yield only those to `watch`'s early passes).
    pub fn pod(&mut self, event: WatchEvent<Pod>) -> bool {
        let keys = self.keys.clone();
        let mut event = cached::<CachedPod, _>(event);
        trim(&mut event, |p| p.keep(&keys));
        // The index first, as `Caches::start`'s watches do: never behind the store.
        let news = pod_news::before_store(&self.pods.as_reader(), &self.index, &event);
        self.pods.apply_watcher_event(&event);
        news
    }

    /// One watch event of a PodDisruptionBudget.
    pub fn pdb(&mut self, mut event: WatchEvent<PodDisruptionBudget>) {
        trim(&mut event, trim_pdb);
        self.pdbs.apply_watcher_event(&event);
    }
}

/// The events of one complete list of `items`.
fn listing<K>(items: Vec<K>) -> Vec<WatchEvent<K>> {
    let mut events = vec![WatchEvent::Init];
    events.extend(items.into_iter().map(WatchEvent::InitApply));
    events.push(WatchEvent::InitDone);
    events
}

/// `event`'s object as the watches decode it (its cached form, from the object's JSON).
///
/// # Panics
/// If the object does not serialize to JSON its cached form decodes (never for k8s-openapi objects).
fn cached<C: DeserializeOwned, K: Serialize>(event: WatchEvent<K>) -> WatchEvent<C> {
    let decode = |o: K| -> C {
        serde_json::to_value(o)
            .and_then(serde_json::from_value)
            .expect("a k8s-openapi object decodes as its cached form")
    };
    match event {
        WatchEvent::Apply(o) => WatchEvent::Apply(decode(o)),
        WatchEvent::Delete(o) => WatchEvent::Delete(decode(o)),
        WatchEvent::InitApply(o) => WatchEvent::InitApply(decode(o)),
        WatchEvent::Init => WatchEvent::Init,
        WatchEvent::InitDone => WatchEvent::InitDone,
    }
}

/// What a store does to an object before it keeps it (`WatchStreamExt::modify` in [`Caches::start`]).
fn trim<K>(event: &mut WatchEvent<K>, f: impl Fn(&mut K)) {
    match event {
        WatchEvent::Apply(o) | WatchEvent::Delete(o) | WatchEvent::InitApply(o) => f(o),
        WatchEvent::Init | WatchEvent::InitDone => {}
    }
}

/// `cluster::pod_news` through the feed (here, not there: `caches` builds the feed, and `pod_news` is
/// imported by `caches`).
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Pod;
    use kube::runtime::watcher::Event;
    use serde_json::{Value, json};

    use crate::cluster::caches::Caches;
    use crate::config::Keys;

    fn pod(status: &str, ready: &str, rv: &str) -> Pod {
        let p: Value = json!({
            "metadata": {"name": "pg-0", "namespace": "db", "uid": "u", "resourceVersion": rv,
                         "labels": {"role": "replica"},
                         "annotations": {"status": status, "safe-rollout.dev/update-requested": "r2"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                              "name": "pg", "uid": "s", "controller": true}]},
            "spec": {"containers": [{"name": "postgres", "image": "postgres:17"}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": ready}],
                       "containerStatuses": [{"name": "postgres", "restartCount": rv.len()}]}});
        serde_json::from_value(p).expect("pod")
    }

    #[test]
    fn only_pod_events_that_change_what_is_kept_are_news() {
        let (_caches, mut feed) = Caches::fed(&Arc::new(Keys::default()));
        feed.list(
            vec![],
            vec![pod("{\"xlog_location\":1}", "True", "1")],
            vec![],
        );
        // Another owner's annotation, container statuses and the resourceVersion: not news.
        assert!(!feed.pod(Event::Apply(pod("{\"xlog_location\":2}", "True", "22"))));
        // A kept field: news.
        assert!(feed.pod(Event::Apply(pod("{\"xlog_location\":2}", "False", "3"))));
        // The stepper's own annotation is kept: news.
        let mut answered = pod("{\"xlog_location\":2}", "False", "4");
        let annotations = answered.metadata.annotations.get_or_insert_default();
        annotations.insert("safe-rollout.dev/update-approved".into(), "r2".into());
        assert!(feed.pod(Event::Apply(answered)));
        // A deletion, and a pod the store does not hold: news.
        assert!(feed.pod(Event::Delete(pod("{}", "False", "5"))));
        assert!(feed.pod(Event::Apply(pod("{}", "False", "6"))));
    }
}
