//! Property test of the approval handshake and the primary last (docs/approvals.md): random sets with
//! `pre-update-approval` (and, half the time, `primary-selector: role=primary` over an application with
//! a primary), a simulated application that answers after a random delay and switches over in random
//! time, random template changes and rollbacks, denials, a silent answerer and failing pod patches,
//! played on the simulated controller with the real policy and the real stepper. Invariants:
//!
//! 1. no step exposes a pod that had not approved the update revision, or that was denying it: a
//!    denial, a timeout (a silent answerer) or an error (a failed request) never steps;
//! 2. no step exposes the pod holding the primary role;
//! 3. every rollout whose approvals come (the answerer answering and no denial from the quiet time
//!    on) completes within the bound of [`bound`];
//! 4. once complete, no pod carries a request: a new revision or a rollback withdrew what was asked.
//!
//! Cases: env `SIM_CASES` (default 300; `make soak` runs more).

use std::io::Write;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::application::Protocol;
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{
    self, Action, ApplicationSpec, ApplySpec, Event, Scenario, SetSpec, StepperSpec, TimingSpec,
};

const MAX_REPLICAS: i32 = 6;

/// The completion bound after the quiet time, in virtual seconds: `(3 · replicas + 4) · per`, with
/// `per` one pod's turn — the stepper's pass that asks (≤ `interval`), the answer (`answer`), a
/// switchover (`switchover`), the pass that steps (≤ `interval`), termination, start-up to Ready, the
/// syncs (2) — and room for a rollback's second rollout and a pass lost to a failed request.
fn bound(s: &Scenario) -> i64 {
    let app = s.set.application.as_ref().expect("application");
    let t = &s.timing;
    let per = 2 * s.stepper.interval_seconds
        + app.answer_seconds
        + app.switchover_seconds
        + t.terminate_seconds
        + t.pending_seconds
        + t.ready_seconds
        + 2;
    (3 * i64::from(MAX_REPLICAS) + 4) * per
}

fn action(replicas: u32) -> impl Strategy<Value = Action> {
    let image = prop::sample::select(vec!["v2", "v3", "v4"]);
    prop_oneof![
        4 => image.prop_map(|i| Action::Apply(ApplySpec { image: Some(i.into()), ..ApplySpec::default() })),
        1 => Just(Action::Undo {}),
        2 => (0..replicas, 1i64..90).prop_map(|(pod, seconds)| Action::DenyUpdate {
            pod,
            reason: "replica lagging".into(),
            seconds,
        }),
        1 => any::<bool>().prop_map(Action::SilentApplication),
        1 => (prop::sample::select(vec![FaultKind::Conflict, FaultKind::Error]), 1i64..60)
            .prop_map(|(kind, seconds)| Action::ApiFault {
                call: Call::PatchPod,
                kind,
                seconds,
                probability: 1.0,
            }),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1..=MAX_REPLICAS)
        .prop_flat_map(|replicas| {
            let n = u32::try_from(replicas).expect("replicas");
            (
                Just(replicas),
                any::<bool>(),
                prop::option::of(0..n),
                (0i64..=15, 0i64..=20, 30i64..=200),
                (1i64..=3, 1i64..=6, 1i64..=3),
                2i64..=8,
                prop::collection::vec((1i64..150, action(n)), 1..6),
            )
        })
        .prop_map(
            |(
                replicas,
                parallel,
                primary,
                (answer, switchover, timeout),
                (pending, ready, terminate),
                interval,
                events,
            )| {
                // A primary needs another pod to move to.
                let primary = primary.filter(|_| replicas >= 2);
                let mut events: Vec<Event> = events
                    .into_iter()
                    .map(|(at, action)| Event { at, action })
                    .collect();
                events.sort_by_key(|e| e.at);
                let quiet = events
                    .iter()
                    .map(|e| match &e.action {
                        Action::DenyUpdate { seconds, .. } | Action::ApiFault { seconds, .. } => {
                            e.at + seconds
                        }
                        _ => e.at,
                    })
                    .max()
                    .unwrap_or(0)
                    + 1;
                // From the quiet time on the application answers.
                events.push(Event {
                    at: quiet,
                    action: Action::SilentApplication(false),
                });
                let mut annotations = std::collections::BTreeMap::from([
                    ("pre-update-approval".to_string(), "true".to_string()),
                    ("approval-timeout-seconds".to_string(), timeout.to_string()),
                ]);
                if primary.is_some() {
                    annotations.insert("primary-selector".into(), "role=primary".into());
                }
                let mut s = Scenario {
                    name: "approvals".into(),
                    description: String::new(),
                    set: SetSpec {
                        name: "web".into(),
                        namespace: "demo".into(),
                        replicas,
                        pod_management_policy: if parallel { "Parallel" } else { "OrderedReady" }
                            .into(),
                        min_ready_seconds: 0,
                        image: "v1".into(),
                        pdb_max_unavailable: Some(1),
                        bad_images: Vec::new(),
                        annotations,
                        owner: None,
                        application: Some(ApplicationSpec {
                            primary,
                            answer_seconds: answer,
                            switchover_seconds: switchover,
                            protocol: Protocol::Handshake,
                            webhook_name: "app".into(),
                        }),
                    },
                    timing: TimingSpec {
                        pending_seconds: pending,
                        ready_seconds: ready,
                        terminate_seconds: terminate,
                        jitter_seconds: 0,
                    },
                    stepper: StepperSpec {
                        interval_seconds: interval,
                        ..StepperSpec::default()
                    },
                    duration: 0,
                    events,
                };
                s.duration = quiet + bound(&s);
                s
            },
        )
}

