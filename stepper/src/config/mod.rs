//! The border: each StatefulSet's annotations, read once into one [`SetConfig`].
//!
//! Below this module no code knows the annotation prefix.
//! [`Keys`] turns the prefix (`--annotation-prefix`) into the full annotation keys once per pass;
//! [`SetConfig::parse`] reads every annotation the stepper knows (names: [`sts_safe_rollout_rules::annotations`])
//! into typed fields, and keeps the first unreadable one ([`ConfigError`]) as the `InvalidAnnotation`
//! detail. The gates, the plan and the patches then use the fields and the keys only.
//!
//! Layer `config` (pure): may import `model` (ARCHITECTURE.md, "Layers").

pub mod answerer;
pub mod approval;
pub mod check;
pub mod dns;
pub mod endpoint_auth;
pub mod endpoints;
mod error;
mod error_details;
mod group_owner;
pub mod http_check;
mod keys;
pub mod pause_at;
pub mod rollback;
pub mod scope;
pub mod serves;
pub mod webhook;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

pub use answerer::Answerer;
pub use approval::{ApprovalConfig, PrimarySelector};
pub use check::{CheckConfig, DEFAULT_PERIOD_SECONDS, Query, check_config};
pub use endpoints::{Named, Served};
pub use error::{ConfigError, EXPECT_FORM, ExpectError, JsonPathError, PausePlanError};
pub use group_owner::{owner_condition, rollout_group};
pub use http_check::{Expect, HttpCheckConfig};
pub use keys::Keys;
pub use pause_at::{PassedPoints, PausePlan, PausePoint, PointAt, pause_at};
pub use rollback::{FailedRevision, OnFailure, on_failure, progress_deadline_seconds};
pub use scope::{EXCLUDED_NAMESPACES, StepperScope};
pub use serves::Serves;
pub use webhook::WebhookConfig;

use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::Reason;
use crate::model::set::{self, annotation};

/// The state the stepper keeps on the set (annotations it writes), as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stamps {
    /// `last-partition-update` as written (RFC 3339), when present.
    pub last_partition_update_raw: Option<String>,
    /// `last-partition-update` as a time, when present and readable.
    pub last_partition_update: Option<Timestamp>,
    /// `recent-steps`, readable entries only; `None` when the annotation is absent.
    pub recent_steps: Option<Vec<Timestamp>>,
    /// `blocked-reason` as written, when present: shown as is (the rollout health, like the GitOps
    /// checks, shows whatever is written, even a name this version does not know).
    pub blocked_reason: Option<String>,
    /// `blocked-reason` when it is a reason's name ([`Reason::parse`]; `None` for an unknown name):
    /// what the pass compares with its verdict, an enum compared in place of a string on every set
    /// of every pass.
    pub blocked: Option<Reason>,
    /// `completed-revision`, when present.
    pub completed_revision: Option<String>,
    /// `degraded-reason` as written (`<Kind>: <detail>`), when present.
    pub degraded_reason: Option<String>,
    /// `missing-rbac` as written, when present: the RBAC rule the stepper lacks for this set.
    pub missing_rbac: Option<String>,
    /// The gates' state annotations as written, by short name (`prometheus-check`, `http-check-state`,
    /// `webhook-state`: the `state` rows of [`names::DECLARED`]), when present ([`Stamps::state`]).
    pub states: std::collections::BTreeMap<&'static str, String>,
    /// `approval-pending` as written (what the approval gates wait for), when present.
    pub approval_pending: Option<String>,
    /// `pause-points-passed` as written (JSON, see [`PassedPoints`]), when present.
    pub pause_points_passed_raw: Option<String>,
    /// `pause-points-passed`, when present and readable (for any revision: the gates check which).
    pub pause_points_passed: Option<PassedPoints>,
    /// `failed-revision` as written (`<updateRevision>: <reason>`), when present: what a `test` op pins
    /// before the record is replaced or removed.
    pub failed_revision_raw: Option<String>,
    /// `failed-revision`, when present and readable ([`FailedRevision::parse`]). An unreadable record
    /// is no record, as an unreadable `pause-points-passed` or `webhook-state` is (never
    /// `InvalidAnnotation`: the stepper wrote it, a person has nothing to fix): what it would hold —
    /// a re-apply of the failed template — is then stepped through the gates like any template change.
    pub failed_revision: Option<FailedRevision>,
}

impl Stamps {
    /// A gate's state annotation as read, by short name (`http-check-state`); `None` when absent.
    pub fn state(&self, name: &str) -> Option<&str> {
        self.states.get(name).map(String::as_str)
    }
}

