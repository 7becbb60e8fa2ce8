//! A set's rollout health, from the object alone: what `status`, Argo CD (Lua) and Flux (CEL) report.
//!
//! The built-in rules of Argo CD (gitops-engine `pkg/health/health_statefulset.go`) and Flux (kstatus,
//! cli-utils `pkg/kstatus/status/core.go`) call a StatefulSet staged behind a partition Healthy /
//! Current as soon as the pods at or above the partition are updated: a set the policy just staged is
//! "complete" with no pod on the new revision. [`health`] is the rule this project ships instead, for
//! the sets the policy marked `<prefix>/guarded: "true"`; every other set keeps the built-in verdict;
//! `deploy/gitops/argocd/` (Lua) and `deploy/gitops/flux/` (CEL) render it for those tools, and the
//! `gitops-health` crate's tests check that all three agree on every fixture and simulated frame.
//! The one source of the rule is this file; docs/gitops.md explains it for users.

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use crate::config::SetConfig;
use crate::model::set;

/// The health codes, with Argo CD's names (gitops-engine `pkg/health/health.go`). Flux (kstatus) has
/// no Suspended: the CEL rendering reports Healthy as `Current`, Degraded as `Failed`, and Progressing
/// and Suspended as `InProgress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HealthStatus {
    /// Nothing staged: every replica on `updateRevision`, Ready (and available with
    /// `minReadySeconds`); or an unguarded set (no guarded mark, `OnDelete`, forced) the built-in rule
    /// calls healthy.
    Healthy,
    /// An update is staged or stepping, pods are not Ready yet, or the controller has not observed
    /// the spec.
    Progressing,
    /// `<prefix>/paused: "true"`: a person, a canary pause point or a check holds the rollout.
    Suspended,
    /// Something a person must act on: `<prefix>/degraded-reason` is set on a guarded set (a
    /// failure-limit pause, a stuck pod recovery cannot delete, a rejected step).
    Degraded,
}

impl HealthStatus {
    /// Argo CD's name: `Healthy`, `Progressing`, `Suspended`, `Degraded`.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Healthy => "Healthy",
            HealthStatus::Progressing => "Progressing",
            HealthStatus::Suspended => "Suspended",
            HealthStatus::Degraded => "Degraded",
        }
    }
}

impl std::fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set's health: the code and one line a person can act on (the message Argo CD shows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// The code.
    pub status: HealthStatus,
    /// One line, e.g. `stepping: 2 of 5 pods on web-7d7598bf9d, partition 3; next step blocked:
    /// PodNotReady`.
    pub message: String,
}

