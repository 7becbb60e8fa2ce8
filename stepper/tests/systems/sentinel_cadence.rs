//! The Redis Sentinel answerer at the cadence users run it, against the shared real Redis with Sentinel
//! (issue 52): a whole rollout whose next pass after the failover comes long after the write pause ran
//! out — the CronJob's minute — and one whose stepper is cut off in the middle of the failover, the
//! moment Sentinel names the new master (a `once` pod killed, a `watch` leader killed). The writer is a
//! Sentinel client as the clients guidelines describe one: it keeps its connection until an error and
//! waits on a paused master ([`Sentinel::patient_writer`]), so a write that waited on the old master and
//! ran there after its pause is acknowledged — and lost, unless the answerer left nothing to the next
//! pass. Each must lose no acknowledged write.
//!
//! The entry pauses writes for [`pause`] (8 s; `SYSTEMS_PAUSE_SECONDS=22` is the default of a user's
//! entry), and the pass after the failover comes [`gap`] later (20 s; `SYSTEMS_PASS_GAP_SECONDS=60`
//! runs the CronJob's minute): what decides the outcome is that the next pass comes after the pause ran
//! out and after Sentinel reconfigured the old master (3.8 s after the pause, as measured), which both
//! are.

use std::time::Duration;

use crate::rollout::{Cadence, Mode, roll_with};
use crate::sentinel_answerer::{config, whole};
use crate::systems::sentinel::Sentinel;
use crate::systems::{Replace, next_run, shared};
use sts_stepper::cluster::answerer::Answerers;

/// A whole rollout's bound, the gap included.
const LIMIT: Duration = Duration::from_secs(400);
/// How long a write may wait on a paused master: longer than any pause here.
const PATIENCE: Duration = Duration::from_secs(60);

/// Seconds from the environment variable `name`, else `default`.
fn seconds(name: &str, default: u64) -> u64 {
    (std::env::var(name).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The real time between the pass during which the master moved and the next one.
fn gap() -> Duration {
    Duration::from_secs(seconds("SYSTEMS_PASS_GAP_SECONDS", 20))
}

/// The entry's `pauseWritesSeconds`.
fn pause() -> u64 {
    seconds("SYSTEMS_PAUSE_SECONDS", 8)
}

/// Entry `cache` over the harness's pods (`members`), its pause [`pause`].
fn answerers(redis: &Sentinel) -> Answerers {
    let pause = format!(", pauseWritesSeconds: {}", pause());
    config(redis, &[("cache", &redis.sentinel_ports(), &pause)])
}

/// Rolls `redis` out in `mode` at `cadence` under a patient writer, and judges it: no master's pod
/// replaced, the master moved, every pod replaced, as many passes cut off as `cadence` asks (one), and
/// no acknowledged write lost.
async fn rolled(redis: &mut Sentinel, mode: Mode, cadence: Cadence) {
    whole(redis).await;
    let answerers = answerers(redis);
    let (run, writer) = redis.patient_writer(20, PATIENCE);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let revision = format!("cadence-{}", next_run());
    let rollout = roll_with(
        &mut *redis,
        mode,
        answerers,
        "cache",
        &revision,
        LIMIT,
        cadence,
    )
    .await;
    writer
        .wait_acknowledged(10, Duration::from_secs(20))
        .await
        .unwrap();
    let report = writer.stop().await;
    let present = redis.present(run).await.unwrap();
    let lost = report.lost(&present);
    let members = |o: u32| redis.pods().member(o as usize).map(String::from);
    assert_eq!(
        rollout.leaders_replaced(members),
        Vec::<String>::new(),
        "{rollout:?}"
    );
    assert_eq!(rollout.replaced.len(), 3, "{rollout:?}");
    assert!(rollout.leaders.len() >= 2, "the master moved: {rollout:?}");
    eprintln!(
        "sentinel cadence ({mode:?}, {cadence:?}, pause {} s, killed {}): {:.1} s, {} passes, masters {:?}; writes: {}",
        pause(),
        rollout.killed,
        rollout.seconds,
        rollout.passes,
        rollout.leaders,
        report.summary()
    );
    assert_eq!(
        rollout.killed,
        u32::from(cadence.kill_on_move),
        "{rollout:?}"
    );
    assert_eq!(lost, Vec::<u64>::new(), "{}", report.summary());
    whole(redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_a_rollout_whose_next_pass_comes_long_after_the_failover_loses_no_acknowledged_write()
 {
    let Some(mut redis) = shared::sentinel().await else {
        return;
    };
    let cadence = Cadence {
        after_move: gap(),
        kill_on_move: false,
    };
    rolled(&mut redis, Mode::Once, cadence).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_a_rollout_whose_stepper_is_killed_mid_failover_loses_no_acknowledged_write() {
    let Some(mut redis) = shared::sentinel().await else {
        return;
    };
    let cadence = Cadence {
        after_move: gap(),
        kill_on_move: true,
    };
    rolled(&mut redis, Mode::Watch, cadence).await;
}
