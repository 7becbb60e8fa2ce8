//! The approval webhook (`Answerer::Webhook`) at gate `ApprovalPending` (its word in `PrimaryNotMoved`
//! too), and what it asks the pass for: the POST when due ([`Need::Webhook`]), the record in
//! `<prefix>/webhook-state`, and the `degraded-reason` records `WebhookErrors: …`
//! (`webhook-error-limit` calls in a row without a decision) and `ApprovalTimeout: …` (no approval by
//! the request's deadline). The answers are [`answer`]'s, the record [`state`]'s, the request
//! [`request`]'s ([`Question`]).

use jiff::Timestamp;

pub mod answer;
pub mod request;
pub mod state;

use answer::{Decision, WebhookAnswer};
use request::Question;
use state::{WebhookState, current_state, next_state};

use super::note as approval_note;
use super::step::{StepPod, pods_of};
use crate::config::WebhookConfig;
use crate::gates::effect::{DegradedOwner, Effect, StateKey};
use crate::gates::input::GateInput;
use crate::gates::probes::Need;
use crate::gates::verdict::Evaluation;
use crate::model::degraded::{DegradedKind, Record};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// One set's webhook in this pass.
struct Run<'a> {
    config: &'a WebhookConfig,
    pods: Vec<StepPod<'a>>,
    /// The question's `requestId`: the stored record's, else this pass's first call's.
    id: String,
    /// The record of this request as stored (`None`: never asked, or the record is another request's).
    stored: Option<WebhookState>,
    /// This pass's answer and the record after it, when the pass called.
    answered: Option<(&'a WebhookAnswer, WebhookState)>,
}

impl Run<'_> {
    /// The record as of this pass: after this pass's call, else as stored.
    fn state(&self) -> Option<&WebhookState> {
        self.answered
            .as_ref()
            .map(|(_, s)| s)
            .or(self.stored.as_ref())
    }

    fn approved(&self) -> bool {
        matches!(self.answered, Some((WebhookAnswer::Decided(a), _)) if a.decision == Decision::Approve)
    }

    /// `web-4, web-3`.
    fn names(&self) -> String {
        approval_note::names(
            &self
                .pods
                .iter()
                .map(|p| p.name.to_string())
                .collect::<Vec<_>>(),
        )
    }
}

fn run<'a>(input: &GateInput<'a>, config: &'a WebhookConfig) -> Run<'a> {
    let pods = pods_of(input);
    let question = Question {
        set: input.set,
        pods: &pods,
        partition: (input.partition(), input.target()),
    };
    let key = question.key();
    let stored = current_state(StateKey::WEBHOOK.stored(input.config), &key);
    let id = stored
        .as_ref()
        .map_or_else(|| question.request_id(input.now), |s| s.request_id.clone());
    let answered = input.probes.webhook.as_ref().map(|answer| {
        let fresh = WebhookState {
            question: key.clone(),
            request_id: id.clone(),
            update_revision: set::update_revision(input.set).to_string(),
            partition: input.partition(),
            phase: question.phase().as_str().to_string(),
            pods: question.pod_names(),
            first_asked: input.now,
            decision: None,
            reason: String::new(),
            retry_at: None,
            errors: 0,
            last_error: None,
        };
        (answer, next_state(stored.clone(), fresh, answer, input.now))
    });
    Run {
        config,
        pods,
        id,
        stored,
        answered,
    }
}

/// The request body for this pass's call ([`Question::body`]), its deadline from the first call.
fn body(input: &GateInput<'_>, r: &Run<'_>) -> serde_json::Value {
    let first = r.stored.as_ref().map_or(input.now, |s| s.first_asked);
    let question = Question {
        set: input.set,
        pods: &r.pods,
        partition: (input.partition(), input.target()),
    };
    question.body(&r.id, state::deadline(first, r.config.timeout_seconds))
}

/// The detail of `ApprovalPending` for `r` at `now`.
fn detail(input: &GateInput<'_>, r: &Run<'_>, now: Timestamp) -> String {
    let (name, revision) = (&r.config.name, set::update_revision(input.set));
    let timeout = r.config.timeout_seconds;
    let pods = r.names();
    let Some(s) = r.state() else {
        return format!("asking webhook {name} to approve {pods} on {revision}");
    };
    let reason = |s: &WebhookState| match s.reason.as_str() {
        "" => String::new(),
        r => format!(": {r}"),
    };
    let timed_out = s.timed_out(now, timeout);
    let mut text = if timed_out {
        approval_note::timed_out(&pods, revision, timeout, Some(name)) + "; "
    } else {
        String::new()
    };
    text.push_str(&match s.decision {
        Some(Decision::Deny) => format!("webhook {name} denied the update of {pods}{}", reason(s)),
        Some(Decision::Wait) => format!(
            "webhook {name} answered Wait for {pods} on {revision}{}",
            reason(s)
        ),
        Some(Decision::Approve) => {
            format!("webhook {name} approved {pods} on {revision}; asking again before the step")
        }
        None => format!("webhook {name} has not decided on {pods} on {revision} yet"),
    });
    if s.errors > 0 {
        text.push_str(&format!(
            "; no answer {} times in a row (webhook-error-limit {}): {}",
            s.errors,
            r.config.error_limit,
            s.last_error.as_deref().unwrap_or("-")
        ));
    }
    if !timed_out {
        let waited = now.duration_since(s.first_asked).as_secs().max(0);
        text.push_str(&format!("; waited {waited} s of {timeout} s"));
    }
    if let Some(at) = s.retry_at.filter(|at| *at > now) {
        let left = at.duration_since(now).as_secs().max(1);
        text.push_str(&format!("; next call in {left} s"));
    }
    text
}

