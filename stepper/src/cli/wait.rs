//! `wait`'s flags: one StatefulSet until its rollout is really complete, or every set in scope until
//! none is staged (the uninstall's "finish what is staged", docs/install.md).

use clap::Args;
use jiff::SignedDuration;

use crate::cli::flags::{GateArgs, ScopeArgs};
use crate::cli::values::{TargetRef, parse_duration, parse_target};

/// `wait` arguments (docs/commands.md, "wait").
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The StatefulSet: NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME. Without it: every
    /// StatefulSet in scope (the current namespace; -n, -A, -l), until none has an update staged.
    #[arg(value_parser = parse_target)]
    pub target: Option<TargetRef>,

    /// Give up after this long (e.g. `30m`, `1h30m`): exit 1, printing what still blocks.
    #[arg(long, default_value = "30m", value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: SignedDuration,

    /// Time between checks (one LIST of StatefulSets each; with a name, also its pods and PDBs).
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DURATION")]
    pub poll: SignedDuration,

    /// Which sets, without a name.
    #[command(flatten)]
    pub scope: ScopeArgs,

    /// What the gates consult (with a name: the gate `wait` prints is judged here).
    #[command(flatten)]
    pub gates: GateArgs,
}
