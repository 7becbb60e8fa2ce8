//! Which pod watch events are news to a pass: those that change what the caches keep of a pod.
//!
//! Most pod events of a fleet change nothing a pass reads. Patroni on Kubernetes rewrites its member's
//! `status` annotation every loop (10 s by default), the kubelet rewrites container statuses, a
//! server-side apply rewrites `managedFields`: the pod decoded and trimmed ([`CachedPod::keep`]) is the one
//! the store holds but for its `resourceVersion`. Such an event is still stored — the `resourceVersion` is
//! the precondition of the writes and deletes decided from the cache (`plan::patch::annotation_ops`,
//! `gates::recovery`), and must be the latest — but the pod index does not follow it (the pod's owner is
//! the same) and it is not yielded to `watch`'s early passes (nothing a pass reads changed: the pass would
//! decide as the last one did).
//!
//! Any other event is news: a pod the store does not hold, a deletion, a re-list (`Init`, `InitApply`,
//! `InitDone`), and an `Apply` whose kept fields differ ([`CachedPod::same_kept`]).

use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event;

use crate::cluster::cached::CachedPod;
use crate::cluster::pod_index::PodIndex;

/// Called with each pod event before `store` applies it: true when it is news (module doc), and then
/// `index` follows it (it never lags the store: caches found ready have their index built).
pub fn before_store(store: &Store<CachedPod>, index: &PodIndex, event: &Event<CachedPod>) -> bool {
    if let Event::Apply(pod) = event
        && unchanged(store, pod)
    {
        return false;
    }
    index.apply(event);
    true
}

/// True when `store` holds `pod` with the same kept fields (its `resourceVersion` aside).
fn unchanged(store: &Store<CachedPod>, pod: &CachedPod) -> bool {
    let (Some(name), Some(namespace)) = (&pod.metadata.name, &pod.metadata.namespace) else {
        return false;
    };
    store
        .get(&ObjectRef::new(name).within(namespace))
        .is_some_and(|stored| stored.same_kept(pod))
}
