//! The approval webhook's record (docs/approvals.md, "Webhook"). Pure.
//!
//! The stepper keeps what it knows of the pending request in `<prefix>/webhook-state` ([`WebhookState`],
//! JSON), pinned to the request's id (revision, partition step, phase): when it was first asked (the
//! `deadline` and the `ApprovalTimeout` count from it), the last decision and its reason, when the
//! application asked to be called again (`retryAfterSeconds`), and consecutive errors (what an answer
//! means: [`super::answer`]).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::answer::{Decision, WebhookAnswer};

/// The webhook's record for the pending request, stored as JSON in `<prefix>/webhook-state`, e.g.
/// `{"question":"9a1b…","requestId":"5f0c…","updateRevision":"web-7d…","partition":5,"phase":"Update","pods":["web-4"],"firstAsked":"2026-11-23T01:20:00Z","decision":"Wait","reason":"draining","retryAt":"2026-11-23T01:21:00Z"}`
/// (`decision`, `reason`, `retryAt`, `errors`, `lastError` only when set).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookState {
    /// The question's key ([`super::request::Question::key`]): the record belongs to this question
    /// only (a record without it, from an older stepper, belongs to none: the question is asked anew).
    #[serde(default)]
    pub question: String,
    /// The request's id: this question's, as first asked ([`super::request::Question::request_id`]).
    pub request_id: String,
    /// `status.updateRevision` asked about (for people: the id pins it).
    pub update_revision: String,
    /// The partition before the step asked about (for people: the id pins it).
    pub partition: i32,
    /// `Update` or `Switchover`.
    pub phase: String,
    /// The pods the step replaces.
    pub pods: Vec<String>,
    /// When the stepper first called for this request (the `deadline` counts from it).
    pub first_asked: Timestamp,
    /// The last decision, if any (an error leaves it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Its reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// No call before this time (`retryAfterSeconds` of the last decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<Timestamp>,
    /// Consecutive calls without a decision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u32,
    /// Why the last call got no decision, while `errors > 0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl WebhookState {
    /// The annotation value (compact JSON).
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads an annotation value; `None` when unreadable (a stepper-owned annotation: starting over
    /// only asks again).
    pub fn parse(stored: &str) -> Option<WebhookState> {
        serde_json::from_str(stored).ok()
    }

    /// The request's deadline: first asked + `timeout_seconds`.
    pub fn deadline(&self, timeout_seconds: i64) -> Timestamp {
        deadline(self.first_asked, timeout_seconds)
    }

    /// A call is due at `now`: no `retryAt`, or it has come.
    pub fn due(&self, now: Timestamp) -> bool {
        self.retry_at.is_none_or(|at| at <= now)
    }

    /// Past the deadline at `now` (no approval within `approval-timeout-seconds`).
    pub fn timed_out(&self, now: Timestamp, timeout_seconds: i64) -> bool {
        now > self.deadline(timeout_seconds)
    }
}

/// `first + timeout_seconds`.
pub fn deadline(first: Timestamp, timeout_seconds: i64) -> Timestamp {
    first
        .checked_add(SignedDuration::from_secs(timeout_seconds))
        .unwrap_or(first)
}

/// The stored record (`stored`: the annotation as written) when it belongs to the question `key`
/// ([`super::request::Question::key`]).
pub fn current_state(stored: Option<&str>, key: &str) -> Option<WebhookState> {
    WebhookState::parse(stored?).filter(|s| !s.question.is_empty() && s.question == key)
}

/// The record after a call at `now` that got `answer`, from the record before it (`prior`, `None` for
/// the first call of this request; `fresh`: a record for a first call, with its id, step and pods). A
/// decision replaces the last one, clears the errors and sets `retryAt` from `retryAfterSeconds` (not
/// for `Approve`); an error keeps the last decision and counts one more error.
pub fn next_state(
    prior: Option<WebhookState>,
    fresh: WebhookState,
    answer: &WebhookAnswer,
    now: Timestamp,
) -> WebhookState {
    let mut next = prior.unwrap_or(fresh);
    next.retry_at = None;
    match answer {
        WebhookAnswer::Decided(a) => {
            next.decision = Some(a.decision);
            next.reason = a.reason.clone();
            next.errors = 0;
            next.last_error = None;
            if a.decision != Decision::Approve
                && let Some(s) = a.retry_after_seconds.filter(|s| *s > 0)
            {
                next.retry_at = now
                    .checked_add(SignedDuration::from_secs(i64::from(s)))
                    .ok();
            }
        }
        WebhookAnswer::Error(cause) => {
            next.errors = next.errors.saturating_add(1);
            next.last_error = Some(cause.clone());
        }
    }
    next
}

