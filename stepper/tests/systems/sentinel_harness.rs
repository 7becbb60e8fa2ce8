//! Redis with Sentinel: how it comes up (and redis-cli agrees), SENTINEL FAILOVER moving the master under
//! a writer, a replica's pod replaced.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::systems::sentinel::MASTER_SET;
use crate::systems::tools::require;
use crate::systems::{Replace, shared};
use crate::{print_startups, until};

/// Seconds the set may take to be whole again after a change.
const HEALTHY: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_comes_up_with_one_master_two_linked_replicas_and_redis_cli_agrees() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    print_startups();
    redis.wait_healthy(HEALTHY).await.unwrap();
    redis.wait_sentinel_view(HEALTHY).await.unwrap();
    let master = redis.master().await.unwrap();
    let mut replicas = redis.replicas().await.unwrap();
    replicas.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = replicas.iter().map(|r| r.name.as_str()).collect();
    let mut expected: Vec<&str> = vec!["redis-0", "redis-1", "redis-2"];
    expected.retain(|n| *n != master);
    assert_eq!(names, expected, "{replicas:?}");
    assert!(
        replicas.iter().all(|r| r.link_ok && r.flags == "slave"),
        "{replicas:?}"
    );
    // A second witness: redis-cli asks each Sentinel.
    if !require(&[("redis-cli", "redis-tools")]) {
        return;
    }
    for port in redis.sentinel_ports() {
        let out = Command::new("redis-cli")
            .args([
                "-p",
                &port.to_string(),
                "SENTINEL",
                "get-master-addr-by-name",
                MASTER_SET,
            ])
            .output()
            .expect("redis-cli runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            text,
            format!("127.0.0.1\n{}\n", redis.port(&master)),
            "sentinel {port}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_failover_moves_the_master_and_every_sentinel_follows() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    redis.wait_healthy(HEALTHY).await.unwrap();
    let before = redis.master().await.unwrap();
    let (run, writer) = redis.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let started = Instant::now();
    redis.failover().await.unwrap();
    let (after, took) = until(
        "every Sentinel to name a new master",
        Duration::from_secs(30),
        || async {
            let seen = redis.masters_seen().await;
            match seen.first() {
                Some(Ok(m)) if *m != before && seen.iter().all(|s| s.as_ref() == Ok(m)) => {
                    Ok(m.clone())
                }
                _ => Err(format!("{seen:?}")),
            }
        },
    )
    .await;
    redis.wait_healthy(HEALTHY).await.unwrap();
    let whole = started.elapsed();
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let report = writer.stop().await;
    let present = redis.present(run).await.unwrap();
    let lost = report.lost(&present);
    // Not asserted: acknowledged writes the old master took before it turned replica are lost (the
    // brief's 2.2; what CLIENT PAUSE before the failover is for). Reported for the answerer's tests.
    eprintln!(
        "sentinel: failover {before} → {after} named by every Sentinel after {:.2} s, whole after {:.2} s; \
         {} acknowledged writes lost: {}",
        took.as_secs_f64(),
        whole.as_secs_f64(),
        lost.len(),
        report.summary()
    );
    assert_ne!(after, before);
    let old = redis.info(&before).await.unwrap();
    assert_eq!(
        old.get("role").map(String::as_str),
        Some("slave"),
        "{old:?}"
    );
    assert_eq!(
        old.get("master_port"),
        Some(&redis.port(&after).to_string()),
        "{old:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_replacing_a_replicas_pod_brings_it_back_as_a_replica_of_the_new_revision() {
    let Some(mut redis) = shared::sentinel().await else {
        return;
    };
    redis.wait_healthy(HEALTHY).await.unwrap();
    let master = redis.master().await.unwrap();
    let replica = redis.replicas().await.unwrap().remove(0).name;
    let (run, writer) = redis.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let ordinal = redis.pods().ordinal(&replica).unwrap();
    redis.replace_pod(ordinal, "rev-2").await.unwrap();
    redis.wait_healthy(HEALTHY).await.unwrap();
    let report = writer.stop().await;
    let present = redis.present(run).await.unwrap();
    eprintln!(
        "sentinel: replica {replica}'s pod replaced: {}",
        report.summary()
    );
    assert_eq!(redis.master().await.unwrap(), master);
    assert_eq!(redis.revision(&replica), "rev-2");
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    assert!(
        report.gaps.is_empty(),
        "a replica's restart stopped the master's writes: {}",
        report.summary()
    );
}
