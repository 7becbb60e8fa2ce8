//! What Patroni's `GET /cluster` says of a question (pure): may the step's pods go, or must the leader
//! be switched over first, and to whom.
//!
//! The rules, with their upstream sources (patroni/patroni v3.0.2 and 4.x; docs/answerers.md):
//! - A member is the pod of the same name (Patroni on Kubernetes: `name` is the pod's name,
//!   `PATRONI_NAME` from `metadata.name`; kubernetes/ manifests, Spilo's `configure_spilo.py`).
//! - The leader is the member whose `role` is `leader` or `standby_leader` (`utils.cluster_as_json`).
//! - Maintenance mode (`"pause": true`) → `Deny`: Patroni then neither fails over nor switches over
//!   without a named candidate, and a person is at work (docs/rest_api.rst, "pause").
//! - A healthy replica (and a switchover candidate): `state` `running`, `streaming` or `in archive
//!   recovery` (3.0.4+ reports the replication state; the Zalando operator accepts the same three), on the leader's `timeline`, `lag` in bytes at most the limit (`"unknown"`
//!   is not within it); a candidate also without the `nofailover` tag (Patroni's own
//!   `Ha.is_failover_possible`, whose default `maximum_lag_on_failover` is 1 MiB).
//! - `Update`: every pod of the set outside the step is a member, the leader running and the others
//!   healthy; so after a step the next waits until the replaced member is back and streaming.
//! - The leader among the step's pods (whatever `primary-selector` says): switch over first, to the
//!   healthiest candidate outside the step — one already on `updateRevision` first, then the least
//!   lag, then the highest ordinal. In synchronous mode (a member's `role` is `sync_standby`) only a
//!   synchronous standby is a candidate (Patroni refuses any other with HTTP 412).
//! - While a member already on `updateRevision` outside the step is not a healthy candidate yet (its pod
//!   just replaced: restarting, rejoining, catching up), the leader waits for it rather than move to a
//!   member not updated yet: that move would cost a second switchover when the member's own pod goes,
//!   and gain no time, since the step's pods go only once every member outside the step is healthy
//!   (the `Update` rule). Seen on a real API server with Patroni 3.0.2: the leader moved to `pg-0`
//!   while `pg-2` rejoined after its replacement, and moved again before `pg-0` went (3 switchovers
//!   where 2 suffice).

use serde::Deserialize;

use crate::cluster::answerer::question::{Phase, Question};
use crate::cluster::answerer::system::Verdict;

/// Seconds before asking again while the cluster catches up.
pub const CATCH_UP_SECONDS: u32 = 5;
/// Seconds before asking again while Patroni is paused.
pub const PAUSED_SECONDS: u32 = 30;

/// `GET /cluster`, the fields read.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ClusterView {
    /// The members Patroni knows (a member whose Patroni stopped leaves the list when its key expires).
    #[serde(default)]
    pub members: Vec<Member>,
    /// True in maintenance mode (the key is present only then).
    #[serde(default)]
    pub pause: bool,
}

/// One member of `GET /cluster`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Member {
    /// The member's name: its pod's.
    pub name: String,
    /// `leader`, `standby_leader`, `sync_standby`, `replica`, `quorum_standby`.
    #[serde(default)]
    pub role: String,
    /// `running`, `streaming`, `starting`, `stopped`, `crashed`, …
    #[serde(default)]
    pub state: String,
    /// The timeline; absent while the member (re)starts.
    #[serde(default)]
    pub timeline: Option<u64>,
    /// Replication lag behind the leader (absent on the leader).
    #[serde(default)]
    pub lag: Option<Lag>,
    /// The member's tags, of which `nofailover` is read.
    #[serde(default)]
    pub tags: Tags,
}

/// A member's tags.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Tags {
    /// Never promote this member.
    #[serde(default)]
    pub nofailover: bool,
}

/// A replica's lag: bytes behind the leader, or `"unknown"` (no WAL position reported).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Lag {
    /// Bytes.
    Bytes(u64),
    /// Not known (Patroni's word, e.g. `unknown`).
    Unknown(String),
}

impl Member {
    /// Holds the leader lock.
    pub fn is_leader(&self) -> bool {
        matches!(self.role.as_str(), "leader" | "standby_leader")
    }

    fn running(&self) -> bool {
        matches!(
            self.state.as_str(),
            "running" | "streaming" | "in archive recovery"
        )
    }

    /// Why this replica is not healthy against `leader` and `max_lag` bytes; `None` when it is.
    fn unhealthy(&self, leader: &Member, max_lag: u64) -> Option<String> {
        if !self.running() {
            return Some(format!("{} is {}", self.name, or_unknown(&self.state)));
        }
        if self.timeline.is_none() || self.timeline != leader.timeline {
            return Some(format!(
                "{} is on timeline {}, the leader on {}",
                self.name,
                timeline(self.timeline),
                timeline(leader.timeline)
            ));
        }
        match &self.lag {
            Some(Lag::Bytes(b)) if *b <= max_lag => None,
            Some(Lag::Bytes(b)) => Some(format!("{} lags {b} bytes (limit {max_lag})", self.name)),
            _ => Some(format!("{}'s lag is unknown", self.name)),
        }
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "in no known state" } else { s }
}

