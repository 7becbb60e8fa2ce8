//! The plan for one StatefulSet ([`SetPlan`]) and how one evaluated set becomes it: its one write
//! ([`SetWrite`]: the status annotations alone, or carried by the step with the canary plan's writes, or
//! by the rollback), the recovery finding, a pod to return.

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
use crate::plan::set_write::{Changes, SetWrite, SpecWrite};
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
    /// The one write of the set ([`SetWrite`]): the status annotations
    /// ([`status_annotations::status_changes`]) alone, or carried by the step (when the verdict is
    /// [`Verdict::Step`]) or by the rollback; its Events published once it is written.
    pub write: SetWrite,
    /// The set's stuck pod and what recovery does with it ([`recovery::decide`]; its pods were read),
    /// `None` when it has none. The status annotations record one past its recovery time that is
    /// not deleted (`degraded-reason: StuckPod: …`); the pass deletes one decided `Delete`.
    pub recovery: Option<Box<recovery::Finding>>,
    /// The writes on the set's pods the approval handshake asks for (requests, answered and withdrawn
    /// requests: [`crate::gates::approval::pod_writes`]), each its own merge patch.
    pub pod_writes: Vec<gates::approval::PodWrite>,
    /// A pod a re-apply left on the failed revision and what the gates of its step back say
    /// ([`gates::returning`]); the pass deletes it when none holds it ([`gates::returning::Return::deletes`]).
    pub returning: Option<Box<gates::returning::Return>>,
    /// `metadata.annotations` was present on the set as read (a refused write's record adds a key
    /// to it, or the whole map: [`crate::plan::degraded::record_patch`]).
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

    /// True when the plan has no write: none on the set ([`SetWrite::writes`]: no annotation changed,
    /// no step, no rollback), no pod write, no pod to return, hence no Event either.
    pub fn writes_nothing(&self) -> bool {
        !self.write.writes(&self.set) && self.pod_writes.is_empty() && !self.deletes_a_pod()
    }

    /// The JSON Patch of the status annotations when the set's write is theirs alone; `None` when
    /// nothing changes, or a step or a rollback carries them.
    pub fn status_patch(&self) -> Option<Patch> {
        (self.write.spec == SpecWrite::Annotations)
            .then(|| self.write.patch(&self.set, None))
            .flatten()
    }

    /// The step's JSON Patch (carrying the status annotations) when the set's write is a step.
    pub fn step_patch(&self) -> Option<Patch> {
        self.write
            .is_step()
            .then(|| self.write.patch(&self.set, None))
            .flatten()
    }

    /// The Events to publish once the set's write is written, in order.
    pub fn events(&self) -> &[EventNote] {
        &self.write.events
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
    let write = match (&ev.verdict, plan_writes) {
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
            let mut annotations: Changes = patch::step_changes(set, &config, update_revision, now)
                .into_iter()
                .collect();
            annotations.extend(status.changes);
            let mut pins = Vec::new();
            if let Some(w) = writes {
                annotations.extend(w.changes);
                pins = w.pins;
                events.extend(w.events);
            }
            SetWrite {
                spec: SpecWrite::Step {
                    from: *from,
                    to: *to,
                    update_revision: update_revision.clone(),
                },
                pins,
                annotations,
                events,
            }
        }
        (_, writes) => {
            if let Some(w) = writes.filter(|_| {
                !matches!(
                    ev.canary.as_deref(),
                    Some(pause_points::PlanEffect::WithStep { .. })
                )
            }) {
                status.changes.extend(w.changes);
                status.guards.extend(w.pins);
                events.extend(w.events);
            }
            let changes: Changes = status.changes.into_iter().collect();
            match rollback {
                Some(rb) => rollback::write(&config, rb, changes, status.guards, events),
                None => SetWrite {
                    spec: SpecWrite::Annotations,
                    pins: status.guards,
                    annotations: changes,
                    events,
                },
            }
        }
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
        write,
        recovery: stuck.map(Box::new),
        pod_writes,
        returning,
        annotated: set.metadata.annotations.is_some(),
    }
}
