//! The gates' effects on the set ([`Effect`]) as annotation changes, `test` guards and Events: the one
//! place that knows what each kind of effect writes, by matching on the enum.
//!
//! What the effects say of `degraded-reason` ([`Effect::Pause`]'s record, [`Effect::Degraded`]) is
//! passed on as [`degraded::Claim`]s: `plan::degraded::next` alone decides that annotation.

use json_patch::PatchOperation;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::annotations::TRUE;

use crate::config::{FailedRevision, SetConfig};
use crate::gates::{Effect, Evaluation, StateKey};
use crate::plan::approval_events;
use crate::plan::approval_pending::approval_pending;
use crate::plan::degraded;
use crate::plan::events::EventNote;
use crate::plan::patch::{ptr, test};

/// What the gates' effects write on the set in a pass without a step (a step starts the checks'
/// counts over and removes the gates' state itself, `plan::patch::step_changes`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GateWrites {
    /// Annotation changes by full key (`Some` sets, `None` removes), in the effects' order.
    pub changes: Vec<(String, Option<String>)>,
    /// One `test` op per gate state annotation written or removed: its value as read, or — when the
    /// set had none — the set's `resourceVersion` as read, so two steppers never both count one
    /// period's check or both record one webhook call.
    pub guards: Vec<PatchOperation>,
    /// The Events announcing them: `RolloutPaused` for a pause, the webhook's `ApprovalRequested` /
    /// `ApprovalDenied`.
    pub events: Vec<EventNote>,
    /// What the effects claim of `degraded-reason` (a pause's record, the gates' own records), for
    /// [`degraded::next`].
    pub degraded: Vec<degraded::Claim<'static>>,
    /// The rollback a failure asks for ([`Effect::RollBack`]): the set's write becomes the rollback's
    /// (`plan::rollback::write`), carrying these changes.
    pub rollback: Option<Rollback>,
}

/// A rollback to write: back to the template of ControllerRevision `to`, `failed` recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rollback {
    /// The failed `status.updateRevision` and why (the `failed-revision` record).
    pub failed: FailedRevision,
    /// The ControllerRevision to return to: `status.currentRevision` as read.
    pub to: String,
}

impl Rollback {
    /// The Warning `RolledBack` Event announcing it once written ([`EventNote::rolled_back`]).
    pub fn event(&self) -> EventNote {
        EventNote::rolled_back(&self.failed.revision, &self.to, &self.failed.reason)
    }
}

/// The writes of `ev`'s effects on `set` as read (`config`: its parsed annotations), in a pass without a
/// step. The approval note ([`Effect::ApprovalNote`]) comes first: its line depends on the verdict too
/// ([`approval_pending`]).
pub fn gate_writes(set: &StatefulSet, config: &SetConfig, ev: &Evaluation) -> GateWrites {
    let keys = &config.keys;
    let mut w = GateWrites::default();
    let mut pinned: Vec<StateKey> = Vec::new();
    let (line, denied) = approval_pending(config, ev);
    w.changes.extend(line);
    w.events.extend(denied);
    for effect in &ev.effects {
        match effect {
            Effect::CheckState { key, state } => {
                w.changes.push((key.key(keys), Some(state.to_annotation())));
                pinned.push(*key);
            }
            Effect::ClearState(key) => {
                w.changes.push((key.key(keys), None));
                pinned.push(*key);
            }
            Effect::WebhookState(state) => {
                w.changes
                    .push((StateKey::WEBHOOK.key(keys), Some(state.to_annotation())));
                pinned.push(StateKey::WEBHOOK);
                w.events
                    .extend(approval_events::webhook_events(config, state));
            }
            Effect::Pause { kind, reason, at } => {
                let why = format!("{reason} (at {at})");
                w.changes
                    .push((keys.of(names::PAUSED).to_string(), Some(TRUE.into())));
                w.changes
                    .push((keys.of(names::PAUSED_REASON).to_string(), Some(why.clone())));
                // The record GitOps tools report as Degraded; `resume` removes it with the pause.
                w.degraded
                    .push(degraded::Claim::Paused(degraded::Record::new(
                        *kind, reason,
                    )));
                w.events.push(EventNote::paused(&why));
            }
            Effect::Degraded { owner, wanted } => w.degraded.push(degraded::Claim::Gate {
                owner: *owner,
                wanted: wanted.clone(),
            }),
            // The pass reads the ControllerRevision and writes the rollback in one patch of its own.
            Effect::RollBack { failed, to } => {
                w.rollback = Some(Rollback {
                    failed: failed.clone(),
                    to: to.clone(),
                });
            }
            // Written above, first: `approval_pending` reads it with the verdict.
            Effect::ApprovalNote { .. } => {}
        }
    }
    for key in StateKey::all().filter(|k| pinned.contains(k)) {
        let path = ptr(&["metadata", "annotations", &key.key(keys)]);
        w.guards.push(match key.stored(config) {
            Some(old) => test(path, json!(old)),
            None => test(
                ptr(&["metadata", "resourceVersion"]),
                json!(set.metadata.resource_version.clone().unwrap_or_default()),
            ),
        });
    }
    w
}
