//! What a gate asks the pass to write on its StatefulSet, typed ([`Effect`]): a gate says what it wants
//! done; `plan::effects` alone turns it into annotation changes, `test` guards and Events by matching on
//! the enum (no key is scanned, no value a gate wrote is parsed back).
//!
//! Two other kinds of write keep their own types: the approval handshake's pod writes
//! ([`super::approval::PodWrite`], on the pods, not the set) and the canary plan's
//! ([`super::pause_points::PlanEffect`], folded into the step).

use jiff::Timestamp;

use super::approval::webhook::state::WebhookState;
use super::check::CheckState;
use sts_safe_rollout_rules::annotations as names;

use crate::config::{FailedRevision, Keys, SetConfig};
use crate::model::degraded::{DegradedKind, Record};

/// A gate's own state annotation on the set, kept from pass to pass for one step and removed by the
/// step (the next step's checks count from zero, its request is new): a `state` row of
/// [`names::DECLARED`], by its short name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateKey(&'static str);

impl StateKey {
    /// The state annotation of short name `name`: a `state` row of [`names::DECLARED`] (a check kind
    /// declares its own beside its gate, `CheckKind::STATE`; `tests/docs/change_kinds.rs` holds every
    /// `state` row to one `StateKey::of` or constant here).
    pub const fn of(name: &'static str) -> StateKey {
        StateKey(name)
    }

    /// `<prefix>/webhook-state`: the approval webhook's record (`gates::approval::webhook`).
    pub const WEBHOOK: StateKey = StateKey(names::WEBHOOK_STATE);

    /// Every state annotation, in declaration order (the order their `test` guards are written):
    /// derived from [`names::step_state`], never listed by hand.
    pub fn all() -> impl Iterator<Item = StateKey> {
        names::step_state().map(StateKey)
    }

    /// The short name (`prometheus-check`).
    pub fn name(self) -> &'static str {
        self.0
    }

    /// The full annotation key under `keys`' prefix.
    pub fn key(self, keys: &Keys) -> String {
        keys.full(self.0)
    }

    /// The value stored on the set as read (`None`: absent).
    pub fn stored(self, config: &SetConfig) -> Option<&str> {
        config.stamps.state(self.0)
    }
}

/// A gate that holds the step on a `degraded-reason` record of its own (docs/annotations.md,
/// `degraded-reason`): the kinds it writes, and so the kinds it may remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DegradedOwner {
    /// A check (Prometheus, HTTP): `CheckErrors` after `check-error-limit` errors in a row.
    Check,
    /// The approval handshake on the pods: `ApprovalTimeout`.
    Handshake,
    /// The approval webhook: `WebhookErrors` after `webhook-error-limit` calls without a decision, or
    /// `ApprovalTimeout`.
    Webhook,
}

impl DegradedOwner {
    /// The `degraded-reason` kinds this owner writes (each [`DegradedKind::held_by_a_gate`]).
    pub fn kinds(self) -> &'static [DegradedKind] {
        match self {
            DegradedOwner::Check => &[DegradedKind::CheckErrors],
            DegradedOwner::Handshake => &[DegradedKind::ApprovalTimeout],
            DegradedOwner::Webhook => &[DegradedKind::WebhookErrors, DegradedKind::ApprovalTimeout],
        }
    }
}

/// What a gate asks the pass to write on the set once the gate was reached.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Write a check's counts (`state`) under its state annotation (`key`:
    /// its `CheckKind::STATE`), pinned by a `test` op on the value
    /// read so two steppers never both count one period's check.
    CheckState {
        /// The check's state annotation.
        key: StateKey,
        /// The counts to record.
        state: CheckState,
    },
    /// Remove a gate's state annotation (a check that paused the rollout), pinned as
    /// [`Effect::CheckState`].
    ClearState(StateKey),
    /// Write the approval webhook's record (`webhook-state`), pinned as [`Effect::CheckState`]; its
    /// news against the record read (a first call, a new denial) are announced.
    WebhookState(Box<WebhookState>),
    /// Pause the rollout after a failure (`failure-limit` failures of a check, a step past
    /// `progress-deadline-seconds`): `paused: "true"`, `paused-reason: "<reason> (at <at>)"`,
    /// `degraded-reason: <kind>: <reason>`, announced `RolloutPaused`.
    Pause {
        /// The `degraded-reason` kind: [`DegradedKind::FailureLimit`] or
        /// [`DegradedKind::ProgressDeadline`].
        kind: DegradedKind,
        /// Why, in one line (the check's last failure, the step's pods not Ready).
        reason: String,
        /// When the pass decided it.
        at: Timestamp,
    },
    /// Roll the set back after a failure (`on-failure: rollback`, `gates::rollback`): write back
    /// `.spec.template` from the ControllerRevision `to` (`status.currentRevision`), record `failed`
    /// in `failed-revision` and `degraded-reason: RolledBack: …`, announced `RolledBack`. The pass
    /// reads the ControllerRevision and writes it all in one patch, pinned to the revisions read.
    RollBack {
        /// The failed `status.updateRevision` and why.
        failed: FailedRevision,
        /// The ControllerRevision to return to: `status.currentRevision`.
        to: String,
    },
    /// A `degraded-reason` record the gate holds the step on: `Some(value)` is written when nothing is
    /// recorded (the first value stays until removed: one `RolloutDegraded` Event per episode);
    /// `None` removes a record of one of `owner`'s kinds. A record of another kind is never touched.
    Degraded {
        /// The gate that holds the record.
        owner: DegradedOwner,
        /// The record the gate's state calls for now.
        wanted: Option<Record>,
    },
    /// The line `<prefix>/approval-pending` records while an approval gate holds the step
    /// (`gates::approval::note`).
    ApprovalNote {
        /// The line.
        note: String,
        /// A pod's denial (name, reason) that answers no request of this pass (the pod denied before
        /// it was asked): announced `ApprovalDenied` when the line becomes `note`. A denial answering a
        /// request is announced with the request's withdrawal instead.
        unasked_denial: Option<(String, String)>,
    },
}