/// What the annotations' parse ([`SetConfig::parse`]) reads of a set: its annotations under the prefix,
/// and `spec.replicas` (a step or a pause point given in percent is counted against it).
pub const READS: &[Field] = &[of_set("metadata.annotations.~own"), of_set("spec.replicas")];

/// One StatefulSet's rollout settings and stamps, read from its annotations once per pass.
#[derive(Clone, Debug, PartialEq)]
pub struct SetConfig {
    /// The keys the values were read under (for patches and messages).
    pub keys: Arc<Keys>,
    /// `force-rolling-update: "true"`: native, ungated rolling update; the stepper skips the set.
    pub forced: bool,
    /// `paused: "true"` (gate `Paused`).
    pub paused: bool,
    /// `paused-reason`, shown by the `Paused` gate.
    pub paused_reason: Option<String>,
    /// `initialized: "true"` (sticky; the stepper stamps it once the set is fully Ready).
    pub initialized: bool,
    /// `guarded: "true"`: the policy (or the native twin) staged or restored this set's partition, so it
    /// is this project's to step; `status` and the GitOps health judge a set without it by the built-in
    /// rule (`rollout/health.rs`).
    pub marked: bool,
    /// Pods per step from `step` ([`step_size`]: 1 when absent), or why it cannot be read.
    pub step: Result<i32, ConfigError>,
    /// The canary plan from `pause-at` ([`pause_at()`]), resolved against `spec.replicas`; `None` when
    /// absent or unreadable (then also [`SetConfig::invalid`]).
    pub pause_at: Option<PausePlan>,
    /// Seconds from `initial-delay-seconds`; 0 when absent or unreadable.
    pub initial_delay_seconds: i64,
    /// `rollout-group`, when set and not empty.
    pub rollout_group: Option<String>,
    /// `owner-condition`, when set and a condition type.
    pub owner_condition: Option<String>,
    /// The Prometheus check (`prometheus-query*` and its settings), when configured and readable.
    pub prometheus: Option<CheckConfig>,
    /// The HTTP check (`http-check` and its settings), when configured and readable.
    pub http_check: Option<HttpCheckConfig>,
    /// Who answers for the application before a step, when one is configured and readable: the
    /// approval handshake on the pods (`pre-update-approval`, `approval-timeout-seconds`) or the
    /// approval webhook (`pre-update-webhook`, `webhook-error-limit`, `approval-timeout-seconds`);
    /// never both (both set: `InvalidAnnotation`, [`ConfigError::TwoAnswerers`]).
    pub answerer: Option<Answerer>,
    /// `primary-selector`, when set and a label selector.
    pub primary: Option<PrimarySelector>,
    /// Seconds from `recover-after-seconds` (stuck-pod recovery, `--recover-stuck-pods`): `Ok(None)`
    /// when absent (the flag's default applies); an unreadable value is also [`SetConfig::invalid`], and
    /// no pod of the set is recovered.
    pub recover_after_seconds: Result<Option<i64>, ConfigError>,
    /// What to do when the rollout fails, from `on-failure` ([`on_failure()`]): [`OnFailure::Pause`]
    /// when absent, and when unreadable (then also [`SetConfig::invalid`], and the set is not stepped).
    pub on_failure: OnFailure,
    /// Seconds from `progress-deadline-seconds` ([`progress_deadline_seconds()`]) within which each step
    /// must be done; `None` when absent (no deadline) or unreadable (then also [`SetConfig::invalid`]).
    pub progress_deadline_seconds: Option<i64>,
    /// What the stepper wrote on the set.
    pub stamps: Stamps,
    /// The first unreadable annotation, in gate order (`step`, `pause-at`, `initial-delay-seconds`, with a delay
    /// `last-partition-update`, `rollout-group`, `owner-condition`, the Prometheus check, the HTTP check,
    /// the handshake's timeout, the webhook, `primary-selector`, `recover-after-seconds`, `on-failure`,
    /// `progress-deadline-seconds`): its `Display`
    /// is the detail of gate `InvalidAnnotation`.
    pub invalid: Option<ConfigError>,
}

