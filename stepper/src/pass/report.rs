//! What a pass reports: per StatefulSet the [`Outcome`] and its figures ([`SetReport`]), for the
//! pass the sets and the stuck pods recovered ([`PassReport`]) — for the log, the metrics and the
//! exit status.

use crate::cluster::ClusterError;
use crate::gates::Idle;
use crate::model::reasons::{Blocked, Reason};
use crate::pass::recovery::{RecoveryOutcome, RecoveryReport};
use crate::pass::rejected::RejectionReport;
use crate::plan::Figures;

/// What a pass did with one StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The partition was lowered `from → to`.
    Stepped {
        /// Partition before.
        from: i32,
        /// Partition after.
        to: i32,
    },
    /// `--dry-run`: the partition would have been lowered `from → to`.
    WouldStep {
        /// Partition now.
        from: i32,
        /// Partition it would get.
        to: i32,
    },
    /// A gate blocks the next step (or the API server failed: reason `ApiError`).
    Blocked(Blocked),
    /// Nothing to step.
    Idle(Idle),
    /// Not guarded; left alone.
    Unguarded(&'static str),
    /// A write's `test` op failed: the set changed since the snapshot; re-read next pass.
    Conflict(String),
    /// `on-failure: rollback`: the template of the last good revision was written back
    /// ([`crate::pass::rollback`]); the string is `failed → last good` (`web-7d… → web-6d…`).
    RolledBack(String),
    /// `--dry-run`: the set would be rolled back (`failed → last good`).
    WouldRollBack(String),
    /// A pod a re-apply left below the partition on the failed revision was deleted
    /// ([`crate::pass::returning`]); the controller creates it again from `status.currentRevision`.
    /// The string is `pod (failed → last good)`.
    Returned(String),
    /// `--dry-run`: the pod would be deleted (`pod (failed → last good)`).
    WouldReturn(String),
    /// This replica lost the Lease mid-pass ([`ClusterError::NotLeader`]): the set's write was not
    /// sent, and nothing more is written this pass; the replica that leads now decides again. Not an
    /// error (logged at INFO, not counted in `sts_safe_rollout_errors_total`, not recorded on the
    /// set). The string is the write not sent (`patch statefulset demo/web`).
    NotLeader(String),
}

impl Outcome {
    /// The outcome's kind, the first word of its text (`Stepped`, `Blocked`, `Idle`, …): the log
    /// line's `outcome` field, whose message says the rest.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Stepped { .. } => "Stepped",
            Outcome::WouldStep { .. } => "WouldStep",
            Outcome::Blocked(_) => "Blocked",
            Outcome::Idle(_) => "Idle",
            Outcome::Unguarded(_) => "Unguarded",
            Outcome::Conflict(_) => "Conflict",
            Outcome::RolledBack(_) => "RolledBack",
            Outcome::WouldRollBack(_) => "WouldRollBack",
            Outcome::Returned(_) => "Returned",
            Outcome::WouldReturn(_) => "WouldReturn",
            Outcome::NotLeader(_) => "NotLeader",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Stepped { from, to } => write!(f, "Stepped {from}→{to}"),
            Outcome::WouldStep { from, to } => write!(f, "WouldStep {from}→{to} (dry run)"),
            Outcome::Blocked(b) => write!(f, "Blocked {b}"),
            Outcome::Idle(Idle::UpToDate) => f.write_str("Idle (up to date)"),
            Outcome::Idle(Idle::PartitionZero) => {
                f.write_str("Idle (partition 0: the controller finishes the rollout)")
            }
            Outcome::Unguarded(why) => write!(f, "Unguarded ({why})"),
            Outcome::Conflict(msg) => write!(f, "Conflict (re-read next pass): {msg}"),
            Outcome::RolledBack(revisions) => write!(f, "RolledBack {revisions}"),
            Outcome::WouldRollBack(revisions) => {
                write!(f, "WouldRollBack {revisions} (dry run)")
            }
            Outcome::Returned(what) => write!(f, "Returned {what}"),
            Outcome::WouldReturn(what) => write!(f, "WouldReturn {what} (dry run)"),
            Outcome::NotLeader(action) => write!(
                f,
                "NotLeader (lost the Lease mid-pass: {action} not sent, nothing more written)"
            ),
        }
    }
}

