//! The canary plan as pure data: how far a step goes, the exact patch of the step that reaches a pause
//! point (the pause rides in the step's one write), the pause without a step, the bake-time resume and
//! what keeps it paused.

use crate::canary_support::*;
use crate::common::*;
use serde_json::{Value, json};
use sts_stepper::gates::{GateOptions, Verdict, pause_points};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, Snapshot};

#[test]
fn a_25_percent_step_stops_at_a_point_of_one_pod_and_pauses_in_the_same_patch() {
    let p = plan_at(
        canary(5, &[("step", "25%"), ("pause-at", "1,60%:30")]),
        None,
        "2026-11-23T01:20:00Z",
    );
    assert!(matches!(p.verdict, Verdict::Step { from: 5, to: 4, .. }));
    assert!(p.status_patch().is_none(), "one write");
    assert_eq!(
        serde_json::to_value(p.step_patch()).expect("json"),
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 5},
            {"op": "test", "path": "/status/updateRevision", "value": "b"},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 4},
            {"op": "add", "path": a("last-partition-update"), "value": "2026-11-23T01:20:00Z"},
            {"op": "add", "path": a("paused"), "value": "true"},
            {"op": "add", "path": a("paused-reason"), "value": REASON_1},
            {"op": "add", "path": a("pause-points-passed"),
             "value": record(1, "2026-11-23T01:20:00Z")},
        ])
    );
    assert_eq!(
        events(&p),
        [("RolloutPaused".into(), EventType::Normal, REASON_1.into())]
    );
}

#[test]
fn held_at_a_point_without_bake_until_a_person_resumes() {
    let paused = canary(
        4,
        &[
            ("pause-at", "1,60%:30"),
            ("paused", "true"),
            ("paused-reason", REASON_1),
            ("pause-points-passed", &record(1, "2026-11-23T01:00:00Z")),
        ],
    );
    let p = plan_at(paused.clone(), None, "2026-11-24T01:00:00Z");
    let (reason, detail) = blocked(&p);
    assert_eq!(reason, Reason::Paused);
    assert_eq!(
        detail,
        format!("web: safe-rollout.dev/paused is \"true\": {REASON_1}")
    );
    assert!(p.step_patch().is_none());
    // Resumed (both annotations removed, the record kept): on to the next point, one pod a step.
    let mut resumed = paused;
    let ann = resumed["metadata"]["annotations"]
        .as_object_mut()
        .expect("map");
    ann.remove("safe-rollout.dev/paused");
    ann.remove("safe-rollout.dev/paused-reason");
    let p = plan_at(resumed.clone(), None, "2026-11-24T01:00:00Z");
    assert!(matches!(p.verdict, Verdict::Step { from: 4, to: 3, .. }));
    assert!(p.events().is_empty(), "no point reached at 2 pods");
    resumed["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    let p = plan_at(resumed, None, "2026-11-24T01:00:00Z");
    assert!(matches!(p.verdict, Verdict::Step { from: 3, to: 2, .. }));
    let step = serde_json::to_value(p.step_patch()).expect("json");
    assert_eq!(
        step[5],
        json!({"op": "add", "path": a("paused-reason"), "value": REASON_2})
    );
}

fn at_point_2(paused_at: &str, reason: &str) -> Value {
    canary(
        2,
        &[
            ("pause-at", "1,60%:30"),
            ("paused", "true"),
            ("paused-reason", reason),
            ("pause-points-passed", &record(3, paused_at)),
        ],
    )
}

#[test]
fn bake_time_left_is_in_the_detail() {
    let p = plan_at(
        at_point_2("2026-11-23T01:19:50Z", REASON_2),
        None,
        "2026-11-23T01:20:00Z",
    );
    let (reason, detail) = blocked(&p);
    assert_eq!(reason, Reason::Paused);
    assert!(detail.ends_with(" (20 s of bake left)"), "{detail}");
}

#[test]
fn after_the_bake_time_the_step_resumes_in_its_own_patch_pinned_to_the_plans_reason() {
    let p = plan_at(
        at_point_2("2026-11-23T01:19:30Z", REASON_2),
        None,
        "2026-11-23T01:20:00Z",
    );
    assert!(matches!(p.verdict, Verdict::Step { from: 2, to: 1, .. }));
    assert_eq!(
        serde_json::to_value(p.step_patch()).expect("json"),
        json!([
            {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 2},
            {"op": "test", "path": "/status/updateRevision", "value": "b"},
            {"op": "test", "path": a("paused"), "value": "true"},
            {"op": "test", "path": a("paused-reason"), "value": REASON_2},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 1},
            {"op": "add", "path": a("last-partition-update"), "value": "2026-11-23T01:20:00Z"},
            {"op": "remove", "path": a("paused")},
            {"op": "remove", "path": a("paused-reason")},
        ])
    );
    let evs = events(&p);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].0, "RolloutResumed");
    assert_eq!(
        evs[0].2,
        format!(
            "resumed by the stepper: 30 s of bake time over and every gate passed (was paused: \
             {REASON_2})"
        )
    );
}

