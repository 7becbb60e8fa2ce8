//! The flag groups several subcommands share, each under its own `--help` heading: which sets
//! (`Scope`), what the gates consult (`Gates`), how a pass writes (`Pass`), and `status`'s output
//! format. The checks' flags are [`crate::cli::checks`]'.

// The doc comments of the flags are their `--help` text (clap), written for a terminal: `<prefix>/…`
// and bare URLs there are text, not HTML or links.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use clap::{Args, ValueEnum};
use jiff::SignedDuration;

use crate::cli::values::parse_duration;

/// Which StatefulSets a listing subcommand (`status`, `wait` without a name, `once`, `watch`) covers
/// besides `-n`.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq)]
#[command(next_help_heading = "Scope")]
pub struct ScopeArgs {
    /// Every namespace. `status` and `wait` list the current namespace without it (as `kubectl
    /// get`); `once` and `watch` cover every namespace without -n anyway (they are controllers).
    #[arg(short = 'A', long, conflicts_with = "namespaces")]
    pub all_namespaces: bool,

    /// Only StatefulSets matching this label selector (e.g. `tier=db,app!=legacy`).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// What the gates consult, for the subcommands that judge them (`once`, `watch`, `status`, `step`,
/// `wait`).
#[derive(Debug, Args, Clone, Default, PartialEq, Eq)]
#[command(next_help_heading = "Gates")]
pub struct GateArgs {
    /// Turn the PdbBlocked gate off (by default a PDB selecting the pods with
    /// status.disruptionsAllowed < 1 blocks the step).
    #[arg(long)]
    pub no_pdb_gate: bool,
}

/// How the controller subcommands (`once`, `watch`) pass: recovery, the fleet's step budget, the
/// decision's age.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Pass")]
pub struct PassArgs {
    /// Stuck-pod recovery: delete a pod that has not been Ready for <prefix>/recover-after-seconds
    /// (default 300) and runs a revision its ordinal should no longer run, so the StatefulSet
    /// controller recreates it (with OrderedReady it waits for such a pod forever). One pod per set
    /// per pass, only when no other pod of the set is down; never for a paused set, never with
    /// --dry-run. Needs pod `delete` (the opt-in RBAC component deploy/stepper/recovery/).
    #[arg(long)]
    pub recover_stuck_pods: bool,

    /// At most N steps per pass over all StatefulSets in scope (gate Throttled). Started rollouts
    /// get the budget first, then namespace/name order. Default: unlimited.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps_per_pass: Option<u32>,

    /// At most N steps in any 60 seconds over all StatefulSets in scope, counted from their
    /// <prefix>/last-partition-update stamps, so CronJob passes and restarts share one budget
    /// (gate Throttled). Default: unlimited.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps_per_minute: Option<u32>,

    /// A step decided on pods read longer ago than this is decided again on a fresh read of that
    /// set's pods before its write (nothing in the step's patch pins a pod's readiness).
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "DURATION")]
    pub max_decision_age: SignedDuration,

    /// The namespace-label scope (deploy/scope/namespace-label/): act only on sets in namespaces
    /// matching this label selector (e.g. safe-rollout.dev/guard=true), the policy's
    /// namespaceSelector. The namespaces are listed every pass (needs `list` on namespaces); a
    /// guarded set of a namespace that lost the label while staged is held OutOfScope.
    #[arg(long, value_name = "SELECTOR", help_heading = "Scope")]
    pub namespace_selector: Option<String>,
}

impl Default for PassArgs {
    fn default() -> Self {
        PassArgs {
            recover_stuck_pods: false,
            max_steps_per_pass: None,
            namespace_selector: None,
            max_steps_per_minute: None,
            max_decision_age: SignedDuration::from_secs(1),
        }
    }
}

/// `status -o`: a machine-readable document instead of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One JSON document (`RolloutStatusList`, docs/status-output.md).
    Json,
    /// The same document as YAML.
    Yaml,
}
