//! What the gates conclude for one StatefulSet: the [`Verdict`] (why an idle set needs no step:
//! [`Idle`]), and the whole [`Evaluation`] with what the gates ask the pass to read and write.

use super::approval::writes::PodWrite;
use super::pause_points;
use super::probes::Need;
use crate::model::reasons::Blocked;

/// Why a guarded StatefulSet needs no step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// No staged update: `status.updateRevision == status.currentRevision` and every replica updated.
    UpToDate,
    /// An update is staged but the partition is already 0 (or absent): the StatefulSet controller rolls
    /// the remaining pods by itself; nothing is left for the stepper.
    PartitionZero,
}

/// What the gates conclude for one StatefulSet in this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not guarded (`updateStrategy.type: OnDelete`, or `<prefix>/force-rolling-update: "true"`): the
    /// stepper leaves it alone. The string says which.
    Unguarded(&'static str),
    /// Guarded, nothing to step.
    Idle(Idle),
    /// A gate failed; the partition stays.
    Blocked(Blocked),
    /// Lower the partition from `from` (the value observed, pinned by the patch's `test` op) to `to`.
    Step {
        /// The partition the gates saw (`spec.updateStrategy.rollingUpdate.partition`).
        from: i32,
        /// The new partition: `max(0, min(from, spec.replicas) − step)`.
        to: i32,
        /// `status.updateRevision` the gates saw (pinned by the patch's `test` op).
        update_revision: String,
    },
}

/// The full result of the gates for one set.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The verdict (with `need` set, a `Blocked` saying what is not read yet).
    pub verdict: Verdict,
    /// A read that would let the verdict go further.
    pub need: Option<Need>,
    /// Annotation changes the gates ask for (`Some` sets, `None` removes), by full key: the Prometheus
    /// check's state, or the pause after `failure-limit` failures.
    pub changes: Vec<(String, Option<String>)>,
    /// The block is part of the rollout's normal rhythm even though its reason may not be
    /// ([`Reason::is_expected_wait`]): a Prometheus check counting up its successes.
    pub expected_wait: bool,
    /// What the canary plan writes ([`super::pause_points`]): a pause now (with a `Paused` block), or with a
    /// step its bake-time resume and the pause at the point it reaches.
    pub canary: Option<Box<pause_points::PlanEffect>>,
    /// The writes on the set's pods the approval handshake asks for ([`super::approval::pod_writes`]).
    pub pod_writes: Vec<PodWrite>,
    /// While the next step waits for the application: (seconds waited, `approval-timeout-seconds`).
    pub approval_wait: Option<(i64, i64)>,
    /// What the approval gates wait for, in one stable line ([`super::approval::note`]): the value of
    /// `<prefix>/approval-pending` while they hold the step.
    pub approval_note: Option<String>,
    /// A pod's denial (name, reason) that answers no request of this pass (the pod denied before it
    /// was asked): announced `ApprovalDenied` when [`Evaluation::approval_note`] becomes it. A denial
    /// answering a request is announced with the request's withdrawal instead.
    pub unasked_denial: Option<(String, String)>,
}

impl Evaluation {
    /// `verdict`, with nothing to read or write.
    pub(super) fn of(verdict: Verdict) -> Self {
        Evaluation {
            verdict,
            need: None,
            changes: Vec::new(),
            expected_wait: false,
            canary: None,
            pod_writes: Vec::new(),
            approval_wait: None,
            approval_note: None,
            unasked_denial: None,
        }
    }
}
