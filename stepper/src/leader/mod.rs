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
//! Layer `leader` (I/O): the election ([`elector`], its pure rule in [`record`]) and the
//! [`cluster::LeaderCluster`] that writes only while leading. May import `cluster`, `plan`, `gates`,
//! `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod cluster;
mod elector;
mod record;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub use record::{LeaseDecision, decide, first_record};

/// Name of the gauge [`Leadership::gauge`] feeds: 1 while this replica holds the Lease, else 0.
pub const LEADER_METRIC: &str = "sts_safe_rollout_leader";
/// Help text of [`LEADER_METRIC`].
pub const LEADER_METRIC_HELP: &str =
    "1 while this replica holds the leader Lease and may step StatefulSets, else 0";

/// The election's settings (flags `--leader-election-*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderConfig {
    /// `metadata.name` of the Lease, e.g. `sts-stepper`.
    pub lease_name: String,
    /// This candidate's `holderIdentity`, unique among the candidates (the pod name).
    pub identity: String,
    /// `leaseDurationSeconds`: how long a candidate waits, from when it saw the record change,
    /// before it takes the Lease (whole seconds; client-go's default 15 s).
    pub lease_duration: Duration,
    /// How long after sending its last successful renewal the holder keeps writing (client-go's
    /// default 10 s). Must be shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// Time between two attempts to take or renew the Lease (client-go's default 2 s). Must be
    /// shorter than `renew_deadline`.
    pub retry_period: Duration,
}

impl LeaderConfig {
    /// client-go's defaults (kube-controller-manager's `--leader-elect-*`): 15 s, 10 s, 2 s.
    pub fn new(lease_name: impl Into<String>, identity: impl Into<String>) -> Self {
        LeaderConfig {
            lease_name: lease_name.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Checks the settings as client-go's `NewLeaderElector` does.
    ///
    /// # Errors
    /// Names the field and the expected form: an empty name or identity, a lease duration that is
    /// not whole seconds ≥ 1 s, `renew_deadline` ≥ `lease_duration`, `retry_period` ≥
    /// `renew_deadline` or zero.
    pub fn validate(&self) -> Result<(), String> {
        let secs = self.lease_duration.as_secs();
        if self.lease_name.is_empty() {
            Err("leader election: lease name must not be empty".into())
        } else if self.identity.is_empty() {
            Err("leader election: identity must not be empty (e.g. the pod name)".into())
        } else if secs == 0 || self.lease_duration.subsec_nanos() != 0 || secs > i32::MAX as u64 {
            Err(format!(
                "leader election: lease duration must be whole seconds ≥ 1s, got {:?}",
                self.lease_duration
            ))
        } else if self.renew_deadline >= self.lease_duration {
            Err(format!(
                "leader election: renew deadline ({:?}) must be shorter than the lease duration ({:?})",
                self.renew_deadline, self.lease_duration
            ))
        } else if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            Err(format!(
                "leader election: retry period ({:?}) must be > 0 and shorter than the renew deadline ({:?})",
                self.retry_period, self.renew_deadline
            ))
        } else {
            Ok(())
        }
    }
}

/// Whether this replica may write right now. Cheap to clone; every clone sees the same election.
#[derive(Clone, Debug)]
pub struct Leadership {
    /// Until when this replica may write (`None`: not leader); `sole` replicas always may.
    until: Arc<Mutex<Option<Instant>>>,
    sole: bool,
    flag: watch::Receiver<bool>,
    gauge: Gauge,
    stop: Arc<watch::Sender<bool>>,
}

impl Leadership {
    /// A replica without leader election (`--leader-election` off): always the leader.
    pub fn sole() -> Self {
        let gauge = Gauge::default();
        gauge.set(1);
        let (stop, _) = watch::channel(false);
        Leadership {
            until: Arc::default(),
            sole: true,
            flag: watch::channel(true).1,
            gauge,
            stop: Arc::new(stop),
        }
    }

    /// True while this replica holds the Lease and its last renewal was sent less than
    /// `renew_deadline` ago (checked against the clock on every call, so it turns false on time
    /// even if the election task is stalled). Check it right before each write.
    pub fn is_leader(&self) -> bool {
        self.sole || (*self.flag.borrow() && self.valid_until().is_some_and(|u| Instant::now() < u))
    }

    /// The flag as a channel: changes to `true` when this replica takes the Lease and to `false` at
    /// the latest `renew_deadline` after its last successful renewal was sent.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.flag.clone()
    }

    /// The gauge behind [`LEADER_METRIC`], for the metrics registry (shares its value).
    pub fn gauge(&self) -> Gauge {
        self.gauge.clone()
    }

    /// Stops the election: [`Leadership::is_leader`] is false from this call on (the channel and
    /// the gauge follow when the election task sees it), then the Lease is released (holder
    /// cleared, `leaseDurationSeconds: 1`) if held, so another candidate takes it within a second
    /// or two instead of a whole lease duration. Await the task [`spawn`] returned to know when.
    pub fn resign(&self) {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.stop.send_replace(true);
    }

    fn valid_until(&self) -> Option<Instant> {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

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