/// The result of one pass for one StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub struct SetReport {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Figures as observed in the snapshot (the partition after a step is in the outcome), except
    /// `last_partition_update`: after a step, the stamp the step wrote.
    pub figures: Figures,
    /// What happened.
    pub outcome: Outcome,
    /// The API error that blocked this set, if any (the pass exits non-zero).
    pub error: Option<ClusterError>,
    /// Events that could not be published (the writes they describe did happen).
    pub event_errors: Vec<ClusterError>,
    /// For a step about to be written: the age of the pod read it was decided on, in seconds
    /// (`sts_safe_rollout_step_decision_age_seconds`); `None` when no step was about to be written.
    pub decision_age_seconds: Option<f64>,
    /// A write of this pass the API server refused, and whether it was recorded and announced
    /// ([`crate::pass::rejected`]).
    pub rejection: Option<Box<RejectionReport>>,
    /// This pass changed something for the set — wrote to it (with `--dry-run`: would have), lost a
    /// race, or hit an error not already recorded on it — so its log line is INFO (or ERROR); an
    /// unchanged wait is DEBUG: a pass that decides nothing logs one line, its summary.
    pub news: bool,
    /// The approval webhook this pass called for the set: its `--webhook` name and the answer's
    /// result ([`crate::gates::approval::webhook::answer::WebhookAnswer::result_label`]); `None`: no call.
    pub webhook_call: Option<(String, &'static str)>,
}

impl SetReport {
    /// The partition after this pass: `to` when stepped, else as observed.
    pub fn partition_after(&self) -> Option<i32> {
        match self.outcome {
            Outcome::Stepped { to, .. } => Some(to),
            _ => self.figures.partition,
        }
    }

    /// The stable name of what kept this set from being handled, when an error did (`error` is
    /// set): the refused write's Event reason (`StepRejected`, `StatusWriteRejected`) when a write
    /// was refused (or a step overridden), else the error's [`ClusterError::reason`] (`Refused`,
    /// `ApiStatus`, `Transport`, `WriteOverridden`). The label of
    /// `sts_safe_rollout_errors_total{reason}` and the `error_reason` of the set's log line.
    pub fn error_reason(&self) -> Option<&'static str> {
        let error = self.error.as_ref()?;
        Some(
            self.rejection
                .as_ref()
                .map_or_else(|| error.reason(), |r| r.rejection.write.reason()),
        )
    }

    /// True when a write for this set was not sent because this replica lost the Lease
    /// ([`ClusterError::NotLeader`]: the outcome, the refused write's record, or an Event): the pass
    /// writes nothing more.
    pub fn lost_leadership(&self) -> bool {
        matches!(self.outcome, Outcome::NotLeader(_))
            || self
                .rejection
                .as_ref()
                .and_then(|r| r.record_error.as_ref())
                .is_some_and(ClusterError::is_not_leader)
            || self.event_errors.iter().any(ClusterError::is_not_leader)
    }

    /// The blocking reason, if any.
    pub fn blocked_reason(&self) -> Option<Reason> {
        match &self.outcome {
            Outcome::Blocked(b) => Some(b.reason),
            // A pod returned: the set itself stays held on its failed revision.
            Outcome::Returned(_) | Outcome::WouldReturn(_) => Some(Reason::FailedRevision),
            _ => None,
        }
    }
}

/// The result of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassReport {
    /// One report per StatefulSet in scope, in LIST order.
    pub sets: Vec<SetReport>,
    /// The stuck pods recovery deleted (or would have, or failed to), at most one per set.
    pub recoveries: Vec<RecoveryReport>,
}

impl PassReport {
    /// True when some StatefulSet was blocked by an API error, or a recovery DELETE failed.
    pub fn any_errored(&self) -> bool {
        self.sets.iter().any(|s| s.error.is_some())
            || self
                .recoveries
                .iter()
                .any(|r| matches!(r.outcome, RecoveryOutcome::Failed(_)))
    }
}
