//! Property test of the approvals and the primary last (docs/approvals.md): random sets asking the
//! application on the pods (`pre-update-approval`) or through its webhook (`pre-update-webhook`, with a
//! random `webhook-error-limit`) — the application's own webhook, or the stepper's built-in Patroni,
//! etcd or Sentinel answerer over the application as such a system (`sim::patroni`, `sim::etcd`,
//! `sim::sentinel`) —, half the time with `primary-selector: role=primary` over an
//! application with a primary; a simulated application that answers after a random delay and switches
//! over in random time; random template changes and rollbacks, denials, a silent answerer, failing pod
//! patches, webhook errors of every kind, a stepper killed between its read and its write and two
//! steppers racing, played on the simulated controller with the real policy and the real stepper.
//! Invariants:
//!
//! 1. no step exposes a pod that had not approved the update revision (on the pod; the webhook: its
//!    `Approve` in the pass that stepped), or that was denying it: a denial, a timeout (a silent
//!    answerer) or an error (a failed request, a webhook error) never steps;
//! 2. no step exposes the pod holding the primary role;
//! 3. every rollout whose approvals come (the answerer answering and no denial or webhook error from
//!    the quiet time on) completes within the bound of [`bound`], not left recorded Degraded (an
//!    `ApprovalTimeout` or `WebhookErrors` on the way is removed by the approval that follows);
//! 4. a new revision or a rollback cancels what was asked: once complete, no pod carries a request
//!    (the handshake); every call carries the set's `updateRevision` of its second, and nothing is ever
//!    written on the pods (the webhook).
//!
//! Each case's stepper runs as `once` or as `watch` (from its reflector caches, 0–2 s late; replicas
//! taking over mid-handshake), at random: both modes keep every invariant.
//!
//! Cases: env `SIM_CASES` (default 600, about half of them through the webhook; `make soak` runs more).

use std::cell::Cell;
use std::io::Write;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sts_stepper::sim::application::Protocol;
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::scenario::{
    self, Action, ApplicationSpec, ApplySpec, Event, Run, Scenario, SetSpec, StepperMode,
    StepperSpec, TimingSpec,
};
use sts_stepper::sim::webhook::WebhookFailure;

const MAX_REPLICAS: i32 = 6;

