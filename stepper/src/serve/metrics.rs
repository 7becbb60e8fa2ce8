//! Prometheus metrics (OpenMetrics text, `prometheus-client`), set from each pass's report.
//!
//! Per StatefulSet (labels `namespace`, `statefulset`): `sts_safe_rollout_replicas`,
//! `_current_replicas`, `_updated_replicas`, `_partition`, `_last_partition_update_timestamp_seconds`
//! (Unix seconds), `_approval_wait_seconds` and `_approval_timeout_seconds` (while a step waits for
//! the application's approval), `_blocked{reason}` (1 for the current reason; the series of other
//! reasons are removed), `_steps_total`, `_rollbacks_total` (`on-failure: rollback`). Per process: `_pass_duration_seconds` (histogram),
//! `_passes_total{result}`, `_errors_total{reason}` (sets a pass could not handle, by
//! [`crate::pass::SetReport::error_reason`]: `StepRejected`, `StatusWriteRejected`, `Refused`,
//! `ApiStatus`, `Transport`, `WriteOverridden`), `_webhook_calls_total{webhook,kind,result}`,
//! `_last_pass_timestamp_seconds`, `_leader` (1 while this replica may write) and
//! `_watch_restarts_total{resource}`. Series of StatefulSets that left the scope are removed.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::model::reasons::Reason;
use crate::pass::PassReport;

pub use super::labels::{
    BlockedLabels, ErrorLabels, PassLabels, ResourceLabels, SetLabels, WebhookLabels,
};

type FloatGauge = Gauge<f64, AtomicU64>;

