//! The etcd answerer against the real 3-member etcd (`shared::etcd`, 3.4.23 on 127.0.0.1): the
//! `Answerers` an `--answerer-config` text builds (`members:` pod → the member's client URL, as a test
//! overrides the template), asked the `UpdateApprovalRequest` the gates send about a StatefulSet `etcd`
//! of 3 pods, pod ordinal `i` ↔ member `i` (`StatefulSetMap`). etcd has no role label, so every
//! question is an `Update` (no `primary-selector`): the answerer finds the leader itself.

use std::time::Duration;

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::{Answerers, file};
use sts_stepper::gates::approval::webhook::answer::{Answer, Decision, WebhookAnswer};

use crate::systems::etcd::Etcd;
use crate::systems::net::free_ports;
use crate::systems::{Replace, shared};
use crate::until;

/// Seconds the cluster may take to be whole again after a change.
pub(crate) const HEALTHY: Duration = Duration::from_secs(30);
/// Seconds the answerer may take to approve once leadership moved or a member is back.
pub(crate) const APPROVE: Duration = Duration::from_secs(20);
/// The entry's name.
pub(crate) const NAME: &str = "etcd-main";

/// The answerers of an `--answerer-config` whose one etcd entry reaches pod `etcd-i` at `urls[i]`.
fn answerers(urls: &[String]) -> Answerers {
    answerers_with(urls, "")
}

/// As [`answerers`], with `more` (lines of the `etcd:` object, indented 6) in the entry.
pub(crate) fn answerers_with(urls: &[String], more: &str) -> Answerers {
    let members: String = urls
        .iter()
        .enumerate()
        .map(|(i, u)| format!("        etcd-{i}: \"{u}\"\n"))
        .collect();
    let text = format!(
        "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n  - name: {NAME}\n    serves: [\"db/*\"]\n    timeoutSeconds: 2\n    etcd:\n{more}      members:\n{members}"
    );
    Answerers::new(file::parse(&text).expect("the --answerer-config text"))
}

pub(crate) fn urls(etcd: &Etcd) -> Vec<String> {
    (0..3)
        .map(|i| etcd.client_url(etcd.set().member(i).expect("3 members")))
        .collect()
}

pub(crate) fn of_cluster(etcd: &Etcd) -> Answerers {
    answerers(&urls(etcd))
}

/// The gates' `UpdateApprovalRequest` for the step that replaces pod `etcd-<ordinal>` (partition
/// `ordinal + 1` → `ordinal`), an `Update`: no primary-selector.
pub(crate) fn request(ordinal: u32) -> Value {
    json!({
        "apiVersion": "safe-rollout.dev/v1alpha1", "kind": "UpdateApprovalRequest",
        "requestId": format!("{ordinal:016x}"),
        "statefulSet": {"namespace": "db", "name": "etcd", "uid": "u", "serviceName": "etcd",
                        "startOrdinal": 0},
        "phase": "Update",
        "pods": [{"name": format!("etcd-{ordinal}"), "uid": "p", "ordinal": ordinal, "labels": {},
                  "primary": false}],
        "currentRevision": "rev-1", "updateRevision": "rev-2",
        "partition": {"from": ordinal + 1, "to": ordinal}, "replicas": 3,
        "updatedReplicas": 2 - ordinal, "readyReplicas": 3, "deadline": "2026-11-23T01:30:00Z"
    })
}

pub(crate) fn decided(answer: WebhookAnswer) -> Answer {
    match answer {
        WebhookAnswer::Decided(a) => a,
        WebhookAnswer::Error(e) => panic!("an error, not a decision: {e}"),
    }
}

/// Asks about pod `ordinal` until the answer is `Approve`, at most [`APPROVE`]; every answer before it
/// must be a `Wait` (never a `Deny` or an error). Returns the approval's reason.
pub(crate) async fn until_approved(a: &Answerers, ordinal: u32) -> String {
    let (reason, _) = until("the answerer to approve", APPROVE, || async {
        let answer = decided(a.answer(NAME, &request(ordinal)).await);
        match answer.decision {
            Decision::Approve => Ok(answer.reason),
            Decision::Wait => Err(answer.reason),
            Decision::Deny => panic!("denied: {}", answer.reason),
        }
    })
    .await;
    reason
}

