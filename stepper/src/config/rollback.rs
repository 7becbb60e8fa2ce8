//! The border for rolling back by itself (issue 36, docs/annotations.md): what to do on a failure
//! (`<prefix>/on-failure`, [`OnFailure`]), the step deadline that is one
//! (`<prefix>/progress-deadline-seconds`), and the stepper's record of a rollback
//! (`<prefix>/failed-revision`, [`FailedRevision`]).

use super::error::ConfigError;
use super::keys::Keys;
use sts_safe_rollout_rules::annotations as names;

/// What the stepper does when a rollout fails — a check reaches its `failure-limit`, or a step is not
/// done within `progress-deadline-seconds` (`<prefix>/on-failure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// `pause`, and the default: hold the set (`paused`, `paused-reason`) until a person resumes it.
    #[default]
    Pause,
    /// `rollback`: write back `.spec.template` from the ControllerRevision of `status.currentRevision`
    /// (what `kubectl rollout undo` does) and record `failed-revision`; the policy stages the revert
    /// and the stepper steps it back.
    Rollback,
}

impl OnFailure {
    /// The value as written in the annotation: `pause`, `rollback`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnFailure::Pause => "pause",
            OnFailure::Rollback => "rollback",
        }
    }
}

/// `on-failure`: absent → [`OnFailure::Pause`] (the behaviour before issue 36); `pause` or `rollback`,
/// exactly (lowercase, no blanks, as Kubernetes' own enum values).
///
/// # Errors
/// [`ConfigError::OnFailure`]: any other value (gate `InvalidAnnotation`: a set that asked for a
/// rollback in a misspelt way is never stepped without one).
pub fn on_failure(value: Option<&str>, keys: &Keys) -> Result<OnFailure, ConfigError> {
    match value {
        None => Ok(OnFailure::Pause),
        Some("pause") => Ok(OnFailure::Pause),
        Some("rollback") => Ok(OnFailure::Rollback),
        Some(other) => Err(ConfigError::OnFailure {
            key: keys.of(names::ON_FAILURE).to_string(),
            value: other.to_string(),
        }),
    }
}

/// `progress-deadline-seconds`: seconds within which each step must be done; `Ok(None)` when absent
/// (no deadline).
///
/// # Errors
/// [`ConfigError::ProgressDeadline`]: not a whole number of seconds ≥ 1 (digits only, at most
/// `u32::MAX`; gate `InvalidAnnotation`).
pub fn progress_deadline_seconds(
    value: Option<&str>,
    keys: &Keys,
) -> Result<Option<i64>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.parse::<u32>() {
        Ok(n) if n >= 1 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(i64::from(n))),
        _ => Err(ConfigError::ProgressDeadline {
            key: keys.of(names::PROGRESS_DEADLINE_SECONDS).to_string(),
            value: value.to_string(),
        }),
    }
}

/// The stepper's record of a rollback (`<prefix>/failed-revision`): the `status.updateRevision` that
/// failed and why. Written as `<revision>: <reason>` ([`FailedRevision::to_annotation`]), read back by
/// [`FailedRevision::parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedRevision {
    /// The ControllerRevision name that failed (`web-7d7598bf9d`): the set's `status.updateRevision`
    /// when the stepper rolled it back. A ControllerRevision name is a DNS subdomain
    /// (`<set>-<hash>`, `history.ControllerRevisionName`): never a `:` or a blank.
    pub revision: String,
    /// Why, in words (`FailureLimit: …`, a step past its deadline); may be empty.
    pub reason: String,
}

impl FailedRevision {
    /// Reads a record: split at the first `": "`; the revision before it must be non-empty, without a
    /// `:` or a blank (a ControllerRevision name), the reason is the rest, as written. `None` for
    /// anything else.
    pub fn parse(value: &str) -> Option<FailedRevision> {
        let (revision, reason) = value.split_once(": ")?;
        let name_like = !revision.is_empty()
            && !revision
                .chars()
                .any(|c| c == ':' || c.is_whitespace() || c.is_control());
        name_like.then(|| FailedRevision {
            revision: revision.to_string(),
            reason: reason.to_string(),
        })
    }

    /// The annotation's value, `<revision>: <reason>`: the inverse of [`FailedRevision::parse`] for
    /// every record whose revision is a ControllerRevision name.
    pub fn to_annotation(&self) -> String {
        format!("{}: {}", self.revision, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn on_failure_is_pause_unless_it_says_rollback() {
        let keys = Keys::default();
        assert_eq!(on_failure(None, &keys), Ok(OnFailure::Pause));
        assert_eq!(on_failure(Some("pause"), &keys), Ok(OnFailure::Pause));
        assert_eq!(on_failure(Some("rollback"), &keys), Ok(OnFailure::Rollback));
        for bad in ["", "Rollback", " rollback", "undo", "true"] {
            let e = on_failure(Some(bad), &keys).expect_err(bad);
            assert_eq!(e.reason(), "OnFailure");
            assert_eq!(e.key(), "safe-rollout.dev/on-failure");
            assert_eq!(
                e.to_string(),
                format!(
                    "safe-rollout.dev/on-failure: {bad:?} is not an action on failure; expected \
                     \"pause\" or \"rollback\""
                )
            );
        }
        for v in [OnFailure::Pause, OnFailure::Rollback] {
            assert_eq!(on_failure(Some(v.as_str()), &keys), Ok(v));
        }
    }

    #[test]
    fn a_progress_deadline_is_whole_seconds_from_one() {
        let keys = Keys::default();
        assert_eq!(progress_deadline_seconds(None, &keys), Ok(None));
        assert_eq!(progress_deadline_seconds(Some("1"), &keys), Ok(Some(1)));
        assert_eq!(progress_deadline_seconds(Some("600"), &keys), Ok(Some(600)));
        for bad in ["0", "", "-5", "+5", "10m", "1.5", " 60", "4294967296"] {
            let e = progress_deadline_seconds(Some(bad), &keys).expect_err(bad);
            assert_eq!(e.reason(), "ProgressDeadline");
            assert!(
                e.to_string().starts_with(&format!(
                    "safe-rollout.dev/progress-deadline-seconds: {bad:?} is not a deadline"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn a_record_splits_at_the_first_colon_and_blank() {
        let got = FailedRevision::parse(
            "web-7d7598bf9d: FailureLimit: safe-rollout.dev/prometheus-query failed 3 times",
        );
        assert_eq!(
            got,
            Some(FailedRevision {
                revision: "web-7d7598bf9d".into(),
                reason: "FailureLimit: safe-rollout.dev/prometheus-query failed 3 times".into(),
            })
        );
        let empty_reason = FailedRevision::parse("web-1: ").expect("record");
        assert_eq!(
            (empty_reason.revision.as_str(), empty_reason.reason.as_str()),
            ("web-1", "")
        );
        for bad in [
            "",
            "web-1",
            "web-1:x",
            ": why",
            "a:b: why",
            "web 1: why",
            " web-1: why",
        ] {
            assert_eq!(FailedRevision::parse(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn a_record_reads_back_as_written(
            revision in "[a-z0-9]([a-z0-9.-]{0,40}[a-z0-9])?",
            reason in any::<String>(),
        ) {
            let record = FailedRevision { revision, reason };
            prop_assert_eq!(FailedRevision::parse(&record.to_annotation()), Some(record));
        }
    }
}
