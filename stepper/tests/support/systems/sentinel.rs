//! A real Redis with Sentinel on 127.0.0.1, shaped like Bitnami's chart with `sentinel.enabled` (one
//! StatefulSet whose pods each run a Redis and a Sentinel, bitnami/charts redis templates/sentinel/
//! statefulset.yaml): pod `redis-i` = Redis server `redis-i` (redis-0 the first master, the others its
//! replicas) and Sentinel `i`, all watching master set [`MASTER_SET`], quorum 2. Spoken to in RESP
//! (`resp.rs`); commands from src/sentinel.c@7.0.15 (`SENTINEL GET-MASTER-ADDR-BY-NAME`, `MASTER`,
//! `REPLICAS`, `FAILOVER`). The writer is in `sentinel_writer.rs`.

use std::process::Command;
use std::time::Duration;

use super::StatefulSetMap;
use super::net::free_ports;
use super::process::{Proc, Workdir, wait_for};
use super::resp::{Reply, RespConn};

/// The master set's name (`sentinel monitor <name> …`).
pub const MASTER_SET: &str = "harness";
/// `sentinel down-after-milliseconds` (default 30000, sentinel.conf@7.0.15): how long, in milliseconds,
/// a master may not answer before a Sentinel deems it down.
pub const DOWN_AFTER_MS: u64 = 2_000;
/// `sentinel failover-timeout` in milliseconds (default 180000).
pub const FAILOVER_TIMEOUT_MS: u64 = 10_000;
/// Seconds the whole set may take to start and be known to every Sentinel.
pub const START_LIMIT: Duration = Duration::from_secs(30);
/// Seconds a Redis or a Sentinel may take to stop on SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// Seconds one command may take.
pub(super) const COMMAND_LIMIT: Duration = Duration::from_secs(2);

/// One pod: a Redis and a Sentinel.
pub(super) struct Pod {
    pub(super) name: String,
    pub(super) port: u16,
    sentinel_port: u16,
    revision: String,
    redis: Option<Proc>,
    sentinel: Option<Proc>,
}

/// A running Redis + Sentinel set.
pub struct Sentinel {
    pub(super) pods: Vec<Pod>,
    set: StatefulSetMap,
    // Last: dropped after the processes stopped (see process.rs).
    work: Workdir,
}

/// Sends one command on a fresh connection to `127.0.0.1:port`.
///
/// # Errors
/// No connection or no answer within [`COMMAND_LIMIT`].
pub async fn command(port: u16, args: &[&str]) -> Result<Reply, String> {
    RespConn::connect(port, COMMAND_LIMIT)
        .await?
        .command(args)
        .await
}

impl Sentinel {
    /// Starts `replicas` pods named `<set>-<i>` as `revision` (`<set>-0` the master) and waits until every
    /// Sentinel knows the master, its replicas and the other Sentinels, at most [`START_LIMIT`].
    ///
    /// # Errors
    /// A process did not start or the set did not form in time: the message names the logs.
    pub async fn start(set: &str, replicas: usize, revision: &str) -> Result<Sentinel, String> {
        let work = Workdir::new("sentinel")?;
        let ports = free_ports(2 * replicas);
        let pods = (0..replicas)
            .map(|i| Pod {
                name: format!("{set}-{i}"),
                port: ports[2 * i],
                sentinel_port: ports[2 * i + 1],
                revision: revision.to_string(),
                redis: None,
                sentinel: None,
            })
            .collect::<Vec<_>>();
        let mut sentinel = Sentinel {
            set: StatefulSetMap::new(set, pods.iter().map(|p| p.name.clone()).collect()),
            pods,
            work,
        };
        let master = sentinel.pods[0].port;
        for i in 0..replicas {
            sentinel.start_redis(i, (i > 0).then_some(master))?;
        }
        // Sentinels started only now find the replicas, linked, in their first INFO; started with them,
        // they would learn it from the next one, 10 s later (sentinel_info_period, sentinel.c@7.0.15 l.84).
        let names: Vec<String> = sentinel.pods[1..].iter().map(|p| p.name.clone()).collect();
        wait_for(
            "the replicas to link to the master",
            START_LIMIT,
            &sentinel.logs(),
            || async {
                for name in &names {
                    let info = sentinel.info(name).await?;
                    if info.get("master_link_status").map(String::as_str) != Some("up") {
                        return Err(format!("{name}: {info:?}"));
                    }
                }
                Ok(())
            },
        )
        .await?;
        for i in 0..replicas {
            sentinel.write_sentinel_config(i, master)?;
            sentinel.start_sentinel(i)?;
        }
        sentinel.wait_healthy(START_LIMIT).await?;
        Ok(sentinel)
    }

