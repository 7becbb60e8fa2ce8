//! The simulated application's approval webhook (docs/approvals.md, "Webhook"): what the endpoint
//! behind `--webhook <name>=URL` answers to the stepper's `UpdateApprovalRequest`, as an application
//! with an HTTP endpoint instead of an operator would (`protocol: webhook` in a scenario).
//!
//! For one POST at virtual second `t` ([`World::answer_webhook`]), in this order:
//!
//! 1. a failure period ([`SimWebhook::failing`], the scenario's `webhookErrors`) or a silent
//!    application: no decision, as the real client would get it ([`WebhookFailure`]);
//! 2. a body that is not an `UpdateApprovalRequest`: HTTP 400;
//! 3. a denial on for one of the request's pods: `Deny` with its reason;
//! 4. less than `answer_seconds` since the request (its `requestId`) was first seen: `Wait`, with
//!    `retryAfterSeconds` = the seconds left;
//! 5. `Switchover`, its `primary` pod still holding the role: the switchover starts (once; to a Ready
//!    pod not in the request, one on the update revision first, taking `switchover_seconds`), `Wait`
//!    with the seconds left until the role moved;
//! 6. otherwise `Approve`.
//!
//! The reply is an HTTP status and body (or a transport error), read by the stepper's own
//! [`read_answer`]: the simulation does not read answers its own way. Every reply is recorded per
//! (ordinal, `updateRevision`) for the harm oracle ([`SimWebhook::replies`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::json;

use super::application::{Application, Protocol};
use super::world::World;
use crate::gates::approval::webhook::answer::{Decision, WebhookAnswer, read_answer};
use crate::gates::approval::webhook::request::{API_VERSION, KIND};

/// A way the webhook gives no decision: each kind the real client produces
/// ([`crate::cluster::webhook::Webhooks::post`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WebhookFailure {
    /// No answer within `--webhook-timeout`.
    Timeout,
    /// Nothing listens: the TCP connection is refused.
    Refused,
    /// HTTP 500 Internal Server Error.
    ServerError,
    /// HTTP 200 whose body is not a decision (a proxy's default page).
    NoDecision,
}

impl WebhookFailure {
    /// Every kind, in the order a failure period without a kind cycles through them.
    pub const ALL: [WebhookFailure; 4] = [
        WebhookFailure::Timeout,
        WebhookFailure::Refused,
        WebhookFailure::ServerError,
        WebhookFailure::NoDecision,
    ];

    /// What the call gets, as the real client would (`url`: the endpoint, for the client's message).
    pub fn reply(self, url: &str) -> Reply {
        let sending = format!("error sending request for url ({url})");
        match self {
            WebhookFailure::Timeout => Reply::Transport(format!("{sending}: operation timed out")),
            WebhookFailure::Refused => Reply::Transport(format!(
                "{sending}: client error (Connect): tcp connect error: Connection refused (os error 111)"
            )),
            WebhookFailure::ServerError => Reply::Http(500, "Internal Server Error".into()),
            WebhookFailure::NoDecision => Reply::Http(
                200,
                "<html><body>default backend - 200</body></html>".into(),
            ),
        }
    }
}

/// What the endpoint sends back for one POST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// No HTTP answer (a timeout, a refused connection): the client's error, in its words.
    Transport(String),
    /// An HTTP answer: the status and the body.
    Http(u16, String),
}

impl Reply {
    /// What the stepper makes of it: a transport error as is, an HTTP answer read by [`read_answer`].
    pub fn answer(&self) -> WebhookAnswer {
        match self {
            Reply::Transport(cause) => WebhookAnswer::Error(cause.clone()),
            Reply::Http(status, body) => read_answer(*status, body.as_bytes()),
        }
    }

    /// A `200` with the decision's JSON body.
    pub(super) fn decided(
        decision: Decision,
        reason: &str,
        retry_after_seconds: Option<i64>,
    ) -> Reply {
        let mut body = json!({"decision": decision.as_str(), "reason": reason});
        if let Some(s) = retry_after_seconds {
            body["retryAfterSeconds"] = json!(s.max(1));
        }
        Reply::Http(200, body.to_string())
    }
}

