//! The stuck-pod recovery decision (`recovery::decide`), pure: which pod counts as stuck, and when it
//! is deleted, waits or is held. Set `web`: 5 replicas, partition 3, `currentRevision` a,
//! `updateRevision` b; pods 0–2 on a, 3–4 on b, all Ready since 01:00; now is 01:20.

use std::sync::Arc;

use crate::common::*;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::{ConfigError, Keys, SetConfig};
use sts_stepper::gates::recovery::{Action, decide, stuck_pods};
use sts_stepper::model::pods::pods_by_ordinal;

/// Pod `ordinal` of `web` made not Ready since `since` on `revision`.
fn not_ready(ordinal: u32, revision: &str, since: &str) -> Value {
    let mut p = pod_json("web", "web", ordinal, revision);
    p["metadata"]["uid"] = json!(format!("uid-web-{ordinal}"));
    p["metadata"]["resourceVersion"] = json!("7");
    p["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
        "reason": "ContainersNotReady", "lastTransitionTime": since}]);
    p
}

/// What `decide` says for set `web` after `edit_set` and `edit_pods` (`enabled`: the flag).
fn decision(
    enabled: bool,
    edit_set: impl FnOnce(&mut Value),
    edit_pods: impl FnOnce(&mut Vec<Value>),
) -> Option<(String, Action)> {
    let mut s = set_json("web", 5, Some(3), 2);
    s["metadata"]["name"] = json!("web");
    s["metadata"]["uid"] = json!("uid-web");
    edit_set(&mut s);
    let set = set_from(s);
    let mut pods: Vec<Value> = (0..5)
        .map(|i| pod_json("web", "web", i, if i >= 3 { "b" } else { "a" }))
        .collect();
    edit_pods(&mut pods);
    let pods: Vec<_> = pods.into_iter().map(pod_from).collect();
    let by_ordinal = pods_by_ordinal(&set, &pods);
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    decide(&set, &config, &by_ordinal, enabled, now()).map(|f| (f.pod.name, f.action))
}

fn annotate(key: &'static str, value: &'static str) -> impl FnOnce(&mut Value) {
    move |s| s["metadata"]["annotations"][format!("safe-rollout.dev/{key}")] = json!(value)
}

fn no_set_change(_: &mut Value) {}

#[rstest]
// Below the partition on updateRevision (b) instead of currentRevision (a), not Ready for 20 min.
#[case::below_partition_on_the_wrong_revision(
    true,
    1,
    "b",
    "2026-11-23T01:00:00Z",
    Some(Action::Delete)
)]
// At/above the partition on currentRevision (a) instead of updateRevision (b): a rolled-back pod.
#[case::above_partition_on_the_wrong_revision(
    true,
    4,
    "a",
    "2026-11-23T01:00:00Z",
    Some(Action::Delete)
)]
// Not Ready for 100 s of the default 300 s.
#[case::not_long_enough(true, 1, "b", "2026-11-23T01:18:20Z", Some(Action::Wait { remaining_seconds: 200 }))]
// Exactly 300 s: deleted.
#[case::exactly_the_default(true, 1, "b", "2026-11-23T01:15:00Z", Some(Action::Delete))]
// On the revision its ordinal should run: the controller's business, never recovery's.
#[case::right_revision_below(true, 1, "a", "2026-11-23T01:00:00Z", None)]
#[case::right_revision_above(true, 4, "b", "2026-11-23T01:00:00Z", None)]
fn stuck_or_not(
    #[case] enabled: bool,
    #[case] ordinal: u32,
    #[case] revision: &str,
    #[case] since: &str,
    #[case] want: Option<Action>,
) {
    let got = decision(enabled, no_set_change, |pods| {
        pods[ordinal as usize] = not_ready(ordinal, revision, since);
    });
    assert_eq!(got.map(|(_, d)| d), want);
}

#[rstest]
#[case::recovery_off(false, "recovery off")]
fn held_when_off(#[case] enabled: bool, #[case] why: &str) {
    let got = decision(enabled, no_set_change, |pods| {
        pods[1] = not_ready(1, "b", "2026-11-23T01:00:00Z");
    });
    assert!(
        matches!(&got, Some((name, Action::Hold(h))) if name == "web-1" && h.contains(why)),
        "{got:?}"
    );
}

#[rstest]
#[case::paused(annotate("paused", "true"), "paused")]
#[case::unreadable_recover_after(annotate("recover-after-seconds", "5m"), "recover-after-seconds")]
#[case::zero_recover_after(annotate("recover-after-seconds", "0"), "whole number of seconds")]
#[case::not_observed(|s: &mut Value| s["metadata"]["generation"] = json!(3), "not observed")]
fn held_by_the_set(#[case] edit: impl FnOnce(&mut Value), #[case] why: &str) {
    let got = decision(true, edit, |pods| {
        pods[1] = not_ready(1, "b", "2026-11-23T01:00:00Z");
    });
    assert!(
        matches!(&got, Some((_, Action::Hold(h))) if h.contains(why)),
        "{why}: {got:?}"
    );
}

