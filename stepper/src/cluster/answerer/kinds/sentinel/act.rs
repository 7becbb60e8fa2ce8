//! The single commands the answerer sends a data node outside the failover's sequence
//! ([`super::failover`]): an old master made a replica ([`demote`], [`replica_of`]), a setting changed
//! ([`config_set`]) and the failover's guard restored ([`restore`]), a pause lifted ([`unpause`]).

use super::conn::{Connector, Failure, Server};
use super::decide::Demote;
use crate::cluster::answerer::system::Acted;

/// Makes `d.pod` a replica of Sentinel's master (`REPLICAOF <host> <port>`, what Sentinel's
/// `+convert-to-slave` sends), then lifts its pause: the writes that waited on it are refused
/// (`READONLY`) rather than taken by a master Sentinel no longer names. For an old master a failover
/// cut short left acting as one ([`super::decide`]).
pub async fn demote(c: &Connector, d: &Demote) -> Acted {
    let what = format!(
        "{} still acted as master after the failover to {}",
        d.pod, d.master
    );
    let done = match replica_of(c, &d.address, &d.master_address).await {
        Ok(()) => {
            unpause(c, &d.address).await;
            Ok(())
        }
        Err(e) => Err(e),
    };
    match done {
        Ok(()) => Acted::Started(format!(
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

/// `REPLICAOF <host> <port>` of `master` (`host:port`, an IPv6 host in brackets or not) on the Redis at
/// `address`, within the timeout.
///
/// # Errors
/// `master` is not `host:port`, or the node refused or did not answer.
pub async fn replica_of(c: &Connector, address: &str, master: &str) -> Result<(), Failure> {
    let Some((host, port)) = master.rsplit_once(':') else {
        return Err(Failure::Unanswered(format!("{master:?} is not host:port")));
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    c.within(async {
        let mut con = c.connect(address, Server::Node).await?;
        let cmd = redis::cmd("REPLICAOF").arg(host).arg(port).clone();
        c.query::<String>(&mut con, &cmd).await.map(drop)
    })
    .await
}

/// `CONFIG SET <key> <value>` on the Redis at `address`, within the timeout.
///
/// # Errors
/// The node refused (a renamed or forbidden `CONFIG`) or did not answer.
pub async fn config_set(
    c: &Connector,
    address: &str,
    key: &str,
    value: u64,
) -> Result<(), Failure> {
    let cmd = redis::cmd("CONFIG").arg("SET").arg(key).arg(value).clone();
    c.within(async {
        let mut con = c.connect(address, Server::Node).await?;
        c.query::<String>(&mut con, &cmd).await.map(drop)
    })
    .await
}

/// `CONFIG SET <key> <original>` on `address` when the failover set it to `set` (`set > original`),
/// best effort: a node that does not answer keeps the stricter value, which loses no write.
pub async fn restore(c: &Connector, address: &str, key: &str, original: u64, set: u64) {
    if set > original {
        let _ = config_set(c, address, key, original).await;
    }
}

/// `CLIENT UNPAUSE` on `address`, best effort: the pause ends by itself anyway.
pub async fn unpause(c: &Connector, address: &str) {
    let _ = c
        .within(async {
            let mut con = c.connect(address, Server::Node).await?;
            c.query::<String>(&mut con, redis::cmd("CLIENT").arg("UNPAUSE"))
                .await
        })
        .await;
}