pub(crate) fn ordinal(etcd: &Etcd, member: &str) -> u32 {
    let pod = etcd
        .set()
        .pod_of_member(member)
        .expect("a member behind a pod");
    let i = etcd.set().ordinal(&pod).expect("an ordinal");
    u32::try_from(i).expect("small")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_approves_a_followers_pod_while_every_member_is_healthy() {
    let Some(etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let leader = etcd.leader().await.unwrap();
    let follower = (0..3)
        .find(|i| etcd.set().member(*i) != Some(leader.as_str()))
        .unwrap();
    let a = of_cluster(&etcd);
    let answer = decided(
        a.answer(NAME, &request(u32::try_from(follower).unwrap()))
            .await,
    );
    assert_eq!(answer.decision, Decision::Approve, "{}", answer.reason);
    assert!(
        answer.reason.contains(&format!("leader {leader}")),
        "{}",
        answer.reason
    );
    assert_eq!(
        etcd.leader().await.unwrap(),
        leader,
        "a follower's step moves nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_moves_leadership_off_the_leaders_pod_first_and_loses_no_acknowledged_write()
{
    let Some(mut etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let leader = etcd.leader().await.unwrap();
    let at = ordinal(&etcd, &leader);
    let a = of_cluster(&etcd);
    let (run, writer) = etcd.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    // The leader's pod is in the step: no approval, leadership moved first.
    let first = decided(a.answer(NAME, &request(at)).await);
    eprintln!("etcd answerer: {:?}: {}", first.decision, first.reason);
    assert_eq!(first.decision, Decision::Wait, "{}", first.reason);
    assert!(
        first.reason.contains(&format!("leadership {leader} → "))
            && first.reason.contains("confirming"),
        "{}",
        first.reason
    );
    let (now, _) = until(
        "a quorum to name the new leader",
        Duration::from_secs(10),
        || async {
            match etcd.leader().await? {
                l if l == leader => Err(format!("still {l}")),
                l => Ok(l),
            }
        },
    )
    .await;
    let reason = until_approved(&a, at).await;
    eprintln!("etcd answerer: Approve: {reason}");
    assert!(reason.contains(&format!("leader {now}")), "{reason}");
    // The controller replaces the pod; the writer keeps going through it.
    etcd.replace_pod(at as usize, "rev-2").await.unwrap();
    etcd.wait_healthy(HEALTHY).await.unwrap();
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let report = writer.stop().await;
    let present = etcd.present(run).await.unwrap();
    eprintln!(
        "etcd answerer: leadership {leader} → {now} before its pod went: {}",
        report.summary()
    );
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_holds_a_step_that_would_lose_the_quorum_while_another_member_is_down() {
    let Some(mut etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let leader = etcd.leader().await.unwrap();
    let followers: Vec<String> = (0..3)
        .filter_map(|i| etcd.set().member(i).map(String::from))
        .filter(|m| *m != leader)
        .collect();
    let (down, asked) = (&followers[0], ordinal(&etcd, &followers[1]));
    let a = of_cluster(&etcd);
    etcd.stop_member(down).await.unwrap();
    let answer = decided(a.answer(NAME, &request(asked)).await);
    etcd.start_member(down).unwrap();
    eprintln!("etcd answerer: {:?}: {}", answer.decision, answer.reason);
    assert_eq!(answer.decision, Decision::Wait, "{}", answer.reason);
    assert!(
        answer.reason.contains(&format!("{down} does not answer")),
        "{}",
        answer.reason
    );
    assert!(
        answer
            .reason
            .contains("1 of 3 voting members would be healthy, and etcd needs 2"),
        "{}",
        answer.reason
    );
    // Back and caught up: the same step is approved.
    etcd.wait_healthy(HEALTHY).await.unwrap();
    until_approved(&a, asked).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_answerer_with_no_member_reachable_is_an_error_never_an_approval() {
    let ports = free_ports(3);
    let urls: Vec<String> = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect();
    let a = answerers(&urls);
    for ordinal in 0..3 {
        match a.answer(NAME, &request(ordinal)).await {
            WebhookAnswer::Error(e) => {
                eprintln!("etcd answerer: Error: {e}");
                assert!(e.starts_with("etcd: no member answered: "), "{e}");
                assert!(
                    e.contains(&format!(
                        "etcd-0: POST {}/v3/cluster/member/list: ",
                        urls[0]
                    )),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
