//! What the tests ask of and do to a running [`Patroni`] cluster: its REST API (GET /cluster, GET
//! /patroni, POST /switchover, PATCH /config: patroni/api.py@v3.0.2, the brief's section 1), SQL on a
//! member, a lagging replica, and a writer loop against the leader.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use super::net::{Auth, call, get_json};
use super::next_run;
use super::patroni::Patroni;
use super::pgwire::{PgConn, Rows};
use super::process::send;
use super::writer::{Sink, Writer};

/// Seconds a connection to a member may take.
const CONNECT_LIMIT: Duration = Duration::from_millis(500);

/// One member as GET /cluster lists it (`cluster_as_json`, patroni/utils.py@v3.0.2 l.406-450).
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Its name (= the pod's).
    pub name: String,
    /// `leader`, `replica`, `sync_standby`, `standby_leader`.
    pub role: String,
    /// PostgreSQL's state: `running`, `starting`, `stopping`, `stopped`, `creating replica`, ….
    pub state: String,
    /// Bytes behind the leader's last WAL position (written once a `loop_wait`); `None` on the leader,
    /// or when Patroni says `"unknown"`.
    pub lag: Option<u64>,
    /// Its timeline; absent while (re)starting.
    pub timeline: Option<u64>,
    /// Its tag `revision` (the harness's marker of the revision it was started as).
    pub revision: Option<String>,
}

/// A replica's WAL receiver held stopped (SIGSTOP) until this is dropped or released: the replica
/// receives nothing, so its lag in GET /cluster grows with every write (Patroni reports a replica's
/// position as the larger of received and replayed, patroni/postgresql/__init__.py@v3.0.2 l.1037-1038:
/// pausing replay alone would not show).
pub struct Lag {
    pid: i32,
}

impl Lag {
    /// SIGCONT: the receiver resumes (or, cut off by `wal_sender_timeout` meanwhile, reconnects).
    pub fn release(self) {}
}

impl Drop for Lag {
    fn drop(&mut self) {
        let _ = send(self.pid, libc::SIGCONT);
    }
}

impl Patroni {
    /// `http://127.0.0.1:<REST port>` of member `name`.
    pub fn rest_url(&self, name: &str) -> String {
        self.index(name)
            .map(|i| format!("http://127.0.0.1:{}", self.members[i].rest))
            .unwrap_or_default()
    }

    /// PostgreSQL's port of member `name`.
    pub fn pg_port(&self, name: &str) -> u16 {
        self.index(name)
            .map(|i| self.members[i].pg)
            .unwrap_or_default()
    }

    /// The REST API's basic-auth credentials, if configured.
    pub fn rest_auth(&self) -> &Auth {
        &self.auth
    }

    /// GET /cluster from the first member that answers.
    ///
    /// # Errors
    /// No member answers.
    pub async fn cluster(&self) -> Result<Value, String> {
        let mut last = String::new();
        for m in &self.members {
            match get_json(&format!("http://127.0.0.1:{}/cluster", m.rest)).await {
                Ok(v) => return Ok(v),
                Err(e) => last = e,
            }
        }
        Err(format!(
            "no Patroni member answers GET /cluster; last: {last}"
        ))
    }

    /// The members GET /cluster lists (a member whose Patroni stopped drops out once its key expires).
    ///
    /// # Errors
    /// As [`Patroni::cluster`].
    pub async fn members(&self) -> Result<Vec<Member>, String> {
        let cluster = self.cluster().await?;
        Ok(cluster["members"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| Member {
                name: m["name"].as_str().unwrap_or_default().to_string(),
                role: m["role"].as_str().unwrap_or_default().to_string(),
                state: m["state"].as_str().unwrap_or_default().to_string(),
                lag: m["lag"].as_u64(),
                timeline: m["timeline"].as_u64(),
                revision: m["tags"]["revision"].as_str().map(String::from),
            })
            .collect())
    }

    /// The member GET /cluster names `leader`, if any.
    ///
    /// # Errors
    /// As [`Patroni::cluster`].
    pub async fn leader(&self) -> Result<Option<String>, String> {
        Ok(self
            .members()
            .await?
            .into_iter()
            .find(|m| m.role == "leader")
            .map(|m| m.name))
    }

    /// The members whose WAL stream `leader`'s PostgreSQL serves in state `streaming` (its GET /patroni
    /// `replication`, `application_name` = member name).
    ///
    /// # Errors
    /// It does not answer.
    pub async fn streaming(&self, leader: &str) -> Result<Vec<String>, String> {
        let me = get_json(&format!("{}/patroni", self.rest_url(leader))).await?;
        Ok(me["replication"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["state"] == "streaming")
            .filter_map(|r| r["application_name"].as_str().map(String::from))
            .collect())
    }

    /// POST /switchover `{"leader", "candidate"}` to the leader's API, with the credentials; Patroni
    /// answers once the candidate leads (api.py@v3.0.2 l.568-615). Returns its answer text.
    ///
    /// # Errors
    /// No leader, or not 200: the status and Patroni's text ("no good candidates", …).
    pub async fn switchover(&self, candidate: &str) -> Result<String, String> {
        let leader = self
            .leader()
            .await?
            .ok_or("no leader to switch over from")?;
        let url = format!("{}/switchover", self.rest_url(&leader));
        let body = json!({"leader": leader, "candidate": candidate});
        match call(Method::POST, &url, Some(&body), &self.auth).await? {
            (200, text) => Ok(text),
            (status, text) => Err(format!("POST {url} {body}: HTTP {status}: {text}")),
        }
    }

