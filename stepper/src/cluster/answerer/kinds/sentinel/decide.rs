//! What Redis Sentinel and the data nodes say of a question (pure): may the step's pods go, or must
//! the master be failed over first.
//!
//! The rules, with their upstream sources (redis/redis 7.0.15; docs/answerers.md, "Redis Sentinel"):
//! - The master is what every Sentinel that answered names (`SENTINEL GET-MASTER-ADDR-BY-NAME`,
//!   src/sentinel.c `sentinelGetCurrentMasterAddress`: already the promoted replica while the failover
//!   reconfigures the others); Sentinels that disagree → `Wait`.
//! - An instance is the pod whose address names it ([`Pod::names`]): the same `host:port`, or an
//!   address its host resolves to, or — Sentinel announcing hostnames (`announce-hostnames yes`,
//!   Bitnami's `useHostnames`) — a host whose first DNS label is the pod's name, on the same port.
//!   A master that is no pod of the set → `Deny` (the entry does not reach the pods as Sentinel names
//!   them: a person must fix it).
//! - `failover_in_progress` among the master's flags (sentinel.c `addReplySentinelRedisInstance`) →
//!   `Wait`.
//! - The master among the step's pods (whatever `primary-selector` says): fail over first, if a
//!   replica outside the step is one Sentinel may promote — `sentinelSelectSlave`: not `s_down`,
//!   `o_down` or `disconnected`, a ping answered within 5 s (`sentinel_ping_period × 5`), INFO at most
//!   30 s old (`sentinel_info_period × 3`), `slave-priority` not 0 — and is healthy as below; while a
//!   replica already on `updateRevision` outside the step is not healthy yet, `Wait` for it (Sentinel
//!   picks the replica it promotes: one not updated would need another failover at its own turn).
//! - A healthy replica (src/server.c `genRedisInfoString`, INFO replication): Sentinel lists it
//!   (flags without `s_down`, `o_down`, `disconnected`; `master-link-status` `ok`), and its own INFO
//!   says `role:slave`, following the master, `master_link_status:up`, not syncing, and
//!   `master_repl_offset − slave_repl_offset` ≤ the limit (exact byte offsets of one replication
//!   stream, read from the nodes: Sentinel's `slave-repl-offset` is up to 10 s old).
//! - A pod of the step that still says `role:master` while Sentinel names another (an old master keeps
//!   the role until Sentinel reconfigures it, ≥ 8 s after a failover, and only once its pause ends):
//!   make it a replica of Sentinel's master first ([`Demote`]).
//! - `Update`: the master up and answering as master, `SENTINEL CKQUORUM` OK, every other pod of the
//!   set a healthy replica.
//! - `Switchover` with the master outside the step (and no pod of the step acting as master):
//!   `Approve`.

use std::collections::BTreeSet;

use super::view::{Pod, View, flagged, get, number};
use crate::cluster::answerer::question::{Phase, Question};
use crate::cluster::answerer::system::Verdict;

/// Seconds before asking again while the set catches up.
pub const CATCH_UP_SECONDS: u32 = 5;
/// Seconds before asking again when Sentinel's master is no pod of the set.
pub const MISMATCH_SECONDS: u32 = 60;
/// Sentinel skips a replica whose last ping reply is older (ms): `sentinel_ping_period × 5`.
pub const PING_VALIDITY_MS: u64 = 5_000;
/// Sentinel skips a replica whose INFO is older (ms): `sentinel_info_period × 3`.
pub const INFO_VALIDITY_MS: u64 = 30_000;

/// A failover to ask Sentinel for, whole in one call ([`super::failover`]): pause writes on the master,
/// let the replicas catch up, `SENTINEL FAILOVER <name>` (Sentinel picks the replica: the caller cannot
/// name it), wait for a quorum of Sentinels to name the new master, make the old master its replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    /// The master's pod.
    pub master: String,
    /// Its Redis's address (where `CLIENT PAUSE` goes).
    pub address: String,
    /// The master's `host:port` as the Sentinels name it now: the failover is done once a quorum of
    /// them names another.
    pub named: String,
    /// The replicas Sentinel may promote, (pod, address): each must catch up with the paused master
    /// first. At least one is outside the step.
    pub replicas: Vec<(String, String)>,
}