fn cases() -> u32 {
    std::env::var("SIM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

#[test]
fn the_application_is_asked_and_the_primary_goes_last() {
    let cases = cases();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let asked = std::cell::Cell::new(0usize);
    let switchovers = std::cell::Cell::new(0usize);
    runner
        .run(&scenario(), |s| {
            let run = scenario::run(&s, false, 7).map_err(TestCaseError::fail)?;
            let w = &run.world;
            prop_assert!(
                w.unapproved_replacements.is_empty(),
                "steps exposed pods without approval or holding the primary: {:?}\n{}",
                w.unapproved_replacements,
                format!("{:?}", s.events)
            );
            let last_change = s
                .events
                .iter()
                .filter(|e| matches!(e.action, Action::Apply(_) | Action::Undo {}))
                .map(|e| e.at)
                .max();
            if last_change.is_some() {
                prop_assert!(
                    run.summary
                        .rollout_completed
                        .is_some_and(|done| done >= last_change.unwrap_or(0)),
                    "the rollout did not complete by t={} (bound {})",
                    run.summary.ended,
                    bound(&s)
                );
                let requested = sts_safe_rollout_rules::annotations::key(
                    sts_safe_rollout_rules::annotations::DEFAULT_PREFIX,
                    sts_safe_rollout_rules::annotations::UPDATE_REQUESTED,
                );
                let left: Vec<u32> = w
                    .pods
                    .values()
                    .filter(|p| p.annotations.contains_key(&requested))
                    .map(|p| p.ordinal)
                    .collect();
                prop_assert!(
                    left.is_empty(),
                    "requests left on pods {left:?} after the rollout"
                );
            }
            asked.set(
                asked.get()
                    + w.events
                        .iter()
                        .filter(|e| e.1 == "ApprovalRequested")
                        .count(),
            );
            switchovers.set(
                switchovers.get()
                    + w.events
                        .iter()
                        .filter(|e| e.1 == "ApprovalRequested" && e.2.contains("switch over"))
                        .count(),
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (asked, switchovers) = (asked.get(), switchovers.get());
    // Written to the process's stderr, not through `eprintln!` (which the test harness captures): the
    // counts show in `make test`'s output.
    let _ = writeln!(
        std::io::stderr(),
        "sim_approvals: {cases} cases, {asked} ApprovalRequested Events, {switchovers} of them asking a switchover"
    );
    assert!(
        asked > 0 && switchovers > 0,
        "the cases exercised the handshake and the switchover"
    );
}
