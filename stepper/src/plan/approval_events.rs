//! The Events of the approval handshake (docs/approvals.md): `ApprovalRequested` when the stepper asks
//! the pods of a step, `ApprovalDenied` when a pod's denial answers a request, `Approved` with the step
//! the approvals let through.

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
