//! Leader election on a Lease, on tokio's virtual clock, against an in-memory API server that keeps
//! one Lease with `resourceVersion` preconditions (409 on a stale PUT) and can cut a candidate off
//! (its requests never answer). Two candidates, one leader; a cut-off leader stops before its lease
//! expires and the other takes over only after; 409s on renew; resigning hands over at once.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::support::lease_server::{LEASE, Logged, Shared, candidate};
use http::Method;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use serde_json::{Value, json};
use sts_stepper::leader::{LeaderConfig, Leadership, LeaseDecision, decide, first_record};
use tokio::time::{Instant, sleep};
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// The sampling step of the tests' observations.
const STEP: Duration = Duration::from_millis(10);

fn log_of(store: &Shared, who: &str, method: &Method) -> Vec<Logged> {
    let store = store.lock().expect("store");
    store
        .log
        .iter()
        .filter(|l| l.who == who && l.method == method)
        .cloned()
        .collect()
}

fn spec_of(store: &Shared) -> LeaseSpec {
    store.lock().expect("store").spec()
}

/// Samples every [`STEP`] for `span`, asserting that never both `a` and `b` may write; returns when
/// each first changed its answer (virtual instants).
async fn observe(
    a: &Leadership,
    b: &Leadership,
    span: Duration,
) -> (Option<Instant>, Option<Instant>) {
    let (a0, b0) = (a.is_leader(), b.is_leader());
    let (mut a_changed, mut b_changed) = (None, None);
    let end = Instant::now() + span;
    while Instant::now() < end {
        sleep(STEP).await;
        let (la, lb) = (a.is_leader(), b.is_leader());
        assert!(!(la && lb), "two leaders at {:?}", Instant::now());
        if la != a0 && a_changed.is_none() {
            a_changed = Some(Instant::now());
        }
        if lb != b0 && b_changed.is_none() {
            b_changed = Some(Instant::now());
        }
    }
    (a_changed, b_changed)
}

