//! What the etcd answerer reads besides the cluster's state: etcd's gRPC-gateway JSON itself (64-bit
//! numbers as decimal strings, fields at their default left out, the error body `{"error", "message",
//! "code"}` of 3.4 and `{"code", "message", "details"}` of 3.6), what MoveLeader's answer means, and the
//! `etcd:` entry of `--answerer-config` (and the one docs/answerers.md shows).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::Acted;
use sts_stepper::cluster::answerer::file::parse;
use sts_stepper::cluster::answerer::kinds::etcd::decide::MoveLeader;
use sts_stepper::cluster::answerer::kinds::etcd::entry::DEFAULT_MOVE_LEADER_TIMEOUT_SECONDS;
use sts_stepper::cluster::answerer::kinds::etcd::gateway::{
    Alarms, CallError, GatewayError, MemberList, Status,
};
use sts_stepper::cluster::answerer::kinds::etcd::moved::moved;

use crate::answerer_etcd::{IDS, id, parsed, status};

#[test]
fn the_gateway_json_is_read_with_numbers_as_strings_and_defaults_left_out() {
    let s: Status = parsed(status(1, 0, 7990));
    assert_eq!(
        (
            s.header.member_id,
            s.leader,
            s.raft_index,
            s.raft_term,
            s.raft_applied_index
        ),
        (id(1), id(0), 8000, 2, 7990)
    );
    assert!(s.errors.is_empty() && !s.is_learner);
    // A member without a leader leaves `leader` out and says so in `errors`.
    let s: Status = parsed(json!({"header": {"member_id": "7"}, "raftIndex": "3",
                                 "errors": ["etcdserver: no leader"], "isLearner": true}));
    assert_eq!((s.leader, s.raft_applied_index), (0, 0));
    assert_eq!(s.errors, ["etcdserver: no leader"]);
    assert!(s.is_learner);
    // A learner, and a member added but not started (no name, no client URL).
    let list: MemberList = parsed(json!({"members": [
        {"ID": "10501334649042878790", "name": "etcd-3", "peerURLs": ["http://etcd-3.etcd:2380"],
         "clientURLs": ["http://etcd-3.etcd:2379"], "isLearner": true},
        {"ID": "17", "peerURLs": ["http://etcd-4.etcd:2380"]}
    ]}));
    assert_eq!(list.members[0].id, 10_501_334_649_042_878_790);
    assert!(list.members[0].is_learner);
    assert_eq!(
        (
            list.members[1].name.as_str(),
            list.members[1].client_urls.len()
        ),
        ("", 0)
    );
    let alarms: Alarms = parsed(json!({"alarms": [{"memberID": IDS[2], "alarm": "NOSPACE"},
                                                  {"memberID": IDS[0], "alarm": 2}]}));
    assert_eq!(alarms.alarms[0].member_id, id(2));
    assert_eq!(
        (
            alarms.alarms[0].alarm.as_str(),
            alarms.alarms[1].alarm.as_str()
        ),
        ("NOSPACE", "CORRUPT")
    );
    assert!(parsed::<Alarms>(json!({})).alarms.is_empty());
    // The two generations of the error body decide the same.
    let v1: GatewayError = parsed(json!({"error": "etcdserver: not leader",
                                         "message": "etcdserver: not leader", "code": 9}));
    let v2: GatewayError = parsed(
        json!({"code": 9, "message": "etcdserver: bad leader transferee",
                                         "details": []}),
    );
    assert_eq!((v1.code, v1.words()), (9, "etcdserver: not leader"));
    assert_eq!(
        (v2.code, v2.words()),
        (9, "etcdserver: bad leader transferee")
    );
    let e =
        serde_json::from_value::<Status>(json!({"leader": "twelve"})).expect_err("not a number");
    assert!(
        e.to_string()
            .contains("\"twelve\": expected a 64-bit unsigned integer"),
        "{e}"
    );
}

