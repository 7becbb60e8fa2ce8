//! Whether this replica may write right now ([`Leadership`]): the flag the election sets, checked against
//! the clock before every write, and the gauge behind [`LEADER_METRIC`].

use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio::time::Instant;

/// Name of the gauge [`Leadership::gauge`] feeds: 1 while this replica holds the Lease, else 0.
pub const LEADER_METRIC: &str = "sts_safe_rollout_leader";
/// Help text of [`LEADER_METRIC`].
pub const LEADER_METRIC_HELP: &str =
    "1 while this replica holds the leader Lease and may step StatefulSets, else 0";

/// Whether this replica may write right now. Cheap to clone; every clone sees the same election.
#[derive(Clone, Debug)]
pub struct Leadership {
    /// Until when this replica may write (`None`: not leader); `sole` replicas always may.
    pub(super) until: Arc<Mutex<Option<Instant>>>,
    pub(super) sole: bool,
    pub(super) flag: watch::Receiver<bool>,
    pub(super) gauge: Gauge,
    pub(super) stop: Arc<watch::Sender<bool>>,
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
    /// or two instead of a whole lease duration. Await the task [`super::spawn`] returned to know when.
    pub fn resign(&self) {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.stop.send_replace(true);
    }

    /// Until when this replica may write (`None`: not leader).
    pub(super) fn valid_until(&self) -> Option<Instant> {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