impl std::fmt::Display for Health {
    /// `Progressing: stepping: …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

fn health_of(status: HealthStatus, message: String) -> Health {
    Health { status, message }
}

/// The health of `set` from the object alone (`config`: its annotations, read once at the border).
/// In this order, the first that applies:
///
/// 1. no `status`: Progressing, `waiting for the StatefulSet controller: no status yet`;
///    `status.observedGeneration` absent or not `metadata.generation`: Progressing, `waiting for the
///    StatefulSet controller to observe generation G (observed O)` (as both built-in rules);
/// 2. unguarded — `OnDelete`, another strategy type, `force-rolling-update`, or no `<prefix>/guarded:
///    "true"` (the mark the policy writes when it stages or restores the partition; without it the
///    partition, if any, is a person's or another tool's): the built-in rule — Progressing while fewer
///    than all pods are Ready (`readiness`) or, for `RollingUpdate`, while `updatedReplicas <
///    replicas − partition`; else Healthy; the message says why (`unguarded (no
///    safe-rollout.dev/guarded mark): 5 of 5 pods Ready`);
/// 3. `degraded-reason` set (not empty): Degraded, its value as the message;
/// 4. `paused: "true"`: Suspended, the `paused-reason` (or `paused`);
/// 5. a staged update ([`set::has_staged_update`]): Progressing, naming the pods on `updateRevision`,
///    the partition and `blocked-reason` (`staged, waiting for the stepper: …`, `stepping: …`,
///    `rolling out: …` once the partition is 0), and after it `approval-pending` when set (`…; next
///    step blocked: ApprovalPending: approval of web-4 on web-7d… asked at …, deadline …`);
/// 6. not every replica Ready (and available with `minReadySeconds`): Progressing;
/// 7. Healthy: `rollout complete: N pods on <updateRevision>, all Ready`.
///
/// An absent `rollingUpdate` or `partition` counts as partition 0, an absent `spec.replicas` as 1 (the
/// API server's defaults). The renderings read the object as the API server stores it (its schema: a
/// partition is an integer, annotations strings), as Argo CD's and Flux's own checks do.
pub fn health(set: &StatefulSet, config: &SetConfig) -> Health {
    use HealthStatus::{Degraded, Healthy, Progressing, Suspended};
    let Some(status) = set.status.as_ref() else {
        return health_of(
            Progressing,
            "waiting for the StatefulSet controller: no status yet".into(),
        );
    };
    let generation = set.metadata.generation;
    if status.observed_generation.is_none() || status.observed_generation != generation {
        let show = |v: Option<i64>| v.map_or("none".to_string(), |v| v.to_string());
        return health_of(
            Progressing,
            format!(
                "waiting for the StatefulSet controller to observe generation {} (observed {})",
                show(generation),
                show(status.observed_generation)
            ),
        );
    }
    let replicas = set::replicas(set);
    let updated = status.updated_replicas.unwrap_or(0);
    let partition = set::partition(set).unwrap_or(0);
    let revision = status.update_revision.as_deref().unwrap_or("(none)");
    if let Some(why) = unguarded_why(set, config) {
        if let Some(waiting) = readiness(set) {
            return health_of(Progressing, format!("unguarded ({why}): {waiting}"));
        }
        let target = replicas.saturating_sub(partition);
        if set::is_rolling_update(set) && updated < target {
            return health_of(
                Progressing,
                format!("unguarded ({why}): {updated} of {target} pods on {revision}"),
            );
        }
        let ready = status.ready_replicas.unwrap_or(0);
        return health_of(
            Healthy,
            format!("unguarded ({why}): {ready} of {replicas} pods Ready"),
        );
    }
    if let Some(reason) = config.stamps.degraded_reason.as_deref()
        && !reason.is_empty()
    {
        return health_of(Degraded, reason.to_string());
    }
    if config.paused {
        let reason = config.paused_reason.as_deref().filter(|r| !r.is_empty());
        return health_of(Suspended, reason.unwrap_or("paused").to_string());
    }
    if set::has_staged_update(set) {
        let pods = format!("{updated} of {replicas} pods on {revision}");
        let mut message = if partition >= replicas {
            format!("staged, waiting for the stepper: {pods}")
        } else if partition > 0 {
            format!("stepping: {pods}, partition {partition}")
        } else {
            format!("rolling out: {pods}")
        };
        if partition > 0
            && let Some(blocked) = config.stamps.blocked_reason.as_deref()
            && !blocked.is_empty()
        {
            message.push_str(&format!("; next step blocked: {blocked}"));
            if let Some(waiting) = config.stamps.approval_pending.as_deref()
                && !waiting.is_empty()
            {
                message.push_str(&format!(": {waiting}"));
            }
        }
        return health_of(Progressing, message);
    }
    if let Some(waiting) = readiness(set) {
        return health_of(Progressing, format!("waiting for pods: {waiting}"));
    }
    health_of(
        Healthy,
        format!("rollout complete: {replicas} pods on {revision}, all Ready"),
    )
}

/// Why a set is judged by the built-in rule, for the message, or `None` for a guarded set: `OnDelete`,
/// `force-rolling-update`, `updateStrategy <type>` for a type the stepper does not know, or `no
/// <prefix>/guarded mark` for a `RollingUpdate` set the policy never staged (a namespace it excludes, a
/// cluster without it, a partition a person set by hand).
fn unguarded_why(set: &StatefulSet, config: &SetConfig) -> Option<String> {
    if set::is_on_delete(set) {
        Some("OnDelete".into())
    } else if !set::is_rolling_update(set) {
        let kind = set
            .spec
            .as_ref()
            .and_then(|s| s.update_strategy.as_ref())
            .and_then(|u| u.type_.as_deref())
            .unwrap_or("");
        Some(format!("updateStrategy {kind}"))
    } else if config.forced {
        Some("force-rolling-update".into())
    } else if !config.marked {
        Some(format!("no {} mark", config.keys.of(names::GUARDED)))
    } else {
        None
    }
}

/// What keeps the set from fully Ready once observed, or `None` when every replica is:
/// `R of N pods Ready` while `status.readyReplicas != spec.replicas`, else `A of N pods available
/// (minReadySeconds M)` while `minReadySeconds > 0` and `status.availableReplicas != spec.replicas`
/// (docs/design.md, "fully Ready").
fn readiness(set: &StatefulSet) -> Option<String> {
    let status = set.status.as_ref();
    let replicas = set::replicas(set);
    let ready = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    if ready != replicas {
        return Some(format!("{ready} of {replicas} pods Ready"));
    }
    let min_ready = set::min_ready_seconds(set);
    let available = status.and_then(|s| s.available_replicas).unwrap_or(0);
    if min_ready > 0 && available != replicas {
        return Some(format!(
            "{available} of {replicas} pods available (minReadySeconds {min_ready})"
        ));
    }
    None
}
