//! The label sets of the stepper's metrics ([`super::metrics`]).

use prometheus_client::encoding::EncodeLabelSet;

/// Labels of a per-StatefulSet series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SetLabels {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub statefulset: String,
}

/// Labels of `sts_safe_rollout_blocked`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BlockedLabels {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub statefulset: String,
    /// The [`crate::model::reasons::Reason`] name.
    pub reason: String,
}

/// Labels of `sts_safe_rollout_watch_restarts_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResourceLabels {
    /// The watched resource: `statefulsets`, `pods`, `poddisruptionbudgets`.
    pub resource: String,
}

/// Labels of `sts_safe_rollout_errors_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    /// [`crate::pass::SetReport::error_reason`]: `StepRejected` or `StatusWriteRejected` (the API
    /// server refused the write: the Warning Event of that reason says why), else the
    /// [`crate::cluster::ClusterError::reason`] of the error (`Refused`: a read refused; `ApiStatus`,
    /// `Transport`, `WriteOverridden`). A lost Lease (`NotLeader`) is not an error: never counted.
    pub reason: String,
}

/// Labels of `sts_safe_rollout_webhook_calls_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    /// The `--webhook` NAME, or the `--answerer-config` entry's.
    pub webhook: String,
    /// `webhook` (an approval webhook of the user's), or the built-in answerer's kind (`patroni`, …).
    pub kind: String,
    /// `Approve`, `Wait`, `Deny`, or `Error` (no decision: a timeout, a refused connection, a non-2xx,
    /// a body without a decision).
    pub result: String,
}

/// Labels of `sts_safe_rollout_passes_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PassLabels {
    /// `ok`, `errored` (some StatefulSet hit an API error) or `failed` (a LIST failed).
    pub result: String,
}
