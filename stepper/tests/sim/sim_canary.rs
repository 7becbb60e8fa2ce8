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

use crate::sim_canary_cases::{Case, case};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::scenario::{self, Action, Run, Scenario};

/// What the random cases exercised, over the whole run (so the test shows it tested something):
/// points left after a resume, after a bake time, rollouts that started the plan over, steps.
static LEFT_BY_RESUME: AtomicUsize = AtomicUsize::new(0);
static LEFT_BY_BAKE: AtomicUsize = AtomicUsize::new(0);
static STARTED_OVER: AtomicUsize = AtomicUsize::new(0);
static STEPS: AtomicUsize = AtomicUsize::new(0);

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
