//! The plan as pure data: which patches and Events a set gets, and their exact shape.

use crate::common::*;
use serde_json::{Value, json};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::model::pods;
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::patch::{annotation_patch, stamp, step_changes};
use sts_stepper::plan::set_write::{SetWrite, SpecWrite};
use sts_stepper::plan::{self, SetPlan, Snapshot};

/// The set's annotations as the stepper reads them (default prefix).
fn config_of(set: &k8s_openapi::api::apps::v1::StatefulSet) -> SetConfig {
    SetConfig::parse(set, &Arc::new(Keys::default()))
}

fn plan_one(v: Value, pods: Vec<k8s_openapi::api::core::v1::Pod>) -> SetPlan {
    let snap = Snapshot {
        statefulsets: vec![set_from(v).into()],
        pods,
        ..Snapshot::default()
    };
    plan::plan(&snap, &GateOptions::default(), now())
        .pop()
        .expect("one plan")
}

fn to_json(p: &Option<json_patch::Patch>) -> Value {
    serde_json::to_value(p).expect("json")
}

#[test]
fn absent_annotations_are_added_as_a_whole_map_pinned_by_resource_version() {
    // A set the stepper writes on carries the policy's mark, so an annotations map; the builders still
    // add a whole map only pinned to the resourceVersion read (a set without one is not planned at
    // all: `kube_pass_writes::a_set_with_no_annotations_is_not_the_steppers_and_gets_no_write`).
    let mut v = set_json("web", 3, Some(3), 0);
    v["metadata"]
        .as_object_mut()
        .expect("meta")
        .remove("annotations");
    let set = set_from(v);
    let keys = Keys::default();
    let patch = annotation_patch(
        &set,
        &[(keys.of(names::INITIALIZED).to_string(), Some("true".into()))],
    );
    assert_eq!(
        to_json(&patch),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations",
             "value": {"safe-rollout.dev/initialized": "true"}}
        ])
    );
    // The step patch on a set without annotations: same pin, whole map.
    let step = step_patch(&set, 3, 2);
    assert_eq!(
        to_json(&Some(step)),
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 3},
            {"op": "test", "path": "/status/updateRevision", "value": "b"},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 2},
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations",
             "value": {"safe-rollout.dev/last-partition-update": "2026-11-23T01:20:00Z"}}
        ])
    );
}

#[test]
fn the_stamp_always_changes_even_within_one_second() {
    let t = at("2026-11-23T01:20:00.250Z");
    let mut v = set_json("web", 3, Some(3), 0);
    assert_eq!(
        stamp(&config_of(&set_from(v.clone())), t),
        "2026-11-23T01:20:00Z"
    );
    v["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] =
        json!("2026-11-23T01:20:00Z");
    assert_eq!(
        stamp(&config_of(&set_from(v)), t),
        "2026-11-23T01:20:00.25Z"
    );
}

#[test]
fn a_new_blocked_reason_is_announced_and_recorded_an_old_one_is_not() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
    let p = plan_one(v.clone(), pods("web", 5, 4));
    assert!(matches!(&p.verdict, Verdict::Blocked(b) if b.reason == Reason::Paused));
    assert_eq!(
        to_json(&p.status_patch()),
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                "value": "Paused"}])
    );
    assert_eq!(p.events().len(), 1);
    assert_eq!(p.events()[0].reason, "Blocked");
    assert_eq!(
        p.events()[0].type_,
        EventType::Normal,
        "a pause is expected"
    );
    assert!(p.step_patch().is_none());
    v["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("Paused");
    let p = plan_one(v.clone(), pods("web", 5, 4));
    assert!(p.status_patch().is_none() && p.events().is_empty());
    // Unpaused but a pod below the partition is missing: a new reason, a Warning.
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("false");
    let mut missing_2 = pods("web", 5, 4);
    missing_2.remove(2);
    let p = plan_one(v, missing_2);
    assert_eq!(p.events()[0].type_, EventType::Warning);
    assert_eq!(p.events()[0].note, "PodNotReady web-2: missing");
}

