//! Pods down under a rollout on the simulated StatefulSet controller, natively and guarded: MOCO's
//! incident (natively two pods down at once, guarded never a second one), OrderedReady waiting for the
//! down pod, a pod on a node down for long, and a step over two pods that were both down already.

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load, play};
use sts_stepper::sim::scenario::{self, Action, Event, Scenario};

#[test]
fn moco_incident_native_takes_two_pods_down_at_once() {
    let run = play(&load("moco-incident"), true);
    assert_eq!(run.summary.max_down, 2, "{:?}", run.summary);
    assert!(run.summary.restarts_while_down >= 2, "{:?}", run.summary);
    assert!(run.summary.harmful_restarts >= 2, "{:?}", run.summary);
    // The controller replaced pods 2 and 1 while pod 0's node was down (t = 5 … 95).
    let while_down: Vec<u32> = run
        .world
        .restarts
        .iter()
        .filter(|r| r.0 < 95)
        .map(|r| r.1)
        .collect();
    assert_eq!(while_down[..2], [2, 1]);
}

#[test]
fn moco_incident_guarded_never_adds_a_second_pod_down_and_resumes_by_itself() {
    let run = play(&load("moco-incident"), false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
    assert_eq!(run.summary.restarts_while_down, 0);
    assert_eq!(run.summary.harmful_restarts, 0);
    // Nothing is stepped while pod 0 is down; the first step comes once its node is back (t = 95).
    let first = run.steps.first().map(|s| s.t);
    assert!(first.is_some_and(|t| t >= 95), "first step at {first:?}");
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
    let blocked = run
        .frames
        .iter()
        .filter(|f| (10..95).contains(&f.t))
        .flat_map(|f| f.notes.iter())
        .any(|n| n.contains("Blocked PodNotReady web-0"));
    assert!(blocked, "the timeline names the pod it waits for");
}

#[test]
fn natively_ordered_ready_waits_for_the_down_pod_where_parallel_does_not() {
    // Upstream processReplica (monotonic): with OrderedReady the controller stops at the first pod that
    // is not Running and Ready, so the rolling update is not reached while pod 0 is down.
    let mut s = load("moco-incident");
    s.set.pod_management_policy = "OrderedReady".into();
    let run = play(&s, true);
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
    assert!(
        run.world.restarts.iter().all(|r| r.0 >= 95),
        "{:?}",
        run.world.restarts
    );
    assert!(run.summary.rollout_completed.is_some());
}

#[test]
fn a_pod_on_a_node_down_for_long_is_evicted_and_replaced_once_the_node_is_back() {
    let mut s = load("healthy-5");
    s.events = vec![Event {
        at: 5,
        action: Action::NodeFailure {
            pod: 1,
            seconds: 400,
        },
    }];
    s.duration = 600;
    let run = play(&s, true);
    let at = |t: i64| {
        run.frames
            .iter()
            .find(|f| f.t == t)
            .map(|f| f.pods[1].state)
    };
    assert_eq!(at(100), Some('!'), "NotReady while tolerated");
    assert_eq!(at(306), Some('x'), "evicted after 300 s, stuck terminating");
    assert_eq!(at(420), Some('+'), "recreated once the node is back");
}

/// Found by `sim_canary`'s property test: a step of 2 whose two pods are both already down (web-5's
/// node, web-6 being recreated after a second apply) is taken by the "replaced while down" rule;
/// restarting web-6 while web-5, exposed by the same step, is down loses nothing more, and is not a
/// harmful restart (the oracle counted it as one, so the property test failed on some seeds).
#[test]
fn pods_one_step_exposed_while_all_were_down_are_one_loss_not_a_harmful_restart() {
    let s = Scenario::from_yaml(
        r#"
name: canary-both-down
set: {replicas: 7, podManagementPolicy: Parallel, minReadySeconds: 2, annotations: {pause-at: "6", step: "2"}}
timing: {pendingSeconds: 3, readySeconds: 6, terminateSeconds: 1, jitterSeconds: 0}
stepper: {intervalSeconds: 2, pdbGate: true, recoverStuckPods: false}
duration: 700
events: [{at: 5, apply: {image: v2}}, {at: 7, nodeFailure: {pod: 5, seconds: 3}}, {at: 8, apply: {image: v3}}, {at: 155, resume: {}}, {at: 299, resume: {}}]
"#,
    )
    .expect("scenario");
    let run = scenario::run(&s, false, 0).expect("run");
    assert!(
        run.steps
            .iter()
            .any(|st| st.t == 8 && st.from == 7 && st.to == 5),
        "the step over the two pods already down: {:?}",
        run.steps
    );
    assert!(
        run.summary.restarts_while_down > 0,
        "web-6 restarted while web-5 was down"
    );
    assert_eq!(
        run.summary.harmful_restarts, 0,
        "{:?}",
        run.world.harmful_restarts
    );
    assert!(run.summary.rollout_completed.is_some());
}
