//! The approval handshake on the pods ([`Answerer::Pods`](crate::config::Answerer::Pods)) at gate
//! `ApprovalPending`: its detail, and what it asks the pass to write — the requests on the step's pods
//! ([`pod_writes`]) and the `degraded-reason: ApprovalTimeout: …` record.

use super::handshake::{Handshake, handshake};
use super::note::{self, names};
use super::step::pods_of;
use super::writes::{PodWriteKind, pod_writes, withdraw_answered};
use crate::config::ApprovalConfig;
use crate::gates::effect::{DegradedOwner, Effect};
use crate::gates::input::GateInput;
use crate::gates::verdict::{Evaluation, Verdict};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// `ApprovalPending` with the handshake (`config`): passes once every pod the next step would replace
/// approved `status.updateRevision`; a denial, a wait and a timeout block.
pub(super) fn pending(input: &GateInput<'_>, config: &ApprovalConfig) -> Result<(), Blocked> {
    let pods = pods_of(input);
    let revision = set::update_revision(input.set);
    let detail = match handshake(&pods, input.now, config.timeout_seconds) {
        Handshake::Approved => return Ok(()),
        Handshake::Denied { pod, reason } => note::denied(&pod, &reason),
        Handshake::Waiting {
            pods,
            timed_out: true,
            ..
        } => note::timed_out(&names(&pods), revision, config.timeout_seconds, None),
        Handshake::Waiting { pods, waited, .. } => format!(
            "waiting {waited} s of {} s for approval of {} on {revision}",
            config.timeout_seconds,
            names(&pods)
        ),
    };
    Err(Blocked::new(
        Reason::ApprovalPending,
        format!("{}: {detail}", set::name(input.set)),
    ))
}

/// Records in `ev` what the handshake asks for once its gates were reached: the pod writes, and the
/// `ApprovalTimeout` record (written when nothing else is recorded, removed once the step's pods are
/// no longer past their timeout); a switchover under way is part of the rollout's rhythm
/// ([`Evaluation::expected_wait`]).
pub(super) fn effects(input: &GateInput<'_>, config: &ApprovalConfig, ev: &mut Evaluation) {
    let keys = &input.config.keys;
    let pods = pods_of(input);
    let revision = set::update_revision(input.set);
    ev.pod_writes = pod_writes(&pods, input.pods, revision, keys, input.now);
    if matches!(ev.verdict, Verdict::Step { .. }) {
        // Approved, so answered: the step's requests go with the step (a rollback right after it,
        // before the controller replaces the pods, leaves none behind).
        ev.pod_writes.extend(withdraw_answered(&pods, keys));
    }
    if pods.iter().any(|p| p.primary) {
        ev.expected_wait = true;
    }
    let handshake = handshake(&pods, input.now, config.timeout_seconds);
    if let Handshake::Waiting { waited, .. } = handshake {
        ev.approval_wait = Some((waited, config.timeout_seconds));
    }
    let approval_note = match &handshake {
        Handshake::Approved => None,
        Handshake::Denied { pod, reason } => {
            let withdrawn = ev
                .pod_writes
                .iter()
                .any(|w| &w.name == pod && matches!(w.kind, PodWriteKind::Denied(_)));
            Some(Effect::ApprovalNote {
                note: note::denied(pod, reason),
                unasked_denial: (!withdrawn).then(|| (pod.clone(), reason.clone())),
            })
        }
        Handshake::Waiting { pods, since, .. } => Some(Effect::ApprovalNote {
            note: note::waiting(
                &names(pods),
                revision,
                since.unwrap_or(input.now),
                config.timeout_seconds,
            ),
            unasked_denial: None,
        }),
    };
    ev.effects.extend(approval_note);
    let wanted = match handshake {
        Handshake::Waiting {
            pods,
            timed_out: true,
            ..
        } => Some(note::timed_out_record(
            &names(&pods),
            revision,
            config.timeout_seconds,
            None,
        )),
        _ => None,
    };
    ev.effects.push(Effect::Degraded {
        owner: DegradedOwner::Handshake,
        wanted,
    });
}