/// The webhook's side of a simulated application.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimWebhook {
    /// The `--webhook` NAME the simulated stepper calls it by (scenario `webhookName`, default `app`).
    pub name: String,
    /// The virtual second each request (by `requestId`) was first seen.
    pub first_seen: BTreeMap<String, i64>,
    /// The latest reply covering each (ordinal, `updateRevision`): the decision (`None`: no decision,
    /// an error) and the virtual second. What the harm oracle judges a step by.
    pub replies: BTreeMap<(u32, String), (Option<Decision>, i64)>,
    /// The `requestId` of each latest reply of [`SimWebhook::replies`].
    pub reply_requests: BTreeMap<(u32, String), String>,
    /// Until this virtual second (exclusive) every call fails: with this kind, or each in turn.
    pub failing: Option<(i64, Option<WebhookFailure>)>,
    /// Calls made, by the label of what the stepper got (`Approve`, `Wait`, `Deny`, `Error`:
    /// [`WebhookAnswer::result_label`]).
    pub calls: BTreeMap<String, u64>,
    /// Calls whose `updateRevision` was not the set's `status.updateRevision` (a question left over
    /// from a former revision): what a new revision or a rollback must keep at 0.
    pub stale_requests: u64,
    /// Failed calls so far (the turn of a failure period without a kind).
    failures: usize,
}

impl SimWebhook {
    /// Calls made so far, whatever they got.
    pub fn total_calls(&self) -> u64 {
        self.calls.values().sum()
    }
}

/// The fields of an `UpdateApprovalRequest` the application reads.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// `safe-rollout.dev/v1alpha1`.
    pub api_version: String,
    /// `UpdateApprovalRequest`.
    pub kind: String,
    /// The question's id (16 hex digits).
    pub request_id: String,
    /// `Update` or `Switchover`.
    pub phase: String,
    /// The pods the step replaces.
    pub pods: Vec<RequestPod>,
    /// The revision asked about.
    pub update_revision: String,
}

/// One pod of a [`Request`].
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct RequestPod {
    /// `<set>-<ordinal>`.
    pub name: String,
    /// Its ordinal.
    pub ordinal: u32,
    /// It matches the set's `primary-selector`.
    #[serde(default)]
    pub primary: bool,
}

/// What the application decides, before any switchover is started ([`decide`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `Deny`, with the reason.
    Deny(String),
    /// `Wait`, with the reason and the seconds left.
    Wait(String, i64),
    /// The pod at this ordinal holds the role: move it first.
    SwitchOver(u32),
    /// `Approve`.
    Approve,
}

/// The application's decision on `request`, first seen at `first_seen`, at virtual second `t` (rules
/// 3–6 of the module). Pure.
pub fn decide(app: &Application, request: &Request, first_seen: i64, t: i64) -> Verdict {
    let denials: Vec<String> = (request.pods.iter())
        .filter_map(|p| match app.denials.get(&p.ordinal) {
            Some((reason, until)) if *until > t => Some(format!("{}: {reason}", p.name)),
            _ => None,
        })
        .collect();
    if !denials.is_empty() {
        return Verdict::Deny(denials.join("; "));
    }
    let due = first_seen + app.answer_seconds;
    if t < due {
        let names: Vec<&str> = request.pods.iter().map(|p| p.name.as_str()).collect();
        return Verdict::Wait(format!("checking {}", names.join(", ")), due - t);
    }
    let primary = (request.pods.iter()).find(|p| p.primary && app.primary == Some(p.ordinal));
    match primary {
        Some(p) if request.phase == "Switchover" => Verdict::SwitchOver(p.ordinal),
        _ => Verdict::Approve,
    }
}

