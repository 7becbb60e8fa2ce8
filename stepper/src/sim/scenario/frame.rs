//! One line of the timeline: the set's state after a virtual second.
//!
//! The partition, each pod as revision letter and state symbol, the slots down, the notes, and the
//! StatefulSet as stored (what Argo CD and Flux would evaluate at that second).

use crate::sim::world::World;

/// One pod in a timeline frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodView {
    /// Ordinal.
    pub ordinal: u32,
    /// Revision letter (`A`, `B`, …).
    pub letter: char,
    /// State symbol: `+` available, `~` Ready for less than minReadySeconds, `.` starting, `!`
    /// NotReady (node down, bad revision), `x` terminating, `_` missing.
    pub state: char,
}

/// One line of the timeline: the state after a virtual second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Virtual second.
    pub t: i64,
    /// Partition stored.
    pub partition: i32,
    /// Pods of `[0, max(replicas, highest ordinal + 1))`.
    pub pods: Vec<PodView>,
    /// Slots down (see [`World::down`]).
    pub down: usize,
    /// Of which down because of a fault.
    pub fault_down: usize,
    /// What happened this second (scenario events, policy rows, stepper outcome).
    pub notes: Vec<String>,
    /// The StatefulSet as the API server stores it after this second (JSON, what a GET returns).
    pub set: serde_json::Value,
}

/// The pods of `world` as the timeline shows them, ordinals `[0, max(replicas, highest ordinal + 1))`.
pub(super) fn pod_views(world: &World) -> Vec<PodView> {
    let replicas = u32::try_from(world.replicas()).unwrap_or(0);
    let top = world
        .pods
        .keys()
        .next_back()
        .map_or(replicas, |o| replicas.max(o + 1));
    let min_ready = world.min_ready();
    (0..top)
        .map(|o| match world.pods.get(&o) {
            None => PodView {
                ordinal: o,
                letter: ' ',
                state: '_',
            },
            Some(p) => {
                let state = if p.terminating() {
                    'x'
                } else if p.available(min_ready, world.t) {
                    '+'
                } else if p.running_and_ready() {
                    '~'
                } else if p.node_is_down(world.t) || (p.running(world.t) && p.ready_at.is_none()) {
                    '!'
                } else {
                    '.'
                };
                PodView {
                    ordinal: o,
                    letter: world.letter(&p.revision),
                    state,
                }
            }
        })
        .collect()
}
