//! `sts-stepper`: lowers the partition of staged StatefulSets one gated step at a time.
//!
//! One pass = snapshot ([`reads`]: the StatefulSet list, then the candidates' pods and PDBs) → [`config`] (each
//! set's annotations read once) → [`gates`] (pure) → [`plan`] (pure) → writes through a
//! [`cluster::Cluster`]. The kube-rs implementation ([`kube_cluster::KubeCluster`]) is the only code
//! that talks to the API server. Map of the parts: ARCHITECTURE.md; specification: DESIGN.md, "The
//! stepper: one pass".
#![warn(missing_docs)]

pub mod api_error;
pub mod caches;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod complete;
pub mod config;
pub mod events;
pub mod figures;
pub mod fresh;
pub mod gates;
pub mod kube_cluster;
pub mod leader;
pub mod leader_args;
pub mod leader_cluster;
pub mod metrics;
pub mod pass;
pub mod pass_recovery;
pub mod patch;
pub mod pause;
pub mod plan;
pub mod plugin;
pub mod pods;
pub mod prometheus;
pub mod prometheus_client;
pub mod reads;
pub mod reasons;
pub mod recovery;
pub mod server;
pub mod set;
pub mod sim;
pub mod status_annotations;
pub mod throttle;
