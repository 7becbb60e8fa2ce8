//! The failover of a master set, whole within one call (the rule of
//! [`System::act`](crate::cluster::answerer::System::act)): pause writes on
//! the master, let the replicas catch up, guard the master, `SENTINEL FAILOVER`, wait until a quorum of
//! Sentinels names the new master, make the old master its replica, lift the guard and the pause.
//!
//! - **The pause** (`CLIENT PAUSE <ms> WRITE`, src/networking.c@7.0.15: write commands wait, replicas'
//!   links are never paused), as Bitnami's preStop hook does it (bitnami/charts redis
//!   `prestop-redis.sh`): no write lands on the master after the replicas caught up.
//! - **The catch-up**: the replicas Sentinel may promote have every byte the paused master took
//!   (`slave_repl_offset` ≥ its `master_repl_offset`).
//! - **The guard**: `min-replicas-to-write` set to the master's connected replicas (redis.conf@7.0.15:
//!   a master with fewer good replicas refuses writes with `NOREPLICAS`). Once Sentinel promotes one,
//!   the old master refuses every write instead of taking it: so a call cut off after the failover (the
//!   stepper killed, the pass's deadline) loses nothing when the pause runs out before Sentinel makes
//!   the old master a replica (its own `REPLICAOF` waits behind the pause: observed 3.8 s after it).
//! - **`SENTINEL FAILOVER <name>`** (src/sentinel.c@7.0.15 l.3912-3929: `+OK`, `-INPROG` one is running,
//!   `-NOGOODSLAVE`), then a quorum naming the new master ([`super::confirm`]).
//! - **The old master made a replica** (`REPLICAOF`, what Sentinel's `+convert-to-slave` sends) before
//!   the pause is lifted: the writes that waited on it are refused (`READONLY`: a postponed command is
//!   processed from scratch, src/blocked.c@7.0.15 `disconnectAllBlockedClients`), never taken by a
//!   master Sentinel no longer names. Then the guard is restored and the pause lifted.
//!
//! All of it must end before the pause does. Before the failover is requested, what fails is undone (the
//! guard restored, the pause lifted) and answered `Deny` with the reason when a server refused (a replica
//! behind, `CONFIG SET`, `NOGOODSLAVE`), an error when none answered; a failover requested that no
//! quorum confirms in time keeps the guard and answers `Wait` saying so (docs/answerers.md, "Redis
//! Sentinel").
//! Whatever a server replies, the next read confirms: a reply is never taken as proof.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::join_all;
use tokio::time::Instant;

use super::act::{config_set, restore, unpause};
use super::confirm::{needed, new_master};
use super::conn::{Connector, Failure, Server};
use super::decide::Failover;
use crate::cluster::answerer::system::Acted;

/// How often replicas' offsets and the Sentinels' masters are read while waiting.
const POLL: Duration = Duration::from_millis(100);
/// The guard's setting.
const GUARD: &str = "min-replicas-to-write";

/// Where and how to fail a master set over.
pub struct Target<'a> {
    /// The master set's name.
    pub master_name: &'a str,
    /// Every Sentinel's `host:port`, those of the pods outside the step first.
    pub sentinels: &'a [String],
    /// The master's `quorum` as `SENTINEL MASTER` gave it (`None`: not read).
    pub quorum: Option<usize>,
    /// How long writes on the master are paused: the whole failover ends within it.
    pub pause: Duration,
}

/// When the failover must be done: `pause` after `start`, less a margin for the last commands (the
/// timeout, at most a quarter of the pause).
fn finish_by(start: Instant, timeout: Duration, pause: Duration) -> Instant {
    start + pause - timeout.min(pause / 4)
}