/// Making the old master a replica of the new one, as Sentinel does when it finds a master it does not
/// name (`+convert-to-slave`, sentinel.c@7.0.15 `sentinelRefreshInstanceInfo`): `REPLICAOF`, then
/// `CLIENT UNPAUSE`. Sentinel would do it only once its pause ends (its own commands wait behind a
/// `PUBLISH` the pause holds), after the writes that waited on the old master ran there, acknowledged
/// and lost; made a replica first, the old master refuses them (`READONLY`: a postponed command is
/// processed from scratch, src/blocked.c@7.0.15 `disconnectAllBlockedClients`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demote {
    /// The old master's pod (one of the step's).
    pub pod: String,
    /// Its Redis's address.
    pub address: String,
    /// The master's pod as Sentinel names it.
    pub master: String,
    /// The master's `host:port` as Sentinel names it (what `REPLICAOF` is given).
    pub master_address: String,
}

/// What the answerer does to the master set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The master is in the step: fail it over.
    Failover(Failover),
    /// A pod of the step still acts as master after a failover: make it a replica.
    Demote(Demote),
}

/// What `view` says of `q`, replicas allowed at most `max_lag` bytes behind the master.
pub fn decide(q: &Question, view: &View, max_lag: u64) -> Verdict<Action> {
    let name = &view.master_name;
    let named: BTreeSet<Option<&str>> = view.named.iter().map(|(_, m)| m.as_deref()).collect();
    let address = match named.into_iter().collect::<Vec<_>>().as_slice() {
        [Some(a)] => *a,
        [] | [None] => {
            return Verdict::Wait(
                format!("no Sentinel names a master of {name}"),
                CATCH_UP_SECONDS,
            );
        }
        _ => {
            let said: Vec<String> = view
                .named
                .iter()
                .map(|(s, m)| format!("{s} names {}", m.as_deref().unwrap_or("none")))
                .collect();
            return Verdict::Wait(
                format!(
                    "the Sentinels disagree on the master of {name}: {}",
                    said.join(", ")
                ),
                CATCH_UP_SECONDS,
            );
        }
    };
    let Some(master) = view.pod_of(address) else {
        let pods: Vec<&str> = view.pods.iter().map(|p| p.address.as_str()).collect();
        return Verdict::Deny(
            format!(
                "Sentinel's master of {name}, {address}, is no pod of {} ({}): the entry's address or members do not reach the pods as Sentinel names them",
                q.stateful_set.name,
                pods.join(", ")
            ),
            MISMATCH_SECONDS,
        );
    };
    if flagged(&view.master, &["failover_in_progress"]) {
        return Verdict::Wait(
            format!(
                "a failover of {name} is in progress (Sentinel's flags {})",
                get(&view.master, "flags")
            ),
            CATCH_UP_SECONDS,
        );
    }
    if q.in_step(&master.name) {
        return fail_over(q, view, master, address, max_lag);
    }
    let old = view
        .pods
        .iter()
        .find(|p| q.in_step(&p.name) && p.name != master.name && p.field("role") == Some("master"));
    if let Some(old) = old {
        return Verdict::Act(Action::Demote(Demote {
            pod: old.name.clone(),
            address: old.address.clone(),
            master: master.name.clone(),
            master_address: address.to_string(),
        }));
    }
    let mut problems = Vec::new();
    if q.phase == Phase::Switchover {
        return Verdict::Approve(format!(
            "the master of {name} is {}, not among {}",
            master.name,
            q.step_names()
        ));
    }
    if flagged(&view.master, &["s_down", "o_down", "disconnected"]) {
        let flags = get(&view.master, "flags");
        problems.push(format!("the master {} is {flags} (Sentinel)", master.name));
    }
    match (&master.info, master.field("role")) {
        (Err(e), _) => problems.push(format!("the master {} does not answer: {e}", master.name)),
        (Ok(_), Some("master")) => {}
        (Ok(_), role) => problems.push(format!(
            "the master {} says role:{}",
            master.name,
            role.unwrap_or("none")
        )),
    }
    if let Err(e) = &view.quorum {
        problems.push(format!("Sentinel: {e}"));
    }
    for pod in view
        .pods
        .iter()
        .filter(|p| !q.in_step(&p.name) && p.name != master.name)
    {
        problems.extend(unhealthy(view, pod, master, max_lag, false));
    }
    if problems.is_empty() {
        Verdict::Approve(format!(
            "{} may go: master {}, every other replica linked within {max_lag} bytes, quorum reachable",
            q.step_names(),
            master.name
        ))
    } else {
        Verdict::Wait(problems.join("; "), CATCH_UP_SECONDS)
    }
}

