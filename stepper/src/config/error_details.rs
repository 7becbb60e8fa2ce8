//! The typed details of three [`ConfigError`](super::error::ConfigError) variants: what is wrong with a
//! `pause-at` plan ([`PausePlanError`]), an `http-check-expect` expectation ([`ExpectError`]) and an
//! `http-check-jsonpath` ([`JsonPathError`]).

/// What is wrong with a `pause-at` value (the detail of `ConfigError::PausePlan`): one point
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
/// `ConfigError::Expect`).
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
/// of `ConfigError::JsonPath`).
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