#[test]
fn what_etcds_answer_to_move_leader_means() {
    let m = MoveLeader {
        leader: "etcd-0".into(),
        leader_ordinal: 0,
        target: "etcd-2".into(),
        target_id: id(2),
    };
    let etcd = |status: u16, body: Value| Err(CallError::Etcd(status, parsed(body)));
    match moved(&m, Ok(())) {
        Acted::Started(why) => assert!(why.contains("etcd-0 → etcd-2 moved; confirming"), "{why}"),
        other => panic!("{other:?}"),
    }
    let not_leader =
        json!({"error": "etcdserver: not leader", "message": "etcdserver: not leader", "code": 9});
    match moved(&m, etcd(412, not_leader)) {
        Acted::Started(why) => assert!(why.contains("etcd-0 is no longer the leader"), "{why}"),
        other => panic!("{other:?}"),
    }
    for (status, body) in [
        (
            412,
            json!({"error": "etcdserver: bad leader transferee", "message": "etcdserver: bad leader transferee", "code": 9}),
        ),
        (
            400,
            json!({"code": 9, "message": "etcdserver: bad leader transferee", "details": []}),
        ),
    ] {
        match moved(&m, etcd(status, body)) {
            Acted::Refused(why) => assert!(
                why.contains(&format!(
                    "HTTP {status}: gRPC code 9: etcdserver: bad leader transferee"
                )),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
    }
    match moved(
        &m,
        etcd(
            401,
            json!({"code": 16, "message": "etcdserver: invalid auth token"}),
        ),
    ) {
        Acted::Failed(why) => assert!(why.contains("the entry's credentials"), "{why}"),
        other => panic!("{other:?}"),
    }
    let slow = json!({"code": 2, "message": "etcdserver: request timed out, leader transfer took too long"});
    assert!(matches!(moved(&m, etcd(500, slow)), Acted::Failed(_)));
    assert!(matches!(
        moved(&m, Err(CallError::NoAnswer("connection refused".into()))),
        Acted::Failed(_)
    ));
}

const HEAD: &str = "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\n";

#[test]
fn an_etcd_entry_parses_with_its_defaults() {
    let text = format!(
        "{HEAD}answerers:\n  - name: etcd-main\n    serves: [\"db/*\"]\n    timeoutSeconds: 2\n    etcd:\n      address: \"https://{{pod}}.{{service}}.{{namespace}}.svc:2379\"\n      members: {{etcd-0: \"http://127.0.0.1:2379\"}}\n"
    );
    let got = parse(&text).expect("valid");
    let (name, builtin) = (&got[0].name, &got[0].builtin);
    assert_eq!((name.as_str(), builtin.kind()), ("etcd-main", "etcd"));
    assert_eq!(
        builtin.longest_call(),
        Duration::from_secs(4 * 2 + DEFAULT_MOVE_LEADER_TIMEOUT_SECONDS)
    );
}

#[test]
fn bad_etcd_entries_name_the_field_and_the_form() {
    let ok = "address: \"http://{pod}:2379\"";
    let cases: BTreeMap<&str, String> = BTreeMap::from([
        (
            "answerers[0].etcd.address: \"{pod}:2379\": expected an http(s) URL",
            "etcd: {address: \"{pod}:2379\"}".to_string(),
        ),
        (
            "answerers[0].etcd.members.etcd-0: \"etcd-0:2379\"",
            "etcd: {members: {etcd-0: \"etcd-0:2379\"}}".to_string(),
        ),
        (
            "answerers[0].etcd: neither `address` nor `members` given",
            "etcd: {maxAppliedGap: 10}".to_string(),
        ),
        (
            "answerers[0].etcd.moveLeaderTimeoutSeconds: 0: expected whole seconds from 1 to 300",
            format!("etcd: {{{ok}, moveLeaderTimeoutSeconds: 0}}"),
        ),
        (
            "answerers[0].etcd.auth.basic.passwordFile: missing",
            format!("etcd: {{{ok}, auth: {{basic: {{username: root}}}}}}"),
        ),
        (
            "answerers[0].etcd.auth.bearerTokenFile: etcd's authentication takes a user and its password; expected auth.basic",
            format!("etcd: {{{ok}, auth: {{bearerTokenFile: /t}}}}"),
        ),
        (
            "answerers[0].etcd.tls: given with an http:// member; expected https:// addresses",
            "etcd: {members: {etcd-0: \"http://e:2379\"}, tls: {caFile: /ca}}".to_string(),
        ),
        (
            "answerers[0].etcd.tls: given for \"http://{pod}:2379\"; expected an https:// URL",
            format!("etcd: {{{ok}, tls: {{caFile: /ca}}}}"),
        ),
        (
            "answerers[0].etcd.tls.keyFile: missing; certFile and keyFile go together",
            "etcd: {address: \"https://{pod}:2379\", tls: {certFile: /c}}".to_string(),
        ),
        (
            "unknown field `endpoints`",
            "etcd: {endpoints: [\"http://e:2379\"]}".to_string(),
        ),
        (
            "maxAppliedGap",
            format!("etcd: {{{ok}, maxAppliedGap: -1}}"),
        ),
        (
            "answerers[0]: two kinds; expected one of: patroni, redisSentinel, etcd",
            format!("etcd: {{{ok}}}\n    patroni: {{{ok}}}"),
        ),
        (
            "answerers[0]: no kind; expected one of: patroni, redisSentinel, etcd",
            "timeoutSeconds: 1".to_string(),
        ),
    ]);
    for (words, entry) in cases {
        let text = format!("{HEAD}answerers:\n  - name: e\n    serves: [\"db/*\"]\n    {entry}\n");
        let e = parse(&text)
            .err()
            .unwrap_or_else(|| panic!("accepted: {entry}"));
        assert!(e.contains(words), "{entry}\n→ {e}");
    }
}

/// The etcd recipe's `--answerer-config` in docs/answerers.md is a file the stepper reads.
#[test]
fn the_docs_etcd_entry_parses() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/answerers.md");
    let text = std::fs::read_to_string(path).expect("docs/answerers.md");
    let section = &text[text.find("\n## etcd\n").expect("an etcd section")..];
    let start = section
        .find("apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\n")
        .expect("the entry's file in the etcd section");
    let end = start + section[start..].find("```").expect("its code block's end");
    let got = parse(&section[start..end]).expect("the example parses");
    let kinds: Vec<(&str, &str)> = got
        .iter()
        .map(|c| (c.name.as_str(), c.builtin.kind()))
        .collect();
    assert_eq!(kinds, [("etcd-main", "etcd")]);
    assert!(
        section.contains("safe-rollout.dev/pre-update-webhook: etcd-main"),
        "the set names the entry"
    );
}
