//! `status`'s flags about the in-cluster stepper's record: where its signs of life are, how old they
//! may be, and whether to evaluate the gates locally too.

use clap::Args;
use jiff::SignedDuration;

use crate::cli::values::parse_duration;

/// How `status` shows the recorded verdict (docs/commands.md, "status").
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Recorded verdict")]
pub struct RecordArgs {
    /// Also evaluate the gates on this machine, with its own flags and RBAC: the NEXT (LOCAL VIEW)
    /// column, and the flags this machine lacks for each set's checks. Without it, the table shows what
    /// the in-cluster stepper recorded.
    #[arg(long)]
    pub local: bool,

    /// The namespace of the in-cluster stepper, where its Lease and CronJob `sts-stepper` say when
    /// it last ran.
    #[arg(long, value_name = "NAMESPACE", default_value = "sts-safe-rollout")]
    pub stepper_namespace: String,

    /// A record is stale when the stepper showed no sign of life for this long (default: the shipped
    /// CronJob's minute plus its Jobs' activeDeadlineSeconds, 300 s).
    #[arg(long, value_name = "DURATION", default_value = "6m", value_parser = parse_duration)]
    pub stale_after: SignedDuration,
}

impl Default for RecordArgs {
    fn default() -> Self {
        RecordArgs {
            local: false,
            stepper_namespace: "sts-safe-rollout".into(),
            stale_after: SignedDuration::from_mins(6),
        }
    }
}
