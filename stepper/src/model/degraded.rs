//! `<prefix>/degraded-reason` (docs/annotations.md): the record that a rollout needs a person, as a
//! typed value ([`Record`]: a [`DegradedKind`] and a detail, written `<Kind>: <detail>`), read one way
//! ([`Record::parse`]). GitOps health reads any value as Degraded (`rollout::health`); which pass may
//! write or remove a record is decided in one place, `plan::degraded::next`.

use std::fmt;

/// The kinds of `degraded-reason` records the stepper writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DegradedKind {
    /// A check (Prometheus, HTTP) reached its `failure-limit` and paused the rollout.
    FailureLimit,
    /// A step was not done within `progress-deadline-seconds` and the set does not roll back by itself
    /// (`on-failure: pause`): the rollout is paused.
    ProgressDeadline,
    /// The stepper rolled the set back to its last good revision after a failure (`on-failure:
    /// rollback`): kept while `failed-revision` is recorded.
    RolledBack,
    /// A stuck pod past its `recover-after-seconds` that recovery did not delete.
    StuckPod,
    /// A check got no answer `check-error-limit` times in a row: the rollout is held, not paused, until
    /// it gets one.
    CheckErrors,
    /// The approvals did not come within `approval-timeout-seconds`: the rollout is held, never
    /// stepped, until they come.
    ApprovalTimeout,
    /// The approval webhook gave no decision `webhook-error-limit` times in a row.
    WebhookErrors,
    /// The API server refused a step (an admission webhook or policy denied it, a field it rejects).
    StepRejected,
    /// The API server refused the status annotations' write.
    StatusWriteRejected,
}

impl DegradedKind {
    /// Every kind.
    pub const ALL: [DegradedKind; 9] = [
        DegradedKind::FailureLimit,
        DegradedKind::ProgressDeadline,
        DegradedKind::RolledBack,
        DegradedKind::StuckPod,
        DegradedKind::CheckErrors,
        DegradedKind::ApprovalTimeout,
        DegradedKind::WebhookErrors,
        DegradedKind::StepRejected,
        DegradedKind::StatusWriteRejected,
    ];

    /// The PascalCase name written before the `:`, e.g. `"CheckErrors"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DegradedKind::FailureLimit => "FailureLimit",
            DegradedKind::ProgressDeadline => "ProgressDeadline",
            DegradedKind::RolledBack => "RolledBack",
            DegradedKind::StuckPod => "StuckPod",
            DegradedKind::CheckErrors => "CheckErrors",
            DegradedKind::ApprovalTimeout => "ApprovalTimeout",
            DegradedKind::WebhookErrors => "WebhookErrors",
            DegradedKind::StepRejected => "StepRejected",
            DegradedKind::StatusWriteRejected => "StatusWriteRejected",
        }
    }

    /// The kind a `degraded-reason` value names: the text before its first `:`, trimmed; `None` for a
    /// value without one or naming no kind (a person's, a newer stepper's: never touched).
    pub fn of(value: &str) -> Option<DegradedKind> {
        let (kind, _) = value.split_once(':')?;
        let kind = kind.trim();
        DegradedKind::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    /// The record of a failure's pause (`FailureLimit`, `ProgressDeadline`): kept while the set stays
    /// paused, removed with the pause by `resume`.
    pub fn pauses(self) -> bool {
        matches!(
            self,
            DegradedKind::FailureLimit | DegradedKind::ProgressDeadline
        )
    }

    /// A record a gate holds the step on (`CheckErrors`, `ApprovalTimeout`, `WebhookErrors`): a step
    /// removes it (every gate passed), and so does a pass with nothing left to step.
    pub fn held_by_a_gate(self) -> bool {
        matches!(
            self,
            DegradedKind::CheckErrors | DegradedKind::ApprovalTimeout | DegradedKind::WebhookErrors
        )
    }

    /// The record of a write the API server refused (`StepRejected`, `StatusWriteRejected`).
    pub fn refused(self) -> bool {
        matches!(
            self,
            DegradedKind::StepRejected | DegradedKind::StatusWriteRejected
        )
    }

    /// True when a successful step removes a record of this kind: a refusal's (the step's patch
    /// carries the status annotations too), or one a gate held the step on (every gate passed); a
    /// rollback's only when the step is a new revision's (`new_revision`).
    pub fn cleared_by_step(self, new_revision: bool) -> bool {
        self.refused()
            || self.held_by_a_gate()
            || (new_revision && self == DegradedKind::RolledBack)
    }

    /// True when a pass that does not step removes a record of this kind with its status
    /// annotations: a refused status write (that write is itself a status write that succeeds), and,
    /// with `nothing_to_step` (`Idle`, `Unguarded`), a refused step and the gates' records.
    pub fn cleared_without_step(self, nothing_to_step: bool) -> bool {
        self == DegradedKind::StatusWriteRejected
            || (nothing_to_step && (self == DegradedKind::StepRejected || self.held_by_a_gate()))
    }
}

impl fmt::Display for DegradedKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `degraded-reason` value: its kind and its detail, written `<Kind>: <detail>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The kind.
    pub kind: DegradedKind,
    /// What happened, in one line.
    pub detail: String,
}

impl Record {
    /// The record of `kind` with `detail`.
    pub fn new(kind: DegradedKind, detail: impl Into<String>) -> Self {
        Record {
            kind,
            detail: detail.into(),
        }
    }

    /// The value as written: `<Kind>: <detail>`.
    pub fn value(&self) -> String {
        self.to_string()
    }

    /// Reads a value the stepper wrote; `None` for one naming no kind ([`DegradedKind::of`]).
    pub fn parse(value: &str) -> Option<Record> {
        let kind = DegradedKind::of(value)?;
        let (_, detail) = value.split_once(':')?;
        Some(Record::new(kind, detail.trim()))
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_read_one_way() {
        let r = Record::parse("CheckErrors: prometheus got no answer 3 times").expect("record");
        assert_eq!(r.kind, DegradedKind::CheckErrors);
        assert_eq!(r.value(), "CheckErrors: prometheus got no answer 3 times");
        assert_eq!(Record::parse("StuckPod"), None, "no colon: no kind");
        assert_eq!(Record::parse("Mine: a person's"), None);
        assert_eq!(
            DegradedKind::of(" RolledBack : x"),
            Some(DegradedKind::RolledBack)
        );
        for k in DegradedKind::ALL {
            assert_eq!(DegradedKind::of(&Record::new(k, "d").value()), Some(k));
        }
    }
}
