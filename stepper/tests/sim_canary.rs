//! Property test of the canary plan (`<prefix>/pause-at`): random StatefulSets (2–8 replicas, either pod
//! management policy, timings), random plans (1–3 points as counts or percentages, some with a bake
//! time, sometimes a point at 100 % that holds nothing), random step sizes, and random template
//! changes, rollbacks, node failures, API faults, killed and racing steppers, and a person's `pause`
//! and `resume` at random times, played on the simulated controller with the real policy and the real
//! stepper. After the quiet time a person resumes once per point, spaced so each resume finds the set
//! held. Invariants, from the steps that landed and the scripted events (the simulation's own record,
//! not the stepper's code):
//!
//! 1. a step never jumps a point: the pods at or above the partition never go from below a point to
//!    above it in one step; and every step is exactly `min(from, replicas) − step`, clamped to the
//!    next point (never more, never a double step);
//! 2. a rollout that reached a point moves on only after a person's `resume` or, for a point with a
//!    bake time, that many seconds after the step that reached it;
//! 3. a rollback or a new template starts the plan over: 1 and 2 hold per `updateRevision`, counted
//!    from its first step at partition = replicas;
//! 4. no step lands while a person's pause stands (from the `pause` to the next `resume`): the bake
//!    time never lifts it;
//! 5. never a step while a gate fails (the simulation's gate oracle), never on an unobserved
//!    generation, never a pod restarted while another was already down, never more pods down than
//!    faults plus one step;
//! 6. every rollout whose plan is resumed completes.
//!
//! Cases: env `SIM_CASES` (default 1000; `make soak` runs 100,000). The count is printed, with how
//! many points were left after a resume and after a bake time, and how many plans started over.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{
    self, Action, ApplySpec, Event, Run, Scenario, SetSpec, StepperSpec, TimingSpec,
};

/// What the random cases exercised, over the whole run (so the test shows it tested something):
/// points left after a resume, after a bake time, rollouts that started the plan over, steps.
static LEFT_BY_RESUME: AtomicUsize = AtomicUsize::new(0);
static LEFT_BY_BAKE: AtomicUsize = AtomicUsize::new(0);
static STARTED_OVER: AtomicUsize = AtomicUsize::new(0);
static STEPS: AtomicUsize = AtomicUsize::new(0);

/// One generated case: the scenario and the plan it carries, as the test resolves it.
#[derive(Clone, Debug)]
struct Case {
    scenario: Scenario,
    /// Every point: pods (resolved by the test), bake seconds.
    points: Vec<(i32, Option<i64>)>,
    /// Pods per step, resolved by the test.
    step_pods: i32,
}

/// Pods of a percentage of `replicas`, rounded up, at least 1 (the README's rule).
fn percent_of(p: i32, replicas: i32) -> i32 {
    ((p * replicas + 99) / 100).max(1)
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
    let image = prop::sample::select(vec!["v2", "v3", "v4"]);
    prop_oneof![
        4 => image.prop_map(|i| Action::Apply(ApplySpec { image: Some(i.into()), ..ApplySpec::default() })),
        2 => Just(Action::Undo {}),
        2 => (0u32..8, 1i64..60).prop_map(|(pod, seconds)| Action::NodeFailure { pod, seconds }),
        2 => (
            prop::sample::select(vec![Call::Any, Call::Patch, Call::ListPods, Call::Event]),
            prop::sample::select(vec![FaultKind::Conflict, FaultKind::Error]),
            1i64..40,
            0.0f64..=1.0,
        )
            .prop_map(|(call, kind, seconds, probability)| Action::ApiFault { call, kind, seconds, probability }),
        1 => Just(Action::KillStepper {}),
        1 => (1i64..60).prop_map(|seconds| Action::ConcurrentSteppers { seconds }),
        3 => Just(Action::Resume {}),
        1 => Just(Action::Pause("hold for a look".into())),
    ]
}

