//! The harm oracle: the simulation's own account of what the stepper is judged by.
//!
//! Slots down, steps taken while a gate failed, pods restarted while another was down.
//!
//! It reads the world and writes only its own records ([`World::steps`], [`World::restarts`],
//! [`World::harmful_restarts`], [`World::down_since`], [`World::ever_ready`]); nothing the controller,
//! the kubelet or the stepper reads.

use super::kubelet::SimPod;
use super::world::World;

/// A step that landed: a write lowering the partition that the policy let through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRecord {
    /// Virtual second of the write.
    pub t: i64,
    /// Partition before.
    pub from: i32,
    /// Partition after.
    pub to: i32,
    /// `spec.replicas` when it landed (a step goes to `max(0, min(from, replicas) − step)`).
    pub replicas: i32,
    /// Whether the controller had observed the stored generation when the step landed
    /// (`status.observedGeneration == metadata.generation`): false means two writes stepped on one
    /// observation.
    pub observed: bool,
    /// The first gate the simulation's own oracle saw failing at that moment, if any.
    pub failing_gate: Option<String>,
    /// Whether the application-unhealthy signal was raised at that moment.
    pub app_unhealthy: bool,
    /// `status.updateRevision` stored when it landed (the revision the step rolls out).
    pub update_revision: String,
}

/// What the oracle saw of the stored state just before a write: whether the controller had observed
/// its generation, and the first failing gate for the write's partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Witness {
    observed: bool,
    failing_gate: Option<String>,
}

impl World {
    /// The simulation's own gate oracle (independent of the stepper's code): the first failing
    /// condition among docs/design.md's gates for a step to partition `to`, or `None`. Used to count steps
    /// taken while a gate failed.
    pub fn oracle_gate(&self, to: u32) -> Option<String> {
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        if self.status_count("observedGeneration") < generation {
            return Some("NotObserved".into());
        }
        let min_ready = self.min_ready();
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let update = self.status_str("updateRevision");
        let partition = u32::try_from(self.partition()).unwrap_or(0);
        let up = |o: &u32| {
            self.pods
                .get(o)
                .is_some_and(|p| !p.unavailable(min_ready, self.t) && p.running(self.t))
        };
        // The pods the step replaces (index in [to, partition), not on updateRevision) do not count
        // when every one of them is already down: replacing them takes nothing more down
        // (`gates::replaced_while_down`).
        let replaced: Vec<u32> = (to.min(partition)..partition.min(replicas))
            .filter(|o| self.pods.get(o).is_none_or(|p| p.revision != update))
            .collect();
        let exempt = if replaced.iter().all(|o| !up(o)) {
            replaced
        } else {
            Vec::new()
        };
        for o in 0..replicas {
            if !exempt.contains(&o) && !up(&o) {
                return Some(format!("PodNotReady {o}"));
            }
        }
        for o in partition..replicas {
            if self.pods.get(&o).is_some_and(|p| p.revision != update) {
                return Some(format!("StepInProgress {o}"));
            }
        }
        if exempt.is_empty()
            && let Some(status) = self.pdb_status()
            && status.disruptions_allowed.unwrap_or(0) < 1
        {
            return Some("PdbBlocked".into());
        }
        None
    }

