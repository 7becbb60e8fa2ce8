//! The approval handshake on the pods ([`Answerer::Pods`](crate::config::Answerer::Pods)) at gate
//! `ApprovalPending`: its detail, and what it asks the pass to write — the requests on the step's pods
//! ([`pod_writes`]) and the `degraded-reason: ApprovalTimeout: …` record.

use super::handshake::{Handshake, handshake};
use super::note::{self, names};
use super::step::pods_of;
use super::writes::{PodWriteKind, pod_writes, withdraw_answered};
use crate::config::ApprovalConfig;
use crate::gates::input::GateInput;
use crate::gates::verdict::{Evaluation, Verdict};
use crate::model::reasons::degraded_kind::{self, APPROVAL_TIMEOUT};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// `ApprovalPending` with the handshake (`config`): passes once every pod the next step would replace
/// approved `status.updateRevision`; a denial, a wait and a timeout block.
pub(super) fn pending(input: &GateInput<'_>, config: &ApprovalConfig) -> Result<(), Blocked> {
    let pods = pods_of(input);
    let revision = set::update_revision(input.set);
    let detail = match handshake(&pods, input.now, config.timeout_seconds) {
        Handshake::Approved => return Ok(()),
        Handshake::Denied { pod, reason } => format!("{pod} denied the update: {reason}"),
        Handshake::Waiting {
            pods,
            timed_out: true,
            ..
        } => format!(
            "{APPROVAL_TIMEOUT}: no approval of {} on {revision} within {} s",
            names(&pods),
            config.timeout_seconds
        ),
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
    ev.approval_note = match &handshake {
        Handshake::Approved => None,
        Handshake::Denied { pod, reason } => {
            let withdrawn = ev
                .pod_writes
                .iter()
                .any(|w| &w.name == pod && matches!(w.kind, PodWriteKind::Denied(_)));
            if !withdrawn {
                ev.unasked_denial = Some((pod.clone(), reason.clone()));
            }
            Some(note::denied(pod, reason))
        }
        Handshake::Waiting { pods, since, .. } => Some(note::waiting(
            &names(pods),
            revision,
            since.unwrap_or(input.now),
            config.timeout_seconds,
        )),
    };
    let wanted = match handshake {
        Handshake::Waiting {
            pods,
            timed_out: true,
            ..
        } => Some(format!(
            "{APPROVAL_TIMEOUT}: no approval of {} on {revision} within {} s",
            names(&pods),
            config.timeout_seconds
        )),
        _ => None,
    };
    let recorded = input.config.stamps.degraded_reason.as_deref();
    match wanted {
        Some(value) if recorded.is_none() => {
            ev.changes.push((keys.degraded_reason.clone(), Some(value)));
        }
        None if recorded.map(degraded_kind::of) == Some(APPROVAL_TIMEOUT) => {
            ev.changes.push((keys.degraded_reason.clone(), None));
        }
        _ => {}
    }
}