/// A plan for `replicas`: its text and its points (pods, bake).
fn plan(replicas: i32) -> impl Strategy<Value = (String, Vec<(i32, Option<i64>)>)> {
    let counts: Vec<i32> = (1..replicas).collect();
    let most = counts.len().min(3);
    (
        prop::sample::subsequence(counts, 1..=most),
        prop::collection::vec((any::<bool>(), prop::option::of(5i64..=40)), 3),
        any::<bool>(),
    )
        .prop_map(move |(pods, forms, full)| {
            let mut text = Vec::new();
            let mut points = Vec::new();
            for (k, (percent, bake)) in pods.into_iter().zip(forms) {
                // A percentage that resolves to k pods: ⌈(100k/r)·r/100⌉ = k for r ≤ 100.
                let (written, resolved) = if percent {
                    let p = 100 * k / replicas;
                    (format!("{p}%"), percent_of(p, replicas))
                } else {
                    (k.to_string(), k)
                };
                text.push(match bake {
                    Some(b) => format!("{written}:{b}"),
                    None => written,
                });
                points.push((resolved, bake));
            }
            if full {
                text.push("100%".into());
                points.push((replicas, None));
            }
            (text.join(","), points)
        })
}

fn case() -> impl Strategy<Value = Case> {
    (2i32..=8)
        .prop_flat_map(|replicas| {
            (
                Just(replicas),
                plan(replicas),
                prop::sample::select(vec!["1", "2", "25%", "50%"]),
                (
                    any::<bool>(),
                    0i32..=3,
                    (1i64..=3, 1i64..=6, 1i64..=3),
                    2i64..=8,
                ),
                prop::collection::vec((1i64..150, action()), 0..7),
            )
        })
        .prop_map(|(replicas, (text, points), step, shape, events)| {
            let (parallel, min_ready, (pending, ready, terminate), interval) = shape;
            let mut events: Vec<Event> = events
                .into_iter()
                .map(|(at, action)| Event { at, action })
                .collect();
            events.push(Event {
                at: 5,
                action: Action::Apply(ApplySpec {
                    image: Some("v2".into()),
                    ..ApplySpec::default()
                }),
            });
            events.sort_by_key(|e| e.at);
            let quiet = events.iter().map(end_of).max().unwrap_or(0) + 1;
            let per = interval + terminate + pending + ready + i64::from(min_ready) + 2;
            let max_bake = points.iter().filter_map(|p| p.1).max().unwrap_or(0);
            let spacing = resume_spacing(replicas, per, max_bake);
            let holding = points.iter().filter(|p| p.0 < replicas).count() as i64;
            for k in 1..=holding + 1 {
                events.push(Event {
                    at: quiet + k * spacing,
                    action: Action::Resume {},
                });
            }
            let step_pods = match step.strip_suffix('%') {
                Some(p) => percent_of(p.parse().expect("percent"), replicas),
                None => step.parse().expect("count"),
            };
            let scenario = Scenario {
                name: "canary".into(),
                description: String::new(),
                set: SetSpec {
                    name: "web".into(),
                    namespace: "demo".into(),
                    replicas,
                    pod_management_policy: if parallel { "Parallel" } else { "OrderedReady" }
                        .into(),
                    min_ready_seconds: min_ready,
                    image: "v1".into(),
                    pdb_max_unavailable: None,
                    bad_images: Vec::new(),
                    annotations: BTreeMap::from([
                        ("pause-at".to_string(), text),
                        ("step".to_string(), step.to_string()),
                    ]),
                    owner: None,
                },
                timing: TimingSpec {
                    pending_seconds: pending,
                    ready_seconds: ready,
                    terminate_seconds: terminate,
                    jitter_seconds: 0,
                },
                stepper: StepperSpec {
                    interval_seconds: interval,
                    pdb_gate: true,
                    recover_stuck_pods: false,
                },
                duration: deadline(quiet, holding, spacing, replicas, per) + 1,
                events,
            };
            Case {
                scenario,
                points,
                step_pods,
            }
        })
}

