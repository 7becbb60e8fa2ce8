//! The etcd answerer's decision (`cluster::answerer::kinds::etcd::decide`) over etcd's gRPC-gateway JSON as
//! etcd 3.4.23 answers it (docs/answerers.md; the shapes observed on a real 3-member cluster on
//! 127.0.0.1: 64-bit numbers as decimal strings, `isLearner`, `errors` and `alarms` only when set).

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::Verdict;
use sts_stepper::cluster::answerer::kinds::etcd::decide::{
    ClusterView, MoveLeader, decide, pod_of,
};
use sts_stepper::cluster::answerer::kinds::etcd::entry::DEFAULT_MAX_APPLIED_GAP;
use sts_stepper::cluster::answerer::kinds::etcd::gateway::{Alarms, MemberList, Status};
use sts_stepper::cluster::answerer::question::Question;

const GAP: u64 = DEFAULT_MAX_APPLIED_GAP;
/// The members' IDs as etcd 3.4.23 made them (decimal strings on the wire).
pub(crate) const IDS: [&str; 3] = [
    "13925411541483051029",
    "11051272983670473691",
    "5123337616486821027",
];

pub(crate) fn id(i: usize) -> u64 {
    IDS[i].parse().expect("an ID")
}

/// A question about `pods` (name, ordinal) of set `etcd` (3 replicas), the partition from `from`.
fn question(phase: &str, pods: &[(&str, u32)], from: i32) -> Question {
    let pods: Vec<Value> = pods
        .iter()
        .map(|(n, o)| json!({"name": n, "ordinal": o, "primary": false}))
        .collect();
    Question::read(&json!({
        "requestId": "0123456789abcdef", "phase": phase, "pods": pods,
        "updateRevision": "etcd-2", "partition": {"from": from, "to": from - 1}, "replicas": 3,
        "statefulSet": {"namespace": "db", "name": "etcd", "serviceName": "etcd", "startOrdinal": 0}
    }))
    .expect("a question")
}

/// `POST /v3/cluster/member/list` of three started voters, as 3.4.23 answers it (no `isLearner`).
fn member_list() -> Value {
    json!({"header": {"cluster_id": "2331266132969390050", "member_id": IDS[0], "raft_term": "2"},
           "members": (0..3).map(|i| json!({
               "ID": IDS[i], "name": format!("etcd-{i}"),
               "peerURLs": [format!("http://etcd-{i}.etcd:2380")],
               "clientURLs": [format!("http://etcd-{i}.etcd:2379")]
           })).collect::<Vec<_>>()})
}

/// Member `i`'s `POST /v3/maintenance/status`: following `leader`, in term 2, applied up to `applied`
/// of the commit index 8000.
pub(crate) fn status(i: usize, leader: usize, applied: u64) -> Value {
    json!({"header": {"cluster_id": "2331266132969390050", "member_id": IDS[i], "revision": "1",
                      "raft_term": "2"},
           "version": "3.4.23", "dbSize": "24576", "leader": IDS[leader], "raftIndex": "8000",
           "raftTerm": "2", "raftAppliedIndex": applied.to_string(), "dbSizeInUse": "16384"})
}

pub(crate) fn parsed<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("etcd's JSON")
}

/// Three members, `leader` leading, each caught up; no alarm (`{}`).
fn healthy(leader: usize) -> ClusterView {
    let list: MemberList = parsed(member_list());
    let alarms: Alarms = parsed(json!({"header": {}}));
    ClusterView {
        statuses: (0..3)
            .map(|i| (id(i), Ok(parsed(status(i, leader, 8000)))))
            .collect(),
        members: list.members,
        alarms: Ok(alarms.alarms),
    }
}

fn wait(v: Verdict<MoveLeader>) -> String {
    match v {
        Verdict::Wait(why, _) => why,
        other => panic!("expected Wait: {other:?}"),
    }
}

