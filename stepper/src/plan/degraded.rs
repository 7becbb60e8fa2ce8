//! `<prefix>/degraded-reason`: when a pass records on the set that its rollout needs a person, and
//! when it removes the record.
//!
//! The value is `<Kind>: <detail>` ([`sts_safe_rollout_rules::annotations::DEGRADED_REASON`]); the GitOps
//! health ([`crate::rollout::health`]) reports any value as Degraded. The status annotations own two
//! kinds: [`FAILURE_LIMIT`] (written with a check's pause, [`crate::gates::Effect::Pause`]; kept while
//! the set stays paused, removed by `resume` or once a person removes `paused`) and [`STUCK_POD`] (a
//! stuck pod past its recovery time that recovery did not delete; removed once the pass reads the
//! set's pods and finds none). The records a gate holds the step on (`CheckErrors`, `ApprovalTimeout`,
//! `WebhookErrors`: [`crate::gates::DegradedOwner`]) are the gates' own, written and removed by the one
//! rule of [`crate::plan::effects`]; a step removes them, and so does a pass with nothing left to step
//! ([`held_by_gate_cleared`]).
//! A value of another kind (e.g. `StepRejected`, recorded by a pass's write) is never touched here.

use crate::config::SetConfig;
use crate::gates::recovery::{self, Action, Finding};
use crate::gates::{Verdict, held_by_a_gate};
pub use crate::model::reasons::degraded_kind::{
    FAILURE_LIMIT, PROGRESS_DEADLINE, STUCK_POD, of as kind,
};

/// True when `recorded` (a `degraded-reason` as read) is the record of a failure's pause
/// ([`crate::gates::Effect::Pause`]: `FailureLimit`, `ProgressDeadline`): kept while the set stays
/// paused, removed with the pause by `resume`.
pub fn paused_by_failure(recorded: Option<&str>) -> bool {
    matches!(recorded.map(kind), Some(FAILURE_LIMIT | PROGRESS_DEADLINE))
}
use crate::plan::events::EventNote;

/// True when a pass with `verdict` (not a step) removes a record a gate holds the step on
/// ([`held_by_a_gate`]: `CheckErrors`, `ApprovalTimeout`, `WebhookErrors`): nothing is left to step
/// (`Idle`, `Unguarded`), so no gate holds it.
pub fn held_by_gate_cleared(recorded: Option<&str>, verdict: &Verdict) -> bool {
    held_by_a_gate(recorded) && matches!(verdict, Verdict::Idle(_) | Verdict::Unguarded(_))
}

/// The value `<kind>: <detail>`.
pub fn value(kind: &str, detail: &str) -> String {
    format!("{kind}: {detail}")
}

/// What a pass knows of the set's stuck pods.
#[derive(Clone, Copy, Debug)]
pub enum StuckPods<'a> {
    /// The set's pods were not read this pass: a recorded stuck pod is kept as it is.
    NotRead,
    /// Read: recovery's finding, if any ([`recovery::decide`]).
    Read(Option<&'a Finding>),
}

/// The `StuckPod` value for `finding` when its pod has been not Ready for at least the set's
/// `recover-after-seconds` ([`recovery::recover_after_seconds`]) and recovery does not delete it this
/// pass, e.g. `StuckPod: web-4 not Ready for more than 300s on revision web-a, its ordinal runs
/// web-b; not deleted: recovery off (--recover-stuck-pods)`. Stable from pass to pass while nothing
/// changes (no elapsed seconds in it), so it is written and announced once.
pub fn stuck_pod(config: &SetConfig, finding: &Finding) -> Option<String> {
    let after = recovery::recover_after_seconds(config);
    if finding.action == Action::Delete || finding.pod.not_ready_seconds < after {
        return None;
    }
    let p = &finding.pod;
    Some(value(
        STUCK_POD,
        &format!(
            "{} not Ready for more than {after}s on revision {}, its ordinal runs {}; {}",
            p.name, p.revision, p.expected_revision, finding.action
        ),
    ))
}

/// The `degraded-reason` change of one pass that did not set it through the gates (`Some(None)`:
/// remove it, `Some(Some(v))`: set `v`; `None`: leave it), and the Warning Event announcing a new
/// value. A value of a kind other than a failure's pause ([`paused_by_failure`]) and [`STUCK_POD`] is
/// left alone; a failure's pause record stays while the set is paused; else a stuck pod past its recovery time is
/// recorded, and removed once the pods read show none.
pub fn degraded_change(
    config: &SetConfig,
    stuck: StuckPods<'_>,
) -> (Option<Option<String>>, Option<EventNote>) {
    let current = config.stamps.degraded_reason.as_deref();
    let current_kind = current.map(kind);
    if current_kind.is_some_and(|k| k != STUCK_POD) && !paused_by_failure(current) {
        return (None, None);
    }
    let wanted = if paused_by_failure(current) && config.paused {
        current.map(str::to_string)
    } else {
        match stuck {
            StuckPods::NotRead if current_kind == Some(STUCK_POD) => current.map(str::to_string),
            StuckPods::NotRead => None,
            StuckPods::Read(finding) => finding.and_then(|f| stuck_pod(config, f)),
        }
    };
    if wanted.as_deref() == current {
        return (None, None);
    }
    let event = wanted.as_deref().map(EventNote::degraded);
    (Some(wanted), event)
}
