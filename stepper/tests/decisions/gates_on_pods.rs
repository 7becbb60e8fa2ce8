//! The gates that read the set's pods and PDBs, as pure functions (`gates/on_pods.rs`): `PodNotReady`
//! (every way a pod is down, the pods a step replaces while they are down already, pods of other sets,
//! `minReadySeconds`), checked before `StepInProgress`, and `PdbBlocked`.

use crate::common::verdicts::*;
use crate::common::*;

use k8s_openapi::api::core::v1::Pod;
use rstest::rstest;
use serde_json::json;
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::model::reasons::{Blocked, Reason};

// ---- PodNotReady ------------------------------------------------------------------------------------

fn pods_with(f: impl Fn(u32, &mut serde_json::Value)) -> Vec<Pod> {
    (0..5)
        .map(|i| {
            let mut v = pod_json("web", "web", i, if i >= 4 { "b" } else { "a" });
            f(i, &mut v);
            pod_from(v)
        })
        .collect()
}

#[rstest]
#[case::all_ready(|_: u32, _: &mut serde_json::Value| {}, None)]
#[case::terminating(|i: u32, v: &mut serde_json::Value| if i == 2 { v["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:19:00Z") }, Some("web-2: terminating"))]
#[case::pending(|i: u32, v: &mut serde_json::Value| if i == 1 { v["status"]["phase"] = json!("Pending") }, Some("web-1: phase Pending"))]
#[case::no_phase(|i: u32, v: &mut serde_json::Value| if i == 1 { v["status"] = json!({}) }, Some("web-1: phase Unknown"))]
#[case::not_ready_reason(|i: u32, v: &mut serde_json::Value| if i == 2 { v["status"]["conditions"][0] = json!({"type": "Ready", "status": "False", "reason": "ContainersNotReady"}) }, Some("web-2: ContainersNotReady"))]
#[case::not_ready_no_reason(|i: u32, v: &mut serde_json::Value| if i == 2 { v["status"]["conditions"][0]["status"] = json!("Unknown") }, Some("web-2: NotReady"))]
#[case::no_ready_condition(|i: u32, v: &mut serde_json::Value| if i == 0 { v["status"]["conditions"] = json!([]) }, Some("web-0: no Ready condition"))]
#[case::two_failures(|i: u32, v: &mut serde_json::Value| if i == 1 || i == 2 { v["status"]["phase"] = json!("Failed") }, Some("web-1: phase Failed (and 1 more)"))]
fn pod_not_ready_cases(#[case] f: fn(u32, &mut serde_json::Value), #[case] want: Option<&str>) {
    let s = set("web", 5, Some(4), 1);
    let got = decide_one(&s, &pods_with(f));
    match want {
        None => assert_eq!(got, step(4, 3, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::PodNotReady, d)),
    }
}

fn not_ready(v: &mut serde_json::Value) {
    v["status"]["conditions"][0] =
        json!({"type": "Ready", "status": "False", "reason": "ContainersNotReady"});
}

#[test]
fn a_pod_already_down_that_the_step_replaces_does_not_block_it() {
    // Partition 4 of 5: the step 4→3 replaces web-3 (on currentRevision), which is down already (a bad
    // pod, a failed node): replacing it takes nothing more down. Its PDB budget is spent by web-3 itself.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 3 {
            not_ready(v)
        }
    });
    let budget = [pdb("web", json!({"matchLabels": {"app": "web"}}), 0)];
    assert_eq!(
        decide_with(&s, &p, &budget, &opts(), now()),
        step(4, 3, "b")
    );
    let mut missing = pods("web", 5, 4);
    missing.remove(3);
    assert_eq!(decide_one(&s, &missing), step(4, 3, "b"));
}

#[test]
fn a_pod_down_below_the_step_still_blocks_it() {
    // MOCO's incident: web-0 is down; the step would replace Ready web-2.
    let s = set("web", 3, Some(3), 0);
    let p: Vec<Pod> = (0..3)
        .map(|i| {
            let mut v = pod_json("web", "web", i, "a");
            if i == 0 {
                not_ready(&mut v);
            }
            pod_from(v)
        })
        .collect();
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-0: ContainersNotReady")
    );
    // Both the replaced pod and a lower one down: the lower one blocks.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 3 || i == 1 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-1: ContainersNotReady")
    );
}

#[test]
fn a_step_that_would_also_replace_a_ready_pod_is_blocked() {
    // Step 2: 4→2 replaces web-3 (down) and web-2 (Ready): web-2 would go down while web-3 is.
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/step"] = json!("2");
    let s = set_from(v);
    let p = pods_with(|i, v| {
        if i == 3 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-3: ContainersNotReady")
    );
}

#[test]
fn a_pod_down_on_the_update_revision_blocks() {
    // web-4 already runs updateRevision and is not Ready: the new revision may be bad. Not exempt.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 4 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-4: ContainersNotReady")
    );
}

#[test]
fn a_missing_pod_blocks() {
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 5, 4);
    p.remove(2);
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-2: missing")
    );
}

