//! The simulation's `watch` mode ([`Watched`]): the stepper decides from `watch`'s own caches — the
//! kube-rs reflector stores of [`Caches`], trimmed and indexed as in `sts-stepper watch` — fed with
//! the world's changes as watch events that arrive `lag` seconds late; its writes, the owner read and
//! the fresh reads before a step go to the simulated API server ([`CachedCluster`] over
//! [`SimCluster`]). So one scenario plays the same cluster history to `once` (a LIST per pass) and to
//! `watch`, and the two can be compared (`stepper/tests/sim/sim_modes.rs`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::runtime::watcher::Event as WatchEvent;

use super::cluster::SimCluster;
use super::world::World;
use crate::cluster::cache_feed::CacheFeed;
use crate::cluster::caches::{CachedCluster, Caches};
use crate::config::Keys;

/// One object's change, as a watch brings it.
#[derive(Clone, Debug)]
enum Change {
    Set(WatchEvent<StatefulSet>),
    Pod(WatchEvent<Pod>),
    Pdb(WatchEvent<PodDisruptionBudget>),
}

/// What one kind's watch has sent: namespace/name → (the object's fingerprint, the object).
type Sent<K> = BTreeMap<String, (String, K)>;

/// A `watch` replica's caches over a simulated world (module doc).
pub struct Watched {
    caches: Caches,
    feed: CacheFeed,
    keys: Arc<Keys>,
    /// What the watches have sent so far, per kind.
    sets: Sent<StatefulSet>,
    pods: Sent<Pod>,
    pdbs: Sent<PodDisruptionBudget>,
    /// Changes sent but not yet arrived: (second sent, change).
    in_flight: VecDeque<(i64, Change)>,
    /// Seconds a change takes to reach the caches.
    lag: i64,
    /// What the world served when the watches last looked, cheaply: a kind whose fingerprint did not
    /// change is not built and compared again.
    seen: Fingerprints,
}

/// The set's `resourceVersion`, each pod's uid and `resourceVersion`, the PDB's status: they change
/// whenever what the simulated API server serves of the object does (`sim::kubelet`,
/// `sim::apiserver`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Fingerprints {
    set: String,
    pods: Vec<(String, u64)>,
    pdb: String,
}

impl Fingerprints {
    fn of(world: &World) -> Self {
        Fingerprints {
            set: world.set["metadata"]["resourceVersion"].to_string(),
            pods: (world.pods.values())
                .map(|p| (p.uid.clone(), p.resource_version))
                .collect(),
            pdb: format!("{:?}", world.pdb_status()),
        }
    }
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("lag", &self.lag)
            .field(
                "objects",
                &(self.sets.len() + self.pods.len() + self.pdbs.len()),
            )
            .field("in_flight", &self.in_flight.len())
            .finish_non_exhaustive()
    }
}

impl Watched {
    /// A replica starting now: its caches filled by one LIST of `world` (as `watch` waits for its
    /// caches before its first pass); later changes reach them `lag` seconds after they happen.
    pub fn start(world: &World, keys: &Arc<Keys>, lag: i64) -> Self {
        let (caches, mut feed) = Caches::fed(keys);
        let (sets, pods, pdbs) = objects(world);
        let (s, p, d) = (listed(&sets), listed(&pods), listed(&pdbs));
        feed.list(sets, pods, pdbs);
        Watched {
            caches,
            feed,
            keys: keys.clone(),
            sets: s,
            pods: p,
            pdbs: d,
            in_flight: VecDeque::new(),
            lag: lag.max(0),
            seen: Fingerprints::of(world),
        }
    }

    /// Another replica takes over (this one was killed or frozen, a restarted `watch` process won the
    /// Lease): caches of its own, filled by its first LIST; nothing of this one's carries over.
    pub fn restart(&mut self, world: &World) {
        *self = Watched::start(world, &self.keys, self.lag);
    }

