//! The application's say before a step (docs/approvals.md): gates `PrimaryNotMoved` and
//! `ApprovalPending` over the pods the next step would replace ([`step`]), asked of the set's one
//! [`Answerer`]: the pods themselves through the handshake on their annotations (`pods`: its
//! conclusion [`handshake`], its writes [`writes`]) or the approval webhook ([`webhook`]). The line
//! `approval-pending` records is [`note`]'s.

pub mod handshake;
pub mod note;
mod pods;
pub mod step;
pub mod webhook;
pub mod writes;

pub use step::{Answer, Phase, StepPod, pods_of, step_pods};
pub use writes::{PodWrite, PodWriteKind, pod_writes, withdraw_all, withdraw_answered};

use super::input::GateInput;
use super::verdict::Evaluation;
use crate::config::Answerer;
use crate::model::fields::{Field, pod, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;
use sts_safe_rollout_rules::annotations as names;

/// What `PrimaryNotMoved` and `ApprovalPending` read: the pods the next step replaces (replicas,
/// partition, start ordinal, revisions, each pod's revision label), the labels a `primary-selector`
/// can name, the handshake's requests and answers on the pods (`gates::approval`), the generation
/// the webhook's `requestId` names and the governing Service its request names (`webhook::request`:
/// a built-in answerer reaches the members through it).
pub const READS: &[Field] = &[
    of_set("metadata.generation"),
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("spec.ordinals"),
    of_set("spec.serviceName"),
    of_set("status.updateRevision"),
    pod("metadata.labels.*"),
    pod("metadata.annotations.~own"),
];

/// Gate `PrimaryNotMoved`: passes without `<prefix>/primary-selector`, or when no pod the next step
/// would replace matches it.
pub fn primary_not_moved(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some(primary) = &input.config.primary else {
        return Ok(());
    };
    let pods = pods_of(input);
    let Some(p) = pods.iter().find(|p| p.primary) else {
        return Ok(());
    };
    let keys = &input.config.keys;
    let what = match &input.config.answerer {
        Some(Answerer::Pods(_)) => format!(
            "asked it to move the role ({}: Switchover)",
            keys.of(names::UPDATE_REQUEST_PHASE)
        ),
        Some(Answerer::Webhook(w)) => webhook::switchover_note(input, w),
        None => "move the role to an updated pod, or `step --force`".to_string(),
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

/// Gate `ApprovalPending`: passes without an answerer; else as the set's [`Answerer`] says — every pod
/// of the step approved (`pods`), or the webhook answered `Approve` in this pass ([`webhook`]); a
/// denial, a wait and a timeout block.
pub fn approval_pending(input: &GateInput<'_>) -> Result<(), Blocked> {
    match &input.config.answerer {
        None => Ok(()),
        Some(Answerer::Pods(config)) => pods::pending(input, config),
        Some(Answerer::Webhook(config)) => webhook::pending(input, config),
    }
}

/// Records in `ev` what the set's answerer asks for once the approval gates were reached (requests
/// and withdrawals on the pods, the webhook's call and record, the `degraded-reason` records, the line
/// `approval-pending` records).
pub(in crate::gates) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    match &input.config.answerer {
        None => {}
        Some(Answerer::Pods(config)) => pods::effects(input, config, ev),
        Some(Answerer::Webhook(config)) => webhook::effects(input, config, ev),
    }
}
