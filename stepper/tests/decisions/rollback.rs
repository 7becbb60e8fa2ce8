//! Rolling back by itself (issue 36), its groundwork: the set's `on-failure` and
//! `progress-deadline-seconds` and the record `failed-revision` read into `SetConfig`.

use std::sync::Arc;

use crate::common::*;
use serde_json::json;
use sts_stepper::config::{ConfigError, FailedRevision, Keys, OnFailure, SetConfig};

/// A staged set with `annotations` (short names), parsed.
fn parsed(annotations: &[(&str, &str)]) -> SetConfig {
    let mut v = set_json("web", 5, Some(5), 0);
    for (name, value) in annotations {
        v["metadata"]["annotations"][format!("safe-rollout.dev/{name}")] = json!(value);
    }
    SetConfig::parse(&set_from(v), &Arc::new(Keys::default()))
}

#[test]
fn without_the_annotations_a_failure_pauses_with_no_deadline_and_no_record() {
    let c = parsed(&[]);
    assert_eq!(c.on_failure, OnFailure::Pause);
    assert_eq!(c.progress_deadline_seconds, None);
    assert_eq!(c.stamps.failed_revision, None);
    assert_eq!(c.stamps.failed_revision_raw, None);
    assert_eq!(c.invalid, None);
}

#[test]
fn a_set_opts_in_to_rollback_with_a_deadline_and_reads_its_record() {
    let record = "web-7d7598bf9d: FailureLimit: 3 failed checks of limit 3";
    let c = parsed(&[
        ("on-failure", "rollback"),
        ("progress-deadline-seconds", "900"),
        ("failed-revision", record),
    ]);
    assert_eq!(c.on_failure, OnFailure::Rollback);
    assert_eq!(c.progress_deadline_seconds, Some(900));
    assert_eq!(
        c.stamps.failed_revision,
        Some(FailedRevision {
            revision: "web-7d7598bf9d".into(),
            reason: "FailureLimit: 3 failed checks of limit 3".into(),
        })
    );
    assert_eq!(c.stamps.failed_revision_raw.as_deref(), Some(record));
    assert_eq!(c.invalid, None);
}

#[test]
fn unreadable_settings_fail_closed_and_fall_back_to_a_pause_without_a_deadline() {
    let c = parsed(&[
        ("on-failure", "Rollback"),
        ("progress-deadline-seconds", "0"),
    ]);
    assert_eq!(c.on_failure, OnFailure::Pause);
    assert_eq!(c.progress_deadline_seconds, None);
    // The first one in gate order is the InvalidAnnotation detail; the set is not stepped.
    assert!(
        matches!(&c.invalid, Some(ConfigError::OnFailure { value, .. }) if value == "Rollback"),
        "{:?}",
        c.invalid
    );
    let c = parsed(&[("on-failure", "pause"), ("progress-deadline-seconds", "0")]);
    assert_eq!(c.on_failure, OnFailure::Pause);
    assert!(
        matches!(&c.invalid, Some(ConfigError::ProgressDeadline { value, .. }) if value == "0"),
        "{:?}",
        c.invalid
    );
}

#[test]
fn an_unreadable_record_is_no_record_and_no_invalid_annotation() {
    let c = parsed(&[
        ("on-failure", "rollback"),
        ("failed-revision", "web-7d7598bf9d"),
    ]);
    assert_eq!(c.stamps.failed_revision, None);
    assert_eq!(
        c.stamps.failed_revision_raw.as_deref(),
        Some("web-7d7598bf9d"),
        "kept as written, for a test op"
    );
    assert_eq!(c.invalid, None, "the stepper's own record: nothing to fix");
}