    /// Starts pod `i`'s Redis: append-only file on (Bitnami's default: a restarted master keeps its
    /// data), no RDB snapshots, a replica of `replica_of` when given.
    fn start_redis(&mut self, i: usize, replica_of: Option<u16>) -> Result<(), String> {
        let p = &self.pods[i];
        let dir = self.work.data.join(&p.name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut c = Command::new("redis-server");
        c.args([
            "--port",
            &p.port.to_string(),
            "--bind",
            "127.0.0.1",
            "--daemonize",
            "no",
        ]);
        c.arg("--dir").arg(&dir);
        c.args(["--save", "", "--appendonly", "yes"]);
        if let Some(m) = replica_of {
            c.args(["--replicaof", "127.0.0.1", &m.to_string()]);
        }
        let proc = self.work.spawn(&p.name, c)?;
        self.pods[i].redis = Some(proc);
        Ok(())
    }

    /// Pod `i`'s Sentinel configuration (it rewrites the file with what it learns, so a restarted
    /// Sentinel remembers the current master: sentinel.conf@7.0.15).
    fn write_sentinel_config(&self, i: usize, master: u16) -> Result<(), String> {
        let p = &self.pods[i];
        let conf = format!(
            "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {dir}\n\
             sentinel monitor {MASTER_SET} 127.0.0.1 {master} 2\n\
             sentinel down-after-milliseconds {MASTER_SET} {DOWN_AFTER_MS}\n\
             sentinel failover-timeout {MASTER_SET} {FAILOVER_TIMEOUT_MS}\n\
             sentinel parallel-syncs {MASTER_SET} 1\n",
            port = p.sentinel_port,
            dir = self.work.data.display(),
        );
        let path = self.sentinel_config(i);
        std::fs::write(&path, conf).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn sentinel_config(&self, i: usize) -> std::path::PathBuf {
        self.work.data.join(format!("sentinel-{i}.conf"))
    }

    fn start_sentinel(&mut self, i: usize) -> Result<(), String> {
        let mut c = Command::new("redis-sentinel");
        c.arg(self.sentinel_config(i));
        let proc = self.work.spawn(&format!("sentinel-{i}"), c)?;
        self.pods[i].sentinel = Some(proc);
        Ok(())
    }

    /// The pods ↔ members map.
    pub fn set(&self) -> &StatefulSetMap {
        &self.set
    }

    /// Every Redis's and Sentinel's log.
    pub fn logs(&self) -> Vec<std::path::PathBuf> {
        let redis = self.pods.iter().map(|p| self.work.log(&p.name));
        let sentinels = (0..self.pods.len()).map(|i| self.work.log(&format!("sentinel-{i}")));
        redis.chain(sentinels).collect()
    }

    pub(super) fn index(&self, name: &str) -> Result<usize, String> {
        self.pods
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| format!("no Redis member {name}"))
    }

    /// Redis's port of member `name`.
    pub fn port(&self, name: &str) -> u16 {
        self.index(name)
            .map(|i| self.pods[i].port)
            .unwrap_or_default()
    }

    /// The Sentinels' ports, in ordinal order.
    pub fn sentinel_ports(&self) -> Vec<u16> {
        self.pods.iter().map(|p| p.sentinel_port).collect()
    }

    /// The revision member `name` was last started as (the harness's record).
    pub fn revision(&self, name: &str) -> String {
        self.index(name)
            .map(|i| self.pods[i].revision.clone())
            .unwrap_or_default()
    }

    pub(super) fn name_of(&self, port: u16) -> String {
        self.pods
            .iter()
            .find(|p| p.port == port)
            .map_or_else(|| format!("127.0.0.1:{port}"), |p| p.name.clone())
    }

    /// What replacing pod `name` does: SIGTERM to its Redis and its Sentinel, their exits awaited (SIGKILL
    /// past [`STOP_GRACE`]), then both started again as `revision`: the Redis as the master if the other
    /// Sentinels still name it (as Bitnami's start script decides), else as a replica of the master they
    /// name. Returns once started (not once linked: [`Sentinel::wait_healthy`]) with the Redis's stop time.
    ///
    /// # Errors
    /// No such member, no Sentinel names a master, or a process could not be started.
    pub async fn restart_member(&mut self, name: &str, revision: &str) -> Result<Duration, String> {
        let i = self.index(name)?;
        let mut took = Duration::ZERO;
        if let Some(mut redis) = self.pods[i].redis.take() {
            took = redis.stop(STOP_GRACE).await.0;
        }
        if let Some(mut sentinel) = self.pods[i].sentinel.take() {
            sentinel.stop(STOP_GRACE).await;
        }
        let seen = self.masters_seen().await;
        let master = seen
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .find_map(|(_, s)| s.as_ref().ok().cloned())
            .ok_or_else(|| format!("no other Sentinel names a master: {seen:?}"))?;
        let replica_of = (master != name).then(|| self.port(&master));
        self.pods[i].revision = revision.to_string();
        self.start_redis(i, replica_of)?;
        self.start_sentinel(i)?;
        Ok(took)
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        for p in &mut self.pods {
            for proc in [p.sentinel.as_mut(), p.redis.as_mut()]
                .into_iter()
                .flatten()
            {
                proc.stop_blocking(STOP_GRACE);
            }
        }
    }
}
