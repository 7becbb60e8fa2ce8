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
            | ConfigError::Expect { key, .. } => key,
        }
    }
}

/// What is wrong with a `pause-at` value (the detail of [`ConfigError::PausePlan`]): one point
/// (`item`: the point as written, trimmed), or the order of the points (each point as written without
/// its bake time, [`super::PointAt`]'s `Display`: `3`, `50%`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PausePlanError {
    /// An empty point (`"1,,3"`, `""`).
    #[error("an empty point")]
    EmptyPoint,
    /// The bake time after `:` is not whole seconds ≥ 1.
    #[error("{item:?} has bake time {bake:?}, not whole seconds ≥ 1")]
    BakeTime {
        /// The point.
        item: String,
        /// The bake time as written.
        bake: String,
    },
    /// Neither digits nor digits followed by `%`.
    #[error("{item:?} is not a count of pods or a percentage")]
    NotAPoint {
        /// The point.
        item: String,
    },
    /// A percentage outside 1 % to 100 %.
    #[error("{item:?} is not a percentage from 1% to 100%")]
    Percent {
        /// The point.
        item: String,
    },
    /// A count of pods below 1 (or past `i32`).
    #[error("{item:?} is not a count of pods ≥ 1")]
    Count {
        /// The point.
        item: String,
    },
    /// The same point twice.
    #[error("point {at} is listed twice")]
    ListedTwice {
        /// The point.
        at: String,
    },
    /// A point after a larger point of its kind (a count after a larger count, a percentage after
    /// a larger percentage).
    #[error("point {point} comes after {before}")]
    OutOfOrder {
        /// The point.
        point: String,
        /// The larger point listed before it.
        before: String,
    },
    /// Two points below `spec.replicas` that resolve to as many pods.
    #[error("points {before} and {point} are both {pods} of {replicas} pods")]
    SamePods {
        /// The point listed first.
        before: String,
        /// The point listed second.
        point: String,
        /// The pods both resolve to.
        pods: i32,
        /// `spec.replicas`.
        replicas: i32,
    },
    /// A point below `spec.replicas` that resolves to fewer pods than the one before it.
    #[error("point {point} ({pods} of {replicas} pods) comes after {before} ({before_pods} pods)")]
    FewerPods {
        /// The point.
        point: String,
        /// The pods it resolves to.
        pods: i32,
        /// `spec.replicas`.
        replicas: i32,
        /// The point listed before it.
        before: String,
        /// The pods that one resolves to.
        before_pods: i32,
    },
}

/// Why an `http-check-expect` value is not of [`super::Expect`]'s grammar ([`super::http_check::parse_expect`]; the detail of
/// [`ConfigError::Expect`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpectError {
    /// Empty or blank.
    #[error("empty")]
    Empty,
    /// `in(` without `)` at the end.
    #[error("in( without its closing )")]
    Unclosed,
    /// An empty item in `in(…)` (`in(a,,b)`).
    #[error("an empty item in in(…)")]
    EmptyItem,
    /// What follows a comparison operator is not a finite number (`>=x`).
    #[error("{operand:?} after {op} is not a number")]
    NotANumber {
        /// What follows the operator, trimmed.
        operand: String,
        /// The operator as written: `>=`, `<=`, `==`, `>`, `<`.
        op: &'static str,
    },
    /// Starts like a comparison but is none of `>=`, `>`, `<=`, `<`, `==` (`!=3`, `=>3`).
    #[error("an unknown comparison")]
    UnknownComparison,
}

/// Why an `http-check-jsonpath` value is not a JSONPath from the root ([`super::http_check::check_jsonpath`]; the detail
/// of [`ConfigError::JsonPath`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    /// It does not start with `$`.
    #[error("does not start with $")]
    NoRoot,
    /// `jsonpath-rust` cannot parse it; its message.
    #[error("not a JSONPath: {0}")]
    Syntax(String),
}

/// The expected form of `http-check-expect`, for messages.
pub const EXPECT_FORM: &str = "expected a value (\"green\"), a list \"in(green,yellow)\", or a number comparison \">=3\" (>=, >, <=, <, ==)";
