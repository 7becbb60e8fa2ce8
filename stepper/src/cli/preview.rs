//! `preview`'s flags: which scope of the policy to try on the existing StatefulSets — the opt-in label
//! on the set (the default, as `deploy/` ships), a label on the namespace (`deploy/scope/namespace-label/`)
//! or every set (`deploy/scope/cluster-wide/`) — and where to look.

use clap::Args;

/// The default opt-in label as a label selector: what the policy's `objectSelector` and the stepper's
/// `--selector` select in `deploy/` (docs/install.md, "Which StatefulSets are guarded").
pub const GUARD_SELECTOR: &str = "safe-rollout.dev/guard=true";

/// `preview` arguments, under the `--help` heading "Scope" as `status`'s `-A` and `-l`.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Scope")]
pub struct PreviewArgs {
    /// Every namespace. Default: the current namespace (-n for others), as `status`.
    #[arg(short = 'A', long, conflicts_with = "namespaces")]
    pub all_namespaces: bool,

    /// The scope by a label on the StatefulSet: the policy's objectSelector and the stepper's
    /// --selector, as a label selector (e.g. `tier=db`). Default: the shipped opt-in label.
    #[arg(short = 'l', long, value_name = "SELECTOR", default_value = GUARD_SELECTOR,
          conflicts_with_all = ["namespace_selector", "cluster_wide"])]
    pub selector: String,

    /// The scope by a label on the namespace instead (deploy/scope/namespace-label/, whose label is
    /// safe-rollout.dev/guard=true): every StatefulSet of the namespaces this label selector matches.
    #[arg(long, value_name = "SELECTOR", conflicts_with = "cluster_wide")]
    pub namespace_selector: Option<String>,

    /// The cluster-wide scope instead (deploy/scope/cluster-wide/): every StatefulSet outside the
    /// namespaces the policy always excludes.
    #[arg(long)]
    pub cluster_wide: bool,
}

/// The scope `preview` tries, from its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreviewScope {
    /// StatefulSets matching this label selector (the policy's objectSelector).
    ObjectLabel(String),
    /// Every StatefulSet of the namespaces matching this label selector (the policy's namespaceSelector).
    NamespaceLabel(String),
    /// Every StatefulSet outside the excluded namespaces.
    ClusterWide,
}

impl PreviewArgs {
    /// The scope the flags name.
    pub fn scope(&self) -> PreviewScope {
        match (&self.namespace_selector, self.cluster_wide) {
            (_, true) => PreviewScope::ClusterWide,
            (Some(ns), false) => PreviewScope::NamespaceLabel(ns.clone()),
            (None, false) => PreviewScope::ObjectLabel(self.selector.clone()),
        }
    }
}

impl std::fmt::Display for PreviewScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreviewScope::ObjectLabel(s) if s == GUARD_SELECTOR => write!(
                f,
                "StatefulSets labelled {s} (the opt-in label deploy/ ships with)"
            ),
            PreviewScope::ObjectLabel(s) => write!(f, "StatefulSets labelled {s}"),
            PreviewScope::NamespaceLabel(s) => write!(
                f,
                "every StatefulSet of the namespaces labelled {s} (deploy/scope/namespace-label/)"
            ),
            PreviewScope::ClusterWide => {
                write!(f, "every StatefulSet (deploy/scope/cluster-wide/)")
            }
        }
    }
}
