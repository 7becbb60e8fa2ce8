//! The Redis Sentinel answerer's decision (`cluster::answerer::kinds::sentinel::decide`) over replies shaped as
//! Redis 7.0.15 sends them (docs/answerers.md; src/sentinel.c `addReplySentinelRedisInstance`,
//! src/server.c INFO replication; observed on a real set on 127.0.0.1): Bitnami's chart without
//! `useHostnames`, so Sentinel names pod IPs and the entry's template names pods by DNS.

use sts_stepper::cluster::answerer::Verdict;
use sts_stepper::cluster::answerer::kinds::sentinel::decide::{Action, Demote, Failover, decide};
use sts_stepper::cluster::answerer::kinds::sentinel::view::{Pod, View};

use crate::answerer_sentinel_fixture::{MIB, healthy, ip, master_info, question};

/// A change to a healthy view.
type Change = Box<dyn Fn(&mut View)>;

fn waits(v: Verdict<Action>) -> String {
    match v {
        Verdict::Wait(why, _) => why,
        other => panic!("expected Wait: {other:?}"),
    }
}

#[test]
fn a_replica_goes_while_the_others_are_linked_within_the_limit() {
    let q = question("Update", &[("redis-node-2", 2, false)], 3);
    match decide(&q, &healthy(0, [0, 30, 0]), MIB) {
        Verdict::Approve(why) => assert!(why.contains("master redis-node-0"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_next_replica_waits_naming_what_is_wrong_with_each_other_member() {
    let q = question("Update", &[("redis-node-1", 1, false)], 2);
    let cases: Vec<(&str, Change)> = vec![
        (
            "redis-node-2 lags 2097152 bytes behind the master (limit 1048576)",
            Box::new(|v| *v = healthy(0, [0, 0, 2 * MIB])),
        ),
        (
            "redis-node-2's link to the master is down",
            Box::new(|v| set(v, 2, "master_link_status", "down")),
        ),
        (
            "redis-node-2 is syncing with the master",
            Box::new(|v| set(v, 2, "master_sync_in_progress", "1")),
        ),
        (
            "redis-node-2 says role:master",
            Box::new(|v| set(v, 2, "role", "master")),
        ),
        (
            "redis-node-2 replicates from 10.42.1.99:6379, not the master redis-node-0",
            Box::new(|v| set(v, 2, "master_host", "10.42.1.99")),
        ),
        (
            "redis-node-2 does not answer: Connection refused",
            Box::new(|v| v.pods[2].info = Err("Connection refused".into())),
        ),
        (
            "redis-node-2 is not among Sentinel's replicas of mymaster",
            Box::new(|v| v.replicas.retain(|r| r["ip"] != "10.42.1.12")),
        ),
        (
            "redis-node-2 is slave,s_down,disconnected (Sentinel)",
            Box::new(|v| seen(v, "flags", "slave,s_down,disconnected")),
        ),
        (
            "Sentinel sees redis-node-2's master link err",
            Box::new(|v| seen(v, "master-link-status", "err")),
        ),
        (
            "Sentinel: NOQUORUM 1 usable Sentinels",
            Box::new(|v| {
                v.quorum = Err("NOQUORUM 1 usable Sentinels. Not enough available Sentinels to reach the specified quorum for this master".into())
            }),
        ),
        (
            "the master redis-node-0 is master,s_down (Sentinel)",
            Box::new(|v| {
                v.master.insert("flags".into(), "master,s_down".into());
            }),
        ),
        (
            "the master redis-node-0 does not answer: timed out",
            Box::new(|v| v.pods[0].info = Err("timed out".into())),
        ),
        (
            "redis-node-0 says role:slave",
            Box::new(|v| set(v, 0, "role", "slave")),
        ),
    ];
    for (words, change) in cases {
        let mut view = healthy(0, [0, 0, 0]);
        change(&mut view);
        let why = waits(decide(&q, &view, MIB));
        assert!(why.contains(words), "{words}\n→ {why}");
    }
}

fn set(v: &mut View, pod: usize, key: &str, value: &str) {
    v.pods[pod]
        .info
        .as_mut()
        .expect("info")
        .insert(key.into(), value.into());
}

/// Changes Sentinel's entry of redis-node-2 (the second replica of a healthy(0) view).
fn seen(v: &mut View, key: &str, value: &str) {
    v.replicas[1].insert(key.into(), value.into());
}

#[test]
fn the_master_in_the_step_is_failed_over_whatever_the_phase() {
    let expected = Verdict::Act(Action::Failover(Failover {
        master: "redis-node-0".into(),
        address: "redis-node-0.redis-headless.db.svc:6379".into(),
        named: format!("{}:6379", ip(0)),
        replicas: vec![
            (
                "redis-node-1".into(),
                "redis-node-1.redis-headless.db.svc:6379".into(),
            ),
            (
                "redis-node-2".into(),
                "redis-node-2.redis-headless.db.svc:6379".into(),
            ),
        ],
    }));
    let q = question("Switchover", &[("redis-node-0", 0, true)], 1);
    assert_eq!(decide(&q, &healthy(0, [0, 0, 0]), MIB), expected);
    // Without primary-selector the question is an Update: Sentinel's master decides, not a label.
    let q = question("Update", &[("redis-node-0", 0, false)], 1);
    assert_eq!(decide(&q, &healthy(0, [0, 0, 0]), MIB), expected);
}

#[test]
fn a_replica_sentinel_would_not_promote_is_no_candidate() {
    let q = question("Update", &[("redis-node-0", 0, false)], 1);
    let mut view = healthy(0, [0, 0, 0]);
    view.replicas[0].insert("slave-priority".into(), "0".into());
    match decide(&q, &view, MIB) {
        Verdict::Act(Action::Failover(f)) => assert_eq!(
            f.replicas,
            [(
                "redis-node-2".to_string(),
                "redis-node-2.redis-headless.db.svc:6379".to_string()
            )]
        ),
        other => panic!("{other:?}"),
    }
    view.replicas[1].insert("info-refresh".into(), "31000".into());
    let why = waits(decide(&q, &view, MIB));
    assert!(
        why.contains(
            "the master redis-node-0 is in the step and no replica outside it can take over"
        ),
        "{why}"
    );
    assert!(why.contains("redis-node-1 has replica-priority 0"), "{why}");
    assert!(
        why.contains("Sentinel's INFO of redis-node-2 is older than 30 s"),
        "{why}"
    );
    let mut view = healthy(0, [0, 0, 0]);
    view.replicas[0].insert("last-ok-ping-reply".into(), "5200".into());
    view.pods[2].info = Err("Connection refused".into());
    let why = waits(decide(&q, &view, MIB));
    assert!(
        why.contains("redis-node-1 answered no Sentinel ping in 5 s"),
        "{why}"
    );
    assert!(why.contains("redis-node-2 does not answer"), "{why}");
}

#[test]
fn a_step_whose_only_promotable_replica_is_in_it_waits() {
    // step 2 → 0 holds redis-node-1 and the master redis-node-0; redis-node-2 lags.
    let q = question(
        "Update",
        &[("redis-node-1", 1, false), ("redis-node-0", 0, false)],
        2,
    );
    let why = waits(decide(&q, &healthy(0, [0, 0, 3 * MIB]), MIB));
    assert!(why.contains("redis-node-2 lags 3145728 bytes"), "{why}");
    assert!(
        !why.contains("redis-node-1"),
        "a pod of the step is no candidate: {why}"
    );
}

#[test]
fn a_failover_in_progress_or_sentinels_disagreeing_wait() {
    let q = question("Update", &[("redis-node-2", 2, false)], 3);
    let mut view = healthy(0, [0, 0, 0]);
    view.master.insert(
        "flags".into(),
        "master,failover_in_progress,force_failover".into(),
    );
    let why = waits(decide(&q, &view, MIB));
    assert!(why.contains("a failover of mymaster is in progress (Sentinel's flags master,failover_in_progress,force_failover)"), "{why}");
    let mut view = healthy(0, [0, 0, 0]);
    view.named[1].1 = Some("10.42.1.11:6379".into());
    let why = waits(decide(&q, &view, MIB));
    assert!(
        why.contains("the Sentinels disagree on the master of mymaster"),
        "{why}"
    );
    assert!(
        why.contains("redis-node-1.redis-headless.db.svc:26379 names 10.42.1.11:6379"),
        "{why}"
    );
}

#[test]
fn an_old_master_still_acting_as_one_is_made_a_replica_then_its_pod_approved() {
    // Sentinel already names redis-node-2; the old master redis-node-0 still says role:master.
    let q = question("Switchover", &[("redis-node-0", 0, true)], 1);
    let mut view = healthy(2, [0, 0, 0]);
    view.pods[0].info = Ok(master_info());
    let demote = Verdict::Act(Action::Demote(Demote {
        pod: "redis-node-0".into(),
        address: "redis-node-0.redis-headless.db.svc:6379".into(),
        master: "redis-node-2".into(),
        master_address: "10.42.1.12:6379".into(),
    }));
    assert_eq!(decide(&q, &view, MIB), demote);
    // The same for an Update (no primary-selector) after the failover.
    let update = question("Update", &[("redis-node-0", 0, false)], 1);
    assert_eq!(decide(&update, &view, MIB), demote);
    // A pod outside the step saying role:master is Sentinel's to fix: the step waits.
    let other = question("Update", &[("redis-node-1", 1, false)], 2);
    let why = waits(decide(&other, &view, MIB));
    assert!(why.contains("redis-node-0 says role:master"), "{why}");
    let view = healthy(2, [0, 0, 0]);
    match decide(&q, &view, MIB) {
        Verdict::Approve(why) => assert!(
            why.contains("the master of mymaster is redis-node-2, not among redis-node-0"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(decide(&update, &view, MIB), Verdict::Approve(_)));
}

#[test]
fn a_master_that_is_no_pod_of_the_set_is_denied() {
    let q = question("Update", &[("redis-node-2", 2, false)], 3);
    let mut view = healthy(0, [0, 0, 0]);
    for (_, m) in &mut view.named {
        *m = Some("10.42.7.7:6379".into());
    }
    match decide(&q, &view, MIB) {
        Verdict::Deny(why, 60) => {
            assert!(
                why.contains(
                    "Sentinel's master of mymaster, 10.42.7.7:6379, is no pod of redis-node"
                ),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_instance_is_its_pod_by_address_resolved_address_or_announced_hostname() {
    let pod = Pod {
        name: "redis-node-1".into(),
        ordinal: 1,
        address: "redis-node-1.redis-headless.db.svc:6379".into(),
        resolved: vec!["10.42.1.11:6379".into()],
        info: Err("not read".into()),
    };
    assert!(pod.names("redis-node-1.redis-headless.db.svc:6379"));
    assert!(pod.names("10.42.1.11:6379"), "a resolved address");
    // Bitnami's useHostnames: Sentinel announces the full name, cluster domain and all.
    assert!(pod.names("redis-node-1.redis-headless.db.svc.cluster.local:6379"));
    assert!(!pod.names("10.42.1.11:6380"), "another port");
    assert!(
        !pod.names("redis-node-1.redis-headless.db.svc.cluster.local:26379"),
        "the Sentinel's port"
    );
    assert!(!pod.names("redis-node-10.redis-headless.db.svc:6379"));
    let local = Pod {
        address: "127.0.0.1:7001".into(),
        resolved: vec![],
        ..pod
    };
    assert!(local.names("127.0.0.1:7001") && !local.names("127.0.0.1:7002"));
}

#[test]
fn the_master_waits_for_a_replica_on_update_revision_to_catch_up_before_the_failover() {
    // Master redis-node-1 in the step (partition 2 → 1): redis-node-2 is updated and still syncing after
    // its replacement, redis-node-0 (not updated) is healthy. Sentinel picks the replica it promotes:
    // failing over now could promote redis-node-0, whose own turn would need another failover.
    let q = question("Switchover", &[("redis-node-1", 1, true)], 2);
    let mut view = healthy(1, [0, 0, 0]);
    set(&mut view, 2, "master_sync_in_progress", "1");
    let why = waits(decide(&q, &view, MIB));
    assert!(
        why.starts_with(
            "the master redis-node-1 waits for a replica on updateRevision to catch up before the failover"
        ),
        "{why}"
    );
    assert!(
        why.contains("redis-node-2 is syncing with the master"),
        "{why}"
    );
    // Caught up: the failover is asked for.
    assert!(matches!(
        decide(&q, &healthy(1, [0, 0, 0]), MIB),
        Verdict::Act(Action::Failover(_))
    ));
    // The first step (nothing updated yet): failed over at once, whatever the others' state.
    let first = question("Switchover", &[("redis-node-2", 2, true)], 3);
    let mut lagging = healthy(2, [0, 0, 0]);
    set(&mut lagging, 0, "master_sync_in_progress", "1");
    assert!(matches!(
        decide(&first, &lagging, MIB),
        Verdict::Act(Action::Failover(_))
    ));
}