    /// The oracle's view of the stored state before `new` replaces it.
    pub(super) fn witness_write(&self, new: &serde_json::Value) -> Witness {
        let observed = self.status_count("observedGeneration")
            == self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        let to = new["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0);
        Witness {
            observed,
            failing_gate: self.oracle_gate(to),
        }
    }

    /// Records a step that just landed (partition `from` → the stored one), with what the oracle saw
    /// before the write.
    pub(super) fn note_step(&mut self, from: i32, witness: Witness) {
        self.last_step = Some(self.t);
        self.steps.push(StepRecord {
            t: self.t,
            from,
            to: self.partition(),
            replicas: self.replicas(),
            observed: witness.observed,
            failing_gate: witness.failing_gate,
            app_unhealthy: self.app_unhealthy,
            update_revision: self.status_str("updateRevision"),
        });
        let (to, update) = (self.partition(), self.status_str("updateRevision"));
        let replaced: Vec<u32> = self
            .pods
            .values()
            .filter(|p| (to..from).contains(&(p.ordinal as i32)) && p.revision != update)
            .map(|p| p.ordinal)
            .collect();
        let all_down = replaced.iter().all(|o| self.down_since.contains_key(o));
        self.last_step_down = if all_down {
            replaced.iter().copied().collect()
        } else {
            Default::default()
        };
        for ordinal in replaced {
            self.note_replacement(ordinal);
        }
    }

    /// Records the controller's rolling-update deletion of the pod at `ordinal`, just before it
    /// happens: the other slots down now, and whether another slot was already down when the decision
    /// that exposed this pod was taken (the last step for a guarded set, this deletion for a native
    /// one) — a harmful restart; unless that slot and this pod were both exposed, already down, by the
    /// same step ([`World::last_step_down`]): one loss, not two.
    pub(super) fn note_restart(&mut self, ordinal: u32) {
        let t = self.t;
        let others = self
            .down_ordinals()
            .iter()
            .filter(|d| **d != ordinal)
            .count();
        self.restarts.push((t, ordinal, others));
        let decided = if self.policy {
            self.last_step.unwrap_or(t)
        } else {
            t
        };
        // Slots the same step exposed while all of them were down are one loss, not two.
        let together = |d: &u32| {
            self.policy && self.last_step_down.contains(d) && self.last_step_down.contains(&ordinal)
        };
        if self
            .down_since
            .iter()
            .any(|(d, since)| *d != ordinal && *since <= decided && !together(d))
        {
            self.harmful_restarts.push((t, ordinal));
        }
    }

    /// After the kubelet's refresh: which slots have held a Ready pod, and since when each slot that
    /// has is down. A slot scaled away starts afresh if it is scaled up again (a new pod is not a
    /// disruption).
    pub(super) fn observe_slots(&mut self) {
        let t = self.t;
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        for p in self.pods.values() {
            if p.running_and_ready() && p.ordinal < replicas {
                self.ever_ready.insert(p.ordinal, true);
            }
        }
        self.ever_ready.retain(|o, _| *o < replicas);
        let down = self.down_ordinals();
        self.down_since.retain(|o, _| down.contains(o));
        for o in down {
            self.down_since.entry(o).or_insert(t);
        }
    }

    /// Slots in `[0, replicas)` that have been up once and are down now (missing, terminating, or not
    /// Running and Ready), and how many of those are down because of a fault (node down, evicted from
    /// a node that was down, or a person's deletion recorded in `fault_deleted`).
    pub fn down(&self, fault_deleted: &[u32]) -> (usize, usize) {
        let down = self.down_ordinals();
        let by_fault = down
            .iter()
            .filter(|o| {
                fault_deleted.contains(o)
                    || self.evicted.contains(o)
                    || self.pods.get(o).is_some_and(|p| p.node_is_down(self.t))
            })
            .count();
        (down.len(), by_fault)
    }

    /// The ordinals of the slots in `[0, replicas)` that have been up once and are down now.
    pub fn down_ordinals(&self) -> Vec<u32> {
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        (0..replicas)
            .filter(|o| self.ever_ready.get(o).copied().unwrap_or(false))
            .filter(|o| !self.pods.get(o).is_some_and(SimPod::running_and_ready))
            .collect()
    }

    /// True when the rollout is complete: the controller observed the spec, every pod in
    /// `[0, replicas)` runs the update revision and is available, no other pod exists, and the status
    /// reports `currentRevision == updateRevision`.
    pub fn rollout_complete(&self) -> bool {
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        let update = self.status_str("updateRevision");
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        self.status_count("observedGeneration") == generation
            && self.status_str("currentRevision") == update
            && self.pods.len() == usize::try_from(replicas).unwrap_or(0)
            && (0..replicas).all(|o| {
                self.pods.get(&o).is_some_and(|p| {
                    p.revision == update && !p.unavailable(self.min_ready(), self.t)
                })
            })
    }
}
