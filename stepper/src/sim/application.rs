//! The application behind the pods, as the approval handshake sees it (docs/approvals.md): a primary
//! (label `role=primary` on one pod, `role=replica` on the others) and an answerer that reads the
//! stepper's requests on the pods and writes its answers there, as an operator or a sidecar would.
//!
//! Each second the answerer looks at every pod carrying `<prefix>/update-requested`: while a denial
//! is on for its ordinal it writes `update-denied`; silent, it writes nothing; otherwise, once
//! `answer_seconds` have passed since `update-requested-at`, a pod asked to switch over that holds the
//! role hands it to another Ready pod (taking `switchover_seconds`), then the pod is approved
//! (`update-approved` = the requested revision).
//!
//! An application with `protocol: webhook` answers through its approval webhook instead
//! ([`super::webhook`]): it writes nothing on the pods; its primary, its denials, its silence and its
//! switchovers are the same.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;
use sts_safe_rollout_rules::annotations as names;

use super::webhook::SimWebhook;
use super::world::{World, timestamp};
use crate::gates::approval::webhook::answer::Decision;

/// How the application answers the stepper's questions (docs/approvals.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Protocol {
    /// On the pods: it reads `update-requested` and writes `update-approved` / `update-denied` (the
    /// set carries `pre-update-approval: "true"`).
    #[default]
    Handshake,
    /// Through its approval webhook (the set carries `pre-update-webhook: <name>`).
    Webhook,
    /// As a Patroni cluster, answered by the stepper's built-in Patroni answerer (the set carries
    /// `pre-update-webhook: <name>`, an `--answerer-config` entry): [`super::patroni`].
    Patroni,
    /// As an etcd cluster, answered by the stepper's built-in etcd answerer: [`super::etcd`].
    Etcd,
    /// As a Redis with Sentinel, answered by the stepper's built-in Sentinel answerer:
    /// [`super::sentinel`].
    RedisSentinel,
}

/// The application of a simulated set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Application {
    /// The ordinal holding the primary role (`role=primary`); `None`: no roles (no `role` label).
    pub primary: Option<u32>,
    /// Seconds from a request to its answer.
    pub answer_seconds: i64,
    /// Seconds a switchover takes, from its start to the role on the other pod.
    pub switchover_seconds: i64,
    /// Answers nothing (an answerer that is down).
    pub silent: bool,
    /// Denials by ordinal: the reason, and the second the denial is lifted.
    pub denials: BTreeMap<u32, (String, i64)>,
    /// A switchover under way: (from, to, the second it completes).
    pub switchover: Option<(u32, u32, i64)>,
    /// How it answers: on the pods, or through its webhook.
    pub protocol: Protocol,
    /// Its webhook (used with [`Protocol::Webhook`]).
    pub webhook: SimWebhook,
}

impl Application {
    /// An application with its primary on `primary` answering after `answer_seconds`, on the pods (the
    /// handshake).
    pub fn new(primary: Option<u32>, answer_seconds: i64, switchover_seconds: i64) -> Self {
        Application {
            primary,
            answer_seconds,
            switchover_seconds,
            silent: false,
            denials: BTreeMap::new(),
            switchover: None,
            protocol: Protocol::Handshake,
            webhook: SimWebhook::default(),
        }
    }

    /// The `role` label of the pod at `ordinal`: `primary` or `replica`; `None` without roles.
    pub fn role(&self, ordinal: u32) -> Option<&'static str> {
        self.primary
            .map(|p| if p == ordinal { "primary" } else { "replica" })
    }
}

impl World {
    /// The system behind the pods moved its primary role by itself (a built-in answerer's switchover
    /// against a real system, read back from it): the application's primary is now `to` (`None`: no pod
    /// holds it), and the pods whose `role` label changes get a new `resourceVersion`, as any change of
    /// what the API server serves of a pod does.
    pub fn move_primary(&mut self, to: Option<u32>) {
        let Some(app) = self.application.as_mut() else {
            return;
        };
        if app.primary == to {
            return;
        }
        let moved: Vec<u32> = app.primary.into_iter().chain(to).collect();
        app.primary = to;
        let t = self.t;
        for o in moved {
            let version = self.next_pod_version();
            if let Some(p) = self.pods.get_mut(&o) {
                p.stamp(t, version);
            }
        }
    }

