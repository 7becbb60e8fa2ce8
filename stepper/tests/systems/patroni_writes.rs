//! The Patroni cluster under a writer: a switchover loses no acknowledged row; the leader's pod replaced
//! without one leaves a write gap (measured, not bounded).

use std::time::{Duration, Instant};

use crate::patroni_harness::{HEALTHY, replicas};
use crate::systems::{Replace, shared};
use crate::until;

/// Writes a second.
const RATE: u32 = 20;
/// Seconds a switchover may take, from the request to the new leader in GET /cluster.
const SWITCHOVER: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_switchover_moves_the_leader_and_loses_no_acknowledged_row() {
    let Some(pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let before = pg.leader().await.unwrap().unwrap();
    let candidate = replicas(&pg).await.pop().unwrap();
    let (run, writer) = pg.writer(RATE);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let started = Instant::now();
    let answer = pg.switchover(&candidate).await.unwrap();
    let answered = started.elapsed();
    assert_eq!(
        answer,
        format!("Successfully switched over to \"{candidate}\"")
    );
    let (_, seen) = until("the candidate to lead", SWITCHOVER, || async {
        match pg.leader().await? {
            Some(l) if l == candidate => Ok(()),
            other => Err(format!("leader {other:?}")),
        }
    })
    .await;
    writer
        .wait_acknowledged(10, Duration::from_secs(20))
        .await
        .unwrap();
    pg.wait_healthy(HEALTHY).await.unwrap();
    let report = writer.stop().await;
    let present = pg.present(run).await.unwrap();
    eprintln!(
        "patroni: switchover {before} → {candidate} answered in {:.2} s (leader seen {:.2} s after): {}",
        answered.as_secs_f64(),
        (answered + seen).as_secs_f64(),
        report.summary()
    );
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    assert!(report.acknowledged.len() >= 20, "{}", report.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_replacing_the_leaders_pod_without_a_switchover_leaves_a_write_gap() {
    let Some(mut pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let leader = pg.leader().await.unwrap().unwrap();
    let ordinal = pg.pods().ordinal(&leader).unwrap();
    let (run, writer) = pg.writer(RATE);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let stop = pg.replace_pod(ordinal, "rev-2").await.unwrap();
    let (new, _) = until("another member to lead", SWITCHOVER, || async {
        match pg.leader().await? {
            Some(l) if l != leader => Ok(l),
            other => Err(format!("leader {other:?}")),
        }
    })
    .await;
    writer
        .wait_acknowledged(10, Duration::from_secs(20))
        .await
        .unwrap();
    pg.wait_healthy(HEALTHY).await.unwrap();
    let report = writer.stop().await;
    let present = pg.present(run).await.unwrap();
    eprintln!(
        "patroni: leader {leader}'s pod replaced (its Patroni stopped in {:.2} s), {new} leads: {}",
        stop.as_secs_f64(),
        report.summary()
    );
    assert!(
        !report.gaps.is_empty(),
        "no write failed: {}",
        report.summary()
    );
    // One graceful leader stop loses nothing (PostgreSQL's walsenders send all WAL before it stops).
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    let members = pg.members().await.unwrap();
    let replaced = members.iter().find(|m| m.name == leader).unwrap();
    assert_eq!(replaced.revision.as_deref(), Some("rev-2"), "{replaced:?}");
    assert_eq!(pg.revision(&leader), "rev-2");
}
