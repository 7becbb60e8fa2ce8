//! A simulated cluster: one StatefulSet, its pods, its ControllerRevisions and a PodDisruptionBudget on a
//! virtual clock, reconciled by a model of the upstream StatefulSet controller, behind the stepper's own
//! [`crate::cluster::Cluster`] interface — so the real, unchanged stepper pass runs against it.
//!
//! - [`model`]: the world and the controller (each rule names the upstream function it follows);
//! - [`cluster`]: [`cluster::SimCluster`], the [`crate::cluster::Cluster`] implementation, with API
//!   faults (409/500 on any call); every write goes through the real admission decision
//!   (`sts_safe_rollout::decision`) as the mutating webhook would;
//! - [`scenario`]: scenarios as YAML data, the run loop (faults: node failure, bad revision,
//!   application-unhealthy signal, API faults, a stepper killed between read and write, two steppers
//!   racing), the timeline and the summary behind `sts-stepper simulate`.
//!
//! # Fidelity: what differs from a real control plane
//!
//! For whoever replays the scenarios on a real kube-apiserver + kube-controller-manager:
//!
//! - Time is whole seconds; the controller syncs once per second (the real one syncs on every watch
//!   event, within milliseconds), so real timelines run up to ~1 s per action earlier.
//! - Pods become Running and Ready after fixed delays (`timing`); real readiness follows probe periods.
//! - A node failure turns the pod NotReady at once; a real node is marked unreachable only after the
//!   node-monitor grace period (tens of seconds), and its pods follow. Eviction after 300 s
//!   (`DefaultTolerationSeconds`) is modelled; a deletion on an unreachable node completes only when the
//!   node is back (no force delete).
//! - Revision names have the real shape (`<set>-<hash>`, the safe-encoded FNV-32 alphabet) but not the
//!   real hash values (the real hash covers the serialized ControllerRevision patch); `collisionCount`
//!   is always 0.
//! - Not modelled: PVCs and their retention policy, `Failed`/`Succeeded` pods (upstream `processReplica`
//!   recreates them), `spec.ordinals.start`, the `MaxUnavailableStatefulSet` feature gate (off by default:
//!   the classic one-pod rolling update is what runs), StatefulSet deletion.
//! - `kubectl rollout undo` is modelled as a main-resource write of the previous revision's template
//!   (what kubectl's strategic-merge patch amounts to); `kubectl scale` as a `scale` subresource write
//!   (no admission, generation bumped).

pub mod cluster;
pub mod fleet;
pub mod model;
pub mod scenario;
