//! [`Keys`]: the full annotation keys (`<prefix>/<name>`) for one `--annotation-prefix`, built once.

use sts_safe_rollout_rules::annotations as names;

/// The full annotation keys (`<prefix>/<name>`) for one prefix, built once from `--annotation-prefix`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // one field per name of `sts_safe_rollout_rules::annotations`, same meaning
pub struct Keys {
    prefix: String,
    pub step: String,
    pub initial_delay_seconds: String,
    pub paused: String,
    pub paused_reason: String,
    pub pause_at: String,
    pub pause_points_passed: String,
    pub rollout_group: String,
    pub owner_condition: String,
    pub prometheus_query: String,
    pub check_period_seconds: String,
    pub success_threshold: String,
    pub failure_limit: String,
    pub check_error_limit: String,
    pub on_failure: String,
    pub progress_deadline_seconds: String,
    pub recent_steps: String,
    pub http_check: String,
    pub http_check_jsonpath: String,
    pub http_check_expect: String,
    pub recover_after_seconds: String,
    pub force_rolling_update: String,
    pub initialized: String,
    pub guarded: String,
    pub last_partition_update: String,
    pub blocked_reason: String,
    pub completed_revision: String,
    pub degraded_reason: String,
    pub failed_revision: String,
    pub missing_rbac: String,
    pub pre_update_approval: String,
    pub approval_timeout_seconds: String,
    pub primary_selector: String,
    pub update_requested: String,
    pub update_requested_at: String,
    pub update_request_phase: String,
    pub update_approved: String,
    pub update_denied: String,
    pub pre_update_webhook: String,
    pub webhook_error_limit: String,
    pub approval_pending: String,
}

impl Keys {
    /// The keys under `prefix` (already validated: a DNS subdomain).
    pub fn new(prefix: &str) -> Self {
        let k = |name: &str| names::key(prefix, name);
        Keys {
            prefix: prefix.to_string(),
            step: k(names::STEP),
            initial_delay_seconds: k(names::INITIAL_DELAY_SECONDS),
            paused: k(names::PAUSED),
            paused_reason: k(names::PAUSED_REASON),
            pause_at: k(names::PAUSE_AT),
            pause_points_passed: k(names::PAUSE_POINTS_PASSED),
            rollout_group: k(names::ROLLOUT_GROUP),
            owner_condition: k(names::OWNER_CONDITION),
            prometheus_query: k(names::PROMETHEUS_QUERY),
            check_period_seconds: k(names::CHECK_PERIOD_SECONDS),
            success_threshold: k(names::SUCCESS_THRESHOLD),
            failure_limit: k(names::FAILURE_LIMIT),
            check_error_limit: k(names::CHECK_ERROR_LIMIT),
            on_failure: k(names::ON_FAILURE),
            progress_deadline_seconds: k(names::PROGRESS_DEADLINE_SECONDS),
            recent_steps: k(names::RECENT_STEPS),
            http_check: k(names::HTTP_CHECK),
            http_check_jsonpath: k(names::HTTP_CHECK_JSONPATH),
            http_check_expect: k(names::HTTP_CHECK_EXPECT),
            recover_after_seconds: k(names::RECOVER_AFTER_SECONDS),
            force_rolling_update: k(names::FORCE_ROLLING_UPDATE),
            initialized: k(names::INITIALIZED),
            guarded: k(names::GUARDED),
            last_partition_update: k(names::LAST_PARTITION_UPDATE),
            blocked_reason: k(names::BLOCKED_REASON),
            completed_revision: k(names::COMPLETED_REVISION),
            degraded_reason: k(names::DEGRADED_REASON),
            missing_rbac: k(names::MISSING_RBAC),
            failed_revision: k(names::FAILED_REVISION),
            pre_update_approval: k(names::PRE_UPDATE_APPROVAL),
            approval_timeout_seconds: k(names::APPROVAL_TIMEOUT_SECONDS),
            primary_selector: k(names::PRIMARY_SELECTOR),
            update_requested: k(names::UPDATE_REQUESTED),
            update_requested_at: k(names::UPDATE_REQUESTED_AT),
            update_request_phase: k(names::UPDATE_REQUEST_PHASE),
            update_approved: k(names::UPDATE_APPROVED),
            update_denied: k(names::UPDATE_DENIED),
            pre_update_webhook: k(names::PRE_UPDATE_WEBHOOK),
            webhook_error_limit: k(names::WEBHOOK_ERROR_LIMIT),
            approval_pending: k(names::APPROVAL_PENDING),
        }
    }

    /// The prefix these keys are under (the simulation's admission reads it, as the policy's setting).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
    /// The full key `<prefix>/<name>` of annotation `name` (a short name, e.g. from
    /// [`sts_safe_rollout_rules::annotations::DECLARED`]).
    pub fn full(&self, name: &str) -> String {
        names::key(self.prefix(), name)
    }

    /// True for an annotation key under this prefix (`<prefix>/<name>`, any name): the only annotations
    /// the stepper reads ([`SetConfig::parse`], [`check::check_config`]) or writes.
    pub fn owns(&self, key: &str) -> bool {
        key.strip_prefix(self.prefix.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl Default for Keys {
    /// The keys under [`names::DEFAULT_PREFIX`].
    fn default() -> Self {
        Keys::new(names::DEFAULT_PREFIX)
    }
}