#[rstest]
// Another pod not Ready (even one on its right revision): deleting would take a second pod down.
#[case::another_not_ready(|pods: &mut Vec<Value>| pods[0] = not_ready(0, "a", "2026-11-23T01:19:00Z"), "web-0: ContainersNotReady")]
// Another pod missing.
#[case::another_missing(|pods: &mut Vec<Value>| { pods.remove(2); }, "web-2: missing")]
// Another pod terminating.
#[case::another_terminating(|pods: &mut Vec<Value>| pods[3]["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:19:00Z"), "web-3: terminating")]
fn held_while_another_pod_is_down(#[case] edit: impl FnOnce(&mut Vec<Value>), #[case] why: &str) {
    let got = decision(true, no_set_change, |pods| {
        pods[4] = not_ready(4, "a", "2026-11-23T01:00:00Z");
        edit(pods);
    });
    assert!(
        matches!(&got, Some((name, Action::Hold(h))) if name == "web-4" && h.contains("another pod is down") && h.contains(why)),
        "{got:?}"
    );
}

#[rstest]
#[case::forced(annotate("force-rolling-update", "true"))]
#[case::on_delete(|s: &mut Value| s["spec"]["updateStrategy"]["type"] = json!("OnDelete"))]
fn sets_the_stepper_does_not_manage_are_left_alone(#[case] edit: impl FnOnce(&mut Value)) {
    let got = decision(true, edit, |pods| {
        pods[1] = not_ready(1, "b", "2026-11-23T01:00:00Z");
    });
    assert_eq!(got, None);
}

#[test]
fn the_annotation_sets_the_wait() {
    let got = decision(true, annotate("recover-after-seconds", "60"), |pods| {
        pods[1] = not_ready(1, "b", "2026-11-23T01:18:20Z");
    });
    assert_eq!(got, Some(("web-1".into(), Action::Delete)));
    let got = decision(true, annotate("recover-after-seconds", "3600"), |pods| {
        pods[1] = not_ready(1, "b", "2026-11-23T01:00:00Z");
    });
    assert_eq!(
        got,
        Some((
            "web-1".into(),
            Action::Wait {
                remaining_seconds: 2400
            }
        ))
    );
}

#[test]
fn a_pod_that_never_had_a_ready_condition_counts_from_its_creation() {
    let got = decision(true, no_set_change, |pods| {
        let mut p = not_ready(1, "b", "2026-11-23T01:00:00Z");
        p["metadata"]["creationTimestamp"] = json!("2026-11-23T01:19:00Z");
        p["status"] = json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]});
        pods[1] = p;
    });
    assert_eq!(
        got,
        Some((
            "web-1".into(),
            Action::Wait {
                remaining_seconds: 240
            }
        ))
    );
}

#[test]
fn a_terminating_or_unpinnable_pod_is_never_stuck() {
    let mut s = set_json("web", 5, Some(3), 2);
    s["metadata"]["name"] = json!("web");
    s["metadata"]["uid"] = json!("uid-web");
    let set = set_from(s);
    let mut terminating = not_ready(1, "b", "2026-11-23T01:00:00Z");
    terminating["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:19:00Z");
    let mut no_rv = not_ready(2, "b", "2026-11-23T01:00:00Z");
    no_rv["metadata"]
        .as_object_mut()
        .expect("map")
        .remove("resourceVersion");
    let pods: Vec<_> = [terminating, no_rv].into_iter().map(pod_from).collect();
    assert!(stuck_pods(&set, &pods_by_ordinal(&set, &pods), now()).is_empty());
}

#[test]
fn the_highest_stuck_ordinal_is_named_and_reports_how_long() {
    let mut s = set_json("web", 5, Some(3), 2);
    s["metadata"]["name"] = json!("web");
    s["metadata"]["uid"] = json!("uid-web");
    let set = set_from(s);
    let pods: Vec<_> = [
        not_ready(1, "b", "2026-11-23T01:10:00Z"),
        not_ready(4, "a", "2026-11-23T01:15:00Z"),
    ]
    .into_iter()
    .map(pod_from)
    .collect();
    let stuck = stuck_pods(&set, &pods_by_ordinal(&set, &pods), now());
    let named: Vec<_> = stuck
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.revision.as_str(),
                p.expected_revision.as_str(),
                p.not_ready_seconds,
            )
        })
        .collect();
    assert_eq!(named, [("web-4", "a", "b", 300), ("web-1", "b", "a", 600)]);
    assert_eq!(
        (stuck[0].uid.as_str(), stuck[0].resource_version.as_str()),
        ("uid-web-4", "7")
    );
}

#[rstest]
#[case("300", Ok(Some(300)))]
#[case("1", Ok(Some(1)))]
#[case("0", Err(()))]
#[case("-5", Err(()))]
#[case("5m", Err(()))]
#[case("+60", Err(()))]
fn recover_after_seconds_is_parsed_at_the_border(
    #[case] value: &str,
    #[case] want: Result<Option<i64>, ()>,
) {
    let mut s = set_json("web", 5, Some(3), 2);
    s["metadata"]["annotations"]["safe-rollout.dev/recover-after-seconds"] = json!(value);
    let config = SetConfig::parse(&set_from(s), &Arc::new(Keys::default()));
    assert_eq!(
        config.recover_after_seconds.clone().map_err(|_| ()),
        want,
        "{value}"
    );
    // An unreadable value is also the InvalidAnnotation detail, naming the annotation.
    assert_eq!(
        config.invalid.as_ref().is_some_and(|e| {
            matches!(e, ConfigError::RecoverAfter { key, .. } if key == "safe-rollout.dev/recover-after-seconds")
                && e.to_string().contains("safe-rollout.dev/recover-after-seconds")
        }),
        want.is_err(),
        "{value}: {:?}",
        config.invalid
    );
}
