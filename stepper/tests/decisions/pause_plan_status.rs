//! What `status` says of a set's canary plan ([`pause_plan::describe`]), one row per situation.

use std::sync::Arc;

use crate::canary_support::*;
use crate::common::*;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::rollout::pause_plan;

fn describe(v: Value, t: &str) -> Option<String> {
    let set = set_from(v);
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    pause_plan::describe(&set, &config, at(t))
}

const T: &str = "2026-11-23T01:20:00Z";

#[rstest]
#[case(canary(5, &[("pause-at", "1,60%:30")]), "next pause at 1 (1 pod), point 1 of 2")]
#[case(
    canary(4, &[("pause-at", "1,60%:30"), ("pause-points-passed", &record(1, T))]),
    "next pause at 60% (3 pods), point 2 of 2, bake 30 s"
)]
#[case(
    canary(4, &[("pause-at", "1,60%:30"), ("paused", "true"), ("paused-reason", REASON_1),
                ("pause-points-passed", &record(1, T))]),
    "paused at point 1 of 2 (1 of 5 pods); `resume` to go on"
)]
#[case(
    canary(2, &[("pause-at", "1,60%:30"), ("paused", "true"), ("paused-reason", REASON_2),
                ("pause-points-passed", &record(3, "2026-11-23T01:19:48Z"))]),
    "paused at point 2 of 2 (3 of 5 pods), 18 s of bake left"
)]
#[case(
    canary(2, &[("pause-at", "1,60%:30"), ("paused", "true"), ("paused-reason", REASON_2),
                ("pause-points-passed", &record(3, "2026-11-23T01:00:00Z"))]),
    "paused at point 2 of 2 (3 of 5 pods), bake time over: goes on once every gate passes"
)]
#[case(
    canary(2, &[("pause-at", "1,60%:30")]),
    "at point 2 of 2 (3 of 5 pods), not passed yet: the next pass pauses it"
)]
#[case(
    canary(1, &[("pause-at", "1,60%:30"), ("pause-points-passed", &record(3, T))]),
    "every pause point passed"
)]
#[case(canary(5, &[("pause-at", "100%")]), "no pause point below 5 replicas")]
#[case(
    canary(4, &[("pause-at", "1,60%:30"), ("paused", "true"), ("paused-reason", "INC-1 (paused by bob)"),
                ("pause-points-passed", &record(1, T))]),
    "paused (not by the plan: `resume` to go on); then next pause at 60% (3 pods), point 2 of 2, bake 30 s"
)]
#[case(
    canary(5, &[("pause-at", "1,60%:30"), ("paused", "true"),
                ("paused-reason", "pause point 1 of 2: 1 of 5 pods on a; `resume` to go on"),
                ("pause-points-passed", r#"{"updateRevision":"a","pods":1,"pausedAt":"2026-11-23T01:00:00Z"}"#)]),
    "the plan's pause for an earlier rollout is lifted by the next pass; then next pause at 1 (1 pod), point 1 of 2"
)]
fn status_says_where_the_rollout_stands(#[case] v: Value, #[case] want: &str) {
    assert_eq!(describe(v, T).as_deref(), Some(want));
}

#[test]
fn an_idle_set_names_its_first_point_and_a_set_without_a_plan_says_nothing() {
    let mut idle = canary(0, &[("pause-at", "1,60%:30")]);
    idle["status"]["currentRevision"] = json!("b");
    assert_eq!(
        describe(idle, T).as_deref(),
        Some("nothing staged; the next rollout pauses first at 1 (1 pod)")
    );
    assert_eq!(describe(canary(5, &[]), T), None);
    assert_eq!(describe(canary(5, &[("pause-at", "x")]), T), None);
}

#[test]
fn the_plan_is_shown_as_written() {
    let set = set_from(canary(5, &[("pause-at", " 1, 60% : 30 ,100%")]));
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    let plan = config.pause_at.as_ref().expect("plan");
    assert_eq!(pause_plan::written(plan), "1,60%:30,100%");
}
