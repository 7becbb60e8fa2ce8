//! The etcd cluster: a leader every member names (and etcdctl agrees), leadership moved through the
//! JSON gateway, the leader's pod replaced under a writer.

use std::process::Command;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::systems::net::call;
use crate::systems::tools::require;
use crate::systems::{Replace, shared};
use crate::{print_startups, until};

/// Seconds the cluster may take to be whole again after a change.
const HEALTHY: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_comes_up_with_one_leader_that_etcdctl_names_too() {
    let Some(etcd) = shared::etcd().await else {
        return;
    };
    print_startups();
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let members = etcd.members().await.unwrap();
    assert_eq!(
        members.keys().collect::<Vec<_>>(),
        ["etcd-0", "etcd-1", "etcd-2"]
    );
    let leader = etcd.leader().await.unwrap();
    // A second witness over gRPC: every endpoint's status names the leader's ID.
    if !require(&[("etcdctl", "etcd-client")]) {
        return;
    }
    let out = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args([
            "--endpoints",
            &etcd.endpoints().join(","),
            "endpoint",
            "status",
            "-w",
            "json",
        ])
        .output()
        .expect("etcdctl runs");
    assert!(
        out.status.success(),
        "etcdctl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let statuses: Vec<Value> = serde_json::from_slice(&out.stdout).expect("etcdctl's JSON");
    assert_eq!(statuses.len(), 3, "{statuses:?}");
    for s in &statuses {
        assert_eq!(
            s["Status"]["leader"].as_u64(),
            Some(members[&leader]),
            "{s}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_move_leader_through_the_gateway_moves_it_and_a_follower_refuses() {
    let Some(etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let before = etcd.leader().await.unwrap();
    let names: Vec<String> = etcd.members().await.unwrap().into_keys().collect();
    let target = names.iter().find(|n| **n != before).unwrap().clone();
    let other = names
        .iter()
        .find(|n| **n != before && **n != target)
        .unwrap()
        .clone();
    etcd.move_leader(&target).await.unwrap();
    let (_, took) = until(
        "the leader to be the target",
        Duration::from_secs(10),
        || async {
            match etcd.leader().await? {
                l if l == target => Ok(()),
                l => Err(format!("leader {l}")),
            }
        },
    )
    .await;
    eprintln!(
        "etcd: leadership {before} → {target} seen {:.2} s after the move returned",
        took.as_secs_f64()
    );
    // MoveLeader must reach the leader: a follower answers FailedPrecondition "etcdserver: not leader".
    let id = etcd.members().await.unwrap()[&other];
    let url = format!(
        "{}/v3/maintenance/transfer-leadership",
        etcd.client_url(&other)
    );
    let (status, body) = call(
        Method::POST,
        &url,
        Some(&json!({"targetID": id.to_string()})),
        &None,
    )
    .await
    .unwrap();
    assert_ne!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (body["code"].as_u64(), body["message"].as_str()),
        (Some(9), Some("etcdserver: not leader")),
        "{body}"
    );
    assert_eq!(etcd.leader().await.unwrap(), target);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_replacing_the_leaders_pod_hands_leadership_over_and_keeps_every_acknowledged_write() {
    let Some(mut etcd) = shared::etcd().await else {
        return;
    };
    etcd.wait_healthy(HEALTHY).await.unwrap();
    let leader = etcd.leader().await.unwrap();
    let ordinal = etcd.pods().ordinal(&leader).unwrap();
    let (run, writer) = etcd.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let stop = etcd.replace_pod(ordinal, "rev-2").await.unwrap();
    etcd.wait_healthy(HEALTHY).await.unwrap();
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let report = writer.stop().await;
    let present = etcd.present(run).await.unwrap();
    eprintln!(
        "etcd: {leader}'s pod replaced (stop {:.2} s): {}",
        stop.as_secs_f64(),
        report.summary()
    );
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    assert_eq!(etcd.revision(&leader), "rev-2");
    // A graceful stop hands leadership over first (etcdserver/server.go@v3.4.23 l.1491-1546).
    assert_ne!(etcd.leader().await.unwrap(), leader);
}
