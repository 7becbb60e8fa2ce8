//! Rolling back by itself (issue 36), its groundwork: the set's `on-failure` and
//! `progress-deadline-seconds` and the record `failed-revision` read into `SetConfig`; the template a
//! real ControllerRevision holds, and the rollback patch applied to the real set
//! (`fixtures/api/2-stepped-4-*`: 1 of 5 pods on the new revision) as the API server applies it.

use std::sync::Arc;

use crate::common::plans::applied;
use crate::common::*;
use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::{Value, json};
use sts_stepper::config::{ConfigError, FailedRevision, Keys, OnFailure, SetConfig};
use sts_stepper::plan::rollback::template_of;

use crate::rollback_support::rollback_patch;

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

/// ControllerRevision `name` of the `2-stepped-4` moment.
fn revision(name: &str) -> ControllerRevision {
    fixture_list::<ControllerRevision>("2-stepped-4-controllerrevisions.json")
        .into_iter()
        .find(|r| r.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{name} in the fixture"))
}

/// The `2-stepped-4` set as the API server stores it.
fn stored_set() -> Value {
    fixture_list::<Value>("2-stepped-4-statefulsets.json")[0].clone()
}

fn failed() -> FailedRevision {
    FailedRevision {
        revision: REV_NEW.into(),
        reason: "FailureLimit: safe-rollout.dev/prometheus-query failed 3 times".into(),
    }
}

#[test]
fn a_real_revision_holds_the_template_the_set_held_defaults_included() {
    // The update revision's data is the set's own .spec.template, as the API server defaulted it.
    let new = template_of(&revision(REV_NEW)).expect("template");
    assert_eq!(new, stored_set()["spec"]["template"]);
    assert!(new.get("$patch").is_none());
    let old = template_of(&revision(REV_OLD)).expect("template");
    assert_eq!(old["spec"]["containers"][0]["image"], "nginx:1.25");
    assert_eq!(new["spec"]["containers"][0]["image"], "nginx:1.26");
}

#[test]
fn the_rollback_writes_back_the_current_revisions_template_and_the_record_only() {
    let before = stored_set();
    let old = template_of(&revision(REV_OLD)).expect("template");
    let patch = rollback_patch(&set_from(before.clone()), &old, &failed(), &Keys::default());
    let after = applied(&before, &patch).expect("applies to the set as read");
    assert_eq!(after["spec"]["template"], old);
    let record = "safe-rollout.dev/failed-revision";
    assert_eq!(
        after["metadata"]["annotations"][record],
        json!(format!(
            "{REV_NEW}: FailureLimit: safe-rollout.dev/prometheus-query failed 3 times"
        ))
    );
    // Nothing else changed: not the other annotations (kubectl's last-applied-configuration), not
    // the partition (the policy stages the revert), not the status.
    let mut rest = after.clone();
    rest["spec"]["template"] = before["spec"]["template"].clone();
    rest["metadata"]["annotations"]
        .as_object_mut()
        .expect("map")
        .remove(record);
    assert_eq!(rest, before);
    // Key by key: no op replaces or adds the whole annotations map of a set that has one.
    let ops = serde_json::to_value(&patch).expect("json");
    assert!(
        ops.as_array()
            .expect("ops")
            .iter()
            .all(|op| op["path"] != "/metadata/annotations"),
        "{ops}"
    );
}

/// A change to the stored set since the read, named.
type Change = (&'static str, fn(&mut Value));

#[test]
fn a_rollback_never_writes_over_a_newer_apply() {
    let read = stored_set();
    let old = template_of(&revision(REV_OLD)).expect("template");
    let patch = rollback_patch(&set_from(read.clone()), &old, &failed(), &Keys::default());
    let changed: [Change; 3] = [
        // Applied, not yet seen by the controller: only the generation tells.
        ("a newer apply", |s| {
            s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.27");
            s["metadata"]["generation"] = json!(4);
        }),
        ("a newer update revision", |s| {
            s["status"]["updateRevision"] = json!("web-5f6d7c8b9");
        }),
        ("the rollout completed", |s| {
            s["status"]["currentRevision"] = json!(REV_NEW);
        }),
    ];
    for (what, change) in changed {
        let mut now = read.clone();
        change(&mut now);
        assert!(applied(&now, &patch).is_err(), "{what}: the patch applied");
    }
}
