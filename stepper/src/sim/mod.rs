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

pub mod cluster;
pub mod model;
pub mod scenario;