#[test]
fn idle_and_unguarded_sets_drop_a_stale_reason_and_unguarded_are_not_stamped() {
    let mut v = set_json("web", 3, Some(0), 3);
    v["status"]["currentRevision"] = json!("b");
    v["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    let p = plan_one(v, vec![]);
    assert_eq!(
        to_json(&p.status_patch()),
        json!([{"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason"}])
    );
    assert!(p.events().is_empty());
    let mut v = set_json("web", 3, Some(3), 3);
    v["status"]["currentRevision"] = json!("b");
    v["metadata"]["annotations"]["safe-rollout.dev/force-rolling-update"] = json!("true");
    let p = plan_one(v, vec![]);
    assert!(matches!(p.verdict, Verdict::Unguarded(_)));
    assert!(
        p.status_patch().is_none(),
        "a forced set is not stamped initialized"
    );
}

#[test]
fn needs_pods_only_for_staged_guarded_sets_above_partition_zero() {
    let staged = set("web", 3, Some(3), 0);
    let at_zero = set("web", 3, Some(0), 1);
    let mut done = set_json("web", 3, Some(3), 3);
    done["status"]["currentRevision"] = json!("b");
    assert!(plan::needs_pods(
        std::slice::from_ref(&staged),
        &Arc::new(Keys::default())
    ));
    assert!(!plan::needs_pods(
        &[at_zero, set_from(done)],
        &Arc::new(Keys::default())
    ));
}

#[test]
fn pods_are_grouped_by_owner_uid_across_many_sets() {
    // Sets named web, web-1, web-1-0 and db: names that prefix each other must not mix their pods.
    let names = ["web", "web-1", "web-1-0", "db"];
    let sets: Vec<_> = names.iter().map(|n| set(n, 2, Some(2), 0)).collect();
    let all: Vec<_> = names.iter().flat_map(|n| pods(n, 2, 2)).collect();
    for s in &sets {
        let by = pods::pods_by_ordinal(s, all.iter());
        assert_eq!(by.len(), 2, "{:?}", s.metadata.name);
    }
    let snap = Snapshot {
        statefulsets: sets.into_iter().map(Arc::new).collect(),
        pods: all,
        ..Snapshot::default()
    };
    for p in plan::plan(&snap, &GateOptions::default(), now()) {
        assert!(
            matches!(p.verdict, Verdict::Step { from: 2, to: 1, .. }),
            "{}: {:?}",
            p.name,
            p.verdict
        );
    }
}

#[test]
fn a_set_with_zero_replicas_is_not_stamped_initialized() {
    let mut v = set_json("web", 0, Some(0), 0);
    v["status"]["currentRevision"] = json!("b");
    let p = plan_one(v, vec![]);
    assert!(p.status_patch().is_none(), "{:?}", p.status_patch());
    let mut v = set_json("web", 1, Some(0), 1);
    v["status"]["currentRevision"] = json!("b");
    let p = plan_one(v, vec![]);
    assert_eq!(
        to_json(&p.status_patch()),
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1initialized", "value": "true"}])
    );
}

#[test]
fn a_pod_being_replaced_by_the_step_is_a_normal_event_a_pod_below_the_partition_a_warning() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    // web-4 (index >= partition 4) is being recreated by the last step.
    let mut p = pods("web", 5, 4);
    p[4].metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
    let plan = plan_one(v.clone(), p);
    assert_eq!(plan.events()[0].note, "PodNotReady web-4: terminating");
    assert_eq!(plan.events()[0].type_, EventType::Normal);
    // web-1 (below the partition: untouched by any step) is down: Warning.
    let mut p = pods("web", 5, 4);
    p[1].metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
    let plan = plan_one(v, p);
    assert_eq!(plan.events()[0].note, "PodNotReady web-1: terminating");
    assert_eq!(plan.events()[0].type_, EventType::Warning);
}

/// The annotation keys `patch` removes (`remove` ops under `/metadata/annotations/`).
fn removed_keys(patch: &json_patch::Patch) -> Vec<String> {
    to_json(&Some(patch.clone()))
        .as_array()
        .expect("ops")
        .iter()
        .filter(|op| op["op"] == "remove")
        .filter_map(|op| op["path"].as_str()?.strip_prefix("/metadata/annotations/"))
        .map(|k| k.replace("~1", "/"))
        .collect()
}

#[test]
fn a_step_and_a_resume_reset_every_key_the_declared_table_says_they_reset() {
    use sts_safe_rollout_rules::annotations as names;
    let keys = Keys::default();
    let mut v = set_json("web", 3, Some(3), 0);
    for name in names::reset_by_step().chain(names::reset_by_resume()) {
        v["metadata"]["annotations"][keys.full(name)] = json!("x");
    }
    v["metadata"]["annotations"][keys.full(names::PAUSED)] = json!("true");
    let set = set_from(v);
    let step = removed_keys(&step_patch(&set, 3, 2));
    let want: Vec<String> = names::reset_by_step().map(|n| keys.full(n)).collect();
    assert_eq!(
        step, want,
        "a step removes the reset_by_step rows, in order"
    );
    let resume = sts_stepper::plan::pause::resume_patch(&set, &config_of(&set)).expect("a patch");
    let want: Vec<String> = names::reset_by_resume().map(|n| keys.full(n)).collect();
    assert_eq!(
        removed_keys(&resume),
        want,
        "a resume removes the reset_by_resume rows"
    );
    assert!(
        want.contains(&keys.of(names::PAUSED).to_string())
            && step.contains(&keys.of(names::BLOCKED_REASON).to_string())
    );
}

/// The step 3 → 2 of revision `b` at [`now`] on `set`, as the plan writes it without status changes.
fn step_patch(set: &StatefulSet, from: i32, to: i32) -> json_patch::Patch {
    let config = config_of(set);
    SetWrite {
        spec: SpecWrite::Step {
            from,
            to,
            update_revision: "b".into(),
        },
        annotations: step_changes(set, &config, "b", now()).into_iter().collect(),
        ..SetWrite::default()
    }
    .patch(set, None)
    .expect("a step")
}
