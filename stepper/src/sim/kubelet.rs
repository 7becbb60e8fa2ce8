//! Pods in time: the kubelet's and the node lifecycle controller's part of a simulated pod.
//!
//! Pending → Running → Ready, node failures, taint-based eviction, graceful termination, and the
//! pod's `resourceVersion` following what the API server serves.

use super::world::World;

/// Seconds a pod stays bound to an unreachable node before it is evicted (Kubernetes
/// `DefaultTolerationSeconds`: `node.kubernetes.io/unreachable` tolerated for 300 s).
pub const EVICTION_SECONDS: i64 = 300;

/// How pods behave in time. All durations are virtual seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// From creation to phase `Running` (scheduling, image pull).
    pub pending_seconds: i64,
    /// From `Running` to condition `Ready` (readiness probe passing).
    pub ready_seconds: i64,
    /// From deletion to the pod being gone (graceful termination).
    pub terminate_seconds: i64,
    /// Extra start delay drawn uniformly from `0..=jitter_seconds` per pod, from the seed.
    pub jitter_seconds: i64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            pending_seconds: 2,
            ready_seconds: 5,
            terminate_seconds: 2,
            jitter_seconds: 0,
        }
    }
}

/// What the API server serves of a pod that can change over time: phase `Running`, the Ready
/// condition's `lastTransitionTime` while Ready, node down (reason `NodeNotReady`), terminating.
type Served = (bool, Option<i64>, bool, bool);

/// A pod of the simulated set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimPod {
    /// Ordinal (the `N` of `<set>-N`, Kubernetes `getOrdinal`).
    pub ordinal: u32,
    /// Unique id (new for each incarnation of an ordinal).
    pub uid: String,
    /// `metadata.resourceVersion`: changes whenever what the API server serves of the pod changes.
    pub resource_version: u64,
    /// The ControllerRevision name it was created from (label `controller-revision-hash`, read back
    /// by Kubernetes `getPodRevision`).
    pub revision: String,
    /// Second it was created.
    pub created: i64,
    /// Second it reaches phase `Running`.
    pub running_at: i64,
    /// Second its readiness probe first passes; `None` for a bad revision (never Ready).
    pub ready_at: Option<i64>,
    /// Second it was deleted (it is terminating from then on).
    pub deleted_at: Option<i64>,
    /// `[from, until)`: its node is down (pod NotReady; a deletion cannot complete before `until`).
    pub node_down: Option<(i64, i64)>,
    /// Second the Ready condition last turned true, while it is true (`lastTransitionTime`).
    pub ready_since: Option<i64>,
    /// `metadata.annotations` (the approval handshake's requests and answers).
    pub annotations: std::collections::BTreeMap<String, String>,
    served: Served,
}

impl SimPod {
    /// True while the pod's node is down at `t`.
    pub fn node_is_down(&self, t: i64) -> bool {
        self.node_down.is_some_and(|(a, b)| a <= t && t < b)
    }

    /// True once deleted (`metadata.deletionTimestamp` set; Kubernetes `isTerminating`).
    pub fn terminating(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// Phase `Running` at `t` (else `Pending`).
    pub fn running(&self, t: i64) -> bool {
        t >= self.running_at
    }

    /// Condition Ready true at `t`: Running, probe passing, node up, not terminating.
    fn ready_now(&self, t: i64) -> bool {
        self.running(t)
            && self.ready_at.is_some_and(|r| t >= r)
            && !self.node_is_down(t)
            && !self.terminating()
    }

    /// Kubernetes `isRunningAndReady`: phase Running and condition Ready true.
    pub fn running_and_ready(&self) -> bool {
        self.ready_since.is_some()
    }

    /// Kubernetes `isRunningAndAvailable`: Running and Ready for at least `min_ready` seconds at `t`.
    pub fn available(&self, min_ready: i64, t: i64) -> bool {
        self.ready_since.is_some_and(|s| t - s >= min_ready)
    }

    /// Kubernetes `isUnavailable` (used by `updateStatefulSet`): terminating or not available.
    pub fn unavailable(&self, min_ready: i64, t: i64) -> bool {
        self.terminating() || !self.available(min_ready, t)
    }

    /// When a deletion completes: graceful termination, but never while the node is unreachable
    /// (the kubelet cannot confirm it; the pod stays `Terminating` until the node is back).
    fn gone_at(&self, terminate_seconds: i64) -> Option<i64> {
        let deleted = self.deleted_at?;
        let mut at = deleted + terminate_seconds;
        if let Some((from, until)) = self.node_down
            && from <= at
            && at < until
        {
            at = until;
        }
        Some(at)
    }

    fn served_at(&self, t: i64) -> Served {
        (
            self.running(t),
            self.ready_since,
            self.node_is_down(t),
            self.terminating(),
        )
    }

    /// Records that the stored pod changed at `t`: a new `resourceVersion`.
    pub(super) fn stamp(&mut self, t: i64, resource_version: u64) {
        self.served = self.served_at(t);
        self.resource_version = resource_version;
    }
}

impl World {
    /// The kubelet starts a pod for `ordinal` from `revision` (just created by the controller): Running
    /// after `pending_seconds` plus a jitter drawn from the seed, Ready `ready_seconds` later unless
    /// the revision's image is bad.
    pub(super) fn start_pod(&mut self, ordinal: u32, revision: &str) {
        let bad = self.revision_is_bad(revision);
        let jitter = if self.timing.jitter_seconds > 0 {
            i64::try_from(
                self.random() % u64::try_from(self.timing.jitter_seconds + 1).unwrap_or(1),
            )
            .unwrap_or(0)
        } else {
            0
        };
        let running_at = self.t + self.timing.pending_seconds + jitter;
        let ready_at = (!bad).then_some(running_at + self.timing.ready_seconds);
        self.insert_pod(ordinal, revision, self.t, running_at, ready_at);
    }