/// Seconds between the resumes after the quiet time: long enough for the rollout to reach its next
/// point from anywhere (at most `replicas` steps of `per` seconds each, and a bake time).
fn resume_spacing(replicas: i32, per: i64, max_bake: i64) -> i64 {
    max_bake + (i64::from(replicas) + 2) * per
}

/// When the rollout must be complete: one spacing after the last resume, and the pods' last turn.
fn deadline(quiet: i64, holding: i64, spacing: i64, replicas: i32, per: i64) -> i64 {
    quiet + (holding + 2) * spacing + (2 * i64::from(replicas) + 2) * per
}

fn times(s: &Scenario, f: impl Fn(&Action) -> bool) -> Vec<i64> {
    s.events
        .iter()
        .filter(|e| f(&e.action))
        .map(|e| e.at)
        .collect()
}

fn check_run(c: &Case, run: &Run) -> Result<(), TestCaseError> {
    let s = &c.scenario;
    let replicas = s.set.replicas;
    let holding: Vec<(i32, Option<i64>)> = c
        .points
        .iter()
        .copied()
        .filter(|p| p.0 < replicas)
        .collect();
    let resumes = times(s, |a| matches!(a, Action::Resume {}));
    // A person's pauses, each until the next resume played after it (events play in list order).
    let mut held: Vec<(i64, i64)> = Vec::new();
    for (i, e) in s.events.iter().enumerate() {
        if matches!(e.action, Action::Pause(_)) {
            let until = (s.events[i + 1..].iter())
                .find(|r| matches!(r.action, Action::Resume {}))
                .map_or(i64::MAX, |r| r.at);
            held.push((e.at, until));
        }
    }
    let sum = &run.summary;
    prop_assert_eq!(
        sum.steps_while_gate_failed,
        0,
        "gate failed: {:?}",
        run.steps
    );
    prop_assert_eq!(sum.steps_unobserved, 0, "double step: {:?}", run.steps);
    prop_assert_eq!(sum.harmful_restarts, 0, "{:?}", run.world.harmful_restarts);
    for f in &run.frames {
        prop_assert!(
            f.down <= f.fault_down + c.step_pods as usize,
            "t={}: {:?}",
            f.t,
            f
        );
    }
    let mut reached: BTreeMap<i32, i64> = BTreeMap::new();
    let mut prev: Option<&sts_stepper::sim::oracle::StepRecord> = None;
    for st in &run.steps {
        let new_epoch =
            prev.is_none_or(|p| p.update_revision != st.update_revision || st.from > p.to);
        let before = replicas - st.from.clamp(0, replicas);
        let after = replicas - st.to.clamp(0, replicas);
        if new_epoch {
            if prev.is_some() {
                STARTED_OVER.fetch_add(1, Ordering::Relaxed);
            }
            reached.clear();
            prop_assert_eq!(
                before,
                0,
                "a rollout starts at partition = replicas: {:?}",
                st
            );
        }
        // 1: never jumps a point; exactly one step, clamped to the next point.
        for (p, _) in &holding {
            prop_assert!(!(before < *p && *p < after), "jumped point {}: {:?}", p, st);
        }
        let next = holding.iter().find(|(p, _)| *p > before);
        let want = (st.from.min(replicas) - c.step_pods)
            .max(0)
            .max(next.map_or(0, |(p, _)| replicas - p));
        prop_assert_eq!(st.to, want, "step size: {:?}", st);
        // 2, 3: held at the point it stands at until a resume or the bake time.
        if let Some((p, bake)) = holding.iter().find(|(p, _)| *p == before) {
            let Some(&t_p) = reached.get(p) else {
                return Err(TestCaseError::fail(format!(
                    "at {p} without reaching it: {st:?}"
                )));
            };
            let resumed = resumes.iter().any(|r| *r > t_p && *r <= st.t);
            let baked = bake.is_some_and(|b| st.t - t_p >= b);
            let counter = if resumed {
                &LEFT_BY_RESUME
            } else {
                &LEFT_BY_BAKE
            };
            counter.fetch_add(1, Ordering::Relaxed);
            prop_assert!(
                resumed || baked,
                "left point {} (reached t={}, bake {:?}) at t={} without a resume: {:?}",
                p,
                t_p,
                bake,
                st.t,
                resumes
            );
        }
        if holding.iter().any(|(p, _)| *p == after) {
            reached.insert(after, st.t);
        }
        // 4: a person's pause holds until the next resume.
        for (from, until) in &held {
            prop_assert!(
                !(*from <= st.t && st.t < *until),
                "stepped at t={} under a person's pause from t={} to {}",
                st.t,
                from,
                until
            );
        }
        prev = Some(st);
    }
    STEPS.fetch_add(run.steps.len(), Ordering::Relaxed);
    // 6: every rollout whose plan is resumed completes.
    let done = sum.rollout_completed;
    prop_assert!(
        done.is_some_and(|d| d < s.duration),
        "not complete by t={}: {:?}; steps {:?}; resumes {:?}",
        s.duration,
        sum,
        run.steps,
        resumes
    );
    Ok(())
}

