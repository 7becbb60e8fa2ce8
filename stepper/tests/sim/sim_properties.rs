//! Property test: random StatefulSets (1–12 replicas, either pod management policy, minReadySeconds,
//! pod timings), random update / rollback / scale sequences and random faults, played on the simulated
//! controller with the real policy and the real stepper. Invariants:
//!
//! 1. the stepper never lowers the partition while a gate fails (the simulation's own gate oracle,
//!    evaluated on the stored state at the moment the step lands);
//! 2. it never steps twice for one observation (every step lands on a generation the controller has
//!    observed, and lowers the partition by exactly one step);
//! 3. at every second, pods unavailable ≤ pods made unavailable by faults + 1;
//! 4. no pod is restarted for the update while another pod was already down when the step exposing
//!    it was taken (MOCO's incident; the native rolling update does it, see `sim_incidents.rs`);
//! 5. every rollout with no lasting fault completes within the bound of [`bound`];
//! 6. with an application-level gate (a Prometheus check, or the owner's `Healthy` condition), no step
//!    lands while the application-unhealthy signal is raised.
//!
//! Each case's stepper runs as `once` (a LIST per pass) or as `watch` (from its reflector caches, 0–2 s
//! late, with replicas taking over), at random: both modes keep every invariant.
//!
//! Cases: env `SIM_CASES` (default 1000; `make soak` runs 100,000).

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{
    self, Action, ApplySpec, Event, Scenario, SetSpec, StepperMode, StepperSpec, TimingSpec,
};

/// Largest replica count generated (initial or scaled to).
const MAX_REPLICAS: i64 = 12;

/// The completion bound, in virtual seconds after the quiet time `T_q` (every event played and every
/// fault over, bad pods deleted):
///
/// `B = (3 · MAX_REPLICAS + 2) · per`, with `per = interval + terminate + pending + jitter + ready +
/// minReadySeconds + 2`.
///
/// Why: `per` bounds one pod's turn — the stepper's next pass (≤ `interval`), the controller's sync
/// that deletes it (≤ 1 s), graceful termination, the sync that recreates it (≤ 1 s), start-up to Ready,
/// and `minReadySeconds` until available. After `T_q` at most `MAX_REPLICAS` pods remain to be
/// created one at a time (`OrderedReady` scale-up or recreation), at most `MAX_REPLICAS` condemned
/// pods to delete one at a time (`OrderedReady` scale-down), and at most `MAX_REPLICAS` steps to take,
/// each within `per`; `+ 2 · per` covers a pass lost to a killed stepper and the pods stuck
/// terminating on a node that came back at `T_q`.
fn bound(s: &Scenario) -> i64 {
    let t = &s.timing;
    let per = s.stepper.interval_seconds
        + s.stepper.watch_lag_seconds
        + t.terminate_seconds
        + t.pending_seconds
        + t.jitter_seconds
        + t.ready_seconds
        + i64::from(s.set.min_ready_seconds)
        + 2
        + check_seconds(s);
    (3 * MAX_REPLICAS + 2) * per
}

/// Seconds a Prometheus check can hold one step once the application is healthy:
/// `success-threshold × check-period-seconds` (0 without a check).
fn check_seconds(s: &Scenario) -> i64 {
    let get = |k: &str| s.set.annotations.get(k).and_then(|v| v.parse::<i64>().ok());
    if s.set.annotations.contains_key("prometheus-query") {
        get("success-threshold").unwrap_or(1) * get("check-period-seconds").unwrap_or(30)
    } else {
        0
    }
}

/// True when the scenario's set has an application-level gate.
fn app_gated(s: &Scenario) -> bool {
    s.set.annotations.contains_key("prometheus-query")
        || s.set.annotations.contains_key("owner-condition")
}

fn end_of(e: &Event) -> i64 {
    match &e.action {
        Action::NodeFailure { seconds, .. }
        | Action::ApiFault { seconds, .. }
        | Action::ConcurrentSteppers { seconds } => e.at + seconds,
        _ => e.at,
    }
}