fn timeline(t: Option<u64>) -> String {
    t.map_or_else(|| "none".into(), |t| t.to_string())
}

/// A switchover Patroni is asked for: `POST /switchover {"leader", "candidate"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switchover {
    /// The member holding the leader lock now.
    pub leader: String,
    /// The member to promote.
    pub candidate: String,
}

/// What `view` says of `q`, replicas allowed at most `max_lag` bytes behind the leader.
pub fn decide(q: &Question, view: &ClusterView, max_lag: u64) -> Verdict<Switchover> {
    if view.pause {
        return Verdict::Deny(
            "Patroni is paused (maintenance mode): no switchover and no replacement until it is resumed (patronictl resume)".into(),
            PAUSED_SECONDS,
        );
    }
    let Some(leader) = view.members.iter().find(|m| m.is_leader()) else {
        return Verdict::Wait("the cluster has no leader".into(), CATCH_UP_SECONDS);
    };
    let member = |name: &str| view.members.iter().find(|m| m.name == name);
    if q.in_step(&leader.name) {
        return switch_over(q, view, leader, max_lag);
    }
    if q.phase == Phase::Switchover {
        return Verdict::Approve(format!(
            "the leader is {}, not among {}",
            leader.name,
            q.step_names()
        ));
    }
    let mut problems = Vec::new();
    for (_, name) in q.set_pods().iter().filter(|(_, n)| !q.in_step(n)) {
        match member(name) {
            None => problems.push(format!("{name} is not a member of the cluster")),
            Some(m) if m.is_leader() => {
                if !m.running() {
                    problems.push(format!("the leader {name} is {}", or_unknown(&m.state)));
                }
            }
            Some(m) => problems.extend(m.unhealthy(leader, max_lag)),
        }
    }
    if problems.is_empty() {
        Verdict::Approve(format!(
            "{} may go: leader {}, every other member streaming within {max_lag} bytes",
            q.step_names(),
            leader.name
        ))
    } else {
        Verdict::Wait(problems.join("; "), CATCH_UP_SECONDS)
    }
}

/// The leader is among the step's pods: the candidate to switch over to, or why there is none.
fn switch_over(
    q: &Question,
    view: &ClusterView,
    leader: &Member,
    max_lag: u64,
) -> Verdict<Switchover> {
    let ordinals = q.set_pods();
    let ordinal = |name: &str| ordinals.iter().find(|(_, n)| n == name).map(|(o, _)| *o);
    let synchronous = view.members.iter().any(|m| m.role == "sync_standby");
    let mut refused = Vec::new();
    let mut candidates = Vec::new();
    for m in view.members.iter().filter(|m| !m.is_leader()) {
        let Some(o) = ordinal(&m.name) else { continue };
        if q.in_step(&m.name) {
            continue;
        }
        if synchronous && m.role != "sync_standby" {
            refused.push(format!("{} is not a synchronous standby", m.name));
        } else if m.tags.nofailover {
            refused.push(format!("{} has the nofailover tag", m.name));
        } else if let Some(why) = m.unhealthy(leader, max_lag) {
            refused.push(why);
        } else {
            let lag = match m.lag {
                Some(Lag::Bytes(b)) => b,
                _ => u64::MAX,
            };
            candidates.push((!q.updated(o), lag, std::cmp::Reverse(o), m.name.clone()));
        }
    }
    candidates.sort();
    // No candidate at all: the `Wait` below says why of every member.
    if candidates
        .first()
        .is_some_and(|(not_updated, ..)| *not_updated)
    {
        let waiting = updated_not_ready(q, view, leader, max_lag);
        if !waiting.is_empty() {
            return Verdict::Wait(
                format!(
                    "the leader {} waits for a member on updateRevision to take over: {}",
                    leader.name,
                    waiting.join("; ")
                ),
                CATCH_UP_SECONDS,
            );
        }
    }
    match candidates.into_iter().next() {
        Some((_, _, _, candidate)) => Verdict::Act(Switchover {
            leader: leader.name.clone(),
            candidate,
        }),
        None => Verdict::Wait(
            format!(
                "the leader {} is in the step and no member can take over: {}",
                leader.name,
                if refused.is_empty() {
                    "no other member".to_string()
                } else {
                    refused.join("; ")
                }
            ),
            CATCH_UP_SECONDS,
        ),
    }
}

/// Why each pod outside the step already on `updateRevision` is not a switchover candidate yet — not a
/// member (its key expired while it restarted), or unhealthy — leaving out those that never will be
/// (the `nofailover` tag).
fn updated_not_ready(
    q: &Question,
    view: &ClusterView,
    leader: &Member,
    max_lag: u64,
) -> Vec<String> {
    q.updated_outside_step()
        .into_iter()
        .filter(|name| *name != leader.name)
        .filter_map(|name| match view.members.iter().find(|m| m.name == name) {
            None => Some(format!("{name} is not a member of the cluster")),
            Some(m) if m.tags.nofailover => None,
            Some(m) => m.unhealthy(leader, max_lag),
        })
        .collect()
}