/// Fails `f.master` over as `t` says, within `t.pause` (the module's steps).
pub async fn fail_over(c: &Connector, t: &Target<'_>, f: &Failover) -> Acted {
    let start = Instant::now();
    let by = finish_by(start, c.timeout, t.pause);
    let what = format!("failover of {} from {}", t.master_name, f.master);
    let paused = c
        .within(async {
            let mut con = c.connect(&f.address, Server::Node).await?;
            let get = redis::cmd("CONFIG").arg("GET").arg(GUARD).clone();
            let config: HashMap<String, String> = c.query(&mut con, &get).await?;
            let ms = t.pause.as_millis().to_string();
            let pause = redis::cmd("CLIENT")
                .arg("PAUSE")
                .arg(ms)
                .arg("WRITE")
                .clone();
            c.query::<String>(&mut con, &pause).await?;
            Ok((config, c.info(&f.address).await?))
        })
        .await;
    let (config, info) = match paused {
        Ok(got) => got,
        Err(e) => {
            unpause(c, &f.address).await;
            return Acted::Failed(format!(
                "Redis Sentinel: {what}: CONFIG GET {GUARD} and CLIENT PAUSE on {} ({}): {}",
                f.master,
                f.address,
                e.words()
            ));
        }
    };
    let number = |key: &str| info.get(key).and_then(|o| o.parse::<u64>().ok());
    let offset = number("master_repl_offset").unwrap_or(0);
    let original: u64 = config.get(GUARD).and_then(|v| v.parse().ok()).unwrap_or(0);
    let guard = number("connected_slaves").unwrap_or(0).max(1);
    if let Err(behind) = caught_up(c, f, offset, by).await {
        unpause(c, &f.address).await;
        return Acted::Refused(format!(
            "Redis Sentinel: {what} not requested: {behind} did not catch up with the paused master (offset {offset}) within {} s; writes resumed",
            c.timeout.as_secs()
        ));
    }
    let undo = async |why: String| {
        restore(c, &f.address, GUARD, original, guard).await;
        unpause(c, &f.address).await;
        why
    };
    if guard > original
        && let Err(e) = config_set(c, &f.address, GUARD, guard).await
    {
        return Acted::Refused(undo(format!(
            "Redis Sentinel: {what} not requested: CONFIG SET {GUARD} {guard} on {}: {} (the guard that keeps a failover cut short from losing writes); writes resumed",
            f.master,
            e.words()
        )).await);
    }
    let names: Vec<&str> = f.replicas.iter().map(|(n, _)| n.as_str()).collect();
    let done = format!(
        "writes on {} paused, {} caught up at offset {offset}",
        f.master,
        names.join(", ")
    );
    if let Err(e) = request(c, t, by).await {
        let why = format!("Redis Sentinel: {what}: {e}; writes resumed");
        let refused = e.starts_with("Sentinel ");
        let why = undo(why).await;
        return if refused {
            Acted::Refused(why)
        } else {
            Acted::Failed(why)
        };
    }
    let Some(master) = confirmed(c, t, &f.named, by).await else {
        unpause(c, &f.address).await;
        return Acted::Started(format!(
            "Redis Sentinel: {what} requested ({done}), but no quorum of Sentinels named a new master within {:.1} s: {} keeps {GUARD} {guard}, so it refuses writes once its replicas leave it, until Sentinel makes it a replica; writes resumed; confirming",
            start.elapsed().as_secs_f64(),
            f.master
        ));
    };
    let demoted = super::act::replica_of(c, &f.address, &master).await;
    restore(c, &f.address, GUARD, original, guard).await;
    unpause(c, &f.address).await;
    let took = start.elapsed().as_secs_f64();
    match demoted {
        Ok(()) => Acted::Started(format!(
            "Redis Sentinel: {what} done in {took:.1} s ({done}): {master} is the master, {} made its replica; writes resumed; confirming",
            f.master
        )),
        Err(e) => Acted::Started(format!(
            "Redis Sentinel: {what} done in {took:.1} s ({done}): {master} is the master, but REPLICAOF on {}: {}; Sentinel will make it a replica; writes resumed; confirming",
            f.master,
            e.words()
        )),
    }
}

