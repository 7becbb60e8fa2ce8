//! What a pass reports for a set without carrying out its plan: the outcome a verdict stands for, a plan
//! with no write, a write not sent for a lost Lease, a write that failed.

use crate::cluster::ClusterError;
use crate::gates::Verdict;
use crate::model::reasons::{Blocked, Reason};
use crate::pass::report::{Outcome, SetReport};
use crate::plan::SetPlan;

/// The outcome of a write that failed with `e`: blocked `ApiError` with the error, except a write not
/// sent because this replica lost the Lease ([`ClusterError::NotLeader`]): [`Outcome::NotLeader`],
/// no error.
pub(super) fn write_failed(e: ClusterError) -> (Outcome, Option<ClusterError>) {
    match e {
        ClusterError::NotLeader { action } => (Outcome::NotLeader(action), None),
        e => (
            Outcome::Blocked(Blocked::new(Reason::ApiError, e.to_string())),
            Some(e),
        ),
    }
}

/// The report of a plan with writes, in a pass that lost the Lease before them: [`Outcome::NotLeader`],
/// with no I/O (not even the fresh re-read).
pub(super) fn not_leading(p: SetPlan) -> SetReport {
    let action = format!("write to statefulset {}/{}", p.namespace, p.name);
    SetReport {
        outcome: Outcome::NotLeader(action),
        news: true,
        webhook_call: None,
        ..unwritten(p)
    }
}

/// The report of a plan that writes nothing ([`SetPlan::writes_nothing`]): what `execute` reports
/// for it, with no I/O (no write, so no Event and no refusal; its verdict is not a step).
pub fn unwritten(p: SetPlan) -> SetReport {
    let outcome = match p.verdict {
        Verdict::Blocked(b) => Outcome::Blocked(b),
        other => verdict_outcome(&other, false),
    };
    SetReport {
        outcome,
        namespace: p.namespace,
        name: p.name,
        figures: p.figures,
        error: None,
        event_errors: Vec::new(),
        decision_age_seconds: None,
        rejection: None,
        news: false,
        webhook_call: None,
    }
}

/// The outcome a verdict stands for when no write changes it.
pub fn verdict_outcome(verdict: &Verdict, dry_run: bool) -> Outcome {
    match verdict {
        Verdict::Unguarded(why) => Outcome::Unguarded(why),
        Verdict::Idle(i) => Outcome::Idle(*i),
        Verdict::Blocked(b) => Outcome::Blocked(b.clone()),
        Verdict::Step { from, to, .. } if dry_run => Outcome::WouldStep {
            from: *from,
            to: *to,
        },
        Verdict::Step { from, to, .. } => Outcome::Stepped {
            from: *from,
            to: *to,
        },
    }
}
