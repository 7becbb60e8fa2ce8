//! The approval webhook's gate on the real "1-staged" moment (a 5-replica set staged at partition 5:
//! the next step 5→4 replaces web-4), for tests/decisions/webhook.rs and tests/decisions/webhook_records.rs: the set asking
//! webhook `db` (with annotations and pod labels added), one evaluation with a given answer, a plan's
//! snapshot and probes, and readers of what the evaluation asks for (the record, the changes, the call).
#![allow(dead_code)] // each test crate uses a subset

use std::collections::HashMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use sts_safe_rollout_rules::annotations as names;
use sts_stepper::config::{Keys, Served, SetConfig, webhook};
use sts_stepper::gates::approval::webhook::answer::{Answer, Decision, WebhookAnswer};
use sts_stepper::gates::approval::webhook::state::WebhookState;
use sts_stepper::gates::{self, Effect, Evaluation, FleetView, GateOptions, Need, Probes, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::{self, Snapshot};

use super::staged_with;

pub const P: &str = "safe-rollout.dev";

pub fn key(name: &str) -> String {
    format!("{P}/{name}")
}

/// The staged moment with `annotations` added to the set (the webhook `db` always) and `labels` on pods
/// by ordinal.
pub fn staged(
    annotations: &[(&str, &str)],
    labels: &[(u32, &str, &str)],
) -> (StatefulSet, Vec<Pod>) {
    let mut all = vec![("pre-update-webhook", "db")];
    all.extend_from_slice(annotations);
    staged_with(&all, &[], labels)
}

pub fn opts() -> GateOptions {
    GateOptions {
        served: Served::default().with(&webhook::FLAG, vec!["db".into()]),
        ..GateOptions::default()
    }
}

pub fn evaluate(
    set: &StatefulSet,
    pods: &[Pod],
    answer: Option<WebhookAnswer>,
    now: Timestamp,
) -> Evaluation {
    let by_ordinal = pods::pods_by_ordinal(set, pods.iter());
    let probes = Probes {
        webhook: answer,
        ..Probes::default()
    };
    gates::evaluate(
        set,
        &by_ordinal,
        &[],
        FleetView::default(),
        &probes,
        &opts(),
        now,
    )
}

pub fn decided(decision: Decision, reason: &str, retry: Option<u32>) -> Option<WebhookAnswer> {
    Some(WebhookAnswer::Decided(Answer {
        decision,
        reason: reason.into(),
        retry_after_seconds: retry,
    }))
}

pub fn blocked_detail(ev: &Evaluation, reason: Reason) -> String {
    match &ev.verdict {
        Verdict::Blocked(b) if b.reason == reason => b.detail.clone(),
        other => panic!("expected Blocked {reason}, got {other:?}"),
    }
}

/// What the gates' effects write on `set` (the set `ev` was evaluated on), as the plan writes them
/// without a step ([`plan::effects::gate_writes`], and the `degraded-reason` that
/// [`plan::degraded::next`] decides over their claims on a blocked set) — the `approval-pending` line
/// aside (`plan::approval_pending`, held by `tests/decisions/approval_pending.rs`).
pub fn gate_changes(set: &StatefulSet, ev: &Evaluation) -> Vec<(String, Option<String>)> {
    let config = SetConfig::parse(set, &Arc::new(Keys::new(P)));
    let gate = plan::effects::gate_writes(set, &config, ev);
    let mut claims = vec![plan::degraded::Claim::NoStep {
        nothing_to_step: false,
    }];
    claims.extend(gate.degraded);
    let mut changes: Vec<_> = gate
        .changes
        .into_iter()
        .filter(|(k, _)| *k != config.keys.of(names::APPROVAL_PENDING))
        .collect();
    changes.extend(plan::degraded::next(&config, &claims).keyed(&config));
    changes
}

/// The value the gates set on `set` for annotation `name` (`Some(None)`: removed; `None`: unchanged).
pub fn change(set: &StatefulSet, ev: &Evaluation, name: &str) -> Option<Option<String>> {
    gate_changes(set, ev)
        .into_iter()
        .find(|(k, _)| *k == key(name))
        .map(|(_, v)| v)
}

/// The webhook's record the gates wrote.
pub fn state(ev: &Evaluation) -> WebhookState {
    ev.effects
        .iter()
        .find_map(|e| match e {
            Effect::WebhookState(s) => Some((**s).clone()),
            _ => None,
        })
        .expect("webhook-state written")
}

/// The set with the record `ev` wrote stored on it (and `extra` annotations).
pub fn with_record(set: &StatefulSet, ev: &Evaluation) -> StatefulSet {
    let mut s = set.clone();
    let changes = gate_changes(set, ev);
    let a = s.metadata.annotations.get_or_insert_with(Default::default);
    for (k, v) in changes {
        match v {
            Some(v) => a.insert(k, v),
            None => a.remove(&k),
        };
    }
    s
}

pub fn need(ev: &Evaluation) -> (String, Value) {
    match &ev.need {
        Some(Need::Webhook { name, body, .. }) => (name.clone(), body.clone()),
        other => panic!("expected a webhook call, got {other:?}"),
    }
}

pub fn snapshot(set: StatefulSet, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        statefulsets: vec![Arc::new(set)],
        pods,
        ..Snapshot::default()
    }
}

pub fn probes_of(answer: Option<WebhookAnswer>) -> HashMap<usize, Probes> {
    HashMap::from([(
        0,
        Probes {
            webhook: answer,
            ..Probes::default()
        },
    )])
}
