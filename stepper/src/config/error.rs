//! Why an annotation cannot be read: [`ConfigError`], one variant per annotation and cause, each
//! naming the annotation's full key (`<prefix>/<name>`), the value as written and the expected form.
//! Its `Display` is the detail of gate `InvalidAnnotation` (docs/annotations.md, docs/gates.md),
//! worded as before it was typed; [`ConfigError::reason`] is its stable name. The details of three
//! variants are typed too: [`PausePlanError`], [`JsonPathError`], [`ExpectError`].

/// An unreadable annotation of the stepper ([`super::SetConfig::parse`] keeps the first one in gate
/// order as [`super::SetConfig::invalid`]). `key` is always the full annotation key under the
/// prefix in use; `value` the value as written (trimmed where the reader trims it). The typed details
/// are boxed: a `SetConfig` holds three of these (`step`, `recover-after-seconds`, `invalid`) for
/// every set `watch` caches, and boxed the enum is 64 bytes, not 112 (a `SetConfig` 744, not 888).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `step` is neither a count of pods ≥ 1 (`"2"`) nor a percentage of `spec.replicas` from 1 % to
    /// 100 % (`"25%"`).
    #[error(
        "{key}: {value:?} is not a step size; expected a positive integer count of pods (\"2\") or \
         a percentage of spec.replicas from 1% to 100% (\"25%\")"
    )]
    StepSize {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `initial-delay-seconds` is not a whole number of seconds.
    #[error("{key}: {value:?} is not a delay; expected a whole number of seconds (\"60\")")]
    InitialDelay {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `recover-after-seconds` is not a whole number of seconds ≥ 1.
    #[error("{key}: {value:?} is not a duration; expected a whole number of seconds ≥ 1 (\"300\")")]
    RecoverAfter {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `last-partition-update` (read for a set with an initial delay) is not an RFC 3339 time.
    #[error("{key}: {value:?} is not a time; expected RFC 3339 UTC (\"2026-11-23T01:10:42Z\")")]
    LastPartitionUpdate {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `pause-at` is not a canary plan; `problem` says what is wrong with it.
    #[error(
        "{key}: {value:?} is not a pause plan: {problem}; expected comma-separated points in \
         increasing order, each a count of pods (\"1\") or a percentage of spec.replicas from 1% \
         to 100% (\"50%\"), optionally with a bake time in whole seconds ≥ 1 (\"50%:600\"), e.g. \
         \"1,50%:600\""
    )]
    PausePlan {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
        /// What is wrong: a point, or the order of the points.
        problem: Box<PausePlanError>,
    },
    /// `rollout-group` is set but empty (or blank).
    #[error("{key}: empty; expected a group name (\"kafka\")")]
    EmptyRolloutGroup {
        /// The annotation key.
        key: String,
    },
    /// `owner-condition` is not a condition type (empty, or with whitespace or `/`).
    #[error(
        "{key}: {value:?} is not a condition type; expected a name such as \"Healthy\" or \"Ready\""
    )]
    OwnerCondition {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// A check's counting annotation (`check-period-seconds`, `success-threshold`, `failure-limit`,
    /// `check-error-limit`) is not a whole number ≥ 1.
    #[error("{key}: {value:?} is not valid; expected a whole number ≥ 1 (\"3\")")]
    CheckCount {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// An annotation under the prefix that starts `prometheus-query` but is neither it nor
    /// `prometheus-query-<N>` with N from 1 to 999 (`prometheus-query-x`, `-0`, `prometheus-query1`):
    /// a typo that would silently drop a query.
    #[error("{key}: not a query annotation; expected {query} or {query}-<N> with N from 1 to 999")]
    QueryName {
        /// The annotation key, as written.
        key: String,
        /// The key of `prometheus-query` under the prefix.
        query: String,
    },
    /// A `prometheus-query*` annotation is set but empty.
    #[error("{key}: empty; expected a PromQL query")]
    EmptyQuery {
        /// The annotation key.
        key: String,
    },
    /// `http-check-jsonpath` or `http-check-expect` is set without `http-check`: a check half
    /// configured is never silently dropped.
    #[error(
        "{key}: set without {check}; expected {check} naming a check configured on the stepper \
         (--http-check NAME=URL)"
    )]
    WithoutHttpCheck {
        /// The key of the annotation that is set.
        key: String,
        /// The key of `http-check`.
        check: String,
    },
    /// `http-check` is not a check name (a DNS label, the NAME of a `--http-check NAME=URL`).
    #[error(
        "{key}: {value:?} is not a check name; expected the NAME of a --http-check NAME=URL of the \
         stepper (a DNS label such as \"es-health\")"
    )]
    HttpCheckName {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `http-check` is set without `http-check-jsonpath` (`key`).
    #[error("{key}: missing; expected the JSONPath of the value to check, e.g. \"$.status\"")]
    MissingJsonPath {
        /// The key of `http-check-jsonpath`.
        key: String,
    },
    /// `http-check-jsonpath` is not a JSONPath from the root; `problem` says why.
    #[error(
        "{key}: {value:?} {problem}; expected a JSONPath such as \"$.status\" or \"$.a.b[0].c\""
    )]
    JsonPath {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
        /// Why it is not one.
        problem: Box<JsonPathError>,
    },
    /// `http-check` is set without `http-check-expect` (`key`).
    #[error("{key}: missing; {}", EXPECT_FORM)]
    MissingExpect {
        /// The key of `http-check-expect`.
        key: String,
    },
    /// `http-check-expect` is not of the expectation grammar ([`super::Expect`]); `problem` says why.
    #[error("{key}: {value:?}: {problem}; {}", EXPECT_FORM)]
    Expect {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
        /// Why it is not an expectation.
        problem: Box<ExpectError>,
    },
    /// `approval-timeout-seconds` is not a whole number of seconds ≥ 1.
    #[error("{key}: {value:?} is not a timeout; expected a whole number of seconds ≥ 1 (\"600\")")]
    ApprovalTimeout {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `primary-selector` is not a label selector; `problem` says why.
    #[error(
        "{key}: {value:?} is not a label selector ({problem}); expected requirements separated by \
         commas, each `key=value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` or \
         `!key` (\"role=primary\")"
    )]
    PrimarySelector {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
        /// What is wrong, in a few words.
        problem: String,
    },
    /// `webhook-error-limit` without `pre-update-webhook` (`webhook`: that key).
    #[error(
        "{key}: set without {webhook}; expected {webhook} naming a webhook configured on the stepper \
         (--webhook NAME=URL)"
    )]
    WebhookErrorLimitAlone {
        /// The annotation key.
        key: String,
        /// The key of `pre-update-webhook`.
        webhook: String,
    },
    /// `pre-update-webhook` is not a DNS label (a URL, say).
    #[error(
        "{key}: {value:?} is not a webhook name; expected the NAME of a --webhook NAME=URL of the \
         stepper (a DNS label such as \"db-approver\"), never a URL"
    )]
    WebhookName {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// Both `pre-update-webhook` and `pre-update-approval: "true"` (`handshake`: that key).
    #[error(
        "{key}: set with {handshake}: \"true\"; expected one way of asking the application, the \
         pods' annotations or the webhook (two answerers could disagree, and a step would wait on both)"
    )]
    TwoAnswerers {
        /// The annotation key (`pre-update-webhook`).
        key: String,
        /// The key of `pre-update-approval`.
        handshake: String,
    },
    /// `webhook-error-limit` is not a whole number ≥ 1.
    #[error("{key}: {value:?} is not a limit; expected a whole number ≥ 1 (\"4\")")]
    WebhookErrorLimit {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `on-failure` is neither `pause` nor `rollback`.
    #[error("{key}: {value:?} is not an action on failure; expected \"pause\" or \"rollback\"")]
    OnFailure {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
    /// `progress-deadline-seconds` is not a whole number of seconds ≥ 1.
    #[error("{key}: {value:?} is not a deadline; expected a whole number of seconds ≥ 1 (\"600\")")]
    ProgressDeadline {
        /// The annotation key.
        key: String,
        /// The value.
        value: String,
    },
}

impl ConfigError {
    /// The stable name of the cause (PascalCase, the variant's name; never reworded).
    pub fn reason(&self) -> &'static str {
        match self {
            ConfigError::StepSize { .. } => "StepSize",
            ConfigError::InitialDelay { .. } => "InitialDelay",
            ConfigError::RecoverAfter { .. } => "RecoverAfter",
            ConfigError::LastPartitionUpdate { .. } => "LastPartitionUpdate",
            ConfigError::PausePlan { .. } => "PausePlan",
            ConfigError::EmptyRolloutGroup { .. } => "EmptyRolloutGroup",
            ConfigError::OwnerCondition { .. } => "OwnerCondition",
            ConfigError::CheckCount { .. } => "CheckCount",
            ConfigError::QueryName { .. } => "QueryName",
            ConfigError::EmptyQuery { .. } => "EmptyQuery",
            ConfigError::WithoutHttpCheck { .. } => "WithoutHttpCheck",
            ConfigError::HttpCheckName { .. } => "HttpCheckName",
            ConfigError::MissingJsonPath { .. } => "MissingJsonPath",
            ConfigError::JsonPath { .. } => "JsonPath",
            ConfigError::MissingExpect { .. } => "MissingExpect",
            ConfigError::Expect { .. } => "Expect",
            ConfigError::ApprovalTimeout { .. } => "ApprovalTimeout",
            ConfigError::PrimarySelector { .. } => "PrimarySelector",
            ConfigError::WebhookErrorLimitAlone { .. } => "WebhookErrorLimitAlone",
            ConfigError::WebhookName { .. } => "WebhookName",
            ConfigError::TwoAnswerers { .. } => "TwoAnswerers",
            ConfigError::WebhookErrorLimit { .. } => "WebhookErrorLimit",
            ConfigError::OnFailure { .. } => "OnFailure",
            ConfigError::ProgressDeadline { .. } => "ProgressDeadline",
        }
    }

    /// The full key of the annotation that cannot be read.
    pub fn key(&self) -> &str {
        match self {
            ConfigError::StepSize { key, .. }
            | ConfigError::InitialDelay { key, .. }
            | ConfigError::RecoverAfter { key, .. }
            | ConfigError::LastPartitionUpdate { key, .. }
            | ConfigError::PausePlan { key, .. }
            | ConfigError::EmptyRolloutGroup { key }
            | ConfigError::OwnerCondition { key, .. }
            | ConfigError::CheckCount { key, .. }
            | ConfigError::QueryName { key, .. }
            | ConfigError::EmptyQuery { key }
            | ConfigError::WithoutHttpCheck { key, .. }
            | ConfigError::HttpCheckName { key, .. }
            | ConfigError::MissingJsonPath { key }
            | ConfigError::JsonPath { key, .. }
            | ConfigError::MissingExpect { key }
            | ConfigError::Expect { key, .. }
            | ConfigError::ApprovalTimeout { key, .. }
            | ConfigError::PrimarySelector { key, .. }
            | ConfigError::WebhookErrorLimitAlone { key, .. }
            | ConfigError::WebhookName { key, .. }
            | ConfigError::TwoAnswerers { key, .. }
            | ConfigError::WebhookErrorLimit { key, .. }
            | ConfigError::OnFailure { key, .. }
            | ConfigError::ProgressDeadline { key, .. } => key,
        }
    }
}

pub use super::error_details::{EXPECT_FORM, ExpectError, JsonPathError, PausePlanError};
