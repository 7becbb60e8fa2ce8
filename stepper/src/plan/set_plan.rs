//! The plan for one StatefulSet ([`SetPlan`]) and how one evaluated set becomes it: the status
//! annotations, the step patch carrying them and the canary plan's writes (one write), the recovery
//! finding, a pod to return.

use std::collections::BTreeMap;
use std::sync::Arc;
use sts_safe_rollout_rules::annotations as names;

use jiff::Timestamp;
use json_patch::Patch;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};

use crate::config::{Answerer, SetConfig};
use crate::gates::recovery;
use crate::gates::{self, Evaluation, NextStep, StepError, Verdict, pause_points};
use crate::model::set;
use crate::plan::degraded::StuckPods;
use crate::plan::events::EventNote;
use crate::plan::figures::Figures;
use crate::plan::{canary, degraded, patch, rbac, rollback, status_annotations};

/// The plan for one StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub struct SetPlan {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// The StatefulSet as read (shared with the snapshot): Events regard it ([`SetPlan::reference`]).
    pub set: Arc<StatefulSet>,
    /// Its annotations, as read (shared with the planner's source: `watch`'s caches parse once per
    /// watch event).
    pub config: Arc<SetConfig>,
    /// Figures to report.
    pub figures: Figures,
    /// What the gates concluded.
    pub verdict: Verdict,
    /// Metadata-only JSON Patch of the status annotations ([`status_annotations::status_changes`]);
    /// `None` when nothing changes or a step carries them in its own patch.
    pub status_annotations: Option<Patch>,
    /// Events to publish once `status_annotations` (or the step carrying them) is applied.
    pub status_events: Vec<EventNote>,
    /// The step's JSON Patch ([`patch::step_patch`]) when the verdict is [`Verdict::Step`].
    pub step: Option<Patch>,
    /// The set's stuck pod and what recovery does with it ([`recovery::decide`]; its pods were read),
    /// `None` when it has none. The status annotations record one past its recovery time that is
    /// not deleted (`degraded-reason: StuckPod: …`); the pass deletes one decided `Delete`.
    pub recovery: Option<Box<recovery::Finding>>,
    /// The writes on the set's pods the approval handshake asks for (requests, answered and withdrawn
    /// requests: [`crate::gates::approval::pod_writes`]), each its own merge patch.
    pub pod_writes: Vec<gates::approval::PodWrite>,
    /// The rollback a failure asks for (`on-failure: rollback`): the pass reads the ControllerRevision
    /// and writes it in a patch of its own, after the status annotations.
    pub rollback: Option<crate::plan::effects::Rollback>,
    /// A pod a re-apply left on the failed revision and what the gates of its step back say
    /// ([`gates::returning`]); the pass deletes it when none holds it ([`gates::returning::Return::deletes`]).
    pub returning: Option<Box<gates::returning::Return>>,
    /// `metadata.annotations` was present on the set as read (a refused write's record adds a key
    /// to it, or the whole map: [`crate::plan::rejected::record_patch`]).
    pub annotated: bool,
}

impl SetPlan {
    /// Reference for Events (`apps/v1`, kind, namespace, name, uid, resourceVersion) to the set as
    /// read; built when an Event is about to be published, not for every plan.
    pub fn reference(&self) -> ObjectReference {
        set::reference(&self.set)
    }

    /// The step past the gates ([`gates::next_step`], whether or not a gate blocks it), or why none
    /// can be pinned; `None` before the gates (unguarded or idle: [`gates::before_gates`]).
    pub fn next_step(&self) -> Option<Result<NextStep, StepError>> {
        gates::before_gates(&self.set, &self.config)
            .is_none()
            .then(|| gates::next_step(&self.set, &self.config))
    }

    /// True when the plan has no write: no status annotations, no step (so a verdict that is not
    /// [`Verdict::Step`], which always has its patch), no pod write, no rollback, no pod to return,
    /// hence no Event either.
    pub fn writes_nothing(&self) -> bool {
        self.status_annotations.is_none()
            && self.step.is_none()
            && self.pod_writes.is_empty()
            && self.rollback.is_none()
            && !self.deletes_a_pod()
    }

    /// True when the plan returns a pod to `status.currentRevision` this pass (a DELETE).
    pub fn deletes_a_pod(&self) -> bool {
        self.returning.as_ref().is_some_and(|r| r.deletes())
    }
}

