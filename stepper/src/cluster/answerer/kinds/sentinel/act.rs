//! What the answerer does to a master set. The failover, as Bitnami's preStop hook does it
//! (bitnami/charts redis `prestop-redis.sh`): pause writes on the master (`CLIENT PAUSE <ms> WRITE`,
//! src/networking.c@7.0.15: write commands wait, replicas' links are never paused), wait until the
//! replicas Sentinel may promote have every byte the master took (`slave_repl_offset` ≥ the paused
//! master's `master_repl_offset`), then `SENTINEL FAILOVER <name>` (src/sentinel.c@7.0.15
//! l.3912-3929: `+OK` and the failover runs on; `-INPROG` one is already running; `-NOGOODSLAVE` no
//! replica to promote). Without the pause, writes the old master takes until Sentinel turns it into a
//! replica are lost (observed: ~210 of them). Then, once Sentinel names the new master, the old one
//! made a replica before its pause is lifted ([`demote`]). Whatever a server replies, the next read
//! confirms: a reply is never taken as proof. A failover not started lifts the pause.

use std::time::Duration;

use futures::future::join_all;
use tokio::time::Instant;

use super::conn::{Connector, Failure, Server};
use super::decide::{Demote, Failover};
use crate::cluster::answerer::system::Acted;

/// How often a replica's offset is read while waiting for it to catch up.
const CATCH_UP_POLL: Duration = Duration::from_millis(50);

/// Fails master set `master_name` over (`f`) through the first of `sentinels` that answers, writes on
/// the master paused for `pause`. At most six timeouts: the pause, the catch-up (two), the Sentinels
/// (two), the unpause.
pub async fn fail_over(
    c: &Connector,
    master_name: &str,
    sentinels: &[String],
    f: &Failover,
    pause: Duration,
) -> Acted {
    let what = format!("failover of {master_name} from {}", f.master);
    let paused = c
        .within(async {
            let mut con = c.connect(&f.address, Server::Node).await?;
            let ms = pause.as_millis().to_string();
            let pause_cmd = redis::cmd("CLIENT")
                .arg("PAUSE")
                .arg(ms)
                .arg("WRITE")
                .clone();
            c.query::<String>(&mut con, &pause_cmd).await?;
            c.info(&f.address).await
        })
        .await;
    let offset = match paused {
        Ok(info) => info
            .get("master_repl_offset")
            .and_then(|o| o.parse::<u64>().ok())
            .unwrap_or(0),
        Err(e) => {
            unpause(c, &f.address).await;
            return Acted::Failed(format!(
                "Redis Sentinel: {what}: CLIENT PAUSE on {} ({}): {}",
                f.master,
                f.address,
                e.words()
            ));
        }
    };
    if let Err(behind) = caught_up(c, f, offset).await {
        unpause(c, &f.address).await;
        return Acted::Refused(format!(
            "Redis Sentinel: {what} not requested: {behind} did not catch up with the paused master (offset {offset}) within {} s; writes resumed",
            c.timeout.as_secs()
        ));
    }
    let names: Vec<&str> = f.replicas.iter().map(|(n, _)| n.as_str()).collect();
    let done = format!(
        "writes on {} paused for {} s, {} caught up at offset {offset}",
        f.master,
        pause.as_secs(),
        names.join(", ")
    );
    let mut unanswered = Vec::new();
    let deadline = Instant::now() + 2 * c.timeout;
    for s in sentinels {
        if Instant::now() >= deadline {
            unanswered.push(format!(
                "{s}: not tried, past {} s",
                2 * c.timeout.as_secs()
            ));
            continue;
        }
        let reply = c
            .within(async {
                let mut con = c.connect(s, Server::Sentinel).await?;
                let cmd = redis::cmd("SENTINEL")
                    .arg("FAILOVER")
                    .arg(master_name)
                    .clone();
                c.query::<String>(&mut con, &cmd).await
            })
            .await;
        match reply {
            Ok(_) => {
                return Acted::Started(format!(
                    "Redis Sentinel: {what} requested ({done}); confirming"
                ));
            }
            Err(Failure::Refused(code, line)) if code == "INPROG" => {
                return Acted::Started(format!(
                    "Redis Sentinel: {what}: {line} ({done}); confirming"
                ));
            }
            Err(Failure::Refused(_, line)) => {
                unpause(c, &f.address).await;
                return Acted::Refused(format!(
                    "Redis Sentinel {s} refused the {what}: {line}; writes resumed"
                ));
            }
            Err(Failure::Unanswered(e)) => unanswered.push(format!("{s}: {e}")),
        }
    }
    unpause(c, &f.address).await;
    Acted::Failed(format!(
        "Redis Sentinel: {what}: no Sentinel answered SENTINEL FAILOVER: {}; writes resumed",
        unanswered.join("; ")
    ))
}

/// Waits, within the timeout, until each replica of `f` has `offset` bytes; `Err` names those behind.
async fn caught_up(c: &Connector, f: &Failover, offset: u64) -> Result<(), String> {
    let deadline = Instant::now() + c.timeout;
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
        if Instant::now() + CATCH_UP_POLL > deadline {
            return Err(behind.join(", "));
        }
        tokio::time::sleep(CATCH_UP_POLL).await;
    }
}

/// Makes `d.pod` a replica of Sentinel's master (`REPLICAOF <host> <port>`, what Sentinel's
/// `+convert-to-slave` sends), then lifts its pause: the writes that waited on it are refused
/// (`READONLY`) rather than taken by a master Sentinel no longer names.
pub async fn demote(c: &Connector, d: &Demote) -> Acted {
    let what = format!(
        "{} still acted as master after the failover to {}",
        d.pod, d.master
    );
    let Some((host, port)) = d.master_address.rsplit_once(':') else {
        return Acted::Failed(format!(
            "Redis Sentinel: {what}: {:?} is not host:port",
            d.master_address
        ));
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let done = c
        .within(async {
            let mut con = c.connect(&d.address, Server::Node).await?;
            let cmd = redis::cmd("REPLICAOF").arg(host).arg(port).clone();
            c.query::<String>(&mut con, &cmd).await?;
            c.query::<String>(&mut con, redis::cmd("CLIENT").arg("UNPAUSE"))
                .await
        })
        .await;
    match done {
        Ok(_) => Acted::Started(format!(
            "Redis Sentinel: {what}: made it a replica of {} as Sentinel would, writes resumed; confirming",
            d.master_address
        )),
        Err(Failure::Refused(_, line)) => Acted::Refused(format!(
            "Redis Sentinel: {what}: {} refused REPLICAOF: {line}",
            d.pod
        )),
        Err(Failure::Unanswered(e)) => Acted::Failed(format!(
            "Redis Sentinel: {what}: REPLICAOF on {} ({}): {e}",
            d.pod, d.address
        )),
    }
}

/// `CLIENT UNPAUSE` on `address`, best effort: the pause ends by itself anyway.
async fn unpause(c: &Connector, address: &str) {
    let _ = c
        .within(async {
            let mut con = c.connect(address, Server::Node).await?;
            c.query::<String>(&mut con, redis::cmd("CLIENT").arg("UNPAUSE"))
                .await
        })
        .await;
}