    /// True once no pod carries an approval request (`update-requested`) and the set no
    /// `approval-pending` line: what the stepper asked was answered or withdrawn. A run ends only then
    /// (or at its duration), so a withdrawal a fault delayed is seen through.
    pub fn approvals_settled(&self) -> bool {
        let requested = names::key(&self.prefix, names::UPDATE_REQUESTED);
        let pending = names::key(&self.prefix, names::APPROVAL_PENDING);
        self.pods
            .values()
            .all(|p| !p.annotations.contains_key(&requested))
            && self.set["metadata"]["annotations"][pending].is_null()
    }

    /// The answerer's second at `self.t` (the module's rules); a pod whose annotations or `role` label
    /// change gets a new `resourceVersion`. With the webhook, only the switchover under way and the denials move on:
    /// nothing is written on the pods.
    pub fn answer_requests(&mut self) {
        let Some(mut app) = self.application.clone() else {
            return;
        };
        let t = self.t;
        let key = |name: &str| names::key(&self.prefix, name);
        let (requested, at, phase) = (
            key(names::UPDATE_REQUESTED),
            key(names::UPDATE_REQUESTED_AT),
            key(names::UPDATE_REQUEST_PHASE),
        );
        let (approved, denied) = (key(names::UPDATE_APPROVED), key(names::UPDATE_DENIED));
        if let Some((_, to, done)) = app.switchover
            && t >= done
        {
            if self.pods.get(&to).is_some_and(|p| !p.terminating()) {
                // The `role` labels of the old and the new primary change: both pods get a new
                // `resourceVersion`, as any change of what the API server serves of a pod does.
                let moved: Vec<u32> = app.primary.into_iter().chain([to]).collect();
                app.primary = Some(to);
                for o in moved {
                    let version = self.next_pod_version();
                    if let Some(p) = self.pods.get_mut(&o) {
                        p.stamp(t, version);
                    }
                }
            }
            app.switchover = None;
        }
        app.denials.retain(|_, (_, until)| *until > t);
        if app.protocol != Protocol::Handshake {
            self.application = Some(app);
            return;
        }
        let ordinals: Vec<u32> = self.pods.keys().copied().collect();
        for o in ordinals {
            let mut changes: Vec<(String, Option<String>)> = Vec::new();
            let pod = &self.pods[&o];
            let denial = app.denials.get(&o).map(|(r, _)| r.clone());
            if pod.annotations.get(&denied) != denial.as_ref() {
                changes.push((denied.clone(), denial.clone()));
            }
            let revision = pod.annotations.get(&requested).cloned();
            let asked = pod
                .annotations
                .get(&at)
                .and_then(|v| v.parse::<Timestamp>().ok())
                .map(|ts| ts.as_second());
            let now = timestamp(t).as_second();
            let ready = match (revision, asked) {
                (Some(rev), Some(asked))
                    if !app.silent && denial.is_none() && now >= asked + app.answer_seconds =>
                {
                    Some(rev)
                }
                _ => None,
            };
            if let Some(rev) = ready {
                let switching = pod.annotations.get(&phase).map(String::as_str)
                    == Some("Switchover")
                    && app.primary == Some(o);
                if switching {
                    // Even if it approved before it held the role: the role moves first.
                    if app.switchover.is_none()
                        && let Some(to) = self.switchover_target(o, &[])
                    {
                        app.switchover = Some((o, to, t + app.switchover_seconds));
                    }
                } else if pod.annotations.get(&approved) != Some(&rev) {
                    changes.push((approved.clone(), Some(rev)));
                }
            }
            if !changes.is_empty() {
                let version = self.next_pod_version();
                let pod = self.pods.get_mut(&o).expect("pod");
                if let Some((_, Some(rev))) = changes.iter().find(|(k, _)| *k == approved) {
                    self.questions.note_approval(&pod.uid, rev);
                }
                for (k, v) in changes {
                    match v {
                        Some(v) => pod.annotations.insert(k, v),
                        None => pod.annotations.remove(&k),
                    };
                }
                pod.stamp(t, version);
            }
        }
        self.application = Some(app);
    }

    /// Where the primary role goes from `from`: a Ready pod that is not terminating and not in `step`
    /// (the pods asked about with it), one on the update revision first, then the highest ordinal (the
    /// next step's pods are the lowest not updated).
    pub(super) fn switchover_target(&self, from: u32, step: &[u32]) -> Option<u32> {
        let update = self.status_str("updateRevision");
        self.pods
            .values()
            .filter(|p| p.ordinal != from && !step.contains(&p.ordinal))
            .filter(|p| p.running_and_ready() && !p.terminating())
            .max_by_key(|p| (p.revision == update, p.ordinal))
            .map(|p| p.ordinal)
    }

