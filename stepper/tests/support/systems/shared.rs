//! One instance of each system per test binary: the first test that asks starts it (on its runtime:
//! the systems hold no runtime's resources, only processes and paths), the others wait for the same
//! start; then tests take turns through a lock, so each test has the system to itself. A failed start is
//! kept: every later test fails at once with the same message instead of starting again.

use std::sync::Mutex as StdMutex;
use std::time::Instant;

use tokio::sync::{Mutex, MutexGuard, OnceCell};

use super::etcd::Etcd;
use super::patroni::{Patroni, PatroniOptions};
use super::sentinel::Sentinel;
use super::tools::{pg_bin_dir, require};

type Shared<T> = OnceCell<Result<Mutex<T>, String>>;

/// The revision every shared system starts as.
pub const FIRST_REVISION: &str = "rev-1";

/// How long each shared system took to start: (system, seconds).
static STARTUPS: StdMutex<Vec<(&'static str, f64)>> = StdMutex::new(Vec::new());

/// The start-up times so far: (system, seconds).
pub fn startups() -> Vec<(&'static str, f64)> {
    STARTUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

async fn get<T, Fut>(
    cell: &'static Shared<T>,
    what: &'static str,
    start: impl FnOnce() -> Fut,
) -> MutexGuard<'static, T>
where
    Fut: Future<Output = Result<T, String>>,
{
    let started = cell
        .get_or_init(|| async {
            let t0 = Instant::now();
            let system = start().await.map(Mutex::new);
            STARTUPS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((what, t0.elapsed().as_secs_f64()));
            system
        })
        .await;
    match started {
        Ok(system) => system.lock().await,
        Err(e) => panic!("the shared {what} did not start: {e}"),
    }
}

/// The shared Patroni cluster: `pg-0`, `pg-1`, `pg-2` ([`PatroniOptions::default`], REST basic auth on),
/// or `None` when its programs are missing and the run allows skipping (`tools::require`).
///
/// # Panics
/// A program missing (without `ALLOW_SKIP=1`), or the cluster did not start.
pub async fn patroni() -> Option<MutexGuard<'static, Patroni>> {
    let pg_ctl = pg_bin_dir().join("pg_ctl").display().to_string();
    let programs = [
        ("patroni", "patroni"),
        (pg_ctl.as_str(), "postgresql-15"),
        ("etcd", "etcd-server"),
    ];
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !require(&programs) || (root && !require(&[("setpriv", "util-linux")])) {
        return None;
    }
    static CELL: Shared<Patroni> = OnceCell::const_new();
    let options = PatroniOptions {
        revision: FIRST_REVISION.to_string(),
        ..PatroniOptions::default()
    };
    Some(get(&CELL, "Patroni", || Patroni::start(options)).await)
}

/// The shared Redis with Sentinel: pods `redis-0` (master), `redis-1`, `redis-2`, each a Redis and a
/// Sentinel; `None` as for [`patroni`].
///
/// # Panics
/// As [`patroni`].
pub async fn sentinel() -> Option<MutexGuard<'static, Sentinel>> {
    let programs = [
        ("redis-server", "redis-server"),
        ("redis-sentinel", "redis-sentinel"),
    ];
    if !require(&programs) {
        return None;
    }
    static CELL: Shared<Sentinel> = OnceCell::const_new();
    Some(
        get(&CELL, "Redis with Sentinel", || {
            Sentinel::start("redis", 3, FIRST_REVISION)
        })
        .await,
    )
}

/// The shared etcd cluster: `etcd-0`, `etcd-1`, `etcd-2`; `None` as for [`patroni`].
///
/// # Panics
/// As [`patroni`].
pub async fn etcd() -> Option<MutexGuard<'static, Etcd>> {
    if !require(&[("etcd", "etcd-server")]) {
        return None;
    }
    static CELL: Shared<Etcd> = OnceCell::const_new();
    Some(
        get(&CELL, "etcd", || {
            Etcd::start("etcd", "etcd", 3, FIRST_REVISION)
        })
        .await,
    )
}
