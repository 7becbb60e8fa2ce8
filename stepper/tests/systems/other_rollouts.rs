//! Whole rollouts of a Redis with Sentinel and of an etcd cluster with their built-in answerers (issue 45,
//! "Done means": the same shape as Patroni's, `patroni_rollout`): no pod replaced while its member holds
//! the master (leader) role, the role moved before its pod goes, a writer loop loses no acknowledged
//! write.

use std::time::Duration;

use crate::rollout::{Cadence, Led, Mode, roll, roll_with};
use crate::systems::etcd::Etcd;
use crate::systems::sentinel::Sentinel;
use crate::systems::{Replace, next_run, shared};

/// A whole rollout's bound.
const LIMIT: Duration = Duration::from_secs(240);

impl Led for Sentinel {
    async fn leader(&self) -> Result<Option<String>, String> {
        self.master().await.map(Some)
    }
}

impl Led for Etcd {
    async fn leader(&self) -> Result<Option<String>, String> {
        Etcd::leader(self).await.map(Some)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_a_rollout_with_the_answerer_fails_the_master_over_before_its_pod_goes() {
    let Some(mut redis) = shared::sentinel().await else {
        return;
    };
    let answerers = crate::sentinel_answerer::answerers(&redis);
    let (run, writer) = redis.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let revision = format!("rollout-{}", next_run());
    let rollout = roll(
        &mut *redis,
        Mode::Once,
        answerers,
        "cache",
        &revision,
        LIMIT,
    )
    .await;
    let report = writer.stop().await;
    let present = redis.present(run).await.unwrap();
    let members = |o: u32| redis.pods().member(o as usize).map(String::from);
    eprintln!(
        "sentinel rollout (Once): {:.1} s, {} passes, {} answerer calls for {} steps, replaced {:?}, masters {:?}; writes: {}",
        rollout.seconds,
        rollout.passes,
        rollout.calls,
        rollout.steps,
        rollout.replaced,
        rollout.leaders,
        report.summary()
    );
    assert_eq!(
        rollout.leaders_replaced(members),
        Vec::<String>::new(),
        "{rollout:?}"
    );
    assert_eq!(rollout.replaced.len(), 3, "{rollout:?}");
    assert!(rollout.leaders.len() >= 2, "the master moved: {rollout:?}");
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
}

/// The pass cut off once etcd names the new leader, and the next 5 s later (issue 52): MoveLeader is
/// one synchronous call, nothing is left for a later pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_a_rollout_with_the_answerer_moves_leadership_before_the_leaders_pod_goes() {
    let Some(mut etcd) = shared::etcd().await else {
        return;
    };
    let answerers = crate::etcd_answerer::of_cluster(&etcd);
    let (run, writer) = etcd.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let revision = format!("rollout-{}", next_run());
    let name = crate::etcd_answerer::NAME;
    let cadence = Cadence {
        after_move: Duration::from_secs(5),
        kill_on_move: true,
    };
    let rollout = roll_with(
        &mut *etcd,
        Mode::Once,
        answerers,
        name,
        &revision,
        LIMIT,
        cadence,
    )
    .await;
    let report = writer.stop().await;
    let present = etcd.present(run).await.unwrap();
    let members = |o: u32| etcd.pods().member(o as usize).map(String::from);
    eprintln!(
        "etcd rollout (Once, killed {} once the leader moved, the next pass {:?} later): {:.1} s, {} passes, {} answerer calls for {} steps, replaced {:?}, leaders {:?}; writes: {}",
        rollout.killed,
        cadence.after_move,
        rollout.seconds,
        rollout.passes,
        rollout.calls,
        rollout.steps,
        rollout.replaced,
        rollout.leaders,
        report.summary()
    );
    assert_eq!(rollout.killed, 1, "{rollout:?}");
    assert_eq!(
        rollout.leaders_replaced(members),
        Vec::<String>::new(),
        "{rollout:?}"
    );
    assert_eq!(rollout.replaced.len(), 3, "{rollout:?}");
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
}