impl SetConfig {
    /// Reads `set`'s annotations under `keys`. Never fails: an unreadable value takes its default and
    /// its message goes to [`SetConfig::invalid`] (the first one only).
    pub fn parse(set: &StatefulSet, keys: &Arc<Keys>) -> SetConfig {
        let get = |key: &str| annotation(set, key);
        let mut errors: Vec<ConfigError> = Vec::new();
        let step = step_size(get(keys.of(names::STEP)), set::replicas(set), keys);
        if let Err(e) = &step {
            errors.push(e.clone());
        }
        let plan = keep(
            &mut errors,
            pause_at(get(keys.of(names::PAUSE_AT)), set::replicas(set), keys),
        )
        .flatten();
        let delay = keep(
            &mut errors,
            initial_delay_seconds(get(keys.of(names::INITIAL_DELAY_SECONDS)), keys),
        );
        let delay = delay.unwrap_or(0);
        let last = last_partition_update(get(keys.of(names::LAST_PARTITION_UPDATE)), keys);
        let last = if delay > 0 {
            keep(&mut errors, last).flatten()
        } else {
            last.ok().flatten()
        };
        let rollout_group = keep(&mut errors, rollout_group(set, keys)).flatten();
        let owner_condition = keep(&mut errors, owner_condition(set, keys)).flatten();
        let prometheus = keep(&mut errors, check_config(set, keys)).flatten();
        let http_check = keep(&mut errors, http_check::http_check_config(set, keys)).flatten();
        let approval = keep(&mut errors, approval::approval_config(set, keys)).flatten();
        let webhook = keep(&mut errors, webhook::webhook_config(set, keys)).flatten();
        let primary = keep(&mut errors, approval::primary_selector(set, keys)).flatten();
        let recover_after = recover_after_seconds(get(keys.of(names::RECOVER_AFTER_SECONDS)), keys);
        if let Err(e) = &recover_after {
            errors.push(e.clone());
        }
        let action = keep(
            &mut errors,
            on_failure(get(keys.of(names::ON_FAILURE)), keys),
        );
        let deadline = keep(
            &mut errors,
            progress_deadline_seconds(get(keys.of(names::PROGRESS_DEADLINE_SECONDS)), keys),
        );
        let owned = |key: &str| get(key).map(str::to_string);
        SetConfig {
            keys: keys.clone(),
            forced: get(keys.of(names::FORCE_ROLLING_UPDATE)) == Some(names::TRUE),
            paused: get(keys.of(names::PAUSED)) == Some(names::TRUE),
            paused_reason: owned(keys.of(names::PAUSED_REASON)),
            initialized: get(keys.of(names::INITIALIZED)) == Some(names::TRUE),
            marked: get(keys.of(names::GUARDED)) == Some(names::TRUE),
            step,
            pause_at: plan,
            initial_delay_seconds: delay,
            rollout_group: rollout_group.map(str::to_string),
            owner_condition: owner_condition.map(str::to_string),
            prometheus,
            http_check,
            answerer: Answerer::choose(approval, webhook),
            primary,
            recover_after_seconds: recover_after,
            on_failure: action.unwrap_or_default(),
            progress_deadline_seconds: deadline.flatten(),
            stamps: Stamps {
                last_partition_update_raw: owned(keys.of(names::LAST_PARTITION_UPDATE)),
                last_partition_update: last,
                recent_steps: get(keys.of(names::RECENT_STEPS)).map(|list| {
                    list.split(',')
                        .filter_map(|t| t.trim().parse::<Timestamp>().ok())
                        .collect()
                }),
                blocked_reason: owned(keys.of(names::BLOCKED_REASON)),
                blocked: get(keys.of(names::BLOCKED_REASON)).and_then(Reason::parse),
                completed_revision: owned(keys.of(names::COMPLETED_REVISION)),
                degraded_reason: owned(keys.of(names::DEGRADED_REASON)),
                missing_rbac: owned(keys.of(names::MISSING_RBAC)),
                states: names::step_state()
                    .filter_map(|name| Some((name, get(&keys.full(name))?.to_string())))
                    .collect(),
                approval_pending: owned(keys.of(names::APPROVAL_PENDING)),
                pause_points_passed_raw: owned(keys.of(names::PAUSE_POINTS_PASSED)),
                pause_points_passed: get(keys.of(names::PAUSE_POINTS_PASSED))
                    .and_then(PassedPoints::parse),
                failed_revision_raw: owned(keys.of(names::FAILED_REVISION)),
                failed_revision: get(keys.of(names::FAILED_REVISION))
                    .and_then(FailedRevision::parse),
            },
            invalid: errors.into_iter().next(),
        }
    }