    /// PATCH /config `{"pause": pause}` with the credentials: maintenance mode on or off (GET /cluster
    /// then says `"pause": true`, utils.py@v3.0.2 l.442-443; Patroni then neither fails over nor
    /// starts stopped members).
    ///
    /// # Errors
    /// Not 200.
    pub async fn pause(&self, pause: bool) -> Result<(), String> {
        let url = format!("{}/config", self.rest_url(&self.members[0].name));
        match call(
            Method::PATCH,
            &url,
            Some(&json!({ "pause": pause })),
            &self.auth,
        )
        .await?
        {
            (200, _) => Ok(()),
            (status, text) => Err(format!("PATCH {url}: HTTP {status}: {text}")),
        }
    }

    /// Runs `sql` on member `name`'s PostgreSQL.
    ///
    /// # Errors
    /// No session, or PostgreSQL's error.
    pub async fn sql(&self, name: &str, sql: &str) -> Result<Rows, String> {
        let port = self.pg_port(name);
        PgConn::connect(port, CONNECT_LIMIT)
            .await?
            .query(sql)
            .await
            .map_err(|e| format!("{name}: {sql}: {e}"))
    }

    /// Stops replica `name`'s WAL receiver (SIGSTOP) until the returned [`Lag`] is dropped.
    ///
    /// # Errors
    /// No postmaster or no WAL receiver under it (not a streaming replica).
    pub fn make_lag(&self, name: &str) -> Result<Lag, String> {
        let pid_file = self.work.data.join(format!("data-{name}/postmaster.pid"));
        let postmaster: i32 = std::fs::read_to_string(&pid_file)
            .map_err(|e| format!("{}: {e}", pid_file.display()))?
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("{}: no pid", pid_file.display()))?;
        let receiver = children(postmaster)
            .into_iter()
            .find(|(_, cmdline)| cmdline.contains("walreceiver"))
            .ok_or_else(|| {
                format!("{name} (postmaster {postmaster}) has no walreceiver process")
            })?;
        send(receiver.0, libc::SIGSTOP)?;
        Ok(Lag { pid: receiver.0 })
    }

    pub(super) async fn create_table(&self) -> Result<(), String> {
        let leader = self.leader().await?.ok_or("no leader")?;
        self.sql(
            &leader,
            "CREATE TABLE IF NOT EXISTS harness_writes (run int, id bigint, PRIMARY KEY (run, id))",
        )
        .await
        .map(|_| ())
    }

    /// A writer of `per_second` INSERTs a second into table `harness_writes`, each committed on the
    /// member that accepts writes (found as libpq's `target_session_attrs=read-write` does: the first
    /// member whose `pg_is_in_recovery()` is false), under a fresh run; `(run, writer)`.
    pub fn writer(&self, per_second: u32) -> (u32, Writer) {
        let run = next_run();
        let sink = PgSink {
            ports: self.members.iter().map(|m| m.pg).collect(),
            conn: None,
            run,
        };
        (run, Writer::start(sink, per_second))
    }

    /// The ids of run `run` the leader holds.
    ///
    /// # Errors
    /// No leader, or the query failed.
    pub async fn present(&self, run: u32) -> Result<BTreeSet<u64>, String> {
        let leader = self.leader().await?.ok_or("no leader")?;
        let rows = self
            .sql(
                &leader,
                &format!("SELECT id FROM harness_writes WHERE run = {run}"),
            )
            .await?;
        Ok(rows
            .iter()
            .filter_map(|r| r.first()?.as_deref()?.parse().ok())
            .collect())
    }
}

/// The processes whose parent is `parent`: (pid, command line), from /proc.
fn children(parent: i32) -> Vec<(i32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces, so split after its closing parenthesis.
            let ppid: i32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            (ppid == parent).then(|| (pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")))
        })
        .collect()
}

/// The writer's client: one session to the member that accepts writes, found again after a failure.
struct PgSink {
    ports: Vec<u16>,
    conn: Option<PgConn>,
    run: u32,
}

impl PgSink {
    async fn primary(ports: &[u16]) -> Result<PgConn, String> {
        let mut said = Vec::new();
        for port in ports {
            match PgConn::connect(*port, CONNECT_LIMIT).await {
                Ok(mut c) => match c.query("SELECT pg_is_in_recovery()").await {
                    Ok(rows)
                        if rows
                            .first()
                            .and_then(|r| r.first())
                            .cloned()
                            .flatten()
                            .as_deref()
                            == Some("f") =>
                    {
                        return Ok(c);
                    }
                    Ok(_) => said.push(format!("{port}: in recovery")),
                    Err(e) => said.push(format!("{port}: {e}")),
                },
                Err(e) => said.push(e),
            }
        }
        Err(format!("no member accepts writes: {}", said.join("; ")))
    }
}

impl Sink for PgSink {
    async fn write(&mut self, id: u64) -> Result<(), String> {
        let mut conn = match self.conn.take() {
            Some(c) => c,
            None => Self::primary(&self.ports).await?,
        };
        conn.query(&format!(
            "INSERT INTO harness_writes (run, id) VALUES ({}, {id})",
            self.run
        ))
        .await?;
        self.conn = Some(conn);
        Ok(())
    }
}
