//! One kind of system behind one trait ([`System`]): what it reads, what it concludes (pure), how it
//! moves the role; and [`answer`], which runs them in that order for every kind.

use std::future::Future;

use super::question::Question;
use crate::gates::approval::webhook::answer::{Answer, Decision, WebhookAnswer};

/// What a kind concludes from what it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict<A> {
    /// The pods of the step may go now (an `Update`), or the role is no longer on them (a
    /// `Switchover`): the reason, one line.
    Approve(String),
    /// Not yet (the system is catching up): the reason, and the seconds before asking again.
    Wait(String, u32),
    /// No, for a reason a person must act on (maintenance mode, a refused switchover): the reason, and
    /// the seconds before asking again.
    Deny(String, u32),
    /// The role is on a pod of the step: move it with this action first.
    Act(A),
}

/// What came of an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acted {
    /// The system took it (a switchover done or under way): the answer is `Wait` with this reason
    /// until a later read confirms the role moved — the stepper never takes the action's word for it.
    Started(String),
    /// The system refused it (no good candidate, a precondition): `Deny` with this reason, retried
    /// after [`REFUSED_RETRY_SECONDS`]; its Warning Event says so.
    Refused(String),
    /// No answer (unreachable, a timeout, unauthorized): an error, not a decision.
    Failed(String),
}

/// Seconds before a refused action is tried again.
pub const REFUSED_RETRY_SECONDS: u32 = 30;
/// Seconds before asking again after an action was taken.
pub const STARTED_RETRY_SECONDS: u32 = 2;

/// One kind of system the stepper answers for.
pub trait System: Sync {
    /// What one read of the system gives (plain data; its parsing is the kind's).
    type View: Send;
    /// What moves the role (a switchover to a named candidate).
    type Action: Send + Sync;

    /// Reads the system's state for `q`, within the entry's timeout.
    ///
    /// # Errors
    /// No member answered: the causes, one line.
    fn read(&self, q: &Question) -> impl Future<Output = Result<Self::View, String>> + Send;

    /// What `view` says of `q` (pure).
    fn decide(&self, q: &Question, view: &Self::View) -> Verdict<Self::Action>;

    /// Asks the system to take `action`, read for `q` in `view`.
    ///
    /// The rule every kind keeps (docs/answerers.md, "What an answerer does"): **an action is complete
    /// within its own call.** When it returns, the system is in a state that needs nothing more from the
    /// stepper — no pause to lift, no old leader to demote — before any deadline: the next pass may come
    /// a minute later (the CronJob), or never (the stepper killed). An action that cannot finish within
    /// its bound undoes what it did and says why (`Refused`, `Failed`); where a step cannot be undone
    /// once taken, the system is left guarded so that a call cut off there loses nothing (the Redis
    /// Sentinel failover's `min-replicas-to-write`). Patroni's `POST /switchover` and etcd's
    /// `MoveLeader` are synchronous; the Sentinel failover waits for a quorum of Sentinels itself.
    fn act(
        &self,
        q: &Question,
        view: &Self::View,
        action: &Self::Action,
    ) -> impl Future<Output = Acted> + Send;
}

/// Reads, decides and, when the role must move, acts: one answer of kind `S` to `q`.
pub async fn answer<S: System>(system: &S, q: &Question) -> WebhookAnswer {
    let view = match system.read(q).await {
        Ok(v) => v,
        Err(e) => return WebhookAnswer::Error(e),
    };
    match verdict_answer(system.decide(q, &view)) {
        Ok(answer) => answer,
        Err(action) => acted_answer(system.act(q, &view, &action).await),
    }
}

/// The answer a verdict gives by itself; `Err` with the action when it asks for one (then
/// [`acted_answer`] of what came of it). Shared by [`answer`] and the simulation's application models,
/// so both answer alike.
pub fn verdict_answer<A>(verdict: Verdict<A>) -> Result<WebhookAnswer, A> {
    Ok(match verdict {
        Verdict::Approve(reason) => decided(Decision::Approve, reason, None),
        Verdict::Wait(reason, after) => decided(Decision::Wait, reason, Some(after)),
        Verdict::Deny(reason, after) => decided(Decision::Deny, reason, Some(after)),
        Verdict::Act(action) => return Err(action),
    })
}

/// The answer once an action was asked for: `Wait` while it is confirmed, `Deny` when the system
/// refused it, an error when it did not answer.
pub fn acted_answer(acted: Acted) -> WebhookAnswer {
    match acted {
        Acted::Started(reason) => decided(Decision::Wait, reason, Some(STARTED_RETRY_SECONDS)),
        Acted::Refused(reason) => decided(Decision::Deny, reason, Some(REFUSED_RETRY_SECONDS)),
        Acted::Failed(e) => WebhookAnswer::Error(e),
    }
}

fn decided(decision: Decision, reason: String, retry_after_seconds: Option<u32>) -> WebhookAnswer {
    WebhookAnswer::Decided(Answer {
        decision,
        reason,
        retry_after_seconds,
    })
}
