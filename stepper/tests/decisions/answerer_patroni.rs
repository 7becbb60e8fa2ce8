//! The Patroni answerer's decision (`cluster::answerer::kinds::patroni::decide`) over `GET /cluster` bodies
//! as Patroni 3.0.2 answers them (docs/answerers.md; the shapes observed on a real 3-member cluster on
//! 127.0.0.1: no `lag` on the leader, `"unknown"` for a member without a WAL position, `pause` and
//! `tags` only when set).

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::Verdict;
use sts_stepper::cluster::answerer::kinds::patroni::decide::{ClusterView, Switchover, decide};
use sts_stepper::cluster::answerer::question::Question;

const MIB: u64 = 1_048_576;

/// A question about `pods` (name, ordinal, primary) of set `pg` (3 replicas), the partition from
/// `from`.
fn question(phase: &str, pods: &[(&str, u32, bool)], from: i32) -> Question {
    let pods: Vec<Value> = pods
        .iter()
        .map(|(n, o, p)| json!({"name": n, "ordinal": o, "primary": p}))
        .collect();
    Question::read(&json!({
        "requestId": "0123456789abcdef", "phase": phase, "pods": pods,
        "updateRevision": "pg-2", "partition": {"from": from, "to": from - 1}, "replicas": 3,
        "statefulSet": {"namespace": "db", "name": "pg", "serviceName": "pg", "startOrdinal": 0}
    }))
    .expect("a question")
}

fn cluster(v: Value) -> ClusterView {
    serde_json::from_value(v).expect("Patroni's /cluster")
}

/// pg-0 leads; pg-1, pg-2 replicas at `lag1`, `lag2`.
fn healthy(lag1: Value, lag2: Value) -> ClusterView {
    cluster(json!({"members": [
        {"name": "pg-0", "role": "leader", "state": "running", "api_url": "http://127.0.0.1:8008/patroni",
         "host": "127.0.0.1", "port": 5440, "timeline": 2},
        {"name": "pg-1", "role": "replica", "state": "streaming", "host": "127.0.0.1", "port": 5441,
         "timeline": 2, "lag": lag1},
        {"name": "pg-2", "role": "replica", "state": "running", "host": "127.0.0.1", "port": 5442,
         "timeline": 2, "lag": lag2}
    ]}))
}

