//! `<prefix>/approval-pending`: the line the approval gates' note ([`Effect::ApprovalNote`]) records on
//! the set while they hold the step, and the `ApprovalDenied` Event of a denial given before the pod was
//! asked. Written by [`crate::plan::effects::gate_writes`], in a pass without a step (a step's own patch
//! removes the line: `names::reset_by_step`).
//!
//! [`Effect::ApprovalNote`]: crate::gates::Effect::ApprovalNote

use crate::config::SetConfig;
use crate::gates::{self, Evaluation, Verdict};
use crate::model::reasons::Reason;
use crate::plan::events::EventNote;
use sts_safe_rollout_rules::annotations as names;

/// The change of `approval-pending` for `ev` (`None`: unchanged) and the Event it announces:
/// - the note ([`Evaluation::approval_note`]) while `ApprovalPending` or `PrimaryNotMoved` holds the
///   step, or the return of a pod left on a failed revision waits for the application;
/// - for a set with nothing left to step whose requests this pass withdraws, that (so the next pass
///   reads its pods again, and retries a lost pod write);
/// - removed otherwise; written only when it differs from the set's as read.
///
/// A denial the pod gave before it was asked is announced once, as the line changes to it.
pub fn approval_pending(
    config: &SetConfig,
    ev: &Evaluation,
) -> (Option<(String, Option<String>)>, Option<EventNote>) {
    let note = match &ev.verdict {
        Verdict::Blocked(b)
            if matches!(b.reason, Reason::ApprovalPending | Reason::PrimaryNotMoved)
                || returning_waits_for_approval(ev) =>
        {
            ev.approval_note().map(|(note, _)| note.to_string())
        }
        Verdict::Idle(_) | Verdict::Unguarded(_) if !ev.pod_writes.is_empty() => {
            let pods: Vec<String> = ev.pod_writes.iter().map(|w| w.name.clone()).collect();
            Some(gates::approval::note::withdrawing(
                &gates::approval::note::names(&pods),
            ))
        }
        _ => None,
    };
    if note.as_deref() == config.stamps.approval_pending.as_deref() {
        return (None, None);
    }
    let event = match (&note, ev.approval_note().map(|(_, d)| d)) {
        (Some(_), Some(Some((pod, reason)))) => Some(EventNote::approval_denied(pod, reason)),
        _ => None,
    };
    (
        Some((config.keys.of(names::APPROVAL_PENDING).to_string(), note)),
        event,
    )
}

/// True when the return of a pod left on a failed revision ([`gates::returning`]) waits for the
/// application: the gates of its step back hold it `ApprovalPending` or `PrimaryNotMoved`, so the
/// approval note is recorded as for a step.
fn returning_waits_for_approval(ev: &Evaluation) -> bool {
    ev.returning
        .as_ref()
        .and_then(|r| r.held.as_ref())
        .is_some_and(|b| matches!(b.reason, Reason::ApprovalPending | Reason::PrimaryNotMoved))
}
