//! `once` and `watch` decide the same (issue 34, docs/design.md): one cluster history played to a
//! stepper that LISTs every pass (`once`) and to one that decides from `watch`'s own caches — the
//! kube-rs reflector stores of `cluster::caches`, trimmed and indexed as in `sts-stepper watch`, fed
//! with the simulated world's changes as watch events (`sim::watched`).
//!
//! - Every shipped scenario (`scenarios/*.yaml`, whatever is added there) writes exactly the same in
//!   both modes: the same PATCHes and DELETEs at the same seconds, the same Events, the same steps.
//! - With the caches seconds late, and replicas taking over in the middle of the approval handshake,
//!   a pod's request is written once per revision and phase (never asked again from a cache that had
//!   not seen it), its deadline counts from that first ask, and the rollout completes.

use crate::support::sim_runs::{assert_guarded_invariants, load, requests};
use sts_stepper::sim::scenario::{self, Action, Event, Run, Scenario, StepperMode};

/// `s` played guarded with seed 1, its stepper in `mode` with the caches `lag` seconds late.
fn played(s: &Scenario, mode: StepperMode, lag: i64) -> Run {
    let mut s = s.clone();
    s.stepper.mode = mode;
    s.stepper.watch_lag_seconds = lag;
    scenario::run(&s, false, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

fn shipped() -> Vec<String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenarios/")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "yaml").then(|| path.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_shipped_scenario_writes_the_same_in_both_modes() {
    let names = shipped();
    assert!(names.len() >= 14, "{names:?}");
    for name in names {
        let s = load(&name);
        let once = played(&s, StepperMode::Once, 0);
        let watch = played(&s, StepperMode::Watch, 0);
        assert!(!once.world.writes.is_empty(), "{name}: the stepper wrote");
        for (t, (a, b)) in once
            .world
            .writes
            .iter()
            .zip(&watch.world.writes)
            .enumerate()
        {
            assert_eq!(a, b, "{name}: write #{t} differs");
        }
        assert_eq!(
            once.world.writes.len(),
            watch.world.writes.len(),
            "{name}: writes"
        );
        assert_eq!(once.world.events, watch.world.events, "{name}: Events");
        assert_eq!(once.steps, watch.steps, "{name}: steps");
        assert_eq!(once.summary.ended, watch.summary.ended, "{name}: end");
    }
}

/// `primary-last` with a slow application (answers after 40 s) and replicas taking over every 7 s
/// from the first request to well past the last.
fn handshake_with_takeovers() -> Scenario {
    let mut s = load("primary-last");
    s.events
        .retain(|e| !matches!(e.action, Action::DenyUpdate { .. }));
    if let Some(app) = s.set.application.as_mut() {
        app.answer_seconds = 40;
    }
    s.events.extend((12..400).step_by(7).map(|at| Event {
        at,
        action: Action::Takeover {},
    }));
    s.events.sort_by_key(|e| e.at);
    s.duration = 1200;
    s
}

#[test]
fn a_request_is_asked_once_through_late_caches_and_takeovers() {
    let s = handshake_with_takeovers();
    let once = played(&s, StepperMode::Once, 0);
    for lag in [0, 1, 3] {
        let run = played(&s, StepperMode::Watch, lag);
        assert_guarded_invariants(&run);
        assert!(run.world.unapproved_replacements.is_empty(), "lag {lag}");
        assert!(
            run.summary.rollout_completed.is_some(),
            "lag {lag}: the rollout completes"
        );
        let asked = requests(&run);
        assert_eq!(
            asked.keys().collect::<Vec<_>>(),
            requests(&once).keys().collect::<Vec<_>>(),
            "lag {lag}: the same pods asked, for the same revision and phase"
        );
        for (request, writes) in &asked {
            assert_eq!(
                writes.len(),
                1,
                "lag {lag}: {request:?} asked again: {writes:?}"
            );
        }
        let notes: Vec<&String> = (run.world.events.iter())
            .filter(|(_, reason, _)| reason == "ApprovalRequested")
            .map(|(_, _, note)| note)
            .collect();
        assert_eq!(
            notes.len(),
            asked.len(),
            "lag {lag}: one ApprovalRequested per request"
        );
    }
}

#[test]
fn the_approval_deadline_counts_from_the_first_ask_across_takeovers() {
    // The application never answers; `approval-timeout-seconds: 30`.
    let mut s = handshake_with_takeovers();
    s.set
        .annotations
        .insert("approval-timeout-seconds".into(), "30".into());
    s.events.push(Event {
        at: 0,
        action: Action::SilentApplication(true),
    });
    s.events.sort_by_key(|e| e.at);
    s.duration = 200;
    for lag in [0, 2] {
        let run = played(&s, StepperMode::Watch, lag);
        let asked = requests(&run);
        let first = asked
            .values()
            .flatten()
            .map(|(t, _)| *t)
            .min()
            .expect("a request");
        let timed_out = (run.world.writes.iter())
            .find(|(_, line)| {
                line.starts_with("PATCH statefulsets") && line.contains("ApprovalTimeout")
            })
            .map(|(t, _)| *t)
            .expect("the deadline passed: degraded-reason ApprovalTimeout");
        let interval = s.stepper.interval_seconds;
        assert!(
            (first + 30..=first + 30 + interval + lag + 1).contains(&timed_out),
            "lag {lag}: asked at {first}, ApprovalTimeout recorded at {timed_out}"
        );
        assert!(asked.values().all(|w| w.len() == 1), "lag {lag}: {asked:?}");
        assert!(run.steps.is_empty(), "lag {lag}: no step without an answer");
    }
}
