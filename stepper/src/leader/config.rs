//! The election's settings ([`LeaderConfig`], from the `--leader-election-*` flags) and their checks,
//! as client-go's `NewLeaderElector` makes them.

use std::time::Duration;

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
