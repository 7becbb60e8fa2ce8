//! `watch`'s leader-election flags (`--leader-election-*`), parsed into a [`LeaderConfig`].

use clap::Args;
use jiff::SignedDuration;

use crate::cli::values::parse_duration;
use crate::leader::LeaderConfig;

/// Leader election for `watch` run as several replicas: only the holder of the Lease steps and sends
/// Events. Defaults as kube-controller-manager's `--leader-elect-*`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Leader election")]
pub struct LeaderElectionArgs {
    /// Elect one writer among the replicas on a coordination.k8s.io/v1 Lease.
    #[arg(long)]
    pub leader_election: bool,

    /// `metadata.name` of the Lease.
    #[arg(long, default_value = "sts-stepper", value_name = "NAME")]
    pub leader_election_lease_name: String,

    /// Namespace of the Lease: the stepper's own (e.g. from the downward API).
    #[arg(long, env = "POD_NAMESPACE", value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// This replica's `holderIdentity`, unique among the replicas (the pod name).
    #[arg(long, env = "POD_NAME", value_name = "ID")]
    pub leader_election_identity: Option<String>,

    /// How long a replica waits from the Lease's last change before it takes it (whole seconds).
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_election_lease_duration: SignedDuration,

    /// How long after its last successful renewal the leader keeps writing.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_election_renew_deadline: SignedDuration,

    /// Time between two attempts to take or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
    pub leader_election_retry_period: SignedDuration,
}

impl LeaderElectionArgs {
    /// `None` without `--leader-election`; else the Lease's namespace and the election's settings.
    ///
    /// # Errors
    /// No namespace or identity (flag or `POD_NAMESPACE` / `POD_NAME`), and
    /// [`LeaderConfig::validate`]'s errors.
    pub fn config(&self) -> Result<Option<(String, LeaderConfig)>, String> {
        if !self.leader_election {
            return Ok(None);
        }
        let namespace = self.leader_election_namespace.clone().ok_or(
            "--leader-election needs --leader-election-namespace (or POD_NAMESPACE): the \
             stepper's own namespace",
        )?;
        let identity = self.leader_election_identity.clone().ok_or(
            "--leader-election needs --leader-election-identity (or POD_NAME): a name unique \
             among the replicas",
        )?;
        let config = LeaderConfig {
            lease_duration: self.leader_election_lease_duration.unsigned_abs(),
            renew_deadline: self.leader_election_renew_deadline.unsigned_abs(),
            retry_period: self.leader_election_retry_period.unsigned_abs(),
            ..LeaderConfig::new(&self.leader_election_lease_name, identity)
        };
        config.validate()?;
        Ok(Some((namespace, config)))
    }
}