fn action() -> impl Strategy<Value = Action> {
    let image = prop::sample::select(vec!["v2", "v3", "v4", "v5"]);
    prop_oneof![
        4 => image.prop_map(|i| Action::Apply(ApplySpec { image: Some(i.into()), ..ApplySpec::default() })),
        1 => Just(Action::Undo {}),
        1 => (1..=MAX_REPLICAS as i32).prop_map(Action::Scale),
        1 => ((1..=MAX_REPLICAS as i32), prop::option::of(prop::sample::select(vec!["v2", "v3"])))
            .prop_map(|(r, i)| Action::Apply(ApplySpec { image: i.map(Into::into), replicas: Some(r), ..ApplySpec::default() })),
        1 => Just(Action::Apply(ApplySpec { partition: Some(0), ..ApplySpec::default() })),
        3 => (0u32..12, 1i64..120).prop_map(|(pod, seconds)| Action::NodeFailure { pod, seconds }),
        1 => (0u32..12, 300i64..420).prop_map(|(pod, seconds)| Action::NodeFailure { pod, seconds }),
        1 => (0u32..12).prop_map(Action::DeletePod),
        2 => (
            prop::sample::select(vec![Call::Any, Call::Patch, Call::ListPods, Call::ListStatefulsets, Call::Event]),
            prop::sample::select(vec![FaultKind::Conflict, FaultKind::Error]),
            1i64..60,
            0.0f64..=1.0,
        )
            .prop_map(|(call, kind, seconds, probability)| Action::ApiFault { call, kind, seconds, probability }),
        1 => Just(Action::KillStepper {}),
        1 => Just(Action::Takeover {}),
        1 => (1i64..100).prop_map(|seconds| Action::ConcurrentSteppers { seconds }),
        1 => any::<bool>().prop_map(Action::AppUnhealthy),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        1..=MAX_REPLICAS as i32,
        any::<bool>(),
        0i32..=8,
        (1i64..=4, 1i64..=8, 1i64..=4, 0i64..=3),
        2i64..=10,
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["v3", "v4"])),
        prop::collection::vec((1i64..200, action()), 1..7),
        (0u8..3, 1i64..=10, 1i64..=2),
        (any::<bool>(), 0i64..=2),
    )
        .prop_map(
            |(
                replicas,
                parallel,
                min_ready,
                (pending, ready, terminate, jitter),
                interval,
                pdb,
                bad,
                events,
                (app_gate, period, threshold),
                (watch, lag),
            )| {
                let mut events: Vec<Event> = events
                    .into_iter()
                    .map(|(at, action)| Event { at, action })
                    .collect();
                events.sort_by_key(|e| e.at);
                let quiet = events.iter().map(end_of).max().unwrap_or(0) + 1;
                events.push(Event {
                    at: quiet,
                    action: Action::DeleteBadPods {},
                });
                events.push(Event {
                    at: quiet,
                    action: Action::AppUnhealthy(false),
                });
                let mut annotations = BTreeMap::new();
                let mut owner = None;
                match app_gate {
                    1 => {
                        annotations.insert("prometheus-query".to_string(), "up".to_string());
                        annotations.insert("check-period-seconds".to_string(), period.to_string());
                        annotations.insert("success-threshold".to_string(), threshold.to_string());
                    }
                    2 => {
                        annotations.insert("owner-condition".to_string(), "Healthy".to_string());
                        owner = Some("MySQLCluster".to_string());
                    }
                    _ => {}
                }
                let mut s = Scenario {
                    name: "random".into(),
                    description: String::new(),
                    set: SetSpec {
                        name: "web".into(),
                        namespace: "demo".into(),
                        replicas,
                        pod_management_policy: if parallel { "Parallel" } else { "OrderedReady" }
                            .into(),
                        min_ready_seconds: min_ready,
                        image: "v1".into(),
                        pdb_max_unavailable: pdb.then_some(1),
                        bad_images: bad.map(|b| vec![b.to_string()]).unwrap_or_default(),
                        annotations,
                        owner,
                        application: None,
                    },
                    timing: TimingSpec {
                        pending_seconds: pending,
                        ready_seconds: ready,
                        terminate_seconds: terminate,
                        jitter_seconds: jitter,
                    },
                    stepper: StepperSpec {
                        interval_seconds: interval,
                        pdb_gate: true,
                        recover_stuck_pods: false,
                        mode: if watch {
                            StepperMode::Watch
                        } else {
                            StepperMode::Once
                        },
                        watch_lag_seconds: if watch { lag } else { 0 },
                    },
                    duration: 0,
                    events,
                };
                s.duration = quiet + bound(&s) + 1;
                s
            },
        )
}

/// The image the set's template ends with (what a completed rollout runs).
fn final_image_is_bad(run: &scenario::Run) -> bool {
    let tpl = &run.world.set["spec"]["template"];
    sts_stepper::sim::history::template_image(tpl)
        .is_some_and(|img| run.world.bad_images.iter().any(|b| b == img))
}

fn check(s: &Scenario, seed: u64) -> Result<(), TestCaseError> {
    let run = scenario::run(s, false, seed).map_err(TestCaseError::fail)?;
    check_run(s, &run)
}

fn check_run(s: &Scenario, run: &scenario::Run) -> Result<(), TestCaseError> {
    let sum = &run.summary;
    prop_assert_eq!(
        sum.steps_while_gate_failed,
        0,
        "step while a gate failed: {:?}",
        run.steps
    );
    prop_assert_eq!(sum.steps_unobserved, 0, "double step: {:?}", run.steps);
    if app_gated(s) {
        prop_assert_eq!(
            sum.steps_while_app_unhealthy,
            0,
            "step while the application was unhealthy: {:?}",
            run.steps
        );
    }
    for st in &run.steps {
        prop_assert_eq!(
            st.from.min(st.replicas) - 1,
            st.to,
            "step of more than one pod: {:?}",
            st
        );
    }
    prop_assert_eq!(
        sum.harmful_restarts,
        0,
        "a pod restarted while another was already down: {:?}",
        run.world.harmful_restarts
    );
    for f in &run.frames {
        prop_assert!(
            f.down <= f.fault_down + 1,
            "t={}: {} pods down, {} by faults; notes {:?}",
            f.t,
            f.down,
            f.fault_down,
            f.notes
        );
    }
    let quiet = s.events.iter().map(end_of).max().unwrap_or(0);
    if sum.rollout_started.is_some() && !final_image_is_bad(run) {
        let done = sum.rollout_completed;
        prop_assert!(
            done.is_some_and(|d| d <= quiet + bound(s)),
            "no completion within the bound: completed {:?}, quiet at {}, bound {}",
            done,
            quiet,
            bound(s)
        );
    }
    Ok(())
}

#[test]
fn the_stepper_never_harms_a_random_rollout() {
    let cases = std::env::var("SIM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(scenario(), any::<u64>()), |(s, seed)| check(&s, seed));
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_checks_catch_the_native_rolling_update_in_the_moco_incident() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/moco-incident.yaml");
    let text = std::fs::read_to_string(&path).expect("read the MOCO scenario");
    let s = Scenario::from_yaml(&text).expect("parse the MOCO scenario");
    let native = scenario::run(&s, true, 1).expect("native run");
    assert!(
        check_run(&s, &native).is_err(),
        "the invariants must flag the native rolling update"
    );
    let guarded = scenario::run(&s, false, 1).expect("guarded run");
    assert!(check_run(&s, &guarded).is_ok());
}