#[tokio::test(start_paused = true)]
async fn of_two_candidates_one_leads_and_the_other_only_reads() {
    let store = Shared::default();
    let (a, _) = candidate(&store, "a");
    sleep(STEP).await;
    assert!(
        a.is_leader(),
        "the first candidate creates the Lease and leads"
    );
    let (b, _) = candidate(&store, "b");
    let (a_changed, b_changed) = observe(&a, &b, Duration::from_secs(60)).await;
    assert_eq!((a_changed, b_changed), (None, None), "a leads throughout");
    let spec = spec_of(&store);
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_transitions, Some(0));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert!(
        log_of(&store, "b", &Method::PUT).is_empty(),
        "b never writes"
    );
    assert!(
        log_of(&store, "b", &Method::GET).len() >= 25,
        "b reads every 2s"
    );
    let renewals = log_of(&store, "a", &Method::PUT);
    assert!(
        (28..=32).contains(&renewals.len()),
        "a renews every 2s: {}",
        renewals.len()
    );
    assert_eq!((a.gauge().get(), b.gauge().get()), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_cut_off_leader_stops_before_its_lease_expires_and_the_other_takes_over_after() {
    let store = Shared::default();
    let (a, a_cut) = candidate(&store, "a");
    sleep(STEP).await;
    let (b, _) = candidate(&store, "b");
    let mut a_flag = a.subscribe();
    sleep(Duration::from_secs(9)).await;
    assert!(*a_flag.borrow_and_update());
    a_cut.store(true, Ordering::SeqCst);
    let last_renewal = log_of(&store, "a", &Method::PUT)
        .iter()
        .rfind(|l| l.status == 200)
        .expect("a renewed")
        .at;
    let (a_stopped, b_started) = observe(&a, &b, Duration::from_secs(40)).await;
    let (a_stopped, b_started) = (
        a_stopped.expect("a stops"),
        b_started.expect("b takes over"),
    );
    // a stops writing within the renew deadline of its last successful renewal (< lease duration)…
    assert!(
        a_stopped - last_renewal <= RENEW_DEADLINE + STEP,
        "{:?}",
        a_stopped - last_renewal
    );
    assert!(a_stopped - last_renewal < LEASE_DURATION);
    // …and b takes the Lease no earlier than a lease duration after it.
    assert!(
        b_started - last_renewal >= LEASE_DURATION,
        "{:?}",
        b_started - last_renewal
    );
    assert!(a_stopped < b_started);
    assert!(a_flag.has_changed().expect("sender alive"));
    assert!(!*a_flag.borrow_and_update(), "the channel says false too");
    assert_eq!((a.gauge().get(), b.gauge().get()), (0, 1));
    let spec = spec_of(&store);
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(spec.lease_transitions, Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_409_on_renew_because_another_took_the_lease_stops_the_leader_at_once() {
    let store = Shared::default();
    let (a, _) = candidate(&store, "a");
    sleep(Duration::from_secs(3)).await;
    assert!(a.is_leader());
    store.lock().expect("store").before_next_put = Some(Box::new(|lease: &mut Value| {
        lease["spec"]["holderIdentity"] = json!("c");
        lease["spec"]["leaseTransitions"] = json!(1);
    }));
    while store.lock().expect("store").before_next_put.is_some() {
        sleep(STEP).await;
    }
    let conflict = log_of(&store, "a", &Method::PUT)
        .iter()
        .rfind(|l| l.status == 409)
        .expect("a's renewal got a 409")
        .at;
    assert!(!a.is_leader(), "a re-reads at once, sees c and stops");
    assert_eq!(a.gauge().get(), 0);
    let puts_before = log_of(&store, "a", &Method::PUT).len();
    sleep(LEASE_DURATION - Duration::from_secs(1)).await;
    assert!(!a.is_leader(), "c's lease has not expired yet");
    assert_eq!(
        log_of(&store, "a", &Method::PUT).len(),
        puts_before,
        "a only reads"
    );
    // c never renews: a lease duration after a saw c's record, a takes the Lease back.
    sleep(Duration::from_secs(4)).await;
    assert!(a.is_leader());
    let spec = spec_of(&store);
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_transitions, Some(2));
    let retaken = log_of(&store, "a", &Method::PUT)
        .iter()
        .find(|l| l.status == 200 && l.at > conflict)
        .expect("a took the Lease back")
        .at;
    assert!(
        retaken - conflict >= LEASE_DURATION,
        "{:?}",
        retaken - conflict
    );
}

#[tokio::test(start_paused = true)]
async fn a_409_on_renew_from_an_unrelated_change_is_retried_and_the_leader_stays() {
    let store = Shared::default();
    let (a, _) = candidate(&store, "a");
    let (b, _) = candidate(&store, "b");
    sleep(Duration::from_secs(3)).await;
    let (first, other) = if a.is_leader() { (&a, &b) } else { (&b, &a) };
    assert!(first.is_leader() && !other.is_leader());
    store.lock().expect("store").before_next_put = Some(Box::new(|lease: &mut Value| {
        lease["metadata"]["labels"] = json!({"team": "db"});
    }));
    assert_eq!(
        observe(first, other, Duration::from_secs(20)).await,
        (None, None)
    );
    let log = store.lock().expect("store").log.clone();
    let conflict = log
        .iter()
        .position(|l| l.method == Method::PUT && l.status == 409)
        .expect("a 409");
    assert!(
        log[conflict + 1..]
            .iter()
            .any(|l| l.method == Method::PUT && l.status == 200 && l.who == log[conflict].who),
        "the leader renewed after the 409"
    );
    assert_eq!(spec_of(&store).lease_transitions, Some(0));
}

#[tokio::test(start_paused = true)]
async fn resigning_stops_writing_at_once_and_hands_the_lease_over_without_waiting_for_expiry() {
    let store = Shared::default();
    let (a, _) = candidate(&store, "a");
    sleep(STEP).await;
    let (b, _) = candidate(&store, "b");
    sleep(Duration::from_secs(5)).await;
    a.resign();
    assert!(!a.is_leader(), "no write after resign returns");
    sleep(STEP).await;
    assert!(!*a.subscribe().borrow());
    assert_eq!(a.gauge().get(), 0);
    let released = spec_of(&store);
    assert_eq!(released.holder_identity, None);
    assert_eq!(released.lease_duration_seconds, Some(1));
    let (_, b_started) = observe(&a, &b, Duration::from_secs(6)).await;
    assert!(
        b_started.is_some(),
        "b leads within a retry period and a second"
    );
    assert_eq!(spec_of(&store).holder_identity.as_deref(), Some("b"));
}

#[test]
fn the_decision_follows_client_go() {
    let config = LeaderConfig::new(LEASE, "a");
    let t0: jiff::Timestamp = "2026-11-23T10:00:00Z".parse().expect("time");
    let t1: jiff::Timestamp = "2026-11-23T10:00:20Z".parse().expect("time");
    let theirs = LeaseSpec {
        holder_identity: Some("b".into()),
        lease_transitions: Some(3),
        ..first_record(&LeaderConfig::new(LEASE, "b"), t0)
    };
    assert_eq!(
        decide(&theirs, Duration::from_secs(14), &config, t1),
        LeaseDecision::HeldBy("b".into())
    );
    let LeaseDecision::Write(taken) = decide(&theirs, LEASE_DURATION, &config, t1) else {
        panic!("an expired lease is taken");
    };
    assert_eq!(taken.holder_identity.as_deref(), Some("a"));
    assert_eq!(taken.lease_transitions, Some(4));
    assert_eq!(taken.acquire_time, Some(MicroTime(t1)));
    let mine = first_record(&config, t0);
    let LeaseDecision::Write(renewed) = decide(&mine, Duration::ZERO, &config, t1) else {
        panic!("the holder renews");
    };
    assert_eq!(
        renewed.acquire_time,
        Some(MicroTime(t0)),
        "renewing keeps acquireTime"
    );
    assert_eq!(renewed.renew_time, Some(MicroTime(t1)));
    assert_eq!(renewed.lease_transitions, Some(0));
    let released = LeaseSpec {
        holder_identity: None,
        ..theirs
    };
    assert!(matches!(
        decide(&released, Duration::ZERO, &config, t1),
        LeaseDecision::Write(LeaseSpec {
            lease_transitions: Some(4),
            ..
        })
    ));
}

#[test]
fn settings_are_checked_as_client_go_does() {
    let ok = LeaderConfig::new(LEASE, "a");
    assert_eq!(ok.validate(), Ok(()));
    let cases = [
        (
            LeaderConfig {
                identity: String::new(),
                ..ok.clone()
            },
            "identity",
        ),
        (
            LeaderConfig {
                lease_name: String::new(),
                ..ok.clone()
            },
            "lease name",
        ),
        (
            LeaderConfig {
                lease_duration: Duration::from_millis(1500),
                ..ok.clone()
            },
            "lease duration",
        ),
        (
            LeaderConfig {
                renew_deadline: LEASE_DURATION,
                ..ok.clone()
            },
            "renew deadline",
        ),
        (
            LeaderConfig {
                retry_period: RENEW_DEADLINE,
                ..ok.clone()
            },
            "retry period",
        ),
    ];
    for (config, field) in cases {
        let err = config.validate().expect_err(field);
        assert!(err.contains(field), "{err}");
    }
}

#[test]
fn a_sole_replica_always_leads() {
    let sole = Leadership::sole();
    assert!(sole.is_leader());
    assert!(*sole.subscribe().borrow());
    assert_eq!(sole.gauge().get(), 1);
}