#[test]
fn a_replica_goes_while_the_others_stream_within_the_limit() {
    let q = question("Update", &[("pg-2", 2, false)], 3);
    match decide(&q, &healthy(json!(0), json!(5000)), MIB) {
        Verdict::Approve(why) => assert!(why.contains("leader pg-0"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_next_replica_waits_until_the_replaced_member_is_back_and_caught_up() {
    let q = question("Update", &[("pg-1", 1, false)], 2);
    for (lag2, words) in [
        (json!(4 * MIB), "pg-2 lags 4194304 bytes (limit 1048576)"),
        (json!("unknown"), "pg-2's lag is unknown"),
    ] {
        match decide(&q, &healthy(json!(0), lag2), MIB) {
            Verdict::Wait(why, _) => assert!(why.contains(words), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    // The replaced member not yet listed (its Patroni restarting) or starting on another timeline.
    let mut view = healthy(json!(0), json!(0));
    view.members.retain(|m| m.name != "pg-2");
    match decide(&q, &view, MIB) {
        Verdict::Wait(why, _) => assert!(why.contains("pg-2 is not a member"), "{why}"),
        other => panic!("{other:?}"),
    }
    let mut view = healthy(json!(0), json!(0));
    view.members[2].state = "starting".into();
    view.members[2].timeline = None;
    match decide(&q, &view, MIB) {
        Verdict::Wait(why, _) => assert!(why.contains("pg-2 is starting"), "{why}"),
        other => panic!("{other:?}"),
    }
    view.members[2].state = "running".into();
    match decide(&q, &view, MIB) {
        Verdict::Wait(why, _) => assert!(why.contains("timeline none, the leader on 2"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_leader_in_the_step_is_switched_over_to_the_best_candidate_first() {
    // The leader pg-0 is the last pod; pg-1 and pg-2 are updated already (ordinals ≥ partition 1).
    let q = question("Switchover", &[("pg-0", 0, true)], 1);
    assert_eq!(
        decide(&q, &healthy(json!(100), json!(0)), MIB),
        Verdict::Act(Switchover {
            leader: "pg-0".into(),
            candidate: "pg-2".into()
        }),
        "the least lag among the updated"
    );
    assert_eq!(
        decide(&q, &healthy(json!(0), json!(0)), MIB),
        Verdict::Act(Switchover {
            leader: "pg-0".into(),
            candidate: "pg-2".into()
        }),
        "equal lag: the highest ordinal"
    );
    // Whatever primary-selector says: Patroni's leader decides (an Update whose pod leads).
    let q = question("Update", &[("pg-0", 0, false)], 1);
    assert!(matches!(
        decide(&q, &healthy(json!(0), json!(0)), MIB),
        Verdict::Act(_)
    ));
}

/// `view` with pg-1 leading instead of pg-0 (pg-0 a replica caught up).
fn led_by_pg1(mut view: ClusterView) -> ClusterView {
    view.members[0].role = "replica".into();
    view.members[0].lag = serde_json::from_value(json!(0)).unwrap();
    view.members[1].role = "leader".into();
    view.members[1].lag = None;
    view
}

#[test]
fn a_candidate_not_updated_yet_comes_after_an_updated_one() {
    // Leader pg-1 in the step (partition 2 → 1): pg-2 is updated, pg-0 is not.
    let view = led_by_pg1(healthy(json!(0), json!(500)));
    let q = question("Switchover", &[("pg-1", 1, true)], 2);
    assert_eq!(
        decide(&q, &view, MIB),
        Verdict::Act(Switchover {
            leader: "pg-1".into(),
            candidate: "pg-2".into()
        })
    );
}

#[test]
fn no_candidate_means_wait_and_says_why() {
    let q = question("Switchover", &[("pg-0", 0, true)], 1);
    let mut view = healthy(json!(2 * MIB), json!(0));
    view.members[2].tags.nofailover = true;
    match decide(&q, &view, MIB) {
        Verdict::Wait(why, _) => {
            assert!(why.contains("no member can take over"), "{why}");
            assert!(why.contains("pg-1 lags 2097152 bytes"), "{why}");
            assert!(why.contains("pg-2 has the nofailover tag"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_switchover_question_is_approved_once_the_leader_left_the_step() {
    let q = question("Switchover", &[("pg-0", 0, true)], 1);
    let mut view = healthy(json!(0), json!(0));
    view.members[0].role = "replica".into();
    view.members[2].role = "leader".into();
    match decide(&q, &view, MIB) {
        Verdict::Approve(why) => assert!(why.contains("the leader is pg-2"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn maintenance_mode_denies_and_no_leader_waits() {
    let q = question("Update", &[("pg-2", 2, false)], 3);
    let mut view = healthy(json!(0), json!(0));
    view.pause = true;
    match decide(&q, &view, MIB) {
        Verdict::Deny(why, _) => assert!(why.contains("maintenance mode"), "{why}"),
        other => panic!("{other:?}"),
    }
    let view = cluster(json!({"members": [
        {"name": "pg-1", "role": "replica", "state": "running", "timeline": 2, "lag": 0}
    ], "pause": false}));
    match decide(&q, &view, MIB) {
        Verdict::Wait(why, _) => assert_eq!(why, "the cluster has no leader"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn in_synchronous_mode_only_the_synchronous_standby_is_a_candidate() {
    let q = question("Switchover", &[("pg-0", 0, true)], 1);
    let mut view = healthy(json!(0), json!(0));
    view.members[1].role = "sync_standby".into();
    assert_eq!(
        decide(&q, &view, MIB),
        Verdict::Act(Switchover {
            leader: "pg-0".into(),
            candidate: "pg-1".into()
        }),
        "pg-2 has the higher ordinal but is asynchronous"
    );
}

#[test]
fn the_leader_waits_for_an_updated_member_rather_than_move_to_one_not_updated() {
    // Leader pg-1 in the step (partition 2 → 1): pg-2 (updated) rejoins after its replacement, pg-0 (not
    // updated) streams. Moving to pg-0 would cost another switchover when pg-0's pod goes.
    let view = led_by_pg1(healthy(json!(0), json!(0)));
    let q = question("Switchover", &[("pg-1", 1, true)], 2);
    for (state, timeline, why) in [
        ("stopped", json!(2), "pg-2 is stopped"),
        (
            "running",
            json!(1),
            "pg-2 is on timeline 1, the leader on 2",
        ),
    ] {
        let mut v = view.clone();
        v.members[2].state = state.into();
        v.members[2].timeline = serde_json::from_value(timeline).unwrap();
        match decide(&q, &v, MIB) {
            Verdict::Wait(reason, _) => {
                assert!(
                    reason.contains("waits for a member on updateRevision"),
                    "{reason}"
                );
                assert!(reason.contains(why), "{reason}");
            }
            other => panic!("{state}: {other:?}"),
        }
    }
    // pg-2 not a member at all (its key expired while it restarted): waited for too.
    let mut gone = view.clone();
    gone.members.remove(2);
    assert!(
        matches!(decide(&q, &gone, MIB), Verdict::Wait(r, _) if r.contains("pg-2 is not a member"))
    );
    // Back and streaming: it takes over.
    assert_eq!(
        decide(&q, &view, MIB),
        Verdict::Act(Switchover {
            leader: "pg-1".into(),
            candidate: "pg-2".into()
        })
    );
    // An updated member that never will be a candidate (nofailover) is not waited for.
    let mut never = view.clone();
    never.members[2].tags.nofailover = true;
    assert_eq!(
        decide(&q, &never, MIB),
        Verdict::Act(Switchover {
            leader: "pg-1".into(),
            candidate: "pg-0".into()
        })
    );
    // The first step (nothing updated yet): a member not updated takes over at once.
    let first = question("Switchover", &[("pg-2", 2, true)], 3);
    let mut lead2 = healthy(json!(0), json!(0));
    lead2.members[0].role = "replica".into();
    lead2.members[0].lag = serde_json::from_value(json!(0)).unwrap();
    lead2.members[2].role = "leader".into();
    lead2.members[2].lag = None;
    assert!(matches!(decide(&first, &lead2, MIB), Verdict::Act(_)));
}
