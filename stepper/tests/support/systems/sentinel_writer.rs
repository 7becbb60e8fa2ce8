//! A writer loop against the Redis master as a Sentinel client finds it (the Sentinel clients guidelines,
//! redis.io/docs/reference/sentinel-clients: ask a Sentinel for the master's address, connect, check
//! `ROLE` says `master`; ask again after an error). Each write is `SADD harness:<run> <id>`.

use std::collections::BTreeSet;
use std::time::Duration;

use super::next_run;
use super::resp::{Reply, RespConn};
use super::sentinel::{COMMAND_LIMIT, MASTER_SET, Sentinel, command};
use super::writer::{Sink, Writer};

impl Sentinel {
    /// A writer of `per_second` writes a second under a fresh run; `(run, writer)`.
    pub fn writer(&self, per_second: u32) -> (u32, Writer) {
        let run = next_run();
        let sink = RedisSink {
            sentinels: self.sentinel_ports(),
            conn: None,
            run,
            patience: COMMAND_LIMIT,
        };
        (run, Writer::start(sink, per_second))
    }

    /// A writer as the Sentinel clients guidelines describe one: it keeps its connection until an
    /// error and waits on a paused master as long as `patience` (its reply, not a timeout of its own,
    /// ends each write); `(run, writer)`.
    pub fn patient_writer(&self, per_second: u32, patience: Duration) -> (u32, Writer) {
        let run = next_run();
        let sink = RedisSink {
            sentinels: self.sentinel_ports(),
            conn: None,
            run,
            patience,
        };
        (run, Writer::start_with(sink, per_second, patience))
    }

    /// The ids of run `run` the master holds.
    ///
    /// # Errors
    /// No master, or it does not answer.
    pub async fn present(&self, run: u32) -> Result<BTreeSet<u64>, String> {
        let master = self.master().await?;
        let key = format!("harness:{run}");
        let r = command(self.port(&master), &["SMEMBERS", &key]).await?;
        Ok(r.items()
            .iter()
            .filter_map(|i| i.text()?.parse().ok())
            .collect())
    }
}

/// The writer's client.
struct RedisSink {
    sentinels: Vec<u16>,
    conn: Option<RespConn>,
    run: u32,
    /// How long one command on the master's connection may wait for its reply.
    patience: Duration,
}

impl RedisSink {
    /// The master's address from the first Sentinel that answers, connected and checked with `ROLE`.
    async fn master(sentinels: &[u16], patience: Duration) -> Result<RespConn, String> {
        let mut said = Vec::new();
        for port in sentinels {
            let answer = command(*port, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_SET]).await;
            let master = match answer {
                Ok(r) => match r.items() {
                    [_, p] => p.text().and_then(|p| p.parse::<u16>().ok()),
                    _ => None,
                },
                Err(e) => {
                    said.push(e);
                    continue;
                }
            };
            let Some(master) = master else {
                said.push(format!("sentinel {port} names no master"));
                continue;
            };
            let mut conn = RespConn::connect(master, patience).await?;
            let role = conn.command(&["ROLE"]).await?;
            return match role.items().first().and_then(Reply::text) {
                Some("master") => Ok(conn),
                other => Err(format!(
                    "127.0.0.1:{master} (the Sentinels' master) says ROLE {other:?}"
                )),
            };
        }
        Err(format!("no Sentinel answers: {}", said.join("; ")))
    }
}

impl Sink for RedisSink {
    async fn write(&mut self, id: u64) -> Result<(), String> {
        let mut conn = match self.conn.take() {
            Some(c) => c,
            None => Self::master(&self.sentinels, self.patience).await?,
        };
        let key = format!("harness:{}", self.run);
        match conn.command(&["SADD", &key, &id.to_string()]).await? {
            Reply::Int(_) => {
                self.conn = Some(conn);
                Ok(())
            }
            other => Err(format!("SADD: {other:?}")),
        }
    }
}
