//! `release`'s flags: which sets to hand back to the native rolling update, and whether a staged
//! update may then roll without the gates (`--force`) or is waited for until it is not (`--wait`).

use clap::Args;
use jiff::SignedDuration;

use crate::cli::values::{TargetRef, parse_duration, parse_target};

/// `release` arguments (docs/commands.md, "release"; docs/install.md, "Uninstall").
#[derive(Debug, Args, Clone, PartialEq, Eq)]
pub struct ReleaseArgs {
    /// One StatefulSet (NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME). Default: every
    /// StatefulSet of the current namespace (-n for others, -A for every namespace).
    #[arg(value_parser = parse_target)]
    pub target: Option<TargetRef>,

    /// Every namespace (not with a name).
    #[arg(
        short = 'A',
        long,
        conflicts_with = "namespaces",
        help_heading = "Scope"
    )]
    pub all_namespaces: bool,

    /// Only StatefulSets matching this label selector (e.g. `safe-rollout.dev/guard=true`).
    #[arg(short = 'l', long, value_name = "SELECTOR", help_heading = "Scope")]
    pub selector: Option<String>,

    /// Also release a set with an update staged behind its partition: the StatefulSet controller then
    /// replaces its remaining pods at once, natively, without the gates (each such set says which).
    #[arg(long, conflicts_with = "wait")]
    pub force: bool,

    /// First wait until no set in scope has an update staged (someone else finishes them: the
    /// stepper, or a person with `step`), then release; never forces. At --timeout nothing is
    /// released: exit 1, naming the sets still staged.
    #[arg(long)]
    pub wait: bool,

    /// With --wait: give up after this long (e.g. `30m`, `2h`).
    #[arg(long, default_value = "30m", value_parser = parse_duration, value_name = "DURATION",
          requires = "wait")]
    pub timeout: SignedDuration,

    /// With --wait: time between checks (one LIST of StatefulSets each).
    #[arg(long, default_value = "5s", value_parser = parse_duration, value_name = "DURATION",
          requires = "wait")]
    pub poll: SignedDuration,

    /// Say what would be written, write nothing.
    #[arg(long)]
    pub dry_run: bool,
}
