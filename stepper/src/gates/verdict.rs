//! What the gates conclude for one StatefulSet: the [`Verdict`] (why an idle set needs no step:
//! [`Idle`]), and the whole [`Evaluation`] with what the gates ask the pass to read and write.

use super::approval::writes::PodWrite;
use super::effect::Effect;
use super::pause_points;
use super::probes::Need;
use super::return_pod::Return;
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
    /// What the gates reached ask the pass to write on the set, in gate order (`plan::effects` turns
    /// them into annotation changes, `test` guards and Events).
    pub effects: Vec<Effect>,
    /// The block is part of the rollout's normal rhythm even though its reason may not be
    /// (`Reason::is_expected_wait`): a Prometheus check counting up its successes.
    pub expected_wait: bool,
    /// What the canary plan writes ([`super::pause_points`]): a pause now (with a `Paused` block), or with a
    /// step its bake-time resume and the pause at the point it reaches.
    pub canary: Option<Box<pause_points::PlanEffect>>,
    /// The writes on the set's pods the approval handshake asks for ([`super::approval::pod_writes`]).
    pub pod_writes: Vec<PodWrite>,
    /// While the next step waits for the application: (seconds waited, `approval-timeout-seconds`).
    pub approval_wait: Option<(i64, i64)>,
    /// A pod a re-apply left on the failed revision, and whether the gates of its step back let it be
    /// returned this pass ([`super::returning`], gate `FailedRevision`'s effects).
    pub returning: Option<Box<Return>>,
}

impl Evaluation {
    /// `verdict`, with nothing to read or write.
    pub(super) fn of(verdict: Verdict) -> Self {
        Evaluation {
            verdict,
            need: None,
            effects: Vec::new(),
            expected_wait: false,
            canary: None,
            pod_writes: Vec::new(),
            approval_wait: None,
            returning: None,
        }
    }

    /// The line `<prefix>/approval-pending` records and the denial it announces, when an approval gate
    /// asked for one ([`Effect::ApprovalNote`]).
    pub fn approval_note(&self) -> Option<(&str, Option<&(String, String)>)> {
        self.effects.iter().find_map(|e| match e {
            Effect::ApprovalNote {
                note,
                unasked_denial,
            } => Some((note.as_str(), unasked_denial.as_ref())),
            _ => None,
        })
    }
}