    /// A pod for `ordinal` on `revision` that has been Running and Ready for a long time (the pods of a
    /// new [`World`]).
    pub(super) fn insert_settled_pod(&mut self, ordinal: u32, revision: &str) {
        let long_ago = -10_000;
        self.insert_pod(ordinal, revision, long_ago, long_ago, Some(long_ago));
        if let Some(p) = self.pods.get_mut(&ordinal) {
            p.ready_since = Some(long_ago);
            p.served = p.served_at(self.t);
        }
    }

    fn insert_pod(
        &mut self,
        ordinal: u32,
        revision: &str,
        created: i64,
        running_at: i64,
        ready_at: Option<i64>,
    ) {
        let uid = self.uid();
        let resource_version = self.next_pod_version();
        let mut pod = SimPod {
            ordinal,
            uid,
            resource_version,
            revision: revision.to_string(),
            created,
            running_at,
            ready_at,
            deleted_at: None,
            node_down: None,
            ready_since: None,
            annotations: std::collections::BTreeMap::new(),
            served: (false, None, false, false),
        };
        pod.served = pod.served_at(self.t);
        self.pods.insert(ordinal, pod);
    }

    /// Pods at `self.t`, as the kubelet and the node lifecycle controller move them: taint-based
    /// eviction from an unreachable node, deletions that completed, Ready transitions
    /// (`lastTransitionTime`), and a new `resourceVersion` for every pod whose served state changed.
    pub(super) fn kubelet_refresh(&mut self) {
        let t = self.t;
        let terminate = self.timing.terminate_seconds;
        // Taint-based eviction: a pod tolerates `node.kubernetes.io/unreachable:NoExecute` for
        // `EVICTION_SECONDS` (the DefaultTolerationSeconds admission plugin's default), then the node
        // lifecycle controller deletes it; the deletion completes only once the node is back.
        for p in self.pods.values_mut() {
            if let Some((from, until)) = p.node_down
                && p.deleted_at.is_none()
                && until - from > EVICTION_SECONDS
                && t >= from + EVICTION_SECONDS
            {
                p.deleted_at = Some(from + EVICTION_SECONDS);
                self.evicted.insert(p.ordinal);
            }
        }
        self.pods
            .retain(|_, p| p.gone_at(terminate).is_none_or(|gone| t < gone));
        for p in self.pods.values_mut() {
            let ready = p.ready_now(t);
            match (ready, p.ready_since) {
                (true, None) => p.ready_since = Some(t),
                (false, Some(_)) => p.ready_since = None,
                _ => {}
            }
            if ready {
                self.evicted.remove(&p.ordinal);
            }
        }
        let changed: Vec<u32> = self
            .pods
            .values()
            .filter(|p| p.served_at(t) != p.served)
            .map(|p| p.ordinal)
            .collect();
        for o in changed {
            let version = self.next_pod_version();
            if let Some(p) = self.pods.get_mut(&o) {
                p.stamp(t, version);
            }
        }
    }
}
