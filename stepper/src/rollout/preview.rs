//! What the policy would do on a StatefulSet's next template change, if the set were in its scope
//! (`kubectl safe-rollout preview`): asked of the policy's own decision table
//! (`sts_safe_rollout_rules::decision`, the same code `policy.wasm` runs) with the set as stored for the
//! old object and the same set with a changed pod template for the new one. Pure: the objects in, one
//! [`Preview`] per set out.
//!
//! The answer is one of the rows of docs/design.md's table a template change can reach: staged behind the
//! partition (row `StagedOnUpdate`), rolled natively because no pod was ever Ready (`NotInitialized`), or
//! left alone (`Forced`: `force-rolling-update`; `OnDelete`). A set in a namespace the policy excludes
//! ([`EXCLUDED_NAMESPACES`]) is never sent to it.

use std::fmt;

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use sts_safe_rollout_rules::decision::{self, Change, Row};

use crate::config::SetConfig;
use crate::model::set;

pub use crate::config::EXCLUDED_NAMESPACES;

/// The pod-template annotation the preview adds to the new object: any template change takes the same
/// row of the table, whatever it changes.
const PROBE_KEY: &str = "preview.safe-rollout.dev/template-changed";

/// What the set's next template change does, if the policy receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NextChange {
    /// Staged: the policy sets the partition to `partition` (= `spec.replicas`) and the stepper rolls it
    /// out one gated step at a time.
    Staged {
        /// The partition the policy writes, a count of pods.
        partition: i32,
    },
    /// Rolled natively: no pod of the set was ever Ready (no `<prefix>/initialized` stamp, no Ready
    /// replica), so the policy removes the partition, and a broken first deployment is fixed by a re-apply.
    NotInitialized,
    /// Unguarded: `<prefix>/force-rolling-update: "true"`, the native rolling update.
    ForceRollingUpdate,
    /// Unguarded: `updateStrategy.type` is not `RollingUpdate` (`OnDelete`, named here): the controller
    /// replaces a pod only when it is deleted, nothing to stage.
    OnDelete(String),
    /// Never sent to the policy: its namespace is one of [`EXCLUDED_NAMESPACES`].
    ExcludedNamespace,
    /// The policy refuses the write (a count the API server refuses too), with its message.
    Refused(String),
}

impl fmt::Display for NextChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NextChange::Staged { partition } => write!(
                f,
                "staged behind partition {partition}; the stepper rolls it out step by step"
            ),
            NextChange::NotInitialized => write!(
                f,
                "rolls natively: no pod was ever Ready (not initialized), the partition is removed"
            ),
            NextChange::ForceRollingUpdate => {
                write!(f, "Unguarded: force-rolling-update, rolls natively")
            }
            NextChange::OnDelete(kind) => write!(
                f,
                "Unguarded: updateStrategy {kind}, pods change only when deleted"
            ),
            NextChange::ExcludedNamespace => {
                write!(f, "not guarded: its namespace is excluded by the policy")
            }
            NextChange::Refused(why) => write!(f, "refused by the policy: {why}"),
        }
    }
}

/// One set's preview.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.updateStrategy.type` (`RollingUpdate` when absent, as the API server defaults it).
    pub strategy: String,
    /// The policy's `<prefix>/guarded: "true"` mark is on the set: the policy already stages it.
    pub guarded_now: bool,
    /// A staged update the stepper in this scope would step at once: the partition (> 0) holds pods on
    /// `currentRevision` while `updateRevision` differs (or pods are still to update); `None` otherwise.
    pub staged_now: Option<i32>,
    /// What its next template change does.
    pub next: NextChange,
}

/// The preview of `set` (its annotations read into `config` under the stepper's prefix).
pub fn preview(set: &StatefulSet, config: &SetConfig) -> Preview {
    let namespace = set.metadata.namespace.clone().unwrap_or_default();
    let strategy = set
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.type_.clone())
        .unwrap_or_else(|| "RollingUpdate".into());
    let next = if EXCLUDED_NAMESPACES.contains(&namespace.as_str()) {
        NextChange::ExcludedNamespace
    } else {
        next_template_change(set, config.keys.prefix(), &strategy)
    };
    let partition = set::partition(set).unwrap_or(0);
    let staged_now = (set::is_rolling_update(set)
        && !config.forced
        && set::has_staged_update(set)
        && partition > 0)
        .then_some(partition);
    Preview {
        namespace,
        name: set::name(set).to_string(),
        strategy,
        guarded_now: config.marked,
        staged_now,
        next,
    }
}

/// The decision table's answer to an UPDATE of `set` that changes only its pod template.
fn next_template_change(set: &StatefulSet, prefix: &str, strategy: &str) -> NextChange {
    let old = match serde_json::to_value(set) {
        Ok(v) => v,
        Err(e) => return NextChange::Refused(format!("the set cannot be read as JSON: {e}")),
    };
    let mut new = old.clone();
    let template = &mut new["spec"]["template"];
    if !template.is_object() {
        *template = json!({});
    }
    let meta = &mut template["metadata"];
    if !meta.is_object() {
        *meta = json!({});
    }
    let annotations = &mut meta["annotations"];
    if !annotations.is_object() {
        *annotations = json!({});
    }
    annotations[PROBE_KEY] = Value::String("true".into());
    match decision::decide(&new, Some(&old), prefix) {
        Err(e) => NextChange::Refused(e.to_string()),
        Ok(d) => match (d.row, d.change) {
            (Row::Forced, _) => NextChange::ForceRollingUpdate,
            (Row::OnDelete, _) => NextChange::OnDelete(strategy.to_string()),
            (Row::NotInitialized, _) => NextChange::NotInitialized,
            (_, Change::SetPartition { partition, .. }) => NextChange::Staged { partition },
            (row, _) => NextChange::Refused(format!("unexpected row {row:?}")),
        },
    }
}

/// The table's GUARDED-NOW column, and the count line's wording.
pub fn guarded_word(preview: &Preview) -> &'static str {
    if preview.guarded_now { "yes" } else { "no" }
}

/// The table's STAGED-NOW column for a set with an update staged behind its partition: `partition 3: the
/// stepper steps it` when the policy marked it (`guarded`), `partition 3: not stepped (no guarded mark)`
/// when not (a partition a person or a tool set: the stepper leaves it alone); `-` otherwise.
pub fn staged_now_word(preview: &Preview) -> String {
    match preview.staged_now {
        Some(p) if preview.guarded_now => format!("partition {p}: the stepper steps it"),
        Some(p) => format!("partition {p}: not stepped (no guarded mark)"),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(marked: bool) -> Preview {
        Preview {
            namespace: "db".into(),
            name: "pg".into(),
            strategy: "RollingUpdate".into(),
            guarded_now: marked,
            staged_now: Some(2),
            next: NextChange::Staged { partition: 3 },
        }
    }

    #[test]
    fn staged_now_says_whether_the_stepper_steps_it() {
        assert_eq!(
            staged_now_word(&staged(true)),
            "partition 2: the stepper steps it"
        );
        assert_eq!(
            staged_now_word(&staged(false)),
            "partition 2: not stepped (no guarded mark)"
        );
        let idle = Preview {
            staged_now: None,
            ..staged(true)
        };
        assert_eq!(staged_now_word(&idle), "-");
    }
}
