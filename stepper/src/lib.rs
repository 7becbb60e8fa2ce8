//! `sts-stepper`: lowers the partition of staged StatefulSets one gated step at a time.
//!
//! One pass = snapshot (one LIST each of StatefulSets, Pods, PodDisruptionBudgets) → [`gates`] (pure) →
//! [`plan`] (pure) → writes through a [`cluster::Cluster`]. The kube-rs implementation
//! ([`kube_cluster::KubeCluster`]) is the only code that talks to the API server. Specification:
//! DESIGN.md, "The stepper: one pass".
#![warn(missing_docs)]

pub mod api_error;
pub mod app;
pub mod cli;
pub mod cluster;
pub mod gates;
pub mod kube_cluster;
pub mod leader;
pub mod metrics;
pub mod pass;
pub mod plan;
pub mod prometheus;
pub mod prometheus_client;
pub mod server;
pub mod sim;
