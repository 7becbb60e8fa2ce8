//! `<prefix>/degraded-reason`: a pass records a stuck pod past its recovery time, keeps a
//! failure-limit pause's record while paused, removes what cleared, leaves other kinds alone, and
//! announces a new value once; `resume` removes a failure-limit record with the pause.

use std::collections::BTreeSet;
use std::sync::Arc;

use json_patch::Patch;
use k8s_openapi::api::core::v1::Pod;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::GateOptions;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::pause::resume_patch;
use sts_stepper::plan::{self, SetPlan, Snapshot};

use crate::common::{now, pod_from, pod_json, pods, set_from, set_json};

const KEY: &str = "safe-rollout.dev/degraded-reason";
/// What the pass records for `web-1` below: not Ready on revision `x`, its ordinal runs `a`.
const STUCK_OFF: &str = "StuckPod: web-1 not Ready for more than 300s on revision x, its ordinal \
                         runs a; not deleted: recovery off (--recover-stuck-pods)";

/// `web`: 3 replicas, staged at partition 3 (`a` → `b`), with `annotations` added.
fn web(annotations: &[(&str, &str)]) -> Value {
    let mut v = set_json("web", 3, Some(3), 0);
    for (k, val) in annotations {
        v["metadata"]["annotations"][*k] = json!(val);
    }
    v
}

/// web's pods on `a`; with `stuck_since`, web-1 is not Ready since then on revision `x` (stuck: its
/// ordinal runs `a`).
fn web_pods(stuck_since: Option<&str>) -> Vec<Pod> {
    let mut all = pods("web", 3, 3);
    if let Some(since) = stuck_since {
        let mut p = pod_json("web", "web", 1, "x");
        p["metadata"]["uid"] = json!("uid-web-1");
        p["metadata"]["resourceVersion"] = json!("7");
        p["status"]["conditions"] =
            json!([{"type": "Ready", "status": "False", "lastTransitionTime": since}]);
        all[1] = pod_from(p);
    }
    all
}

fn plan_one(set: Value, pods: Vec<Pod>, read: bool, recover: bool) -> SetPlan {
    let snap = Snapshot {
        statefulsets: vec![set_from(set).into()],
        pods: if read { pods } else { Vec::new() },
        pods_read_for: (!read).then(BTreeSet::new),
        ..Snapshot::default()
    };
    let opts = GateOptions {
        recover_stuck_pods: recover,
        ..GateOptions::default()
    };
    plan::plan(&snap, &opts, now()).pop().expect("one plan")
}

/// The `degraded-reason` ops of the plan's write (the status patch, or the step carrying them).
fn degraded_ops(p: &SetPlan) -> Vec<Value> {
    let write = p.status_patch().clone().or(p.step_patch().clone());
    let ops = serde_json::to_value(write.unwrap_or(Patch(vec![]))).expect("json");
    ops.as_array()
        .expect("ops")
        .iter()
        .filter(|op| op["path"] == "/metadata/annotations/safe-rollout.dev~1degraded-reason")
        .cloned()
        .collect()
}

fn degraded_events(p: &SetPlan) -> Vec<String> {
    p.events()
        .iter()
        .filter(|e| e.reason == "RolloutDegraded")
        .inspect(|e| assert_eq!(e.type_, EventType::Warning))
        .map(|e| e.note.clone())
        .collect()
}

#[test]
fn a_stuck_pod_past_its_recovery_time_is_recorded_once() {
    let p = plan_one(
        web(&[]),
        web_pods(Some("2026-11-23T01:00:00Z")),
        true,
        false,
    );
    assert_eq!(
        degraded_ops(&p),
        [
            json!({"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason", "value": STUCK_OFF})
        ]
    );
    assert_eq!(degraded_events(&p), [STUCK_OFF]);
    // The next pass sees its own record: no write, no second Event.
    let again = plan_one(
        web(&[(KEY, STUCK_OFF)]),
        web_pods(Some("2026-11-23T01:00:00Z")),
        true,
        false,
    );
    assert!(degraded_ops(&again).is_empty());
    assert!(degraded_events(&again).is_empty());
}

