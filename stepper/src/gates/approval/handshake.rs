//! The approval handshake's conclusion over the pods of one step ([`handshake`]): approved, denied, or
//! waiting (and since when, and whether past `approval-timeout-seconds`).

use jiff::Timestamp;

use super::step::{Answer, StepPod};

/// What the handshake concludes for one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Every pod of the step approved the revision.
    Approved,
    /// A pod denied: its name and reason.
    Denied {
        /// The pod.
        pod: String,
        /// `update-denied`, as written.
        reason: String,
    },
    /// Waiting for answers from `pods` (names), asked at `since` (the earliest request; `None`: being
    /// asked in this pass), for `waited` seconds.
    Waiting {
        /// The pods not answered yet, in the step's order.
        pods: Vec<String>,
        /// Seconds since the earliest request (0 when asked in this pass).
        waited: i64,
        /// The earliest request of the pods waited for (`None`: asked in this pass).
        since: Option<Timestamp>,
        /// Past `approval-timeout-seconds`.
        timed_out: bool,
    },
}

/// The handshake over `pods` (from `step_pods`) at `now`, with `timeout` seconds
/// (`approval-timeout-seconds`). The first denial decides; then any pod not approved (a pod holding
/// the primary role is never approved while it holds it: its approval waits for the switchover).
pub fn handshake(pods: &[StepPod<'_>], now: Timestamp, timeout: i64) -> Handshake {
    if let Some((pod, reason)) = pods.iter().find_map(|p| match &p.answer {
        Answer::Denied(r) => Some((p.name, r)),
        _ => None,
    }) {
        return Handshake::Denied {
            pod: pod.to_string(),
            reason: reason.clone(),
        };
    }
    let waiting: Vec<&StepPod<'_>> = pods
        .iter()
        .filter(|p| p.answer != Answer::Approved || p.primary)
        .collect();
    if waiting.is_empty() {
        return Handshake::Approved;
    }
    let since = waiting
        .iter()
        .filter_map(|p| match p.answer {
            Answer::Asked { at } => at,
            _ => None,
        })
        .min();
    let waited = since.map_or(0, |t| now.duration_since(t).as_secs().max(0));
    Handshake::Waiting {
        pods: waiting.iter().map(|p| p.name.to_string()).collect(),
        waited,
        since,
        timed_out: waited > timeout,
    }
}