/// The completion bound after the quiet time, in virtual seconds: `(3 · replicas + 4) · per`, with
/// `per` one pod's turn — the stepper's pass that asks (≤ `interval`), the answer (`answer`), a
/// switchover (`switchover`), the pass that steps (≤ `interval`), termination, start-up to Ready, the
/// syncs (2) — and room for a rollback's second rollout and a pass lost to a failed request.
fn bound(s: &Scenario) -> i64 {
    let app = s.set.application.as_ref().expect("application");
    let t = &s.timing;
    let per = 2 * s.stepper.interval_seconds
        + 2 * s.stepper.watch_lag_seconds
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
        3 => Just(Action::Undo {}),
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
        2 => (1i64..60, prop::option::of(prop::sample::select(WebhookFailure::ALL.to_vec())))
            .prop_map(|(seconds, kind)| Action::WebhookErrors { seconds, kind }),
        1 => Just(Action::KillStepper {}),
        1 => Just(Action::Takeover {}),
        1 => (1i64..60).prop_map(|seconds| Action::ConcurrentSteppers { seconds }),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1..=MAX_REPLICAS)
        .prop_flat_map(|replicas| {
            let n = u32::try_from(replicas).expect("replicas");
            (
                Just(replicas),
                (any::<bool>(), 0u8..5, 1u32..=4),
                prop::option::of(0..n),
                (0i64..=15, 0i64..=20, 30i64..=200),
                (1i64..=3, 1i64..=6, 1i64..=3),
                2i64..=8,
                prop::collection::vec((1i64..150, action(n)), 1..6),
                // `once`, or `watch` from caches 0–2 s late.
                (any::<bool>(), 0i64..=2),
            )
        })
        .prop_map(
            |(
                replicas,
                (parallel, kind, error_limit),
                primary,
                (answer, switchover, timeout),
                (pending, ready, terminate),
                interval,
                events,
                (watch, lag),
            )| {
                // A primary needs another pod to move to. Patroni always has a leader: with two pods
                // or more, on the chosen pod or the first; a single pod is asked through a webhook.
                let primary = primary.filter(|_| replicas >= 2);
                // etcd keeps a quorum without the pod going only from three members on.
                let (kind, primary) = match kind {
                    2 if replicas >= 2 => (2, primary.or(Some(0))),
                    3 if replicas >= 3 => (3, primary.or(Some(0))),
                    4 if replicas >= 2 => (4, primary.or(Some(0))),
                    2..=4 => (1, primary),
                    k => (k, primary),
                };
                let mut events: Vec<Event> = events
                    .into_iter()
                    .map(|(at, action)| Event { at, action })
                    .collect();
                events.sort_by_key(|e| e.at);
                let quiet = events
                    .iter()
                    .map(|e| match &e.action {
                        Action::DenyUpdate { seconds, .. }
                        | Action::ApiFault { seconds, .. }
                        | Action::WebhookErrors { seconds, .. }
                        | Action::ConcurrentSteppers { seconds } => e.at + seconds,
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
                let mut annotations = std::collections::BTreeMap::from([(
                    "approval-timeout-seconds".to_string(),
                    timeout.to_string(),
                )]);
                let protocol = if kind > 0 {
                    annotations.insert("pre-update-webhook".into(), "app".into());
                    annotations.insert("webhook-error-limit".into(), error_limit.to_string());
                    match kind {
                        2 => Protocol::Patroni,
                        3 => Protocol::Etcd,
                        4 => Protocol::RedisSentinel,
                        _ => Protocol::Webhook,
                    }
                } else {
                    annotations.insert("pre-update-approval".into(), "true".into());
                    Protocol::Handshake
                };
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
                            protocol,
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
                        mode: if watch {
                            StepperMode::Watch
                        } else {
                            StepperMode::Once
                        },
                        watch_lag_seconds: if watch { lag } else { 0 },
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
        .unwrap_or(600)
}

/// What the cases exercised, summed over them.
#[derive(Default)]
struct Counts {
    webhook_cases: Cell<usize>,
    patroni_cases: Cell<usize>,
    etcd_cases: Cell<usize>,
    sentinel_cases: Cell<usize>,
    asked: Cell<usize>,
    switchovers: Cell<usize>,
    webhook_calls: Cell<u64>,
    webhook_errors: Cell<u64>,
    webhook_denials: Cell<u64>,
    degraded_by_errors: Cell<usize>,
}

fn add<T: Copy + std::ops::Add<Output = T>>(c: &Cell<T>, n: T) {
    c.set(c.get() + n);
}

/// The invariants of the module on one played case `s`, its `run`; adds what it exercised to `counts`.
fn check(s: &Scenario, run: &Run, counts: &Counts) -> Result<(), TestCaseError> {
    let w = &run.world;
    prop_assert!(
        w.unapproved_replacements.is_empty(),
        "steps exposed pods without approval or holding the primary: {:?}\n{:?}",
        w.unapproved_replacements,
        s.events
    );
    let app = w.application.as_ref().expect("application");
    let prefix = sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
    let webhook = app.protocol != Protocol::Handshake;
    if app.protocol == Protocol::Patroni {
        add(&counts.patroni_cases, 1);
    }
    if app.protocol == Protocol::Etcd {
        add(&counts.etcd_cases, 1);
    }
    if app.protocol == Protocol::RedisSentinel {
        add(&counts.sentinel_cases, 1);
    }
    if webhook {
        let on_pods: Vec<(u32, &String)> = (w.pods.values())
            .flat_map(|p| p.annotations.keys().map(move |k| (p.ordinal, k)))
            .filter(|(_, k)| k.starts_with(prefix))
            .collect();
        prop_assert!(on_pods.is_empty(), "written on the pods: {on_pods:?}");
        prop_assert_eq!(
            app.webhook.stale_requests,
            0,
            "a call about a former revision"
        );
        add(&counts.webhook_cases, 1);
        add(&counts.webhook_calls, app.webhook.total_calls());
        let count = |label: &str| app.webhook.calls.get(label).copied().unwrap_or(0);
        add(&counts.webhook_errors, count("Error"));
        add(&counts.webhook_denials, count("Deny"));
    }
    let last_change = (s.events.iter())
        .filter(|e| matches!(e.action, Action::Apply(_) | Action::Undo {}))
        .map(|e| e.at)
        .max();
    if let Some(last_change) = last_change {
        prop_assert!(
            (run.summary.rollout_completed).is_some_and(|done| done >= last_change),
            "the rollout did not complete by t={} (bound {})",
            run.summary.ended,
            bound(s)
        );
        let requested = sts_safe_rollout_rules::annotations::key(
            prefix,
            sts_safe_rollout_rules::annotations::UPDATE_REQUESTED,
        );
        let left: Vec<u32> = (w.pods.values())
            .filter(|p| p.annotations.contains_key(&requested))
            .map(|p| p.ordinal)
            .collect();
        prop_assert!(
            left.is_empty(),
            "requests left on pods {left:?} after the rollout"
        );
        let degraded = &w.set["metadata"]["annotations"][format!("{prefix}/degraded-reason")];
        prop_assert!(
            degraded.is_null(),
            "left Degraded after the rollout: {degraded}"
        );
    }
    let count = |reason: &str, text: &str| {
        (w.events.iter())
            .filter(|e| e.1 == reason && e.2.contains(text))
            .count()
    };
    add(&counts.asked, count("ApprovalRequested", ""));
    add(
        &counts.switchovers,
        count("ApprovalRequested", "switch over"),
    );
    add(
        &counts.degraded_by_errors,
        count("RolloutDegraded", "WebhookErrors"),
    );
    Ok(())
}

#[test]
fn the_application_is_asked_and_the_primary_goes_last() {
    let cases = cases();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let counts = Counts::default();
    runner
        .run(&scenario(), |s| {
            let run = scenario::run(&s, false, 7).map_err(TestCaseError::fail)?;
            check(&s, &run, &counts)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let c = counts;
    // Written to the process's stderr, not through `eprintln!` (which the test harness captures): the
    // counts show in `make test`'s output.
    let _ = writeln!(
        std::io::stderr(),
        "sim_approvals: {cases} cases, {} ApprovalRequested Events, {} of them asking a switchover; \
         {} cases through the webhook ({} of them the built-in Patroni answerer, {} etcd's, {} Sentinel's): {} calls, {} without a decision, {} Deny, {} WebhookErrors Degraded",
        c.asked.get(),
        c.switchovers.get(),
        c.webhook_cases.get(),
        c.patroni_cases.get(),
        c.etcd_cases.get(),
        c.sentinel_cases.get(),
        c.webhook_calls.get(),
        c.webhook_errors.get(),
        c.webhook_denials.get(),
        c.degraded_by_errors.get(),
    );
    assert!(
        c.asked.get() > 0 && c.switchovers.get() > 0,
        "the cases exercised the approvals and the switchover"
    );
    assert!(
        c.patroni_cases.get() > 0 && c.etcd_cases.get() > 0 && c.sentinel_cases.get() > 0,
        "the cases exercised the built-in Patroni, etcd and Sentinel answerers"
    );
    assert!(
        c.webhook_cases.get() > 0
            && c.webhook_errors.get() > 0
            && c.webhook_denials.get() > 0
            && c.degraded_by_errors.get() > 0,
        "the cases exercised the webhook, its errors, its denials and webhook-error-limit"
    );
}