#[test]
fn a_failing_gate_keeps_a_baked_pause_and_says_so() {
    let p = plan_at(
        at_point_2("2026-11-23T01:00:00Z", REASON_2),
        Some(4),
        "2026-11-23T01:20:00Z",
    );
    let (reason, detail) = blocked(&p);
    assert_eq!(reason, Reason::PodNotReady);
    assert!(
        detail.starts_with("web-4: ")
            && detail.ends_with(
                "; still paused at pause point 2 of 2: bake time over, goes on once every gate \
                 passes"
            ),
        "{detail}"
    );
    assert!(p.step_patch().is_none());
}

#[test]
fn the_bake_time_never_lifts_a_pause_a_person_made() {
    let p = plan_at(
        at_point_2("2026-11-23T01:00:00Z", "INC-1 (paused by alice)"),
        None,
        "2026-11-23T01:20:00Z",
    );
    assert_eq!(blocked(&p).0, Reason::Paused);
    assert!(p.step_patch().is_none());
}

#[test]
fn a_rollout_past_a_point_it_did_not_pass_pauses_now_without_a_step() {
    // 3 of 5 pods at or above the partition, no record: the plan was added mid-rollout.
    let p = plan_at(
        canary(2, &[("pause-at", "1,60%:30")]),
        None,
        "2026-11-23T01:20:00Z",
    );
    let (reason, detail) = blocked(&p);
    assert_eq!(reason, Reason::Paused);
    assert_eq!(
        detail,
        format!("web: at pause point 2 of 2, not passed yet: pausing ({REASON_2})")
    );
    assert!(p.step_patch().is_none());
    assert_eq!(
        serde_json::to_value(p.status_patch()).expect("json"),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": a("blocked-reason"), "value": "Paused"},
            {"op": "add", "path": a("paused"), "value": "true"},
            {"op": "add", "path": a("paused-reason"), "value": REASON_2},
            {"op": "add", "path": a("pause-points-passed"),
             "value": record(3, "2026-11-23T01:20:00Z")},
        ])
    );
    let evs = events(&p);
    assert_eq!(evs.len(), 2);
    assert_eq!(
        (evs[0].0.as_str(), evs[0].1),
        ("Blocked", EventType::Normal)
    );
    assert_eq!(
        evs[1],
        ("RolloutPaused".into(), EventType::Normal, REASON_2.into())
    );
}

#[test]
fn a_pause_now_is_written_for_a_set_whose_pods_were_not_read() {
    // A pass reads pods only for candidates; a set at an unpassed point is not one (gate `Paused`).
    let snap = Snapshot {
        statefulsets: vec![set_from(canary(2, &[("pause-at", "1,60%:30")])).into()],
        pods_read_for: Some(Default::default()),
        ..Snapshot::default()
    };
    let p = plan::plan(&snap, &GateOptions::default(), now())
        .pop()
        .expect("plan");
    assert_eq!(blocked(&p).0, Reason::Paused);
    let patch = serde_json::to_value(p.status_patch()).expect("json");
    assert!(
        patch
            .as_array()
            .expect("ops")
            .iter()
            .any(|op| op["path"] == a("paused")),
        "{patch}"
    );
}

#[rstest::rstest]
#[case("100%", 1)]
#[case("5", 1)]
#[case("4", 2)]
fn points_at_or_past_replicas_never_pause(#[case] plan_text: &str, #[case] partition: i32) {
    let p = plan_at(
        canary(partition, &[("pause-at", plan_text)]),
        None,
        "2026-11-23T01:20:00Z",
    );
    let Verdict::Step { to, .. } = p.verdict else {
        panic!("want a step, got {:?}", p.verdict);
    };
    assert_eq!(to, partition - 1);
    let holds = plan_text == "4" && to == 1;
    let step = serde_json::to_value(p.step_patch())
        .expect("json")
        .to_string();
    assert_eq!(step.contains("paused-reason"), holds, "{step}");
}

#[test]
fn the_position_reports_the_next_point_and_the_clamp() {
    let v = canary(5, &[("pause-at", "1,60%:30"), ("step", "3")]);
    let set = set_from(v);
    let config = sts_stepper::config::SetConfig::parse(&set, &Default::default());
    let pos = pause_points::position(&set, &config).expect("plan");
    assert_eq!((pos.released, pos.passed), (0, 0));
    let next = pos.next().expect("next");
    assert_eq!((next.number, next.of, next.point.pods), (1, 2, 1));
    assert_eq!(pos.clamp(2), 4);
    assert_eq!(pos.reached_by(4).map(|n| n.number), Some(1));
    assert_eq!(pos.reached_unpassed(), None);
}
