//! The approval webhook's answer (docs/approvals.md, "Webhook"): one HTTP status and body → a
//! decision or an error ([`read_answer`]). Pure.
//!
//! **The body decides.** An answer is a *decision* only when its status is 2xx and its body is JSON
//! `{"decision": "Approve" | "Wait" | "Deny", "reason": "…", "retryAfterSeconds": N}`. Anything else — a
//! timeout, a refused connection, a status other than 2xx, a 2xx whose body is not such a JSON object —
//! is an *error*: it decides nothing, it is retried on the next pass, and `webhook-error-limit` errors in
//! a row record the rollout as Degraded (`WebhookErrors`), never let a step through and never pause.
//! (Argo Rollouts' web metric: a status other than 2xx is an Error, not a Failure; Flagger's webhooks
//! pass on any 200–202 without reading the body — here a 2xx without a decision would approve a step
//! nobody approved, so it is an error.)

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest `retryAfterSeconds` honoured (a day); a longer one is cut to it.
pub const MAX_RETRY_AFTER_SECONDS: u32 = 86_400;

/// The longest `reason` kept (characters); a longer one is cut, with `…`.
const MAX_REASON: usize = 200;

/// What the application decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// The step may go (once every other gate passes in the same pass).
    Approve,
    /// Not yet: ask again (after `retryAfterSeconds`, else on the next pass).
    Wait,
    /// No: the step is held, with the reason, until a later answer says otherwise.
    Deny,
}

impl Decision {
    /// `Approve`, `Wait` or `Deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "Approve",
            Decision::Wait => "Wait",
            Decision::Deny => "Deny",
        }
    }
}

/// A decision as the webhook answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The decision.
    pub decision: Decision,
    /// `reason`, one line (empty when absent).
    pub reason: String,
    /// `retryAfterSeconds`, at most [`MAX_RETRY_AFTER_SECONDS`].
    pub retry_after_seconds: Option<u32>,
}

/// What one call got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebhookAnswer {
    /// A decision.
    Decided(Answer),
    /// No decision: the cause in one line (`HTTP 503: …`, a timeout, `… is not Approve, Wait or Deny`).
    Error(String),
}

impl WebhookAnswer {
    /// The label of `sts_safe_rollout_webhook_calls_total{result}`: `Approve`, `Wait`, `Deny` or
    /// `Error`.
    pub fn result_label(&self) -> &'static str {
        match self {
            WebhookAnswer::Decided(a) => a.decision.as_str(),
            WebhookAnswer::Error(_) => "Error",
        }
    }
}

/// One line of at most `max` characters (`…` when cut).
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut head: String = flat.chars().take(max).collect();
    if head.len() < flat.len() {
        head.push('…');
    }
    head
}

/// Reads one HTTP answer: `status` and `body` as received.
pub fn read_answer(status: u16, body: &[u8]) -> WebhookAnswer {
    let head = || one_line(&String::from_utf8_lossy(body), MAX_REASON);
    if !(200..300).contains(&status) {
        return WebhookAnswer::Error(format!("HTTP {status}: {}", head()).trim_end().into());
    }
    let error = |why: String| WebhookAnswer::Error(format!("HTTP {status}: {why}"));
    let object = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => o,
        Ok(_) => return error(format!("not a JSON object: {}", head())),
        Err(e) => return error(format!("not JSON ({e}): {}", head())),
    };
    let decision = match object.get("decision") {
        Some(Value::String(d)) => match d.as_str() {
            "Approve" => Decision::Approve,
            "Wait" => Decision::Wait,
            "Deny" => Decision::Deny,
            other => {
                return error(format!(
                    "\"decision\": {other:?} is not Approve, Wait or Deny"
                ));
            }
        },
        _ => {
            return error(format!(
                "no \"decision\" (Approve, Wait or Deny): {}",
                head()
            ));
        }
    };
    let reason = match object.get("reason") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(r)) => one_line(r, MAX_REASON),
        Some(other) => return error(format!("\"reason\": {other} is not a string")),
    };
    let retry_after_seconds = match object.get("retryAfterSeconds") {
        None | Some(Value::Null) => None,
        Some(n) => match n.as_u64() {
            Some(n) => Some(
                u32::try_from(n)
                    .map_or(MAX_RETRY_AFTER_SECONDS, |n| n.min(MAX_RETRY_AFTER_SECONDS)),
            ),
            None => {
                return error(format!(
                    "\"retryAfterSeconds\": {n} is not a whole number of seconds ≥ 0"
                ));
            }
        },
    };
    WebhookAnswer::Decided(Answer {
        decision,
        reason,
        retry_after_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(d: Decision, reason: &str, retry: Option<u32>) -> WebhookAnswer {
        WebhookAnswer::Decided(Answer {
            decision: d,
            reason: reason.into(),
            retry_after_seconds: retry,
        })
    }

    #[test]
    fn the_body_decides() {
        for (status, body, want) in [
            (
                200,
                r#"{"decision":"Approve"}"#,
                decided(Decision::Approve, "", None),
            ),
            (
                202,
                r#"{"decision":"Wait","reason":"draining\n 3 conns","retryAfterSeconds":30}"#,
                decided(Decision::Wait, "draining 3 conns", Some(30)),
            ),
            (
                200,
                r#"{"decision":"Deny","reason":"backup","retryAfterSeconds":null,"extra":1}"#,
                decided(Decision::Deny, "backup", None),
            ),
            (
                200,
                r#"{"decision":"Wait","retryAfterSeconds":99999999999}"#,
                decided(Decision::Wait, "", Some(MAX_RETRY_AFTER_SECONDS)),
            ),
        ] {
            assert_eq!(read_answer(status, body.as_bytes()), want, "{body}");
        }
    }

    #[test]
    fn anything_else_is_an_error() {
        for (status, body, cause) in [
            (500, "boom", "HTTP 500: boom"),
            (503, r#"{"decision":"Approve"}"#, "HTTP 503"),
            (302, "", "HTTP 302"),
            (200, "", "HTTP 200: not JSON"),
            (200, "OK", "HTTP 200: not JSON"),
            (204, "", "HTTP 204: not JSON"),
            (200, "[]", "not a JSON object"),
            (200, r#"{"ok":true}"#, "no \"decision\""),
            (
                200,
                r#"{"decision":"approve"}"#,
                "\"approve\" is not Approve, Wait or Deny",
            ),
            (200, r#"{"decision":true}"#, "no \"decision\""),
            (
                200,
                r#"{"decision":"Deny","reason":7}"#,
                "\"reason\": 7 is not a string",
            ),
            (
                200,
                r#"{"decision":"Wait","retryAfterSeconds":-1}"#,
                "\"retryAfterSeconds\": -1",
            ),
        ] {
            match read_answer(status, body.as_bytes()) {
                WebhookAnswer::Error(e) => assert!(e.contains(cause), "{body}: {e}"),
                other => panic!("{status} {body}: {other:?}"),
            }
        }
    }
}