/// `ApprovalPending` with a webhook (`config`): passes with no pod to replace, or when this pass's
/// call answered `Approve`; else blocks, saying what the webhook answered (or that it is being asked).
pub(super) fn pending(input: &GateInput<'_>, config: &WebhookConfig) -> Result<(), Blocked> {
    let r = run(input, config);
    if r.pods.is_empty() || r.approved() {
        return Ok(());
    }
    Err(Blocked::new(
        Reason::ApprovalPending,
        format!("{}: {}", set::name(input.set), detail(input, &r, input.now)),
    ))
}

/// What `PrimaryNotMoved` says with a webhook: it was asked to move the role, and its last answer.
pub(super) fn switchover_note(input: &GateInput<'_>, config: &WebhookConfig) -> String {
    let r = run(input, config);
    let mut note = format!(
        "asked webhook {} to move the role (phase Switchover)",
        r.config.name
    );
    if let Some(s) = r.state() {
        if let Some(d) = s.decision {
            note.push_str(&format!("; it answered {}", d.as_str()));
            if !s.reason.is_empty() {
                note.push_str(&format!(": {}", s.reason));
            }
        }
        if s.errors > 0 {
            note.push_str(&format!("; no answer {} times in a row", s.errors));
        }
    }
    note
}

/// Records in `ev` what the webhook asks for once its gates were reached: the POST when due and not
/// made, the record when this pass's call changed it, and the `WebhookErrors` / `ApprovalTimeout`
/// records (written when nothing else is recorded; removed once no longer true).
pub(super) fn effects(input: &GateInput<'_>, config: &WebhookConfig, ev: &mut Evaluation) {
    let r = run(input, config);
    if r.pods.is_empty() {
        return;
    }
    if r.pods.iter().any(|p| p.primary) {
        ev.expected_wait = true;
    }
    match &r.answered {
        None if r.stored.as_ref().is_none_or(|s| s.due(input.now)) => {
            ev.need = Some(Need::Webhook {
                name: r.config.name.clone(),
                body: body(input, &r),
                record: (
                    StateKey::WEBHOOK.key(&input.config.keys),
                    StateKey::WEBHOOK.stored(input.config).map(str::to_string),
                ),
            });
        }
        None => {}
        // Written when this pass's call changed it.
        Some((_, state))
            if StateKey::WEBHOOK.stored(input.config) != Some(state.to_annotation().as_str()) =>
        {
            ev.effects
                .push(Effect::WebhookState(Box::new(state.clone())));
        }
        Some(_) => {}
    }
    let (name, revision) = (&r.config.name, set::update_revision(input.set));
    // An approval answers the timeout (a step follows, or the role is still to move).
    let approved = |s: &&WebhookState| s.decision == Some(Decision::Approve) && s.errors == 0;
    if let Some(s) = r.state().filter(|s| !approved(s)) {
        let waited = input.now.duration_since(s.first_asked).as_secs().max(0);
        ev.approval_wait = Some((waited, r.config.timeout_seconds));
        ev.effects.push(Effect::ApprovalNote {
            note: approval_note::webhook(name, &r.names(), s, r.config.timeout_seconds),
            unasked_denial: None,
        });
    }
    let wanted = r.state().filter(|s| !approved(s)).and_then(|s| {
        if s.errors >= r.config.error_limit {
            Some(Record::new(
                DegradedKind::WebhookErrors,
                format!(
                    "webhook {name} gave no answer {} times in a row (webhook-error-limit {}); last: {}",
                    s.errors,
                    r.config.error_limit,
                    s.last_error.as_deref().unwrap_or("-")
                ),
            ))
        } else if s.timed_out(input.now, r.config.timeout_seconds) {
            Some(approval_note::timed_out_record(
                &r.names(),
                revision,
                r.config.timeout_seconds,
                Some(name),
            ))
        } else {
            None
        }
    });
    ev.effects.push(Effect::Degraded {
        owner: DegradedOwner::Webhook,
        wanted,
    });
}