/// Why `pod` is not a healthy replica of `master` (with `promotable`, also one Sentinel may promote);
/// `None` when it is.
fn unhealthy(
    view: &View,
    pod: &Pod,
    master: &Pod,
    max_lag: u64,
    promotable: bool,
) -> Option<String> {
    let n = &pod.name;
    let Some(seen) = view.replica(pod) else {
        return Some(format!(
            "{n} is not among Sentinel's replicas of {}",
            view.master_name
        ));
    };
    if flagged(seen, &["s_down", "o_down", "disconnected"]) {
        return Some(format!("{n} is {} (Sentinel)", get(seen, "flags")));
    }
    if get(seen, "master-link-status") != "ok" {
        return Some(format!(
            "Sentinel sees {n}'s master link {} (it reads a replica's INFO every 10 s)",
            get(seen, "master-link-status")
        ));
    }
    if promotable {
        if get(seen, "slave-priority") == "0" {
            return Some(format!("{n} has replica-priority 0 (never promoted)"));
        }
        let ping = number(seen.get("last-ok-ping-reply").map(String::as_str));
        if ping.is_none_or(|ms| ms > PING_VALIDITY_MS) {
            return Some(format!("{n} answered no Sentinel ping in 5 s"));
        }
        let info = number(seen.get("info-refresh").map(String::as_str));
        if info.is_none_or(|ms| ms > INFO_VALIDITY_MS) {
            return Some(format!("Sentinel's INFO of {n} is older than 30 s"));
        }
    }
    if let Err(e) = &pod.info {
        return Some(format!("{n} does not answer: {e}"));
    }
    if pod.field("role") != Some("slave") {
        return Some(format!(
            "{n} says role:{}",
            pod.field("role").unwrap_or("none")
        ));
    }
    let (host, port) = (pod.field("master_host"), pod.field("master_port"));
    let follows = format!("{}:{}", host.unwrap_or(""), port.unwrap_or(""));
    if !master.names(&follows) {
        return Some(format!(
            "{n} replicates from {follows}, not the master {}",
            master.name
        ));
    }
    if pod.field("master_link_status") != Some("up") {
        return Some(format!("{n}'s link to the master is down"));
    }
    if pod.field("master_sync_in_progress") == Some("1") {
        return Some(format!("{n} is syncing with the master"));
    }
    let Some(offset) = number(pod.field("slave_repl_offset")) else {
        return Some(format!("{n} reports no slave_repl_offset"));
    };
    let lag = number(master.field("master_repl_offset")).map(|m| m.saturating_sub(offset));
    match lag {
        Some(lag) if lag > max_lag => Some(format!(
            "{n} lags {lag} bytes behind the master (limit {max_lag})"
        )),
        _ => None,
    }
}

/// The master is among the step's pods: the failover to ask for, or why no replica can take over.
fn fail_over(
    q: &Question,
    view: &View,
    master: &Pod,
    named: &str,
    max_lag: u64,
) -> Verdict<Action> {
    let mut refused = Vec::new();
    let mut replicas = Vec::new();
    let mut outside = 0;
    for pod in view.pods.iter().filter(|p| p.name != master.name) {
        match unhealthy(view, pod, master, max_lag, true) {
            Some(why) if !q.in_step(&pod.name) => refused.push(why),
            Some(_) => {}
            None => {
                outside += usize::from(!q.in_step(&pod.name));
                replicas.push((pod.name.clone(), pod.address.clone()));
            }
        }
    }
    // A replica already on updateRevision that is not healthy yet (its pod just replaced: restarting,
    // syncing) is waited for: Sentinel might otherwise promote a pod not updated yet, whose own turn
    // would then need another failover, and the step waits for that replica anyway (`Update`).
    let updated: Vec<String> = q
        .updated_outside_step()
        .into_iter()
        .filter(|name| *name != master.name)
        .filter_map(|name| {
            let pod = view.pods.iter().find(|p| p.name == name)?;
            unhealthy(view, pod, master, max_lag, false)
        })
        .collect();
    if outside > 0 && !updated.is_empty() {
        return Verdict::Wait(
            format!(
                "the master {} waits for a replica on updateRevision to catch up before the failover: {}",
                master.name,
                updated.join("; ")
            ),
            CATCH_UP_SECONDS,
        );
    }
    if outside == 0 {
        return Verdict::Wait(
            format!(
                "the master {} is in the step and no replica outside it can take over: {}",
                master.name,
                if refused.is_empty() {
                    "no other pod".to_string()
                } else {
                    refused.join("; ")
                }
            ),
            CATCH_UP_SECONDS,
        );
    }
    Verdict::Act(Action::Failover(Failover {
        master: master.name.clone(),
        address: master.address.clone(),
        named: named.to_string(),
        replicas,
    }))
}