/// What a new record means, against the one before (`old`, as stored, any request): the first call of
/// a request (`ApprovalRequested`), and a denial that starts a denial episode (`ApprovalDenied`: the
/// request's last decision was not already `Deny`).
pub fn news(old: Option<&WebhookState>, new: &WebhookState) -> (bool, bool) {
    let same = old.filter(|o| o.request_id == new.request_id);
    let first_call = same.is_none();
    let new_denial = new.decision == Some(Decision::Deny)
        && same.and_then(|o| o.decision) != Some(Decision::Deny);
    (first_call, new_denial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::approval::webhook::answer::Answer;

    fn decided(d: Decision, reason: &str, retry: Option<u32>) -> WebhookAnswer {
        WebhookAnswer::Decided(Answer {
            decision: d,
            reason: reason.into(),
            retry_after_seconds: retry,
        })
    }

    fn fresh(at: &str) -> WebhookState {
        WebhookState {
            question: "q1".into(),
            request_id: "id1".into(),
            update_revision: "web-7d".into(),
            partition: 5,
            phase: "Update".into(),
            pods: vec!["web-4".into()],
            first_asked: at.parse().unwrap(),
            decision: None,
            reason: String::new(),
            retry_at: None,
            errors: 0,
            last_error: None,
        }
    }

    #[test]
    fn errors_count_apart_and_a_decision_clears_them() {
        let t0: Timestamp = "2026-11-23T01:20:00Z".parse().unwrap();
        let t1: Timestamp = "2026-11-23T01:21:00Z".parse().unwrap();
        let wait = next_state(
            None,
            fresh("2026-11-23T01:20:00Z"),
            &decided(Decision::Wait, "x", Some(60)),
            t0,
        );
        assert_eq!(wait.retry_at, Some(t1));
        assert!(!wait.due(t0) && wait.due(t1));
        let e1 = next_state(
            Some(wait),
            fresh("2026-11-23T01:30:00Z"),
            &WebhookAnswer::Error("HTTP 500".into()),
            t1,
        );
        let e2 = next_state(
            Some(e1),
            fresh("2026-11-23T01:30:00Z"),
            &WebhookAnswer::Error("timeout".into()),
            t1,
        );
        assert_eq!((e2.errors, e2.last_error.as_deref()), (2, Some("timeout")));
        assert_eq!(
            e2.decision,
            Some(Decision::Wait),
            "an error keeps the last decision"
        );
        assert_eq!(e2.first_asked, t0, "the first call stays the first");
        let deny = next_state(
            Some(e2.clone()),
            fresh("2026-11-23T01:30:00Z"),
            &decided(Decision::Deny, "no", None),
            t1,
        );
        assert_eq!(
            (deny.errors, deny.last_error.clone(), deny.retry_at),
            (0, None, None)
        );
        assert_eq!(news(Some(&e2), &deny), (false, true));
        assert_eq!(
            news(Some(&deny), &deny),
            (false, false),
            "one Event per denial episode"
        );
        assert_eq!(news(None, &deny), (true, true));
        let back = WebhookState::parse(&deny.to_annotation()).unwrap();
        assert_eq!(back, deny);
        assert!(deny.timed_out("2026-11-23T01:30:01Z".parse().unwrap(), 600));
        assert!(!deny.timed_out("2026-11-23T01:30:00Z".parse().unwrap(), 600));
        assert_eq!(current_state(Some(&deny.to_annotation()), "other"), None);
        assert_eq!(current_state(Some(&deny.to_annotation()), "q1"), Some(deny));
    }
}