/// `SENTINEL FAILOVER` through the first of the Sentinels that answers, before `by`.
///
/// # Errors
/// A Sentinel refused it (`Sentinel <addr> refused: <line>`), or none answered (the causes).
async fn request(c: &Connector, t: &Target<'_>, by: Instant) -> Result<(), String> {
    let mut unanswered = Vec::new();
    for s in t.sentinels {
        if Instant::now() >= by {
            unanswered.push(format!("{s}: not tried, past the pause"));
            continue;
        }
        let reply = c
            .within(async {
                let mut con = c.connect(s, Server::Sentinel).await?;
                let cmd = redis::cmd("SENTINEL")
                    .arg("FAILOVER")
                    .arg(t.master_name)
                    .clone();
                c.query::<String>(&mut con, &cmd).await
            })
            .await;
        match reply {
            Ok(_) => return Ok(()),
            Err(Failure::Refused(code, _)) if code == "INPROG" => return Ok(()),
            Err(Failure::Refused(_, line)) => return Err(format!("Sentinel {s} refused: {line}")),
            Err(Failure::Unanswered(e)) => unanswered.push(format!("{s}: {e}")),
        }
    }
    Err(format!(
        "no Sentinel answered SENTINEL FAILOVER: {}",
        unanswered.join("; ")
    ))
}

/// The new master's `host:port` once a quorum of the Sentinels names one other than `old`, polled
/// until `by`; `None` then.
async fn confirmed(c: &Connector, t: &Target<'_>, old: &str, by: Instant) -> Option<String> {
    let needed = needed(t.quorum, t.sentinels.len());
    loop {
        let named = join_all(t.sentinels.iter().map(|s| async move {
            let asked = c.within(async {
                let mut con = c.connect(s, Server::Sentinel).await?;
                let cmd = redis::cmd("SENTINEL")
                    .arg("GET-MASTER-ADDR-BY-NAME")
                    .arg(t.master_name)
                    .clone();
                c.query::<Option<(String, u16)>>(&mut con, &cmd).await
            });
            match tokio::time::timeout_at(by, asked).await {
                Ok(Ok(Some((host, port)))) => Some(format!("{host}:{port}")),
                _ => None,
            }
        }))
        .await;
        if let Some(master) = new_master(&named, old, needed) {
            return Some(master);
        }
        if Instant::now() + POLL >= by {
            return None;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits, until `by` and within the timeout, until each replica of `f` has `offset` bytes; `Err`
/// names those behind.
async fn caught_up(c: &Connector, f: &Failover, offset: u64, by: Instant) -> Result<(), String> {
    let deadline = (Instant::now() + c.timeout).min(by);
    loop {
        let mut behind = Vec::new();
        let infos = join_all(f.replicas.iter().map(|(_, a)| c.within(c.info(a)))).await;
        for ((pod, _), info) in f.replicas.iter().zip(infos) {
            let got = info
                .as_ref()
                .ok()
                .and_then(|i| i.get("slave_repl_offset"))
                .and_then(|o| o.parse::<u64>().ok());
            match (got, info) {
                (Some(o), _) if o >= offset => {}
                (Some(o), _) => behind.push(format!("{pod} (offset {o})")),
                (None, Err(e)) => behind.push(format!("{pod} ({})", e.words())),
                (None, Ok(_)) => behind.push(format!("{pod} (no slave_repl_offset)")),
            }
        }
        if behind.is_empty() {
            return Ok(());
        }
        if Instant::now() + POLL > deadline {
            return Err(behind.join(", "));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failover_ends_a_margin_before_the_pause() {
        let start = Instant::now();
        let s = Duration::from_secs;
        assert_eq!(finish_by(start, s(5), s(22)), start + s(17));
        // A short pause keeps three quarters of itself.
        assert_eq!(finish_by(start, s(5), s(8)), start + s(6));
    }
}
