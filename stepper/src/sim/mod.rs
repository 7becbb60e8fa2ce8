//! A simulated cluster: one StatefulSet, its pods, its ControllerRevisions and a PodDisruptionBudget on a
//! virtual clock, reconciled by a model of the upstream StatefulSet controller, behind the stepper's own
//! [`crate::cluster::Cluster`] interface — so the real, unchanged stepper pass runs against it.
//!
//! The world and the parts that act on it, each in its own file:
//!
//! - [`world`]: [`world::World`], what the API server stores for the set (raw JSON), its pods and
//!   ControllerRevisions, on a virtual clock;
//! - [`apiserver`]: writes — defaulting, the admission policy on every StatefulSet write (one call
//!   to `sts_safe_rollout_rules::decision`, in [`apiserver`]'s `admit`), the `scale` subresource, pod
//!   DELETE with `uid`/`resourceVersion` preconditions; [`objects`]: what a GET or LIST returns;
//! - [`history`]: ControllerRevisions and the templates scenarios write;
//! - [`controller`]: the StatefulSet controller, after upstream `stateful_set_control.go` (each rule
//!   names the upstream function it follows), including `OrderedReady` waiting forever on a pod that
//!   never becomes Ready (Kubernetes issue #67250);
//! - [`kubelet`]: pod timing — Pending, Running, Ready, node failures, eviction, termination;
//! - [`application`]: the application behind the pods — its primary, and an answerer of the approval
//!   handshake (delays, denials, silence, a switchover that takes time); [`webhook`]: the same
//!   application answering through its approval webhook instead (`protocol: webhook`), the stepper's
//!   POSTs served as HTTP answers its own client reads, with failure periods (timeouts, refused
//!   connections, HTTP 500, a 2xx without a decision);
//! - [`oracle`]: the harm oracle — slots down, steps taken while a gate failed, restarts while
//!   another pod was down, pods replaced without the application's approval (on the pod, or the
//!   webhook's `Approve` in the same second) or while holding the primary role; [`questions`]: its
//!   account of the questions asked of each pod, so that an answer counts only for the last one;
//! - [`cluster`]: [`cluster::SimCluster`], the [`crate::cluster::Cluster`] implementation, with API
//!   faults (409/500 on any call), `reads.rs`: its typed GET and LIST of any kind, from the objects
//!   the world stores ([`objects`]), and `probe.rs`: its [`crate::cluster::Probe`] of each kind of check
//!   read (the application's health signal for queries, its approval webhook); [`fleet`]: several sets
//!   behind one cluster;
//! - [`watched`]: the stepper's `watch` mode over the world — its real reflector caches fed with the
//!   world's changes, late by a configurable lag;
//! - [`scenario`]: scenarios as YAML data, the run loop (faults: node failure, bad revision,
//!   application-unhealthy signal, API faults, webhook errors, a stepper killed between read and
//!   write, two steppers racing), the timeline and the summary behind `sts-stepper simulate`.
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
//!   is always 0. Pod `resourceVersion`s come from their own counter (the real API server draws every
//!   object's from one etcd revision); clients only compare them for equality.
//! - Not modelled: PVCs and their retention policy, `Failed`/`Succeeded` pods (upstream `processReplica`
//!   recreates them), `spec.ordinals.start`, the `MaxUnavailableStatefulSet` feature gate (off by default:
//!   the classic one-pod rolling update is what runs), StatefulSet deletion.
//! - `kubectl rollout undo` is modelled as a main-resource write of the previous revision's template
//!   (what kubectl's strategic-merge patch amounts to); `kubectl scale` as a `scale` subresource write
//!   (no admission, generation bumped).

pub mod apiserver;
pub mod application;
pub mod cluster;
pub mod controller;
pub mod etcd;
pub mod fleet;
pub mod history;
pub mod kubelet;
pub mod objects;
pub mod oracle;
pub mod patroni;
mod pod_writes;
mod probe;
pub mod questions;
mod reads;
pub mod scenario;
pub mod sentinel;
mod system_reply;
pub mod watched;
pub mod webhook;
pub mod world;
