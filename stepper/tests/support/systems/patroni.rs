//! A real Patroni cluster on 127.0.0.1: members named like a StatefulSet's pods (`pg-0`, `pg-1`, `pg-2`),
//! each a Patroni (its REST API on a port of its own) running a PostgreSQL 15 (another port), a one-member
//! etcd as the store (`etcd3:`), the data in the [`Workdir`]. Its REST API (GET /cluster, POST
//! /switchover, PATCH /config) is in `patroni_api.rs`.
//!
//! The settings are the loopback recipe measured for issue 45 (a leader restart there cost a write gap of
//! 1.8–2.0 s, a switchover 1.4 s): `ttl` 10 s, `loop_wait` 2 s, `retry_timeout` 5 s (defaults 30, 10, 10:
//! docs/SETTINGS.rst@v3.0.2, "Dynamic configuration settings"), `maximum_lag_on_failover` 1 MiB,
//! `use_pg_rewind`. PostgreSQL refuses to run as root, so as root every member runs as user `postgres`
//! (`setpriv`, which execs: the harness signals Patroni itself, where `runuser` would stay its parent and
//! SIGKILL it 2 s after forwarding a SIGTERM, util-linux su-common.c).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::StatefulSetMap;
use super::etcd::Etcd;
use super::net::{Auth, free_ports};
use super::process::{Proc, Workdir, postgres_user, wait_for};
use super::tools::pg_bin_dir;

/// Seconds the first member may take to bootstrap and lead (observed about 3 s on 2 cores).
pub const BOOTSTRAP_LIMIT: Duration = Duration::from_secs(60);
/// Seconds the cluster may take, after the leader, until every replica streams (observed about 5 s).
pub const HEALTHY_LIMIT: Duration = Duration::from_secs(90);
/// Seconds a member's Patroni may take to stop on SIGTERM (it stops PostgreSQL first, fast mode) before
/// SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(60);
/// The Patroni `scope` (cluster name) of the harness.
pub const SCOPE: &str = "harness";

/// How to start a cluster.
#[derive(Debug, Clone)]
pub struct PatroniOptions {
    /// The StatefulSet name: members are `<set>-0` … (a count of `replicas`).
    pub set: String,
    /// Members (a count).
    pub replicas: usize,
    /// `restapi.authentication` (docs/SETTINGS.rst@v3.0.2 l.342-344: basic auth on the unsafe endpoints
    /// only — POST /switchover, PATCH /config, …; GET /cluster stays open).
    pub rest_auth: Auth,
    /// The revision every member starts as: Patroni tag `revision`, listed in GET /cluster's `tags`.
    pub revision: String,
}

impl Default for PatroniOptions {
    fn default() -> Self {
        PatroniOptions {
            set: "pg".to_string(),
            replicas: 3,
            rest_auth: Some(("harness".to_string(), "harness-secret".to_string())),
            revision: "rev-1".to_string(),
        }
    }
}

/// One member as the harness runs it.
pub(super) struct Member {
    pub(super) name: String,
    /// Patroni's REST API port.
    pub(super) rest: u16,
    /// PostgreSQL's port.
    pub(super) pg: u16,
    pub(super) revision: String,
    pub(super) proc: Option<Proc>,
}

/// A running Patroni cluster.
pub struct Patroni {
    pub(super) members: Vec<Member>,
    pub(super) set: StatefulSetMap,
    pub(super) auth: Auth,
    /// The uid and gid members run as (as root: user postgres).
    owner: Option<(u32, u32)>,
    // Last two, in this order: the members stop before their store, the store before the data goes.
    dcs: Etcd,
    pub(super) work: Workdir,
}

