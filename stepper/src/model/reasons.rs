//! Why a step is not taken: the stable gate [`Reason`]s and the [`Blocked`] a failing gate returns.

use std::fmt;

/// Why the next step is not taken. The names are stable: they are metric label values, Event reasons'
/// details and what people grep for in logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// The set carries the policy's mark (`<prefix>/guarded: "true"`) and a staged update, but is
    /// outside the stepper's scope now: its labels no longer match `--selector` (its opt-in label was
    /// removed), or its namespace is one every scope excludes. Its update is not stepped.
    OutOfScope,
    /// Annotation `<prefix>/paused: "true"`: a person or a canary hold stopped the rollout.
    Paused,
    /// A stepper annotation (`step`, `initial-delay-seconds`, `last-partition-update`) has a value the
    /// stepper cannot read; the detail names it and the expected form.
    InvalidAnnotation,
    /// `status.updateRevision` is the revision `<prefix>/failed-revision` records: the stepper rolled it
    /// back after a failure (`on-failure: rollback`) and it was applied again; held until the template
    /// changes to another revision or a person retries it (`resume --retry`).
    FailedRevision,
    /// The StatefulSet controller has not observed the current spec yet
    /// (`status.observedGeneration < metadata.generation`, or no `status.updateRevision`).
    NotObserved,
    /// A pod with ordinal in `[0, spec.replicas)` is missing, terminating, not Running, not Ready, or
    /// Ready for less than `spec.minReadySeconds`.
    PodNotReady,
    /// A pod with ordinal ≥ partition does not run `status.updateRevision` yet: the last step is still
    /// being carried out by the StatefulSet controller.
    StepInProgress,
    /// Fewer than `<prefix>/initial-delay-seconds` seconds have passed since `<prefix>/last-partition-update`.
    Settling,
    /// A PodDisruptionBudget selecting the set's pods has `status.disruptionsAllowed < 1`.
    PdbBlocked,
    /// Another StatefulSet of the same `<prefix>/rollout-group` in the namespace rolls out first (one
    /// set of a group at a time, in name order; a started rollout finishes first).
    GroupBusy,
    /// `<prefix>/owner-condition` names a condition of the set's controller owner (e.g. `Healthy` of a
    /// MOCO MySQLCluster) that is not `True` for the owner's current generation, or the owner cannot
    /// be read.
    OwnerNotHealthy,
    /// The Prometheus check (`<prefix>/prometheus-query*`) has not passed `success-threshold` times in a
    /// row yet: a query returned an empty result (a failure), or Prometheus gave no answer (an error).
    PrometheusCheck,
    /// The HTTP check (`<prefix>/http-check`, a URL named by `--http-check`) has not passed
    /// `success-threshold` times in a row yet: the value at `http-check-jsonpath` did not match
    /// `http-check-expect` (a failure), or the endpoint gave no usable answer (an error).
    HttpCheck,
    /// `<prefix>/primary-selector` selects a pod the next step would replace: the primary role must move
    /// to another pod first (with the approval handshake the pod is asked to switch over; without it a
    /// person moves the role, or forces the step).
    PrimaryNotMoved,
    /// `<prefix>/pre-update-approval: "true"` and a pod the next step would replace has not approved
    /// the update revision (`<prefix>/update-approved`), or denied it (`<prefix>/update-denied`), or
    /// did not answer within `approval-timeout-seconds`; or `<prefix>/pre-update-webhook` and the
    /// webhook did not answer `Approve` in this pass (it answered `Wait` or `Deny`, or gave no decision).
    ApprovalPending,
    /// The fleet's step budget is spent: `--max-steps-per-pass` steps in this pass, or
    /// `--max-steps-per-minute` steps (by `<prefix>/last-partition-update`) in the last 60 seconds.
    Throttled,
    /// The API server refused or failed a request for this StatefulSet (fail closed).
    ApiError,
}

impl Reason {
    /// Every reason, in gate order (the order [`crate::gates::GATES`] checks them), `ApiError` last.
    pub const ALL: [Reason; 17] = [
        Reason::OutOfScope,
        Reason::Paused,
        Reason::InvalidAnnotation,
        Reason::FailedRevision,
        Reason::NotObserved,
        Reason::PodNotReady,
        Reason::StepInProgress,
        Reason::Settling,
        Reason::PdbBlocked,
        Reason::GroupBusy,
        Reason::OwnerNotHealthy,
        Reason::PrometheusCheck,
        Reason::HttpCheck,
        Reason::PrimaryNotMoved,
        Reason::ApprovalPending,
        Reason::Throttled,
        Reason::ApiError,
    ];

    /// The PascalCase name, e.g. `"PodNotReady"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::OutOfScope => "OutOfScope",
            Reason::Paused => "Paused",
            Reason::InvalidAnnotation => "InvalidAnnotation",
            Reason::FailedRevision => "FailedRevision",
            Reason::NotObserved => "NotObserved",
            Reason::PodNotReady => "PodNotReady",
            Reason::StepInProgress => "StepInProgress",
            Reason::Settling => "Settling",
            Reason::PdbBlocked => "PdbBlocked",
            Reason::GroupBusy => "GroupBusy",
            Reason::OwnerNotHealthy => "OwnerNotHealthy",
            Reason::PrometheusCheck => "PrometheusCheck",
            Reason::HttpCheck => "HttpCheck",
            Reason::PrimaryNotMoved => "PrimaryNotMoved",
            Reason::ApprovalPending => "ApprovalPending",
            Reason::Throttled => "Throttled",
            Reason::ApiError => "ApiError",
        }
    }

    /// Parses a name produced by [`Reason::as_str`] (used to read back `<prefix>/blocked-reason`).
    pub fn parse(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// True for reasons that are part of a healthy rollout's rhythm (a person's hold, the controller
    /// catching up, the settle delay, the group's or the fleet's turn, the application's answer): their
    /// Events are `Normal`; the others are `Warning`.
    pub fn is_expected_wait(self) -> bool {
        matches!(
            self,
            Reason::Paused
                | Reason::NotObserved
                | Reason::StepInProgress
                | Reason::Settling
                | Reason::GroupBusy
                | Reason::ApprovalPending
                | Reason::Throttled
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failing gate: its reason and a one-line human detail (`web-1: ContainersNotReady`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The stable reason name.
    pub reason: Reason,
    /// What exactly failed, naming the pod, annotation or PDB.
    pub detail: String,
}

impl Blocked {
    /// A failing gate with `reason` and `detail`.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Blocked {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.reason, self.detail)
    }
}
