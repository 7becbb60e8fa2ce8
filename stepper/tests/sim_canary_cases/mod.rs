//! The canary property test's generator: random StatefulSets, plans (resolved by the test itself),
//! step sizes and events, with a person's resumes spaced after the quiet time so each finds the set
//! held, and the deadline by which the rollout must be complete.

use std::collections::BTreeMap;

use proptest::prelude::*;
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{
    Action, ApplySpec, Event, Scenario, SetSpec, StepperMode, StepperSpec, TimingSpec,
};

/// One generated case: the scenario and the plan it carries, as the test resolves it.
#[derive(Clone, Debug)]
pub struct Case {
    pub scenario: Scenario,
    /// Every point: pods (resolved by the test), bake seconds.
    pub points: Vec<(i32, Option<i64>)>,
    /// Pods per step, resolved by the test.
    pub step_pods: i32,
}

/// Pods of a percentage of `replicas`, rounded up, at least 1 (the README's rule).
pub fn percent_of(p: i32, replicas: i32) -> i32 {
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
        1 => Just(Action::Takeover {}),
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

pub fn case() -> impl Strategy<Value = Case> {
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
                // `once`, or `watch` from caches 0–2 s late.
                (any::<bool>(), 0i64..=2),
            )
        })
        .prop_map(
            |(replicas, (text, points), step, shape, events, (watch, lag))| {
                let (parallel, min_ready, (pending, ready, terminate), interval) = shape;
                let lag = if watch { lag } else { 0 };
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
                let per = interval + lag + terminate + pending + ready + i64::from(min_ready) + 2;
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
                        application: None,
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
                        mode: if watch {
                            StepperMode::Watch
                        } else {
                            StepperMode::Once
                        },
                        watch_lag_seconds: lag,
                    },
                    duration: deadline(quiet, holding, spacing, replicas, per) + 1,
                    events,
                };
                Case {
                    scenario,
                    points,
                    step_pods,
                }
            },
        )
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
