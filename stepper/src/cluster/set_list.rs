//! The set stores' objects as a pass lists them: sorted by namespace and name, each with its parsed
//! annotations, rebuilt only after a watch event ([`SetList`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event as WatchEvent;

use crate::cluster::ParsedSet;
use crate::cluster::cached::CachedSet;
use crate::config::{Keys, SetConfig};

/// The set stores' objects sorted as a pass lists them, kept until a store changes: each set watch
/// event, after the store applied it, bumps `changes`; a list made at `changes` = n is reused while
/// it stays n. So a pass over 10,000 unchanged sets neither walks nor sorts the stores.
#[derive(Default)]
pub struct SetList {
    changes: Arc<AtomicU64>,
    sorted: Mutex<Option<(u64, Arc<[ParsedSet]>)>>,
}

impl SetList {
    /// A bump of `SetList::changes` per event, for the set stores' `after`.
    pub fn on_change(&self) -> impl FnMut(&WatchEvent<CachedSet>) + Send + 'static {
        let changes = self.changes.clone();
        move |_| {
            changes.fetch_add(1, Ordering::Release);
        }
    }

    /// The sorted list of `stores`, from the last call when no event came since.
    pub fn get(&self, stores: &[Store<CachedSet>], keys: &Arc<Keys>) -> Arc<[ParsedSet]> {
        // Read before the stores: an event between the two is seen again by the next call.
        let at = self.changes.load(Ordering::Acquire);
        let mut sorted = self.sorted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, list)) = sorted.as_ref()
            && *n == at
        {
            return list.clone();
        }
        let mut list: Vec<ParsedSet> = stores
            .iter()
            .flat_map(Store::state)
            .map(|c| {
                let config = match c.config() {
                    Some(config) => config.clone(),
                    None => Arc::new(SetConfig::parse(c.set(), keys)),
                };
                (c.set().clone(), config)
            })
            .collect();
        list.sort_unstable_by(|(a, _), (b, _)| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        let list: Arc<[ParsedSet]> = list.into();
        *sorted = Some((at, list.clone()));
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::runtime::reflector;
    use serde_json::json;

    fn names(list: &[ParsedSet]) -> Vec<&str> {
        list.iter()
            .map(|(s, _)| s.metadata.name.as_deref().unwrap_or(""))
            .collect()
    }

    #[test]
    fn a_list_is_reused_until_a_watch_event_and_built_again_after_it() {
        let keys = Arc::new(Keys::default());
        let set = |name: &str, paused: &str| {
            let mut c: CachedSet = serde_json::from_value(json!({"metadata": {
                "name": name, "namespace": "demo",
                "annotations": {"safe-rollout.dev/paused": paused}}}))
            .expect("set");
            c.keep(&keys);
            c
        };
        // As a watch feeds them: the store applies each event, then `after` sees it.
        let (store, mut writer) = reflector::store::<CachedSet>();
        let list = SetList::default();
        let mut after = list.on_change();
        let mut apply = |e: WatchEvent<CachedSet>| {
            writer.apply_watcher_event(&e);
            after(&e);
        };
        apply(WatchEvent::Init);
        apply(WatchEvent::InitApply(set("web-b", "false")));
        apply(WatchEvent::InitApply(set("web-a", "false")));
        apply(WatchEvent::InitDone);
        let stores = [store];

        let first = list.get(&stores, &keys);
        assert_eq!(names(&first), ["web-a", "web-b"], "sorted by name");
        assert!(
            Arc::ptr_eq(&first, &list.get(&stores, &keys)),
            "no event: the same list"
        );

        apply(WatchEvent::Apply(set("web-a", "true")));
        let changed = list.get(&stores, &keys);
        assert!(!Arc::ptr_eq(&first, &changed), "an event: built again");
        assert!(
            changed[0].1.paused,
            "with the new object's parsed annotations"
        );
        assert!(!first[0].1.paused, "an earlier list keeps what it had");

        apply(WatchEvent::Delete(set("web-b", "false")));
        assert_eq!(names(&list.get(&stores, &keys)), ["web-a"]);
    }
}