#[rstest]
#[case::not_past_recover_after("2026-11-23T01:19:00Z", false)]
#[case::recovery_deletes_it("2026-11-23T01:00:00Z", true)]
fn a_stuck_pod_is_not_recorded(#[case] since: &str, #[case] recover: bool) {
    let p = plan_one(web(&[]), web_pods(Some(since)), true, recover);
    assert!(degraded_ops(&p).is_empty(), "{:?}", p.status_patch());
    assert!(degraded_events(&p).is_empty());
}

#[test]
fn a_stuck_pod_held_by_recovery_names_why() {
    let mut pods = web_pods(Some("2026-11-23T01:00:00Z"));
    pods.pop(); // web-2 missing: recovery would take a second pod down
    let p = plan_one(web(&[]), pods, true, true);
    let ops = degraded_ops(&p);
    let value = ops[0]["value"].as_str().expect("recorded");
    assert!(
        value.starts_with("StuckPod: web-1 ")
            && value.ends_with("not deleted: another pod is down: web-2: missing"),
        "{value}"
    );
}

#[test]
fn the_record_goes_once_the_pods_read_show_no_stuck_pod() {
    // web-1 is back on its ordinal's revision `a`, not Ready yet: blocked, and no longer stuck.
    let mut pods = web_pods(None);
    let mut p1 = pod_json("web", "web", 1, "a");
    p1["status"]["conditions"] =
        json!([{"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-23T01:00:00Z"}]);
    pods[1] = pod_from(p1);
    let p = plan_one(web(&[(KEY, STUCK_OFF)]), pods, true, false);
    assert!(p.step_patch().is_none());
    assert_eq!(
        degraded_ops(&p),
        [
            json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason"})
        ]
    );
    assert!(degraded_events(&p).is_empty());
}

#[test]
fn the_record_stays_while_the_pods_are_not_read() {
    let p = plan_one(web(&[(KEY, STUCK_OFF)]), web_pods(None), false, false);
    assert!(degraded_ops(&p).is_empty(), "{:?}", p.status_patch());
}

#[rstest]
#[case::kept_while_paused(&[("safe-rollout.dev/paused", "true")], false)]
#[case::removed_once_a_person_removed_paused(&[], true)]
fn a_failure_limit_record_follows_the_pause(
    #[case] annotations: &[(&str, &str)],
    #[case] removed: bool,
) {
    let mut all = annotations.to_vec();
    all.push((KEY, "FailureLimit: PrometheusCheck failed 3 times"));
    let p = plan_one(web(&all), web_pods(None), true, false);
    let want: Vec<Value> = if removed {
        vec![
            json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason"}),
        ]
    } else {
        vec![]
    };
    assert_eq!(degraded_ops(&p), want);
}

#[test]
fn another_kind_is_left_alone() {
    let p = plan_one(
        web(&[(
            KEY,
            "StepRejected: admission webhook \"x\" denied the request",
        )]),
        web_pods(Some("2026-11-23T01:00:00Z")),
        true,
        false,
    );
    assert!(degraded_ops(&p).is_empty(), "{:?}", p.status_patch());
}

#[test]
fn a_step_removes_a_record() {
    // Every pod Ready on `a`, nothing paused: the pass steps 3→2, and the step carries the removal.
    let p = plan_one(web(&[(KEY, STUCK_OFF)]), web_pods(None), true, false);
    assert!(p.status_patch().is_none(), "one write");
    let step = serde_json::to_value(p.step_patch().clone().expect("a step")).expect("json");
    assert!(
        step.as_array().expect("ops").iter().any(|op| op
            == &json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason"})),
        "{step}"
    );
}

#[rstest]
#[case::failure_limit("FailureLimit: PrometheusCheck failed 3 times", true)]
#[case::stuck_pod(STUCK_OFF, false)]
fn resume_removes_a_failure_limit_record(#[case] value: &str, #[case] removed: bool) {
    let set = set_from(web(&[
        ("safe-rollout.dev/paused", "true"),
        ("safe-rollout.dev/paused-reason", "x"),
        (KEY, value),
    ]));
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    let patch = serde_json::to_value(resume_patch(&set, &config).expect("a patch")).expect("json");
    let ops = patch.as_array().expect("ops");
    let removes = ops.iter().any(|op| {
        op == &json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason"})
    });
    let tests = ops.iter().any(|op| {
        op == &json!({"op": "test", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason", "value": value})
    });
    assert_eq!((removes, tests), (removed, removed), "{patch}");
}
