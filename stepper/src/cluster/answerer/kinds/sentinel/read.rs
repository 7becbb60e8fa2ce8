//! One read of a master set for a question: every Sentinel's `GET-MASTER-ADDR-BY-NAME` (at once), then
//! `SENTINEL MASTER`, `REPLICAS` and `CKQUORUM` from the first that answered, then each pod's Redis:
//! its host resolved and its `INFO replication` (at once). Each step is bounded by the entry's timeout,
//! so a read takes at most three of them. Commands from src/sentinel.c@7.0.15 `sentinelCommand`.

use std::collections::HashMap;
use std::net::IpAddr;

use futures::TryFutureExt;
use futures::future::join_all;

use super::conn::{Connector, Failure, Server};
use super::view::{Fields, Pod, View};

/// A pod to read: (name, ordinal, its Redis's `host:port`).
pub type Target = (String, u32, String);

/// Reads master set `master_name` through `sentinels` (in the order to prefer) and the Redis of each
/// of `pods`.
///
/// # Errors
/// No Sentinel answered; none knows `master_name`; the first that answered failed `SENTINEL MASTER` or
/// `REPLICAS`; no pod's Redis answered INFO. Each names the addresses and the causes.
pub async fn read(
    c: &Connector,
    master_name: &str,
    sentinels: &[String],
    pods: Vec<Target>,
) -> Result<View, String> {
    let asked = join_all(sentinels.iter().map(|s| async move {
        let named = c.within(async {
            let mut con = c.connect(s, Server::Sentinel).await?;
            let cmd = sentinel(&["GET-MASTER-ADDR-BY-NAME", master_name]);
            let addr: Option<(String, u16)> = c.query(&mut con, &cmd).await?;
            Ok((con, addr.map(|(h, p)| format!("{h}:{p}"))))
        });
        (s.clone(), named.await)
    }))
    .await;
    let mut errors = Vec::new();
    let mut named = Vec::new();
    let mut first = None;
    for (s, got) in asked {
        match got {
            Ok((con, master)) => {
                named.push((s.clone(), master));
                first = first.or(Some((s, con)));
            }
            Err(e) => errors.push(format!("{s}: {}", e.words())),
        }
    }
    let Some((at, mut con)) = first else {
        return Err(format!(
            "Redis Sentinel: no Sentinel answered: {}",
            if errors.is_empty() {
                "no Sentinel address configured".to_string()
            } else {
                errors.join("; ")
            }
        ));
    };
    if named.iter().all(|(_, m)| m.is_none()) {
        return Err(format!(
            "Redis Sentinel: no Sentinel knows a master named {master_name:?} (the entry's masterName)"
        ));
    }
    let failed = |what: &str, e: Failure| {
        format!(
            "Redis Sentinel {at}: SENTINEL {what} {master_name}: {}",
            e.words()
        )
    };
    let (master, replicas, quorum) = c
        .within(
            async {
                let master: HashMap<String, String> = c
                    .query(&mut con, &sentinel(&["MASTER", master_name]))
                    .await
                    .map_err(|e| ("MASTER", e))?;
                let replicas: Vec<HashMap<String, String>> = c
                    .query(&mut con, &sentinel(&["REPLICAS", master_name]))
                    .await
                    .map_err(|e| ("REPLICAS", e))?;
                let quorum = match c
                    .query::<String>(&mut con, &sentinel(&["CKQUORUM", master_name]))
                    .await
                {
                    Ok(ok) => Ok(ok),
                    Err(Failure::Refused(_, line)) => Err(line),
                    Err(e) => return Err(("CKQUORUM", e)),
                };
                Ok((master, replicas, quorum))
            }
            .map_err(|(what, e)| Failure::Unanswered(failed(what, e))),
        )
        .await
        .map_err(|e| match e {
            Failure::Unanswered(t) if t.starts_with("Redis Sentinel ") => t,
            other => failed("MASTER, REPLICAS, CKQUORUM", other),
        })?;
    let pods: Vec<Pod> = join_all(pods.into_iter().map(|(name, ordinal, address)| async move {
        let read = c.within(async { Ok((resolve(&address).await, c.info(&address).await)) });
        let (resolved, info) = read.await.unwrap_or_else(|e| (Vec::new(), Err(e)));
        let info = info.map_err(|e| e.words().to_string());
        Pod {
            name,
            ordinal,
            address,
            resolved,
            info,
        }
    }))
    .await;
    if !pods.is_empty() && pods.iter().all(|p| p.info.is_err()) {
        let causes: Vec<String> = pods
            .iter()
            .filter_map(|p| {
                Some(format!(
                    "{} ({}): {}",
                    p.name,
                    p.address,
                    p.info.as_ref().err()?
                ))
            })
            .collect();
        return Err(format!(
            "Redis Sentinel: no pod's Redis answered INFO: {}",
            causes.join("; ")
        ));
    }
    Ok(View {
        master_name: master_name.to_string(),
        named,
        master: fields(master),
        replicas: replicas.into_iter().map(fields).collect(),
        quorum,
        pods,
    })
}

fn sentinel(args: &[&str]) -> redis::Cmd {
    let mut cmd = redis::cmd("SENTINEL");
    for a in args {
        cmd.arg(*a);
    }
    cmd
}

fn fields(map: HashMap<String, String>) -> Fields {
    map.into_iter().collect()
}

/// `ip:port` for each address `address`'s host resolves to: empty for an IP literal, or when it does
/// not resolve (its INFO then says why).
async fn resolve(address: &str) -> Vec<String> {
    let host = address.rsplit_once(':').map_or("", |(h, _)| h);
    if host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok()
    {
        return Vec::new();
    }
    match tokio::net::lookup_host(address).await {
        Ok(addrs) => addrs.map(|a| format!("{}:{}", a.ip(), a.port())).collect(),
        Err(_) => Vec::new(),
    }
}