fn check(c: &Case, seed: u64) -> Result<(), TestCaseError> {
    let run = scenario::run(&c.scenario, false, seed).map_err(TestCaseError::fail)?;
    check_run(c, &run)
}

#[test]
fn the_canary_plan_holds_every_point_and_every_resumed_rollout_completes() {
    let cases = std::env::var("SIM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(case(), any::<u64>()), |(c, seed)| check(&c, seed));
    if let Err(e) = result {
        panic!("{e}");
    }
    let n = |c: &AtomicUsize| c.load(Ordering::Relaxed);
    // Outside the test harness's capture: `make test` shows how many rollouts were played.
    let _ = writeln!(
        std::io::stderr(),
        "sim_canary: {cases} random canary rollouts, {} steps; points left after a resume {}, after \
         a bake time {}; plans started over {}: every invariant held",
        n(&STEPS),
        n(&LEFT_BY_RESUME),
        n(&LEFT_BY_BAKE),
        n(&STARTED_OVER)
    );
    if cases >= 100 {
        for (what, c) in [
            ("left after a resume", &LEFT_BY_RESUME),
            ("left after a bake time", &LEFT_BY_BAKE),
            ("started over", &STARTED_OVER),
        ] {
            assert!(n(c) > 0, "no case where a point was {what}");
        }
    }
}

#[test]
fn the_checks_catch_a_plan_the_stepper_does_not_keep() {
    // The scenario's own plan, checked against a stricter plan than the set carries: the steps past
    // point 2 (3 pods) without its bake time must be flagged.
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/canary-pause-points.yaml");
    let s = Scenario::from_yaml(&std::fs::read_to_string(path).expect("read")).expect("parse");
    let run = scenario::run(&s, false, 1).expect("run");
    let kept = Case {
        scenario: s.clone(),
        points: vec![(1, None), (3, Some(30))],
        step_pods: 1,
    };
    assert!(
        check_run(&kept, &run).is_ok(),
        "{:?}",
        check_run(&kept, &run)
    );
    let stricter = Case {
        points: vec![(1, None), (3, Some(300))],
        ..kept.clone()
    };
    assert!(check_run(&stricter, &run).is_err());
    let extra_point = Case {
        points: vec![(1, None), (2, None), (3, Some(30))],
        ..kept
    };
    assert!(check_run(&extra_point, &run).is_err());
}

/// `scenarios/canary-pause-points.yaml` with plan `plan` and `events` instead of its own.
fn canary_scenario(plan: &str, events: Vec<Event>, duration: i64) -> Scenario {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/canary-pause-points.yaml");
    let mut s = Scenario::from_yaml(&std::fs::read_to_string(path).expect("read")).expect("parse");
    s.set.annotations.insert("pause-at".into(), plan.into());
    s.events = events;
    s.duration = duration;
    s
}

fn at(at: i64, action: Action) -> Event {
    Event { at, action }
}

fn apply(image: &str) -> Action {
    Action::Apply(ApplySpec {
        image: Some(image.into()),
        ..ApplySpec::default()
    })
}

/// (second, pods at or above the partition after the step, revision letter of the rollout).
fn steps_of(run: &Run) -> Vec<(i64, i32, char)> {
    (run.steps.iter())
        .map(|s| (s.t, s.replicas - s.to, run.world.letter(&s.update_revision)))
        .collect()
}

#[test]
fn the_real_server_trial_plays_in_the_simulation() {
    // Issue 19's trial: `pause-at: 1,60%:20` on 5 replicas stops after 1 pod until `resume`, stops
    // again at 3 pods and goes on by itself 20 s later, and starts over after `kubectl rollout undo`.
    let events = vec![
        at(10, apply("v2")),
        at(60, Action::Resume {}),
        at(200, Action::Undo {}),
        at(260, Action::Resume {}),
    ];
    let run = scenario::run(&canary_scenario("1,60%:20", events, 500), false, 1).expect("run");
    let steps = steps_of(&run);
    let pods: Vec<(i32, char)> = steps.iter().map(|s| (s.1, s.2)).collect();
    assert_eq!(
        pods,
        [
            (1, 'B'),
            (2, 'B'),
            (3, 'B'),
            (4, 'B'),
            (5, 'B'),
            (1, 'A'),
            (2, 'A'),
            (3, 'A'),
            (4, 'A'),
            (5, 'A')
        ],
        "{steps:?}"
    );
    let t = |i: usize| steps[i].0;
    assert!(
        t(0) < 60 && t(1) >= 60,
        "held at 1 pod until the resume: {steps:?}"
    );
    assert!(
        t(3) >= t(2) + 20 && t(3) <= t(2) + 30,
        "baked 20 s at 3 pods: {steps:?}"
    );
    assert!(
        t(5) >= 200 && t(5) < 260 && t(6) >= 260,
        "started over: {steps:?}"
    );
    assert!(t(8) >= t(7) + 20, "baked again: {steps:?}");
    assert!(run.summary.rollout_completed.is_some_and(|d| d > t(9)));
}

#[test]
fn a_rollback_while_held_lifts_the_old_pause_and_holds_at_the_first_point_again() {
    let events = vec![at(10, apply("v2")), at(40, Action::Undo {})];
    let run = scenario::run(&canary_scenario("1,60%:20", events, 400), false, 1).expect("run");
    // Pod 4 to v2 and held; the rollback lifts that pause, puts pod 4 back on v1 (its first point),
    // and as every pod then runs v1 the plan's new pause is lifted too: nothing is left to hold.
    let steps = steps_of(&run);
    assert_eq!(
        steps.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(),
        [(1, 'B'), (1, 'A')],
        "{steps:?}"
    );
    assert!(steps[1].0 >= 40, "{steps:?}");
    let said: Vec<String> = (run.world.events.iter())
        .filter(|e| e.1.starts_with("RolloutPaused") || e.1.starts_with("RolloutResumed"))
        .map(|e| format!("{}: {}", e.1, e.2.split(" (was").next().unwrap_or("")))
        .collect();
    let rev = |letter: char| {
        (run.world.revisions.iter())
            .find(|r| r.letter == letter)
            .map(|r| r.name.clone())
            .expect("revision")
    };
    assert_eq!(
        said,
        [
            format!("RolloutPaused: pause point 1 of 2: 1 of 5 pods on {}; `resume` to go on", rev('B')),
            format!(
                "RolloutResumed: resumed by the stepper: a new rollout (updateRevision {}) starts the \
                 pause plan over",
                rev('A')
            ),
            format!("RolloutPaused: pause point 1 of 2: 1 of 5 pods on {}; `resume` to go on", rev('A')),
            "RolloutResumed: resumed by the stepper: every pod runs updateRevision, nothing is left to \
             hold"
                .to_string(),
        ]
    );
    let annotations = &run.world.set["metadata"]["annotations"];
    assert!(
        annotations.get("safe-rollout.dev/paused").is_none(),
        "{annotations}"
    );
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
}
