//! `sts-stepper`: lowers the partition of staged StatefulSets one gated step at a time.
//!
//! One pass = snapshot ([`pass::reads`]: the StatefulSet list, then the candidates' pods and PDBs) →
//! [`config`] (each set's annotations read once) → [`gates`] (pure) → [`plan`] (pure) → writes through a
//! [`cluster::Cluster`]. The kube-rs implementation ([`cluster::kube::KubeCluster`]) is the only code
//! that talks to the API server. Map of the parts: ARCHITECTURE.md; specification: docs/design.md, "The
//! stepper: one pass".
//!
//! One folder per layer, each importing only the layers below it (ARCHITECTURE.md, "Layers", checked by
//! `tests/layers/`), from the bottom: the pure [`model`], [`config`], [`gates`], [`rollout`], [`plan`];
//! then the I/O [`cluster`], [`leader`], [`pass`], [`serve`], [`sim`], [`cli`] and, on top, [`commands`].
#![warn(missing_docs)]

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod gates;
pub mod leader;
pub mod model;
pub mod pass;
pub mod plan;
pub mod rollout;
pub mod serve;
pub mod sim;