impl Patroni {
    /// Starts the store, then `<set>-0` (it bootstraps the cluster and leads), then the others (they
    /// clone it), and waits until one leader has every other member streaming from it.
    ///
    /// # Errors
    /// A process did not start or the cluster did not form in time: the message names the logs.
    pub async fn start(options: PatroniOptions) -> Result<Patroni, String> {
        let owner = postgres_user()?;
        let work = Workdir::new("patroni")?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&work.data, Some(uid), Some(gid))
                .map_err(|e| format!("chown {} to postgres: {e}", work.data.display()))?;
        }
        let dcs = Etcd::start("patroni-etcd", "dcs", 1, "-").await?;
        let ports = free_ports(2 * options.replicas);
        let members: Vec<Member> = (0..options.replicas)
            .map(|i| Member {
                name: format!("{}-{i}", options.set),
                rest: ports[2 * i],
                pg: ports[2 * i + 1],
                revision: options.revision.clone(),
                proc: None,
            })
            .collect();
        let mut patroni = Patroni {
            set: StatefulSetMap::new(
                &options.set,
                members.iter().map(|m| m.name.clone()).collect(),
            ),
            members,
            auth: options.rest_auth,
            owner,
            dcs,
            work,
        };
        patroni.spawn(0)?;
        let first = patroni.members[0].name.clone();
        wait_for(
            &format!("{first} to bootstrap and lead"),
            BOOTSTRAP_LIMIT,
            &patroni.logs(),
            || async {
                match patroni.leader().await? {
                    Some(l) if l == first => Ok(()),
                    other => Err(format!("leader {other:?}")),
                }
            },
        )
        .await?;
        for i in 1..patroni.members.len() {
            patroni.spawn(i)?;
        }
        patroni.wait_healthy(HEALTHY_LIMIT).await?;
        patroni.create_table().await?;
        Ok(patroni)
    }

    /// Member `i`'s configuration file, written for its current revision.
    fn write_config(&self, i: usize) -> Result<PathBuf, String> {
        let m = &self.members[i];
        let data = self.work.data.display();
        let auth = self.auth.as_ref().map_or(String::new(), |(u, p)| {
            format!(", authentication: {{username: \"{u}\", password: \"{p}\"}}")
        });
        let etcd: Vec<String> = self
            .dcs
            .endpoints()
            .iter()
            .map(|e| format!("\"{e}\""))
            .collect();
        let yaml = format!(
            r#"scope: {SCOPE}
name: {name}
restapi: {{listen: "127.0.0.1:{rest}", connect_address: "127.0.0.1:{rest}"{auth}}}
etcd3: {{hosts: [{etcd}]}}
bootstrap:
  dcs: {{ttl: 10, loop_wait: 2, retry_timeout: 5, maximum_lag_on_failover: 1048576,
        postgresql: {{use_pg_rewind: true}}}}
  initdb: [{{encoding: UTF8}}]
postgresql:
  listen: "127.0.0.1:{pg}"
  connect_address: "127.0.0.1:{pg}"
  data_dir: "{data}/data-{name}"
  bin_dir: "{bin}"
  pgpass: "{data}/pgpass-{name}"
  authentication:
    replication: {{username: replicator, password: rep}}
    superuser: {{username: postgres, password: pg}}
  # The harness's writer speaks the wire protocol without a password exchange (pgwire.rs): every
  # connection from 127.0.0.1 is trusted. Loopback only, in a temp dir, for the tests' lifetime.
  pg_hba: ["host replication all 127.0.0.1/32 trust", "host all all 127.0.0.1/32 trust"]
  parameters: {{unix_socket_directories: "{data}"}}
tags: {{revision: "{revision}"}}
"#,
            name = m.name,
            rest = m.rest,
            pg = m.pg,
            etcd = etcd.join(", "),
            bin = pg_bin_dir().display(),
            revision = m.revision,
        );
        let path = self.work.data.join(format!("{}.yml", m.name));
        std::fs::write(&path, yaml).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", path.display()))?;
        }
        Ok(path)
    }

    /// Starts member `i`'s Patroni (as user postgres when root).
    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let config = self.write_config(i)?;
        let mut command = if self.owner.is_some() {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid",
                "postgres",
                "--regid",
                "postgres",
                "--init-groups",
                "patroni",
            ]);
            c
        } else {
            Command::new("patroni")
        };
        command.arg(config).env("HOME", &self.work.data);
        let proc = self.work.spawn(&self.members[i].name, command)?;
        self.members[i].proc = Some(proc);
        Ok(())
    }

    /// The pods ↔ members map.
    pub fn set(&self) -> &StatefulSetMap {
        &self.set
    }

    /// Every member's log file (Patroni's and its PostgreSQL's output), then the store's.
    pub fn logs(&self) -> Vec<PathBuf> {
        let mut logs: Vec<PathBuf> = self
            .members
            .iter()
            .map(|m| self.work.log(&m.name))
            .collect();
        logs.extend(self.dcs.logs());
        logs
    }

    pub(super) fn index(&self, name: &str) -> Result<usize, String> {
        self.members
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| format!("no Patroni member {name}"))
    }

    /// The revision member `name` was last started as (also its tag `revision` in GET /cluster).
    pub fn revision(&self, name: &str) -> String {
        self.index(name)
            .map(|i| self.members[i].revision.clone())
            .unwrap_or_default()
    }

    /// What replacing pod `name` does: SIGTERM to its Patroni (which stops PostgreSQL, and, on the leader,
    /// gives up the leader key: a replica takes over within a loop), the exit awaited (SIGKILL past
    /// [`STOP_GRACE`]), then Patroni started again with tag `revision`. Returns once it is started (not
    /// once it streams again: [`Patroni::wait_healthy`]) with the seconds the stop took.
    ///
    /// # Errors
    /// No such member, or it could not be started.
    pub async fn restart_member(&mut self, name: &str, revision: &str) -> Result<Duration, String> {
        let i = self.index(name)?;
        let mut took = Duration::ZERO;
        let mut killed = None;
        if let Some(mut proc) = self.members[i].proc.take() {
            let (t, was_killed) = proc.stop(STOP_GRACE).await;
            took = t;
            killed = was_killed.then(|| proc.log().to_path_buf());
        }
        self.members[i].revision = revision.to_string();
        // Started again even after a SIGKILL, so the next test finds every member.
        self.spawn(i)?;
        match killed {
            Some(log) => Err(format!(
                "{name}'s Patroni ignored SIGTERM for {STOP_GRACE:?} and was killed; log {}",
                log.display()
            )),
            None => Ok(took),
        }
    }

    /// Waits until GET /cluster lists every member, one of them `leader` and every other `running`, and
    /// the leader's GET /patroni shows each other member `streaming` in its `replication`.
    ///
    /// # Errors
    /// Not within `limit`: the last state seen and the logs.
    pub async fn wait_healthy(&self, limit: Duration) -> Result<(), String> {
        wait_for(
            "one leader with every other member streaming",
            limit,
            &self.logs(),
            || async {
                let members = self.members().await?;
                let leaders: Vec<_> = members.iter().filter(|m| m.role == "leader").collect();
                let [leader] = leaders.as_slice() else {
                    return Err(format!("leaders: {leaders:?}"));
                };
                let others: Vec<_> = members.iter().filter(|m| m.role != "leader").collect();
                if members.len() != self.members.len()
                    || others.iter().any(|m| m.state != "running")
                {
                    return Err(format!("members: {members:?}"));
                }
                let streaming = self.streaming(&leader.name).await?;
                match others.iter().find(|m| !streaming.contains(&m.name)) {
                    Some(m) => Err(format!(
                        "{} not streaming from {}: {streaming:?}",
                        m.name, leader.name
                    )),
                    None => Ok(()),
                }
            },
        )
        .await
    }
}

impl Drop for Patroni {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(p) = m.proc.as_mut() {
                p.stop_blocking(STOP_GRACE);
            }
        }
    }
}
