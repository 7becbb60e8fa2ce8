//! Gates `PrimaryNotMoved` and `ApprovalPending`, and what the handshake asks the pass to write: the
//! requests on the step's pods ([`approval::pod_writes`]) and the `degraded-reason: ApprovalTimeout: …`
//! record. The decision over the pods is [`approval`]'s.

use super::approval::{self, Handshake, StepPod};
use super::approval_note::{self, names};
use super::{Evaluation, GateInput, Verdict};
use crate::model::fields::{Field, pod, set as of_set};
use crate::model::reasons::degraded_kind::{self, APPROVAL_TIMEOUT};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `PrimaryNotMoved` and `ApprovalPending` read: the pods the next step replaces (replicas,
/// partition, start ordinal, revisions, each pod's revision label), the labels a `primary-selector`
/// can name, and the handshake's requests and answers on the pods (`gates::approval`).
pub const READS: &[Field] = &[
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("spec.ordinals"),
    of_set("status.updateRevision"),
    pod("metadata.labels.*"),
    pod("metadata.annotations.~own"),
];

/// The pods the next step would replace, read for the handshake and the primary's selector.
pub(super) fn step_pods<'a>(input: &GateInput<'a>) -> Vec<StepPod<'a>> {
    approval::step_pods(
        input.set,
        input.pods,
        (input.partition(), input.target()),
        input.config.primary.as_ref(),
        &input.config.keys,
    )
}

/// Gate `PrimaryNotMoved`: passes without `<prefix>/primary-selector`, or when no pod the next step
/// would replace matches it.
pub fn primary_not_moved(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some(primary) = &input.config.primary else {
        return Ok(());
    };
    let pods = step_pods(input);
    let Some(p) = pods.iter().find(|p| p.primary) else {
        return Ok(());
    };
    let keys = &input.config.keys;
    let what = if input.config.approval.is_some() {
        format!(
            "asked it to move the role ({}: Switchover)",
            keys.update_request_phase
        )
    } else if let Some(note) = super::on_webhook::switchover_note(input) {
        note
    } else {
        "move the role to an updated pod, or `step --force`".to_string()
    };
    Err(Blocked::new(
        Reason::PrimaryNotMoved,
        format!(
            "{}: {} holds the primary role ({}); {what}",
            set::name(input.set),
            p.name,
            primary.text
        ),
    ))
}

/// Gate `ApprovalPending`: passes without the handshake or the webhook, once every pod the next step
/// would replace approved `status.updateRevision`, or when the webhook answered `Approve` in this pass
/// ([`super::on_webhook`]); a denial, a wait and a timeout block.
pub fn approval_pending(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some(config) = input.config.approval else {
        return super::on_webhook::pending(input);
    };
    let pods = step_pods(input);
    let revision = set::update_revision(input.set);
    let detail = match approval::handshake(&pods, input.now, config.timeout_seconds) {
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
pub(super) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    let Some(config) = input.config.approval else {
        return super::on_webhook::effects(input, ev);
    };
    let keys = &input.config.keys;
    let pods = step_pods(input);
    let revision = set::update_revision(input.set);
    ev.pod_writes = approval::pod_writes(&pods, input.pods, revision, keys, input.now);
    if matches!(ev.verdict, Verdict::Step { .. }) {
        // Approved, so answered: the step's requests go with the step (a rollback right after it,
        // before the controller replaces the pods, leaves none behind).
        ev.pod_writes
            .extend(approval::withdraw_answered(&pods, keys));
    }
    if pods.iter().any(|p| p.primary) {
        ev.expected_wait = true;
    }
    let handshake = approval::handshake(&pods, input.now, config.timeout_seconds);
    if let Handshake::Waiting { waited, .. } = handshake {
        ev.approval_wait = Some((waited, config.timeout_seconds));
    }
    ev.approval_note = match &handshake {
        Handshake::Approved => None,
        Handshake::Denied { pod, reason } => {
            let withdrawn = ev
                .pod_writes
                .iter()
                .any(|w| &w.name == pod && matches!(w.kind, approval::PodWriteKind::Denied(_)));
            if !withdrawn {
                ev.unasked_denial = Some((pod.clone(), reason.clone()));
            }
            Some(approval_note::denied(pod, reason))
        }
        Handshake::Waiting { pods, since, .. } => Some(approval_note::waiting(
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