    /// The watches at second `t`: what changed in `world` since they last looked is sent (an `Apply`
    /// for each new or changed object, a `Delete` for each gone one), and what was sent at least `lag`
    /// seconds ago reaches the caches.
    pub fn tick(&mut self, world: &World, t: i64) {
        let seen = Fingerprints::of(world);
        let was = std::mem::replace(&mut self.seen, seen.clone());
        let mut changes: Vec<Change> = Vec::new();
        let sets = (seen.set != was.set).then(|| world.typed_set().into_iter().collect());
        let pods = (seen.pods != was.pods).then(|| world.typed_pods());
        let pdbs = (seen.pdb != was.pdb).then(|| world.typed_pdbs());
        changes.extend(diff(sets, &mut self.sets).map(Change::Set));
        changes.extend(diff(pods, &mut self.pods).map(Change::Pod));
        changes.extend(diff(pdbs, &mut self.pdbs).map(Change::Pdb));
        self.in_flight.extend(changes.into_iter().map(|c| (t, c)));
        while self
            .in_flight
            .front()
            .is_some_and(|(at, _)| at + self.lag <= t)
        {
            match self.in_flight.pop_front().map(|(_, c)| c) {
                Some(Change::Set(e)) => self.feed.set(e),
                Some(Change::Pod(e)) => {
                    self.feed.pod(e);
                }
                Some(Change::Pdb(e)) => self.feed.pdb(e),
                None => {}
            }
        }
    }

    /// The [`crate::cluster::Cluster`] a pass of this replica runs on: reads from its caches, the rest
    /// through `sim`.
    pub fn cluster<'a>(&'a self, sim: &'a SimCluster) -> CachedCluster<'a, SimCluster> {
        CachedCluster {
            caches: &self.caches,
            api: sim,
        }
    }
}

/// The watch events of one kind that bring the caches from `sent` to `objects` (`sent` becomes it):
/// an `Apply` for each new or changed object (its fingerprint, [`fingerprint`]), a `Delete` for each
/// gone one. `None`: nothing of that kind changed.
fn diff<K>(objects: Option<Vec<K>>, sent: &mut Sent<K>) -> impl Iterator<Item = WatchEvent<K>>
where
    K: kube::Resource + serde::Serialize + Clone,
{
    let mut events = Vec::new();
    let Some(objects) = objects else {
        return events.into_iter();
    };
    let mut now = Sent::new();
    for o in objects {
        let (k, f) = (key(&o), fingerprint(&o));
        if sent.get(&k).is_none_or(|(was, _)| *was != f) {
            events.push(WatchEvent::Apply(o.clone()));
        }
        now.insert(k, (f, o));
    }
    let gone: Vec<String> = sent
        .keys()
        .filter(|k| !now.contains_key(*k))
        .cloned()
        .collect();
    for k in gone {
        if let Some((_, o)) = sent.remove(&k) {
            events.push(WatchEvent::Delete(o));
        }
    }
    *sent = now;
    events.into_iter()
}

/// What a complete LIST of `objects` sends.
fn listed<K: kube::Resource + serde::Serialize + Clone>(objects: &[K]) -> Sent<K> {
    (objects.iter())
        .map(|o| (key(o), (fingerprint(o), o.clone())))
        .collect()
}

/// What identifies one state of an object as the API server serves it: its uid and
/// `resourceVersion`; a PDB, whose simulated status is computed, by its status.
fn fingerprint<K: kube::Resource + serde::Serialize>(o: &K) -> String {
    let m = o.meta();
    match &m.resource_version {
        Some(rv) => format!("{}/{rv}", m.uid.as_deref().unwrap_or("")),
        None => serde_json::to_string(o).unwrap_or_default(),
    }
}

/// The world's objects as a LIST returns them.
fn objects(world: &World) -> (Vec<StatefulSet>, Vec<Pod>, Vec<PodDisruptionBudget>) {
    (
        world.typed_set().into_iter().collect(),
        world.typed_pods(),
        world.typed_pdbs(),
    )
}

fn key<K: kube::Resource>(o: &K) -> String {
    let m = o.meta();
    format!(
        "{}/{}",
        m.namespace.as_deref().unwrap_or(""),
        m.name.as_deref().unwrap_or("")
    )
}