/// The stepper's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    replicas: Family<SetLabels, Gauge>,
    current_replicas: Family<SetLabels, Gauge>,
    updated_replicas: Family<SetLabels, Gauge>,
    partition: Family<SetLabels, Gauge>,
    last_partition_update: Family<SetLabels, FloatGauge>,
    approval_wait: Family<SetLabels, Gauge>,
    approval_timeout: Family<SetLabels, Gauge>,
    blocked: Family<BlockedLabels, Gauge>,
    steps: Family<SetLabels, Counter>,
    rollbacks: Family<SetLabels, Counter>,
    recovered_pods: Family<SetLabels, Counter>,
    pass_duration: Histogram,
    step_decision_age: Histogram,
    passes: Family<PassLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    webhook_calls: Family<WebhookLabels, Counter>,
    /// The kind of each approval name (`webhook`, or a built-in answerer's: `patroni`, …): the
    /// `kind` label of the webhook calls, set once the checks are configured.
    approval_kinds: std::sync::RwLock<std::collections::BTreeMap<String, &'static str>>,
    last_pass: FloatGauge,
    leader: Gauge,
    watch_restarts: Family<ResourceLabels, Counter>,
    known: Mutex<HashSet<SetLabels>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Names the kind of each approval name the checks configure (`(name, kind)`): the `kind` label of
    /// `sts_safe_rollout_webhook_calls_total`; a name not given is a `webhook`.
    pub fn name_approval_kinds(&self, kinds: impl IntoIterator<Item = (String, &'static str)>) {
        if let Ok(mut k) = self.approval_kinds.write() {
            k.extend(kinds);
        }
    }

    /// Registers every metric in a fresh registry.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let m = Metrics {
            replicas: Family::default(),
            current_replicas: Family::default(),
            updated_replicas: Family::default(),
            partition: Family::default(),
            last_partition_update: Family::default(),
            approval_wait: Family::default(),
            approval_timeout: Family::default(),
            blocked: Family::default(),
            steps: Family::default(),
            rollbacks: Family::default(),
            recovered_pods: Family::default(),
            pass_duration: Histogram::new(exponential_buckets(0.01, 2.0, 14)),
            step_decision_age: Histogram::new(exponential_buckets(0.005, 2.0, 12)),
            passes: Family::default(),
            errors: Family::default(),
            webhook_calls: Family::default(),
            approval_kinds: Default::default(),
            last_pass: FloatGauge::default(),
            leader: Gauge::default(),
            watch_restarts: Family::default(),
            known: Mutex::new(HashSet::new()),
            registry: Registry::default(),
        };
        registry.register(
            "sts_safe_rollout_replicas",
            "spec.replicas of the StatefulSet (pods)",
            m.replicas.clone(),
        );
        registry.register(
            "sts_safe_rollout_current_replicas",
            "status.currentReplicas: pods on currentRevision",
            m.current_replicas.clone(),
        );
        registry.register(
            "sts_safe_rollout_updated_replicas",
            "status.updatedReplicas: pods on updateRevision",
            m.updated_replicas.clone(),
        );
        registry.register(
            "sts_safe_rollout_partition",
            "spec.updateStrategy.rollingUpdate.partition after the pass (0 when absent)",
            m.partition.clone(),
        );
        registry.register(
            "sts_safe_rollout_last_partition_update_timestamp_seconds",
            "Unix time of the last step (annotation <prefix>/last-partition-update)",
            m.last_partition_update.clone(),
        );
        registry.register(
            "sts_safe_rollout_approval_wait_seconds",
            "While the next step waits for the application's approval: seconds since the earliest request (pre-update-approval)",
            m.approval_wait.clone(),
        );
        registry.register(
            "sts_safe_rollout_approval_timeout_seconds",
            "While the next step waits for the application's approval: its approval-timeout-seconds",
            m.approval_timeout.clone(),
        );
        registry.register(
            "sts_safe_rollout_blocked",
            "1 while a gate blocks the next step, labelled with the gate's reason",
            m.blocked.clone(),
        );
        registry.register(
            "sts_safe_rollout_steps",
            "Steps taken by this process (partition lowered)",
            m.steps.clone(),
        );
        registry.register(
            "sts_safe_rollout_rollbacks",
            "Rollbacks written by this process (on-failure: rollback: the last good template back)",
            m.rollbacks.clone(),
        );
        registry.register(
            "sts_safe_rollout_recovered_pods",
            "Stuck pods deleted by --recover-stuck-pods (not Ready on a revision their ordinal should no longer run)",
            m.recovered_pods.clone(),
        );
        registry.register(
            "sts_safe_rollout_pass_duration_seconds",
            "Duration of a pass: snapshot, decisions and writes (seconds)",
            m.pass_duration.clone(),
        );
        registry.register(
            "sts_safe_rollout_step_decision_age_seconds",
            "Age of the pod read a step was decided on, when its write was about to go (seconds)",
            m.step_decision_age.clone(),
        );
        registry.register(
            "sts_safe_rollout_passes",
            "Passes by result: ok, errored (an API error blocked a StatefulSet), failed (a LIST failed)",
            m.passes.clone(),
        );
        registry.register(
            "sts_safe_rollout_errors",
            "StatefulSets a pass could not handle, by reason: StepRejected, StatusWriteRejected (the API server refused the write), Refused (a read refused), ApiStatus (another error status), Transport (no answer), WriteOverridden (a webhook changed a write)",
            m.errors.clone(),
        );
        registry.register(
            "sts_safe_rollout_webhook_calls",
            "Calls of the approval webhooks (--webhook), by name and result: Approve, Wait, Deny, Error",
            m.webhook_calls.clone(),
        );
        registry.register(
            "sts_safe_rollout_last_pass_timestamp_seconds",
            "Unix time at which the last pass ended",
            m.last_pass.clone(),
        );
        registry.register(
            crate::leader::LEADER_METRIC,
            crate::leader::LEADER_METRIC_HELP,
            m.leader.clone(),
        );
        m.leader.set(1);
        registry.register(
            "sts_safe_rollout_watch_restarts",
            "Watches (watch's caches) that failed or expired and re-list with backoff, by resource",
            m.watch_restarts.clone(),
        );
        Metrics { registry, ..m }
    }

    /// Counts a watch of `resource` that failed or expired (it re-lists with backoff).
    pub fn watch_restarted(&self, resource: &str) {
        self.watch_restarts
            .get_or_create(&ResourceLabels {
                resource: resource.to_string(),
            })
            .inc();
    }

    /// Sets `sts_safe_rollout_leader`: 1 while this replica may write (always, without leader
    /// election), else 0.
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    /// Records a finished pass: per-set figures and blocked reason, steps, duration (seconds) and the
    /// Unix time it ended (`ended_at`, seconds).
    pub fn observe(&self, report: &PassReport, duration_seconds: f64, ended_at: f64) {
        let mut seen = HashSet::new();
        for s in &report.sets {
            let labels = SetLabels {
                namespace: s.namespace.clone(),
                statefulset: s.name.clone(),
            };
            let f = &s.figures;
            self.replicas
                .get_or_create(&labels)
                .set(i64::from(f.replicas));
            self.current_replicas
                .get_or_create(&labels)
                .set(i64::from(f.current_replicas));
            self.updated_replicas
                .get_or_create(&labels)
                .set(i64::from(f.updated_replicas));
            self.partition
                .get_or_create(&labels)
                .set(i64::from(s.partition_after().unwrap_or(0)));
            match f.last_partition_update {
                Some(t) => {
                    self.last_partition_update
                        .get_or_create(&labels)
                        .set(t.as_millisecond() as f64 / 1000.0);
                }
                None => {
                    self.last_partition_update.remove(&labels);
                }
            }
            match f.approval_wait {
                Some((waited, timeout)) => {
                    self.approval_wait.get_or_create(&labels).set(waited);
                    self.approval_timeout.get_or_create(&labels).set(timeout);
                }
                None => {
                    self.approval_wait.remove(&labels);
                    self.approval_timeout.remove(&labels);
                }
            }
            if let Some(age) = s.decision_age_seconds {
                self.step_decision_age.observe(age);
            }
            match s.outcome {
                crate::pass::Outcome::Stepped { .. } => self.steps.get_or_create(&labels).inc(),
                crate::pass::Outcome::RolledBack(_) => self.rollbacks.get_or_create(&labels).inc(),
                _ => 0,
            };
            self.set_blocked(&labels, s.blocked_reason());
            if let Some(reason) = s.error_reason() {
                self.errors
                    .get_or_create(&ErrorLabels {
                        reason: reason.into(),
                    })
                    .inc();
            }
            if let Some((webhook, result)) = &s.webhook_call {
                let kind = (self.approval_kinds.read())
                    .ok()
                    .and_then(|k| k.get(webhook).copied())
                    .unwrap_or("webhook");
                self.webhook_calls
                    .get_or_create(&WebhookLabels {
                        webhook: webhook.clone(),
                        kind: kind.to_string(),
                        result: (*result).to_string(),
                    })
                    .inc();
            }
            seen.insert(labels);
        }
        for r in &report.recoveries {
            if r.outcome == crate::pass::recovery::RecoveryOutcome::Deleted {
                self.recovered_pods
                    .get_or_create(&SetLabels {
                        namespace: r.namespace.clone(),
                        statefulset: r.statefulset.clone(),
                    })
                    .inc();
            }
        }
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        for gone in known.difference(&seen) {
            self.forget(gone);
        }
        *known = seen;
        drop(known);
        let result = if report.any_errored() {
            "errored"
        } else {
            "ok"
        };
        self.end_pass(result, duration_seconds, ended_at);
    }

    /// Records a pass whose snapshot failed: every known StatefulSet is marked blocked by `ApiError`.
    pub fn observe_failed(&self, duration_seconds: f64, ended_at: f64) {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        for labels in known.iter() {
            self.set_blocked(labels, Some(Reason::ApiError));
        }
        drop(known);
        self.end_pass("failed", duration_seconds, ended_at);
    }

    fn end_pass(&self, result: &str, duration_seconds: f64, ended_at: f64) {
        self.pass_duration.observe(duration_seconds);
        self.passes
            .get_or_create(&PassLabels {
                result: result.into(),
            })
            .inc();
        self.last_pass.set(ended_at);
    }

    fn set_blocked(&self, labels: &SetLabels, reason: Option<Reason>) {
        for r in Reason::ALL {
            let l = BlockedLabels {
                namespace: labels.namespace.clone(),
                statefulset: labels.statefulset.clone(),
                reason: r.as_str().into(),
            };
            if Some(r) == reason {
                self.blocked.get_or_create(&l).set(1);
            } else {
                self.blocked.remove(&l);
            }
        }
    }

    fn forget(&self, labels: &SetLabels) {
        self.replicas.remove(labels);
        self.current_replicas.remove(labels);
        self.updated_replicas.remove(labels);
        self.partition.remove(labels);
        self.last_partition_update.remove(labels);
        self.approval_wait.remove(labels);
        self.approval_timeout.remove(labels);
        self.steps.remove(labels);
        self.rollbacks.remove(labels);
        self.recovered_pods.remove(labels);
        self.set_blocked(labels, None);
    }

    /// The OpenMetrics text exposition (content type
    /// `application/openmetrics-text; version=1.0.0; charset=utf-8`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}
