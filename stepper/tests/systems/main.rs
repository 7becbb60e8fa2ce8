//! The harness of the real systems (`tests/support/systems/`: Patroni, Redis with Sentinel, etcd on
//! 127.0.0.1) against those systems: each comes up as the built-in answerers' tests (issue 45) expect it,
//! and each thing the harness does to it (a switchover, a failover, a leader move, a member restarted as
//! a new revision, maintenance mode, a lagging replica, a writer loop) does what it says. Each system
//! starts once for the whole binary; its tests take turns on it.
//!
//! One test binary of modules (cargo's guide on test organisation), so each system starts once.

#[path = "../support/systems/mod.rs"]
mod systems;

mod etcd_answerer;
mod etcd_answerer_admin;
mod etcd_harness;
mod map;
mod other_rollouts;
mod patroni_answerer;
mod patroni_harness;
mod patroni_rollout;
mod patroni_writes;
mod rollout;
mod sentinel_answerer;
mod sentinel_cadence;
mod sentinel_harness;
mod tenant;

use std::time::{Duration, Instant};

/// Polls `probe` every 100 ms until it returns `Some`, for at most `limit`; `(value, seconds taken)`.
///
/// # Panics
/// Nothing within `limit`: names `what` and the last thing seen.
pub async fn until<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> (T, Duration)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let last = match probe().await {
            Ok(v) => return (v, started.elapsed()),
            Err(e) => e,
        };
        assert!(
            started.elapsed() < limit,
            "waited {limit:?} for {what}; last: {last}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Prints the shared systems' start-up times so far (seen with `--nocapture`).
pub fn print_startups() {
    for (system, seconds) in systems::shared::startups() {
        eprintln!("systems: {system} started in {seconds:.1} s");
    }
}
