//! Leader election on a `coordination.k8s.io/v1` Lease: which `watch` replica may write right now.
//!
//! The protocol is client-go's `leaderelection` (k8s.io/client-go/tools/leaderelection,
//! `tryAcquireOrRenew`): every candidate GETs the Lease every `retry_period`; a Lease this candidate
//! has seen unchanged (same `resourceVersion`) for `leaseDurationSeconds` is expired and may be
//! taken (`leaseTransitions` + 1); the holder renews `renewTime`. Every write is a PUT carrying the
//! `resourceVersion` it read, so of two candidates racing for one Lease only one wins (HTTP 409 for
//! the other). Expiry is measured on this process's monotonic clock from when it
//! saw the Lease change, never by comparing `renewTime` with the local wall clock, so clock skew
//! between nodes does not matter (only clock rate does).
//!
//! The holder stops writing — [`Leadership::is_leader`] turns false — `renew_deadline` after it
//! *sent* its last successful renewal, even if the API server never answers the next one. Another
//! candidate saw that renewal no earlier than it was sent and waits `lease_duration` (>
//! `renew_deadline`) from then, so the two never both write.
//!
//! Why not a crate (read 2026-11-23): `kube-lease-manager` 0.13 needs kube 5 (0.12 builds on kube
//! 4) and its `watch()` channel stays `true` while renewals fail with API errors (it logs and backs
//! off), so a cut-off leader keeps writing after its lease expired; `kube-leader-election` 0.44 takes
//! and renews with merge patches without a `resourceVersion` precondition (two candidates can both
//! take an expired lease) and judges expiry on the wall clock; `kube-coordinate` needs kube 2;
//! kube-runtime 4 has no leader election.
//!
//! Layer `leader` (I/O): the election (`elector`, its pure rule in `record`, its settings in
//! `config`, what it decides in `leadership`) and the
//! [`cluster::LeaderCluster`] that writes only while leading. May import `cluster`, `plan`, `gates`,
//! `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod cluster;
mod config;
mod elector;
mod leadership;
mod record;

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use config::LeaderConfig;
pub use leadership::{LEADER_METRIC, LEADER_METRIC_HELP, Leadership};
pub use record::{LeaseDecision, decide, first_record};

/// Starts the election for `config` on `leases` (the Api of the stepper's own namespace).
///
/// # Errors
/// [`LeaderConfig::validate`]'s.
pub fn spawn(
    leases: Api<Lease>,
    config: LeaderConfig,
) -> Result<(Leadership, JoinHandle<()>), String> {
    config.validate()?;
    let (flag_tx, flag) = watch::channel(false);
    let (stop, stop_rx) = watch::channel(false);
    let leadership = Leadership {
        until: Arc::default(),
        sole: false,
        flag,
        gauge: Gauge::default(),
        stop: Arc::new(stop),
    };
    let elector = elector::Elector {
        leases,
        config,
        seen: None,
        state: leadership.clone(),
        flag: flag_tx,
        stop: stop_rx,
        holder: None,
        failing: false,
    };
    Ok((leadership, tokio::spawn(elector.run())))
}