#[test]
fn pods_of_other_statefulsets_with_similar_names_never_count() {
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 5, 4);
    p.remove(2);
    // `web-2` of another StatefulSet `web` in another namespace (another uid).
    let mut other_ns = pod_json("web", "web-elsewhere", 2, "a");
    other_ns["metadata"]["namespace"] = json!("other");
    p.push(pod_from(other_ns));
    // `web-2` in the same namespace but controlled by another uid (a stale or foreign pod).
    p.push(pod_from(pod_json("web", "impostor", 2, "a")));
    // `web-x-2`, a pod of StatefulSet `web-x`; and a pod of `web` whose name is not `web-<n>`.
    p.push(pod_from(pod_json("web-x", "web-x", 2, "a")));
    let mut odd = pod_json("web", "web", 2, "a");
    odd["metadata"]["name"] = json!("web-x-2");
    p.push(pod_from(odd));
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-2: missing")
    );
}

#[test]
fn pods_with_ordinal_at_or_above_replicas_are_ignored() {
    // Scale-down in progress: web-5 still terminating must not block a 5-replica set.
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 6, 4);
    p[5].metadata.deletion_timestamp = p[0]
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c[0].last_transition_time.clone());
    assert_eq!(decide_one(&s, &p), step(4, 3, "b"));
}

#[rstest]
#[case::no_time_with_min_ready(
    Some(5),
    None,
    Some("web-0: Ready without lastTransitionTime, cannot judge minReadySeconds")
)]
#[case::no_time_no_min_ready(None, None, None)]
#[case::future_transition(
    Some(5),
    Some("2026-11-23T01:21:00Z"),
    Some("web-0: not available yet: Ready for 0s of minReadySeconds 5")
)]
fn min_ready_seconds_edges(
    #[case] min_ready: Option<i32>,
    #[case] since: Option<&str>,
    #[case] want: Option<&str>,
) {
    // web-0 is the pod under test; the step 2→1 replaces web-1 (Ready for long), not web-0.
    let mut v = set_json("web", 2, Some(2), 0);
    v["spec"]["minReadySeconds"] = json!(min_ready);
    let mut p = pod_json("web", "web", 0, "a");
    p["status"]["conditions"][0]["lastTransitionTime"] = json!(since);
    let got = decide_one(
        &set_from(v),
        &[pod_from(p), pod_from(pod_json("web", "web", 1, "a"))],
    );
    match want {
        None => assert_eq!(got, step(2, 1, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::PodNotReady, d)),
    }
}

// ---- PodNotReady before StepInProgress ------------------------------------------------------------------

#[test]
fn pods_are_checked_before_the_step_in_progress() {
    // web-4 on the old revision AND web-1 not ready: PodNotReady (gate order) names web-1.
    let s = set("web", 5, Some(4), 0);
    let mut p = pods("web", 5, 5);
    p[1].status.as_mut().expect("status").phase = Some("Pending".into());
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-1: phase Pending")
    );
}

// ---- PdbBlocked -------------------------------------------------------------------------------------------

#[rstest]
#[case::selects_none_left(json!({"matchLabels": {"app": "web"}}), 0, true)]
#[case::selects_one_left(json!({"matchLabels": {"app": "web"}}), 1, false)]
#[case::other_app(json!({"matchLabels": {"app": "db"}}), 0, false)]
#[case::empty_selects_all(json!({}), 0, true)]
#[case::expression_in(json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]}), 0, true)]
#[case::expression_not_in(json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}), 0, false)]
#[case::null_selects_none(serde_json::Value::Null, 0, false)]
fn pdb_gate(#[case] selector: serde_json::Value, #[case] allowed: i32, #[case] blocks: bool) {
    let s = set("web", 5, Some(4), 1);
    let p = pods("web", 5, 4);
    let got = decide_with(&s, &p, &[pdb("budget", selector, allowed)], &opts(), now());
    if blocks {
        assert_eq!(
            got,
            blocked(
                Reason::PdbBlocked,
                &format!(
                    "PodDisruptionBudget budget: disruptionsAllowed {allowed} (currentHealthy 3, desiredHealthy 3)"
                )
            )
        );
    } else {
        assert_eq!(got, step(4, 3, "b"));
    }
}

#[test]
fn pdb_gate_can_be_switched_off_and_ignores_other_namespaces() {
    let s = set("web", 5, Some(4), 1);
    let p = pods("web", 5, 4);
    let zero = pdb("budget", json!({}), 0);
    let off = GateOptions {
        pdb_gate: false,
        ..GateOptions::default()
    };
    assert_eq!(
        decide_with(&s, &p, std::slice::from_ref(&zero), &off, now()),
        step(4, 3, "b")
    );
    let mut elsewhere = zero;
    elsewhere.metadata.namespace = Some("other".into());
    assert_eq!(
        decide_with(&s, &p, &[elsewhere], &opts(), now()),
        step(4, 3, "b")
    );
}

#[test]
fn pdb_without_status_fails_closed() {
    let s = set("web", 5, Some(4), 1);
    let mut b = pdb("budget", json!({}), 1);
    b.status = None;
    let got = decide_with(&s, &pods("web", 5, 4), &[b], &opts(), now());
    assert!(matches!(
        got,
        Verdict::Blocked(Blocked {
            reason: Reason::PdbBlocked,
            ..
        })
    ));
}
