//! What the tests ask of a running [`Sentinel`] set: the master and replicas as the Sentinels name them
//! (src/sentinel.c@7.0.15 `sentinelCommand` l.3806-4015), a node's `INFO replication`, `SENTINEL
//! FAILOVER`, and the waits for the set to be whole again.

use std::time::Duration;

use super::process::wait_for;
use super::resp::{Reply, info_fields};
use super::sentinel::{MASTER_SET, Sentinel, command};

/// A replica as a Sentinel lists it (`SENTINEL REPLICAS`, sentinel.c@7.0.15 l.3435-3466).
#[derive(Debug, Clone, PartialEq)]
pub struct Replica {
    /// The member's name (from its port).
    pub name: String,
    /// `flags`: `slave`, and `s_down`, `disconnected`, … when so.
    pub flags: String,
    /// `master-link-status` is `ok`.
    pub link_ok: bool,
    /// `slave-repl-offset` in bytes (refreshed by the Sentinel's INFO every 10 s).
    pub offset: u64,
}

impl Sentinel {
    /// The master each Sentinel names (`SENTINEL GET-MASTER-ADDR-BY-NAME`), in ordinal order.
    pub async fn masters_seen(&self) -> Vec<Result<String, String>> {
        let mut seen = Vec::new();
        for port in self.sentinel_ports() {
            let answer = command(port, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_SET]).await;
            seen.push(answer.and_then(|r| {
                match r.items() {
                    [_, p] => p
                        .text()
                        .and_then(|p| p.parse().ok())
                        .map(|p| self.name_of(p))
                        .ok_or(format!("{r:?}")),
                    _ => Err(format!("sentinel {port}: {r:?}")),
                }
            }));
        }
        seen
    }

    /// The master, as the first Sentinel that answers names it.
    ///
    /// # Errors
    /// No Sentinel answers.
    pub async fn master(&self) -> Result<String, String> {
        let seen = self.masters_seen().await;
        let errors: Vec<&String> = seen.iter().filter_map(|s| s.as_ref().err()).collect();
        seen.iter()
            .find_map(|s| s.as_ref().ok().cloned())
            .ok_or_else(|| format!("no Sentinel names a master: {errors:?}"))
    }

    /// The replicas as the first answering Sentinel lists them.
    ///
    /// # Errors
    /// No Sentinel answers.
    pub async fn replicas(&self) -> Result<Vec<Replica>, String> {
        let mut last = String::new();
        for port in self.sentinel_ports() {
            match command(port, &["SENTINEL", "REPLICAS", MASTER_SET]).await {
                Ok(r @ Reply::Array(_)) => {
                    return Ok(r
                        .items()
                        .iter()
                        .map(Reply::map)
                        .map(|m| Replica {
                            name: self
                                .name_of(m.get("port").and_then(|p| p.parse().ok()).unwrap_or(0)),
                            flags: m.get("flags").cloned().unwrap_or_default(),
                            link_ok: m.get("master-link-status").map(String::as_str) == Some("ok"),
                            offset: m
                                .get("slave-repl-offset")
                                .and_then(|o| o.parse().ok())
                                .unwrap_or(0),
                        })
                        .collect());
                }
                Ok(other) => last = format!("{other:?}"),
                Err(e) => last = e,
            }
        }
        Err(format!("no Sentinel lists the replicas; last: {last}"))
    }

    /// `INFO replication` of member `name`, as fields (`role`, `master_port`, `master_link_status`,
    /// `connected_slaves`, …; src/server.c@7.0.15).
    ///
    /// # Errors
    /// It does not answer.
    pub async fn info(
        &self,
        name: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, String> {
        let r = command(self.port(name), &["INFO", "replication"]).await?;
        r.text()
            .map(info_fields)
            .ok_or_else(|| format!("{name}: INFO: {r:?}"))
    }

    /// `SENTINEL FAILOVER` through the first Sentinel that answers: it replies `+OK` and fails over
    /// asynchronously (sentinel.c@7.0.15 l.3912-3929).
    ///
    /// # Errors
    /// No Sentinel answers, or its error (`-INPROG`, `-NOGOODSLAVE`).
    pub async fn failover(&self) -> Result<(), String> {
        let mut last = String::new();
        for port in self.sentinel_ports() {
            match command(port, &["SENTINEL", "FAILOVER", MASTER_SET]).await {
                Ok(Reply::Simple(ok)) if ok == "OK" => return Ok(()),
                Ok(other) => return Err(format!("sentinel {port}: {other:?}")),
                Err(e) => last = e,
            }
        }
        Err(format!(
            "no Sentinel answers SENTINEL FAILOVER; last: {last}"
        ))
    }

    /// Waits until every Sentinel names the same master with no failover under way and knows the
    /// other Sentinels and every replica, the master sees every replica connected, and each replica
    /// follows it with its link up.
    ///
    /// # Errors
    /// Not within `limit`: the last thing missing and the logs.
    pub async fn wait_healthy(&self, limit: Duration) -> Result<(), String> {
        let n = self.pods.len();
        wait_for(
            "one master, every replica linked, every Sentinel agreeing",
            limit,
            &self.logs(),
            || async {
                let seen = self.masters_seen().await;
                let master = self.master().await?;
                if seen.iter().any(|s| s.as_ref() != Ok(&master)) {
                    return Err(format!("Sentinels name {seen:?}"));
                }
                for port in self.sentinel_ports() {
                    let m = command(port, &["SENTINEL", "MASTER", MASTER_SET])
                        .await?
                        .map();
                    let field = |k: &str| m.get(k).cloned().unwrap_or_default();
                    let (flags, slaves, others) = (
                        field("flags"),
                        field("num-slaves"),
                        field("num-other-sentinels"),
                    );
                    if flags != "master"
                        || slaves != (n - 1).to_string()
                        || others != (n - 1).to_string()
                    {
                        return Err(format!(
                            "sentinel {port}: flags {flags}, {slaves} replicas, {others} others"
                        ));
                    }
                }
                if let Some(r) = self.replicas().await?.iter().find(|r| r.flags != "slave") {
                    return Err(format!("replica {} flags {}", r.name, r.flags));
                }
                let info = self.info(&master).await?;
                let field = |k: &str| info.get(k).cloned().unwrap_or_default();
                if field("role") != "master" || field("connected_slaves") != (n - 1).to_string() {
                    return Err(format!("{master}: {info:?}"));
                }
                for p in self.pods.iter().filter(|p| p.name != master) {
                    let i = self.info(&p.name).await?;
                    let field = |k: &str| i.get(k).cloned().unwrap_or_default();
                    let follows = field("master_port") == self.port(&master).to_string();
                    if field("role") != "slave" || !follows || field("master_link_status") != "up" {
                        return Err(format!("{}: {i:?}", p.name));
                    }
                }
                Ok(())
            },
        )
        .await
    }

    /// Waits until every Sentinel lists every replica with its link up. Sentinel refreshes what it
    /// knows of a replica from the replica's INFO every 10 s (`sentinel_info_period`, sentinel.c@7.0.15
    /// l.84), so after a restart its view lags the replica's own ([`Sentinel::wait_healthy`]).
    ///
    /// # Errors
    /// Not within `limit`: the last view and the logs.
    pub async fn wait_sentinel_view(&self, limit: Duration) -> Result<(), String> {
        let n = self.pods.len() - 1;
        wait_for(
            "every Sentinel to see every replica linked",
            limit,
            &self.logs(),
            || async {
                for port in self.sentinel_ports() {
                    let r = command(port, &["SENTINEL", "REPLICAS", MASTER_SET]).await?;
                    let linked = r.items().iter().map(Reply::map).filter(|m| {
                        m.get("master-link-status").map(String::as_str) == Some("ok")
                            && m.get("flags").map(String::as_str) == Some("slave")
                    });
                    if linked.count() != n {
                        return Err(format!("sentinel {port}: {r:?}"));
                    }
                }
                Ok(())
            },
        )
        .await
    }
}