#[test]
fn a_followers_pod_goes_while_every_other_member_is_healthy() {
    let q = question("Update", &[("etcd-2", 2)], 3);
    match decide(&q, &healthy(0), GAP) {
        Verdict::Approve(why) => {
            assert!(why.contains("leader etcd-0"), "{why}");
            assert!(
                why.contains("2 of 3 voters healthy without it (quorum 2)"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_next_pod_waits_until_the_replaced_member_is_back_and_caught_up() {
    let q = question("Update", &[("etcd-1", 1)], 2);
    let mut view = healthy(0);
    view.statuses
        .insert(id(2), Err("connection refused".into()));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.contains("etcd-2 does not answer: connection refused"),
        "{why}"
    );
    assert!(
        why.contains("without etcd-1 1 of 3 voting members would be healthy, and etcd needs 2"),
        "{why}"
    );
    for (body, words) in [
        (
            status(2, 0, 6999),
            "etcd-2 has applied 6999 of the leader's 8000 raft entries, 1001 behind (limit 1000)",
        ),
        (
            status(2, 1, 8000),
            &format!("etcd-2 follows {:x}, not the leader etcd-0", id(1)),
        ),
        (
            status(1, 0, 8000),
            &format!(
                "etcd-2's address answers as member {:x}, not {:x}",
                id(1),
                id(2)
            ),
        ),
    ] {
        let mut view = healthy(0);
        view.statuses.insert(id(2), Ok(parsed(body)));
        let why = wait(decide(&q, &view, GAP));
        assert!(why.contains(words), "{why}");
    }
    let mut view = healthy(0);
    let mut s: Status = parsed(status(2, 0, 8000));
    s.raft_term = 1;
    s.errors = vec![format!("memberID:{} alarm:NOSPACE ", id(2))];
    view.statuses.insert(id(2), Ok(s.clone()));
    assert!(wait(decide(&q, &view, GAP)).contains("etcd-2 reports: memberID:"));
    s.errors.clear();
    view.statuses.insert(id(2), Ok(s));
    assert!(wait(decide(&q, &view, GAP)).contains("etcd-2 is in raft term 1, the leader in 2"));
    // Within the limit it may go; the limit is the entry's.
    let mut view = healthy(0);
    view.statuses.insert(id(2), Ok(parsed(status(2, 0, 7000))));
    assert!(matches!(decide(&q, &view, GAP), Verdict::Approve(_)));
    assert!(matches!(decide(&q, &view, 999), Verdict::Wait(..)));
    // Its member removed (the pod's etcd not yet re-added).
    let mut view = healthy(0);
    view.members.retain(|m| m.id != id(2));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.contains("etcd-2 is not a member of the etcd cluster"),
        "{why}"
    );
}

#[test]
fn taking_pods_that_would_break_the_quorum_waits_even_when_every_member_is_healthy() {
    let q = question("Update", &[("etcd-2", 2), ("etcd-1", 1)], 3);
    let why = wait(decide(&q, &healthy(0), GAP));
    assert!(
        why.contains(
            "without etcd-2, etcd-1 1 of 3 voting members would be healthy, and etcd needs 2"
        ),
        "{why}"
    );
}

#[test]
fn learners_are_not_voters() {
    // Two voters and a healthy learner: without etcd-1 one voter of two is left, below the quorum 2.
    let mut view = healthy(0);
    view.members[2].is_learner = true;
    let q = question("Update", &[("etcd-1", 1)], 2);
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.contains("1 of 2 voting members would be healthy, and etcd needs 2"),
        "{why}"
    );
    // Nor a candidate for leadership.
    let q = question("Update", &[("etcd-0", 0)], 1);
    view.statuses.insert(id(1), Ok(parsed(status(1, 0, 10))));
    let why = wait(decide(&q, &view, GAP));
    assert!(why.contains("etcd-2 is a learner"), "{why}");
    assert!(
        why.contains("etcd-1 has applied 10 of the leader's 8000"),
        "{why}"
    );
}

#[test]
fn an_alarm_denies_whatever_the_step() {
    let alarms: Alarms = parsed(json!({"alarms": [{"memberID": IDS[1], "alarm": "NOSPACE"}]}));
    for (phase, pods) in [("Update", [("etcd-2", 2)]), ("Update", [("etcd-0", 0)])] {
        let mut view = healthy(0);
        view.alarms = Ok(alarms.alarms.clone());
        match decide(&question(phase, &pods, 3), &view, GAP) {
            Verdict::Deny(why, after) => {
                assert!(why.contains("alarm NOSPACE on etcd-1"), "{why}");
                assert!(why.contains("a person must act"), "{why}");
                assert!(after >= 30, "{after}");
            }
            other => panic!("{other:?}"),
        }
    }
    // Alarms that cannot be read (the alarm list is a raft request: no quorum, no answer) are no
    // approval.
    let mut view = healthy(0);
    view.alarms = Err("HTTP 503".into());
    let why = wait(decide(&question("Update", &[("etcd-2", 2)], 3), &view, GAP));
    assert!(why.contains("alarms could not be read: HTTP 503"), "{why}");
}

#[test]
fn no_leader_named_by_a_quorum_waits_and_says_what_each_said() {
    let q = question("Update", &[("etcd-2", 2)], 3);
    let mut view = healthy(0);
    view.statuses.insert(
        id(0),
        Ok(parsed(json!({"header": {"member_id": IDS[0]},
                                       "errors": ["etcdserver: no leader"]}))),
    );
    view.statuses
        .insert(id(1), Err("connection refused".into()));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.starts_with("no leader named by a quorum (2 of 3 voting members)"),
        "{why}"
    );
    assert!(why.contains("etcd-0 has no leader"), "{why}");
    assert!(
        why.contains("etcd-1 does not answer: connection refused"),
        "{why}"
    );
}

#[test]
fn the_leaders_pod_in_an_update_moves_leadership_to_the_best_voter_first() {
    // etcd has no role label: without primary-selector every question is an Update, and the answerer
    // finds the leader itself. etcd-0 leads and is the last pod; etcd-1, etcd-2 are updated.
    let q = question("Update", &[("etcd-0", 0)], 1);
    let act = |view: &ClusterView| match decide(&q, view, GAP) {
        Verdict::Act(m) => m,
        other => panic!("{other:?}"),
    };
    let m = act(&healthy(0));
    assert_eq!(
        m,
        MoveLeader {
            leader: "etcd-0".into(),
            leader_ordinal: 0,
            target: "etcd-2".into(),
            target_id: id(2)
        },
        "equal gaps: the highest ordinal"
    );
    let mut view = healthy(0);
    view.statuses.insert(id(2), Ok(parsed(status(2, 0, 7990))));
    assert_eq!(act(&view).target, "etcd-1", "the least gap");
    // Leader etcd-1 in the step (partition 2 → 1): etcd-2 is updated, etcd-0 is not, and is preferred
    // last even with the smaller gap.
    let q = question("Switchover", &[("etcd-1", 1)], 2);
    let mut view = healthy(1);
    view.statuses.insert(id(2), Ok(parsed(status(2, 1, 7990))));
    match decide(&q, &view, GAP) {
        Verdict::Act(m) => assert_eq!((m.leader.as_str(), m.target.as_str()), ("etcd-1", "etcd-2")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_voter_to_take_over_means_wait_and_says_why() {
    let q = question("Update", &[("etcd-0", 0)], 1);
    let mut view = healthy(0);
    view.statuses.insert(id(1), Err("timeout".into()));
    view.statuses.insert(id(2), Ok(parsed(status(2, 0, 10))));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.starts_with("the etcd leader etcd-0 is in the step and no voting member can take over"),
        "{why}"
    );
    assert!(why.contains("etcd-1 does not answer: timeout"), "{why}");
    assert!(
        why.contains("etcd-2 has applied 10 of the leader's 8000"),
        "{why}"
    );
}

#[test]
fn a_switchover_question_is_approved_once_the_leader_left_the_step() {
    let q = question("Switchover", &[("etcd-0", 0)], 1);
    match decide(&q, &healthy(2), GAP) {
        Verdict::Approve(why) => assert!(why.contains("the etcd leader is etcd-2"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_member_is_its_pod_by_name_else_by_its_urls_host() {
    let q = question("Update", &[("etcd-2", 2)], 3);
    let list: MemberList = parsed(json!({"members": [
        {"ID": "1", "name": "etcd-1"},
        {"ID": "2", "peerURLs": ["https://etcd-2.etcd.db.svc:2380"]},
        {"ID": "3", "name": "outsider", "clientURLs": ["http://10.0.0.9:2379"]}
    ]}));
    let pods: Vec<_> = list.members.iter().map(|m| pod_of(&q, m)).collect();
    assert_eq!(
        pods,
        [
            Some((1, "etcd-1".to_string())),
            Some((2, "etcd-2".to_string())),
            None
        ]
    );
    // A voter behind no pod of the set cannot be read: it is no healthy member.
    let mut view = healthy(0);
    view.members.push(list.members[2].clone());
    view.statuses.insert(3, Err("behind no pod of etcd".into()));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.contains("outsider does not answer: behind no pod of etcd"),
        "{why}"
    );
}

#[test]
fn leadership_waits_for_an_updated_voter_rather_than_move_to_one_not_updated() {
    // Leader etcd-1 in the step (partition 2 → 1): etcd-2 (updated) restarts after its replacement,
    // etcd-0 (not updated) is healthy. Moving to etcd-0 would cost another move when its pod goes.
    let q = question("Switchover", &[("etcd-1", 1)], 2);
    let mut view = healthy(1);
    view.statuses
        .insert(id(2), Err("connection refused".into()));
    let why = wait(decide(&q, &view, GAP));
    assert!(
        why.starts_with("the etcd leader etcd-1 waits for a member on updateRevision to take over"),
        "{why}"
    );
    assert!(
        why.contains("etcd-2 does not answer: connection refused"),
        "{why}"
    );
    // Back and caught up: leadership moves to it.
    view.statuses.insert(id(2), Ok(parsed(status(2, 1, 8000))));
    match decide(&q, &view, GAP) {
        Verdict::Act(m) => assert_eq!(m.target, "etcd-2"),
        other => panic!("{other:?}"),
    }
    // The first step (nothing updated yet): a voter not updated takes over at once.
    let first = question("Switchover", &[("etcd-2", 2)], 3);
    match decide(&first, &healthy(2), GAP) {
        Verdict::Act(m) => assert_eq!(m.target, "etcd-1"),
        other => panic!("{other:?}"),
    }
}
