//! The line `<prefix>/approval-pending` holds while the approval gates (`ApprovalPending`, and
//! `PrimaryNotMoved` with an answerer) hold the next step: what the rollout waits for, for whoever reads
//! the object alone — the GitOps health message (Argo CD's Lua, `rollout::health`) and `kubectl
//! describe`.
//!
//! The line is stable while the question and its answer are: times are absolute (RFC 3339, to the
//! second) rather than seconds waited, so the set is written when something changes, not every pass
//! (the live count is the gate's detail in `status` and `sts_safe_rollout_approval_wait_seconds`).

use jiff::{SignedDuration, Timestamp};

use super::webhook::state::WebhookState;
use crate::model::degraded::{DegradedKind, Record};

/// `t` to the second, RFC 3339 UTC (`2026-11-26T15:00:00Z`).
fn second(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// `web-4, web-3`, or `web-4, web-3 (and 2 more)` past three names.
pub fn names(pods: &[String]) -> String {
    let shown = pods.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    match pods.len() {
        n if n > 3 => format!("{shown} (and {} more)", n - 3),
        _ => shown,
    }
}

/// Waiting for approvals: `approval of web-4 on web-7d7598bf9d asked at 2026-11-26T15:00:00Z,
/// deadline 2026-11-26T15:10:00Z` — `pods` the names waited for, `since` the earliest request,
/// `timeout_seconds` the set's `approval-timeout-seconds`.
pub fn waiting(pods: &str, revision: &str, since: Timestamp, timeout_seconds: i64) -> String {
    let deadline = since
        .checked_add(SignedDuration::from_secs(timeout_seconds))
        .unwrap_or(since);
    format!(
        "approval of {pods} on {revision} asked at {}, deadline {}",
        second(since),
        second(deadline)
    )
}

/// A set with nothing left to step (a rollback, a forced set) whose pods still carry requests, withdrawn
/// in this pass: `withdrawing the requests on web-0: nothing left to step`. Kept until a pass finds no
/// request left ([`crate::gates::withdraws_requests`] reads the pods while it is recorded).
pub fn withdrawing(pods: &str) -> String {
    format!("withdrawing the requests on {pods}: nothing left to step")
}

/// The `ApprovalTimeout` line, the gate's detail and the `degraded-reason` record alike: `ApprovalTimeout:
/// no approval of web-4 on web-7d7598bf9d within 600 s` (`pods` the names waited for, `timeout_seconds`
/// the set's `approval-timeout-seconds`), ending `from webhook NAME` when a webhook (`webhook`) was asked.
pub fn timed_out(
    pods: &str,
    revision: &str,
    timeout_seconds: i64,
    webhook: Option<&str>,
) -> String {
    timed_out_record(pods, revision, timeout_seconds, webhook).value()
}

/// [`timed_out`] as the `degraded-reason` record it is.
pub fn timed_out_record(
    pods: &str,
    revision: &str,
    timeout_seconds: i64,
    webhook: Option<&str>,
) -> Record {
    let from = webhook.map_or_else(String::new, |name| format!(" from webhook {name}"));
    Record::new(
        DegradedKind::ApprovalTimeout,
        format!("no approval of {pods} on {revision} within {timeout_seconds} s{from}"),
    )
}

/// A pod denied: `web-4 denied the update: replica lagging`.
pub fn denied(pod: &str, reason: &str) -> String {
    format!("{pod} denied the update: {reason}")
}

/// The webhook's question and its last answer: `webhook db-approver: approval of web-4 on
/// web-7d7598bf9d asked at …, deadline …; answered Wait: replica lag 12 s` (no answer part before a
/// decision; the reason only when the webhook gave one).
pub fn webhook(name: &str, pods: &str, state: &WebhookState, timeout_seconds: i64) -> String {
    let mut line = format!(
        "webhook {name}: {}",
        waiting(
            pods,
            &state.update_revision,
            state.first_asked,
            timeout_seconds
        )
    );
    if let Some(decision) = state.decision {
        line.push_str(&format!("; answered {}", decision.as_str()));
        if !state.reason.is_empty() {
            line.push_str(&format!(": {}", state.reason));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::approval::webhook::answer::Decision;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("time")
    }

    #[test]
    fn the_line_is_to_the_second_and_names_the_deadline() {
        assert_eq!(
            waiting("web-4", "web-7d", at("2026-11-26T15:00:00.734Z"), 600),
            "approval of web-4 on web-7d asked at 2026-11-26T15:00:00Z, deadline 2026-11-26T15:10:00Z"
        );
        assert_eq!(
            denied("web-4", "lagging"),
            "web-4 denied the update: lagging"
        );
    }

    #[test]
    fn the_webhook_line_adds_the_last_answer() {
        let mut state = WebhookState {
            question: "q".into(),
            request_id: "r".into(),
            update_revision: "web-7d".into(),
            partition: 5,
            phase: "Update".into(),
            pods: vec!["web-4".into()],
            first_asked: at("2026-11-26T15:00:00Z"),
            decision: None,
            reason: String::new(),
            retry_at: None,
            errors: 0,
            last_error: None,
        };
        let base = "webhook db: approval of web-4 on web-7d asked at 2026-11-26T15:00:00Z, deadline 2026-11-26T15:01:00Z";
        assert_eq!(webhook("db", "web-4", &state, 60), base);
        state.decision = Some(Decision::Wait);
        state.reason = "replica lag 12 s".into();
        assert_eq!(
            webhook("db", "web-4", &state, 60),
            format!("{base}; answered Wait: replica lag 12 s")
        );
    }
}