    /// Records a step that exposed the pod at `ordinal` to replacement (it lands below the old
    /// partition, off the update revision), or a DELETE of the stepper that replaces a Ready pod (a
    /// return: it comes back on `currentRevision`), when the set asks for approvals and the pod had not approved
    /// the update revision or was denying it, or when it held the primary role the set's
    /// `primary-selector` names (`role=primary`): the harms the handshake and the selector exist to
    /// prevent, judged on the world as it is when the step lands. With `pre-update-webhook`, "approved"
    /// is the webhook's latest reply covering the pod for the update revision: `Approve`, in this
    /// second (an approval counts only for the pass that got it: docs/approvals.md, "Webhook").
    pub(super) fn note_replacement(&mut self, ordinal: u32) {
        let annotation = |name: &str| {
            self.set["metadata"]["annotations"][names::key(&self.prefix, name)]
                .as_str()
                .map(str::to_string)
        };
        // The revision the ordinal is created from again (Kubernetes StatefulSet controller: below the
        // partition `currentRevision`, else `updateRevision`): a step exposes pods at or above it, a
        // return (the stepper's DELETE of a pod left on a rolled-back revision) one below it.
        let below = i32::try_from(ordinal).unwrap_or(i32::MAX) < self.partition();
        let revision = self.status_str(if below {
            "currentRevision"
        } else {
            "updateRevision"
        });
        let Some(pod) = self.pods.get(&ordinal) else {
            return;
        };
        let approved = pod
            .annotations
            .get(&names::key(&self.prefix, names::UPDATE_APPROVED));
        let mut why = Vec::new();
        if annotation(names::PRE_UPDATE_APPROVAL).as_deref() == Some(names::TRUE) {
            if approved != Some(&revision) {
                why.push(format!("not approved for {revision}"));
            } else if let Some(stale) = self.questions.stale_approval(&pod.uid, &revision) {
                why.push(stale);
            }
            let denied = names::key(&self.prefix, names::UPDATE_DENIED);
            if let Some(reason) = pod.annotations.get(&denied) {
                why.push(format!("denied ({reason})"));
            }
        }
        if let Some(name) = annotation(names::PRE_UPDATE_WEBHOOK) {
            why.extend(self.unapproved_by_webhook(&name, ordinal, &revision));
        }
        let primary = self.application.as_ref().and_then(|a| a.primary);
        if annotation(names::PRIMARY_SELECTOR).is_some() && primary == Some(ordinal) {
            why.push("held the primary role".to_string());
        }
        if !why.is_empty() {
            self.unapproved_replacements
                .push((self.t, ordinal, why.join(", ")));
        }
    }

    /// Why the webhook `name` had not approved exposing the pod at `ordinal` to `update` now: its latest
    /// reply covering the pod for that revision was not an `Approve` of this second, that `Approve`
    /// does not answer the last question asked about the pod ([`super::questions`]), or a denial of
    /// the pod is on.
    fn unapproved_by_webhook(&self, name: &str, ordinal: u32, update: &str) -> Vec<String> {
        let t = self.t;
        let Some(app) = self.application.as_ref() else {
            return vec![format!("no application behind webhook {name}")];
        };
        let mut why = Vec::new();
        let key = (ordinal, update.to_string());
        match app.webhook.replies.get(&key) {
            Some((Some(Decision::Approve), at)) if *at == t => {
                let id = app
                    .webhook
                    .reply_requests
                    .get(&key)
                    .cloned()
                    .unwrap_or_default();
                let first_seen = app.webhook.first_seen.get(&id).copied().unwrap_or(t);
                why.extend(
                    self.questions
                        .stale_webhook_approval(ordinal, &id, first_seen),
                );
            }
            Some((decision, at)) => why.push(format!(
                "webhook {name}'s latest reply for {update} was {} at t={at}",
                decision.map_or("an error", Decision::as_str)
            )),
            None => why.push(format!("webhook {name} never answered for {update}")),
        }
        if let Some((reason, until)) = app.denials.get(&ordinal)
            && *until > t
        {
            why.push(format!("denied ({reason})"));
        }
        why
    }
}