/// The writes and Events for one evaluated StatefulSet (`config`: its parsed annotations, kept in the
/// plan); `(read, stuck, may_delete)`: whether its pods were read, its recovery finding, and whether
/// the stepper may delete pods in its namespace ([`rbac::change`]; `None`: not asked).
pub(super) fn plan_evaluated(
    set: &Arc<StatefulSet>,
    config: Arc<SetConfig>,
    pods: &BTreeMap<u32, &Pod>,
    mut ev: Evaluation,
    (read, stuck, may_delete): (bool, Option<recovery::Finding>, Option<bool>),
    now: Timestamp,
) -> SetPlan {
    let stuck_pods = if read {
        StuckPods::Read(stuck.as_ref())
    } else {
        StuckPods::NotRead
    };
    // Before the pod writes are taken: a withdrawal under way is recorded (`approval-pending`).
    let mut status = status_annotations::status_changes(set, &config, pods, &ev, stuck_pods, now);
    // `degraded-reason`, decided once over what the step, the rollback and the gates claim.
    let mut also = Vec::new();
    if let Verdict::Step {
        update_revision, ..
    } = &ev.verdict
    {
        let new_revision = patch::ends_rollback(set, &config, update_revision);
        also.push(degraded::Claim::Step { new_revision });
    }
    if let Some(rb) = &status.rollback {
        also.push(degraded::Claim::RolledBack(rollback::record(rb)));
    }
    status.settle_degraded(&config, also);
    if config.marked {
        let (change, event) = rbac::change(set, &config, may_delete);
        if let Some(value) = change {
            status
                .changes
                .push((config.keys.of(names::MISSING_RBAC).to_string(), value));
        }
        status.events.extend(event);
    }
    let pod_writes = std::mem::take(&mut ev.pod_writes);
    let returning = ev.returning.take();
    let rollback = status.rollback.take();
    let mut events = std::mem::take(&mut status.events);
    // A step carries its bookkeeping and the canary plan's writes ([`canary::writes`]) in its own
    // patch: one write, so its `test` pins hold for all of it; a pause without a step joins the
    // status annotations.
    let plan_writes = (ev.canary.as_deref()).map(|e| canary::writes(set, &config, e));
    let (annotations, step) = match (&ev.verdict, plan_writes) {
        (
            Verdict::Step {
                from,
                to,
                update_revision,
            },
            writes,
        ) => {
            if let Some(answerer) = &config.answerer {
                let pods = gates::approval::step_pods(
                    set,
                    pods,
                    (*from, *to),
                    config.primary.as_ref(),
                    &config.keys,
                );
                let names: Vec<&str> = pods.iter().map(|p| p.name).collect();
                match answerer {
                    // No pod to replace: nothing was asked.
                    Answerer::Webhook(_) if names.is_empty() => {}
                    Answerer::Webhook(w) => events.push(EventNote::webhook_approved(
                        &w.name,
                        &names,
                        update_revision,
                    )),
                    Answerer::Pods(_) => events.push(EventNote::approved(&names, update_revision)),
                }
            }
            let mut step = patch::step_patch(set, &config, *from, *to, update_revision, now);
            patch::fold_annotations(set, &status.changes, &mut step);
            if let Some(w) = writes {
                patch::fold_annotations(set, &w.changes, &mut step);
                // After the step's own pins (partition, updateRevision).
                step.0.splice(2..2, w.pins);
                events.extend(w.events);
            }
            (None, Some(step))
        }
        (_, Some(w))
            if !matches!(
                ev.canary.as_deref(),
                Some(pause_points::PlanEffect::WithStep { .. })
            ) =>
        {
            status.changes.extend(w.changes);
            status.guards.extend(w.pins);
            events.extend(w.events);
            (status.patch(set), None)
        }
        _ => (status.patch(set), None),
    };
    SetPlan {
        namespace: set.metadata.namespace.clone().unwrap_or_default(),
        name: set.metadata.name.clone().unwrap_or_default(),
        set: set.clone(),
        figures: Figures {
            approval_wait: ev.approval_wait,
            ..Figures::of(set, &config)
        },
        config,
        verdict: ev.verdict,
        status_annotations: annotations,
        status_events: events,
        step,
        recovery: stuck.map(Box::new),
        pod_writes,
        rollback,
        returning,
        annotated: set.metadata.annotations.is_some(),
    }
}
