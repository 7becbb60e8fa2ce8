//! The Events of the approval handshake and the approval webhook (docs/approvals.md):
//! `ApprovalRequested` when the stepper asks the pods of a step (or first calls the webhook about it),
//! `ApprovalDenied` when a pod's denial answers a request (or the webhook starts denying), `Approved`
//! with the step the approvals let through.

use crate::config::{Answerer, SetConfig};
use crate::gates::StateKey;
use crate::gates::approval::webhook::state::{WebhookState, news};
use crate::gates::approval::{PodWrite, PodWriteKind};
use crate::plan::events::{EventNote, EventType};

impl EventNote {
    /// `ApprovalRequested` (`Normal`): the stepper asked `pods` (names) to approve `update_revision`;
    /// `switchover` names the pod asked to move the primary role first, if any.
    pub fn approval_requested(
        pods: &[&str],
        update_revision: &str,
        switchover: Option<&str>,
    ) -> Self {
        let mut note = format!(
            "asked {} to approve updateRevision {update_revision}",
            pods.join(", ")
        );
        if let Some(pod) = switchover {
            note.push_str(&format!(
                "; {pod} holds the primary role: asked to switch over first"
            ));
        }
        EventNote::new(EventType::Normal, "ApprovalRequested", "Approve", note)
    }

    /// `ApprovalDenied` (`Warning`): `pod` denied the update with `reason` (its
    /// `<prefix>/update-denied`); the rollout waits until the application removes the denial.
    pub fn approval_denied(pod: &str, reason: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "ApprovalDenied",
            "Approve",
            format!("{pod} denied the update: {reason}"),
        )
    }

    /// `Approved` (`Normal`): `pods` approved `update_revision`, published with the step they let
    /// through.
    pub fn approved(pods: &[&str], update_revision: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "Approved",
            "Approve",
            format!(
                "{} approved updateRevision {update_revision}",
                pods.join(", ")
            ),
        )
    }
}

impl EventNote {
    /// `ApprovalRequested` (`Normal`): the first call to webhook `webhook` about a step (`state`: the
    /// record it made).
    pub fn webhook_requested(webhook: &str, state: &WebhookState) -> Self {
        let mut note = format!(
            "asked webhook {webhook} to approve updateRevision {} for {}",
            state.update_revision,
            state.pods.join(", ")
        );
        if state.phase == "Switchover" {
            note.push_str("; a pod of the step holds the primary role: asked to switch over first");
        }
        EventNote::new(EventType::Normal, "ApprovalRequested", "Approve", note)
    }

    /// `ApprovalDenied` (`Warning`): webhook `webhook` answered `Deny` (`state`: the record of it), once
    /// per denial episode.
    pub fn webhook_denied(webhook: &str, state: &WebhookState) -> Self {
        let reason = match state.reason.as_str() {
            "" => "no reason given",
            r => r,
        };
        EventNote::new(
            EventType::Warning,
            "ApprovalDenied",
            "Approve",
            format!(
                "webhook {webhook} denied the update of {}: {reason}",
                state.pods.join(", ")
            ),
        )
    }

    /// `Approved` (`Normal`): webhook `webhook` approved `update_revision` for `pods`, published with
    /// the step it let through.
    pub fn webhook_approved(webhook: &str, pods: &[&str], update_revision: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "Approved",
            "Approve",
            format!(
                "webhook {webhook} approved updateRevision {update_revision} for {}",
                pods.join(", ")
            ),
        )
    }
}

/// The Events of a new `webhook-state` record (`new`, as the gate made it) against the one `config`
/// read: `ApprovalRequested` for the first call of a request, `ApprovalDenied` when a denial episode
/// starts.
pub fn webhook_events(config: &SetConfig, new: &WebhookState) -> Vec<EventNote> {
    let Some(Answerer::Webhook(webhook)) = &config.answerer else {
        return Vec::new();
    };
    let old = StateKey::WEBHOOK
        .stored(config)
        .and_then(WebhookState::parse);
    let (first_call, new_denial) = news(old.as_ref(), new);
    let mut events = Vec::new();
    if first_call {
        events.push(EventNote::webhook_requested(&webhook.name, new));
    }
    if new_denial {
        events.push(EventNote::webhook_denied(&webhook.name, new));
    }
    events
}

/// The Events of pod writes once applied (`written`): one `ApprovalRequested` for the requests, one
/// `ApprovalDenied` per denial answered; withdrawn requests are not announced.
pub fn pod_write_events(written: &[&PodWrite], update_revision: &str) -> Vec<EventNote> {
    let asked: Vec<&str> = written
        .iter()
        .filter(|w| matches!(w.kind, PodWriteKind::Request(_)))
        .map(|w| w.name.as_str())
        .collect();
    let switchover = written.iter().find_map(|w| match w.kind {
        PodWriteKind::Request(crate::gates::approval::Phase::Switchover) => Some(w.name.as_str()),
        _ => None,
    });
    let mut events = Vec::new();
    if !asked.is_empty() {
        events.push(EventNote::approval_requested(
            &asked,
            update_revision,
            switchover,
        ));
    }
    for w in written {
        if let PodWriteKind::Denied(reason) = &w.kind {
            events.push(EventNote::approval_denied(&w.name, reason));
        }
    }
    events
}