    /// The endpoints the set's annotations ask for, in their gates' order (the Prometheus check's, the
    /// HTTP check's, the approval webhook's): what `InvalidAnnotation` judges against the stepper's
    /// configuration and `status --local` against the machine's ([`endpoints::Served`]). An iterator:
    /// `InvalidAnnotation` and the planner ask it of every set in every pass, and allocate nothing.
    pub fn named_endpoints(&self) -> impl Iterator<Item = Named<'_>> {
        let keys = &*self.keys;
        let prometheus = self.prometheus.as_ref().map(|_| Named {
            annotation: keys.of(names::PROMETHEUS_QUERY),
            flag: check::PROMETHEUS_FLAG,
            name: None,
        });
        let http = self.http_check.as_ref().map(|c| Named {
            annotation: keys.of(names::HTTP_CHECK),
            flag: http_check::FLAG,
            name: Some(c.name.as_str()),
        });
        let webhook = match &self.answerer {
            Some(Answerer::Webhook(w)) => Some(Named {
                annotation: keys.of(names::PRE_UPDATE_WEBHOOK),
                flag: webhook::FLAG,
                name: Some(w.name.as_str()),
            }),
            _ => None,
        };
        prometheus.into_iter().chain(http).chain(webhook)
    }

    /// True for a set the stepper manages: `RollingUpdate` (or absent), not forced, and marked by the
    /// policy (`<prefix>/guarded: "true"`: the policy staged or restored its partition). A partition a
    /// person set by hand, or one set outside the policy's scope, is not the stepper's to lower.
    pub fn guarded(&self, set: &StatefulSet) -> bool {
        set::is_rolling_update(set) && !self.forced && self.marked
    }
}

/// `result`'s value, its error pushed to `errors` instead.
fn keep<T>(errors: &mut Vec<ConfigError>, result: Result<T, ConfigError>) -> Option<T> {
    result.map_err(|e| errors.push(e)).ok()
}

/// Step size from `step`: absent → 1; `"N"` → N (N ≥ 1); `"P%"` (1 ≤ P ≤ 100) → ⌈P × replicas / 100⌉,
/// at least 1. A count of pods.
///
/// # Errors
/// [`ConfigError::StepSize`] (gate `InvalidAnnotation`).
pub fn step_size(value: Option<&str>, replicas: i32, keys: &Keys) -> Result<i32, ConfigError> {
    let Some(value) = value else {
        return Ok(1);
    };
    let bad = || ConfigError::StepSize {
        key: keys.of(names::STEP).to_string(),
        value: value.to_string(),
    };
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(percent) = value.strip_suffix('%') {
        if !digits_only(percent) {
            return Err(bad());
        }
        let p: i64 = percent.parse().map_err(|_| bad())?;
        if !(1..=100).contains(&p) {
            return Err(bad());
        }
        let replicas = i64::from(replicas.max(0));
        let n = (p * replicas + 99) / 100;
        Ok(i32::try_from(n.max(1)).unwrap_or(i32::MAX))
    } else {
        if !digits_only(value) {
            return Err(bad());
        }
        match value.parse::<i32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(bad()),
        }
    }
}

/// Seconds from `initial-delay-seconds`: absent → 0.
///
/// # Errors
/// [`ConfigError::InitialDelay`] (gate `InvalidAnnotation`).
pub fn initial_delay_seconds(value: Option<&str>, keys: &Keys) -> Result<i64, ConfigError> {
    let Some(value) = value else {
        return Ok(0);
    };
    match value.parse::<u32>() {
        Ok(n) if value.bytes().all(|b| b.is_ascii_digit()) => Ok(i64::from(n)),
        _ => Err(ConfigError::InitialDelay {
            key: keys.of(names::INITIAL_DELAY_SECONDS).to_string(),
            value: value.to_string(),
        }),
    }
}

/// Seconds from `recover-after-seconds`: `Ok(None)` when absent (the `--recover-stuck-pods` default,
/// [`crate::gates::recovery::DEFAULT_RECOVER_AFTER_SECONDS`], applies).
///
/// # Errors
/// [`ConfigError::RecoverAfter`]: not a whole number of seconds ≥ 1 (gate `InvalidAnnotation`).
pub fn recover_after_seconds(value: Option<&str>, keys: &Keys) -> Result<Option<i64>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.parse::<u32>() {
        Ok(n) if n >= 1 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(i64::from(n))),
        _ => Err(ConfigError::RecoverAfter {
            key: keys.of(names::RECOVER_AFTER_SECONDS).to_string(),
            value: value.to_string(),
        }),
    }
}

/// `last-partition-update` as a timestamp; `Ok(None)` when absent.
///
/// # Errors
/// [`ConfigError::LastPartitionUpdate`]: the value is not RFC 3339.
pub fn last_partition_update(
    value: Option<&str>,
    keys: &Keys,
) -> Result<Option<Timestamp>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    value
        .parse::<Timestamp>()
        .map(Some)
        .map_err(|_| ConfigError::LastPartitionUpdate {
            key: keys.of(names::LAST_PARTITION_UPDATE).to_string(),
            value: value.to_string(),
        })
}
