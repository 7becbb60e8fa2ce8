//! The reply of a simulated system that a built-in answerer decides for (`sim/patroni.rs`,
//! `sim/etcd.rs`, `sim/sentinel.rs`): the answerer's own decision over the world, as an HTTP reply, so
//! the stepper reads it as it reads any webhook's.

use serde_json::Value;

use super::webhook::Reply;
use crate::cluster::answerer::question::Question;
use crate::cluster::answerer::{Acted, Verdict, acted_answer, verdict_answer};
use crate::gates::approval::webhook::answer::{Decision, WebhookAnswer};

/// The request `body` read as the question (`400` when it is none), `decide`d, the action the
/// decision asks for performed by `act`; a retry hint only on a decision other than `Approve`.
pub(super) fn system_reply<A>(
    body: &Value,
    decide: impl FnOnce(&Question) -> Verdict<A>,
    act: impl FnOnce(&Question, &A) -> Acted,
) -> Reply {
    let q = match Question::read(body) {
        Ok(q) => q,
        Err(e) => return Reply::Http(400, e),
    };
    let answer = match verdict_answer(decide(&q)) {
        Ok(answer) => answer,
        Err(action) => acted_answer(act(&q, &action)),
    };
    match answer {
        WebhookAnswer::Decided(a) => {
            let retry = (a.decision != Decision::Approve)
                .then(|| a.retry_after_seconds.map(i64::from))
                .flatten();
            Reply::decided(a.decision, &a.reason, retry)
        }
        WebhookAnswer::Error(e) => Reply::Transport(e),
    }
}