impl World {
    /// The application's webhook `name` answers the POST of `body` at `self.t` (the module's rules),
    /// records the reply and counts the call (a name the application does not answer under gets the
    /// client's error, and is neither counted nor recorded).
    pub fn answer_webhook(&mut self, name: &str, body: &serde_json::Value) -> Reply {
        let url = format!("http://{name}.{}.svc:8080/approve", self.namespace());
        let request = serde_json::from_value::<Request>(body.clone())
            .ok()
            .filter(|r| r.api_version == API_VERSION && r.kind == KIND);
        let update = self.status_str("updateRevision");
        let protocol = self.application.as_ref().map(|a| a.protocol);
        let reply = match (self.failure(name, &url), &request) {
            (Some(reply), _) => reply,
            (None, Some(_)) if protocol == Some(Protocol::Patroni) => self.patroni_reply(body),
            (None, Some(_)) if protocol == Some(Protocol::Etcd) => self.etcd_reply(body),
            (None, Some(_)) if protocol == Some(Protocol::RedisSentinel) => {
                self.sentinel_reply(body)
            }
            (None, Some(request)) => self.decided(request),
            (None, None) => Reply::Http(400, "not an UpdateApprovalRequest".into()),
        };
        let answer = reply.answer();
        if let Some(app) = self.application.as_mut()
            && app.protocol != Protocol::Handshake
            && app.webhook.name == name
        {
            let webhook = &mut app.webhook;
            *webhook
                .calls
                .entry(answer.result_label().into())
                .or_default() += 1;
            if let Some(request) = &request {
                if request.update_revision != update {
                    webhook.stale_requests += 1;
                }
                let decision = match &answer {
                    WebhookAnswer::Decided(a) => Some(a.decision),
                    WebhookAnswer::Error(_) => None,
                };
                for p in &request.pods {
                    let key = (p.ordinal, request.update_revision.clone());
                    webhook.replies.insert(key.clone(), (decision, self.t));
                    webhook
                        .reply_requests
                        .insert(key, request.request_id.clone());
                }
                let ordinals: Vec<u32> = request.pods.iter().map(|p| p.ordinal).collect();
                self.questions
                    .note_webhook_call(&ordinals, &request.request_id, self.t);
            }
        }
        reply
    }

    /// The reply of a call that gets no decision (rule 1): no webhook `name` here, a failure period,
    /// a silent application (a timeout); `None` when the application answers.
    fn failure(&mut self, name: &str, url: &str) -> Option<Reply> {
        let t = self.t;
        let app = match self.application.as_mut() {
            Some(app) if app.protocol != Protocol::Handshake && app.webhook.name == name => app,
            _ => return Some(Reply::Transport(format!("no --webhook named {name:?}"))),
        };
        let webhook = &mut app.webhook;
        let kind = match webhook.failing {
            Some((until, kind)) if t < until => {
                kind.unwrap_or(WebhookFailure::ALL[webhook.failures % WebhookFailure::ALL.len()])
            }
            _ if app.silent => WebhookFailure::Timeout,
            _ => return None,
        };
        webhook.failures += 1;
        Some(kind.reply(url))
    }

    /// The decision on `request` ([`decide`]), a switchover started when it asks for one.
    fn decided(&mut self, request: &Request) -> Reply {
        let (t, name) = (self.t, self.name());
        let Some(app) = self.application.as_mut() else {
            return Reply::Http(503, "no application".into());
        };
        let first = *app
            .webhook
            .first_seen
            .entry(request.request_id.clone())
            .or_insert(t);
        let verdict = decide(app, request, first, t);
        match verdict {
            Verdict::Deny(reason) => Reply::decided(Decision::Deny, &reason, None),
            Verdict::Wait(reason, left) => Reply::decided(Decision::Wait, &reason, Some(left)),
            Verdict::Approve => Reply::decided(Decision::Approve, "ready", None),
            Verdict::SwitchOver(from) => {
                let (mut underway, seconds) = (app.switchover, app.switchover_seconds);
                if underway.is_none() {
                    let step: Vec<u32> = request.pods.iter().map(|p| p.ordinal).collect();
                    underway = self
                        .switchover_target(from, &step)
                        .map(|to| (from, to, t + seconds));
                    if let Some(app) = self.application.as_mut() {
                        app.switchover = underway;
                    }
                }
                match underway {
                    Some((from, to, done)) => Reply::decided(
                        Decision::Wait,
                        &format!(
                            "switching the primary role over from {name}-{from} to {name}-{to}"
                        ),
                        Some(done - t),
                    ),
                    None => Reply::decided(
                        Decision::Wait,
                        &format!(
                            "no Ready pod outside the step to take the primary role from {name}-{from}"
                        ),
                        Some(5),
                    ),
                }
            }
        }
    }
}
