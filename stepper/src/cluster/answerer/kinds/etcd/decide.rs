//! What etcd's member list, its members' statuses and its alarms say of a question (pure): may the
//! step's pods go, or must leadership move first, and to whom.
//!
//! The rules, with their upstream sources (etcd v3.4.23; docs/answerers.md, "etcd"):
//! - A member is the pod of the same name (etcd's own StatefulSet runs `--name=$(HOSTNAME)`,
//!   etcd-io/website content/en/docs/v3.5/op-guide/kubernetes.md), else the pod whose name is the first
//!   label of the host of one of its peer or client URLs (`http://etcd-0.etcd:2380`: a member added but
//!   not started has no name yet, rpc.proto `Member`).
//! - Any raised alarm → `Deny`: `NOSPACE` (the backend quota is exceeded; etcd takes no writes until a
//!   person compacts, defragments and disarms) or `CORRUPT` (a member's data differs): a person must
//!   act (etcd op-guide/maintenance.md, "Space quota"; etcdserver/corrupt.go).
//! - The voters are the members that are not learners; the quorum is ⌊n/2⌋+1 of them (raft). The
//!   leader is the ID a quorum of voters name in their own status (`leader`, 0 for none).
//! - A healthy member: its status answered, from the member asked (`header.member_id`), with no
//!   `errors` (no leader, an alarm: v3rpc/maintenance.go `Status`), naming the leader, in the leader's
//!   raft term, and with `raftAppliedIndex` at most the limit behind the leader's `raftIndex` (its commit
//!   index): etcd calls tens of entries a healthy gap, and refuses proposals past 5000
//!   (`maxGapBetweenApplyAndCommitIndex`, etcdserver/v3_server.go).
//! - `Update`: the healthy voters outside the step are a quorum of all voters, and every other member
//!   is healthy — so after a step the next waits until the replaced member is back and caught up.
//! - The leader among the step's pods (etcd has no role label, so whatever `primary-selector` says):
//!   move leadership first (MoveLeader, etcdserver/server.go `MoveLeader`: the target must be a voter)
//!   to a healthy voter outside the step — one already on `updateRevision` first, then the least applied
//!   gap, then the highest ordinal; `Wait` when none. While a voter already on `updateRevision` outside
//!   the step is not healthy yet (its pod just replaced), leadership waits for it rather than move to a
//!   member not updated yet: that move would cost another when the member's own pod goes, and gain no
//!   time, since the step's pods go only once every member outside the step is healthy (`Update`).
//! - A `Switchover` question whose leader is no longer a pod of the step → `Approve`.
//! - What MoveLeader's answer means ([`super::moved::moved`]): `200 {}` → the leader changed (confirmed by the next
//!   read); `etcdserver: not leader` → it changed under us (read again); another FailedPrecondition
//!   (`etcdserver: bad leader transferee`) → refused; anything else → an error.

use std::collections::BTreeMap;

use super::gateway::{Alarm, Member, Status};
use crate::cluster::answerer::question::{Phase, Question};
use crate::cluster::answerer::system::Verdict;

/// Seconds before asking again while the cluster catches up.
pub const CATCH_UP_SECONDS: u32 = 5;
/// Seconds before asking again while an alarm is raised.
pub const ALARM_SECONDS: u32 = 30;

/// One read of the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterView {
    /// `POST /v3/cluster/member/list` of the member that answered.
    pub members: Vec<Member>,
    /// Each member's own `POST /v3/maintenance/status`, by member ID: or why there is none (no answer,
    /// an error, no pod of the set behind the member).
    pub statuses: BTreeMap<u64, Result<Status, String>>,
    /// `POST /v3/maintenance/alarm {"action": "GET"}` (a raft request: it needs a quorum), or why
    /// it could not be read.
    pub alarms: Result<Vec<Alarm>, String>,
}

/// A move of leadership etcd is asked for: MoveLeader sent to the leader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveLeader {
    /// The leader's pod (MoveLeader must reach the leader).
    pub leader: String,
    /// Its ordinal.
    pub leader_ordinal: u32,
    /// The target's pod.
    pub target: String,
    /// The target's member ID (`targetID`).
    pub target_id: u64,
}

/// The pod of `q`'s set behind member `m`, `(ordinal, name)`: the pod named as the member, else the
/// pod named by the first label of the host of one of its URLs; `None` when no pod of the set is.
pub fn pod_of(q: &Question, m: &Member) -> Option<(u32, String)> {
    let pods = q.set_pods();
    let by_name = |name: &str| pods.iter().find(|(_, n)| n == name).cloned();
    if let Some(p) = by_name(&m.name) {
        return Some(p);
    }
    m.peer_urls
        .iter()
        .chain(&m.client_urls)
        .find_map(|u| by_name(host_label(u)?))
}

/// The first label of the host of `url` (`http://etcd-0.etcd.db.svc:2379` → `etcd-0`).
fn host_label(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let label = rest.split(['.', ':', '/']).next()?;
    (!label.is_empty()).then_some(label)
}

/// How a member is named in a reason: its pod, else its name, else its ID in hex (as etcdctl shows it).
fn label(q: &Question, m: &Member) -> String {
    match pod_of(q, m) {
        Some((_, pod)) => pod,
        None if !m.name.is_empty() => m.name.clone(),
        None => format!("{:x}", m.id),
    }
}

/// The leader as a quorum of voters name it: the member and its own status.
struct Leader<'a> {
    member: &'a Member,
    status: &'a Status,
    name: String,
}

/// What `view` says of `q`, a member allowed at most `max_gap` raft entries behind the leader.
pub fn decide(q: &Question, view: &ClusterView, max_gap: u64) -> Verdict<MoveLeader> {
    let named = |id: u64| {
        view.members
            .iter()
            .find(|m| m.id == id)
            .map_or_else(|| format!("{id:x}"), |m| label(q, m))
    };
    if let Ok(alarms) = &view.alarms {
        let raised: Vec<String> = alarms
            .iter()
            .filter(|a| a.alarm != "NONE")
            .map(|a| format!("{} on {}", a.alarm, named(a.member_id)))
            .collect();
        if !raised.is_empty() {
            return Verdict::Deny(
                format!(
                    "etcd raises the alarm {}: a person must act (NOSPACE: compact, defragment, etcdctl alarm disarm; CORRUPT: restore the member)",
                    raised.join(", ")
                ),
                ALARM_SECONDS,
            );
        }
    }
    let voters: Vec<&Member> = view.members.iter().filter(|m| !m.is_learner).collect();
    let quorum = voters.len() / 2 + 1;
    let leader = match leader(q, view, &voters, quorum) {
        Ok(l) => l,
        Err(why) => return Verdict::Wait(why, CATCH_UP_SECONDS),
    };
    if let Err(e) = &view.alarms {
        return Verdict::Wait(
            format!("etcd's alarms could not be read: {e}"),
            CATCH_UP_SECONDS,
        );
    }
    let in_step = |m: &Member| pod_of(q, m).is_some_and(|(_, pod)| q.in_step(&pod));
    let health = |m: &Member| unhealthy(q, m, view.statuses.get(&m.id), &leader, max_gap);
    if in_step(leader.member) {
        return move_leader(q, view, &leader, &health);
    }
    if q.phase == Phase::Switchover {
        return Verdict::Approve(format!(
            "the etcd leader is {}, not among {}",
            leader.name,
            q.step_names()
        ));
    }
    let mut problems = Vec::new();
    for (_, pod) in q.set_pods().iter().filter(|(_, n)| !q.in_step(n)) {
        let member = view
            .members
            .iter()
            .any(|m| pod_of(q, m).is_some_and(|(_, p)| p == *pod));
        if !member {
            problems.push(format!("{pod} is not a member of the etcd cluster"));
        }
    }
    let mut healthy_voters = 0;
    for m in view.members.iter().filter(|m| !in_step(m)) {
        match health(m) {
            Some(why) => problems.push(why),
            None if !m.is_learner => healthy_voters += 1,
            None => {}
        }
    }
    if healthy_voters < quorum {
        problems.insert(
            0,
            format!(
                "without {} {healthy_voters} of {} voting members would be healthy, and etcd needs {quorum}",
                q.step_names(),
                voters.len()
            ),
        );
    }
    if problems.is_empty() {
        Verdict::Approve(format!(
            "{} may go: leader {}, {healthy_voters} of {} voters healthy without it (quorum {quorum}), each within {max_gap} raft entries",
            q.step_names(),
            leader.name,
            voters.len()
        ))
    } else {
        Verdict::Wait(problems.join("; "), CATCH_UP_SECONDS)
    }
}

/// The member a quorum of `voters` name as leader in their own statuses, and its own status.
fn leader<'a>(
    q: &Question,
    view: &'a ClusterView,
    voters: &[&'a Member],
    quorum: usize,
) -> Result<Leader<'a>, String> {
    if voters.is_empty() {
        return Err("etcd lists no voting member".into());
    }
    let mut votes: BTreeMap<u64, usize> = BTreeMap::new();
    let mut said = Vec::new();
    for v in voters {
        match view.statuses.get(&v.id) {
            Some(Ok(s)) if s.leader != 0 => *votes.entry(s.leader).or_default() += 1,
            Some(Ok(_)) => said.push(format!("{} has no leader", label(q, v))),
            Some(Err(e)) => said.push(format!("{} does not answer: {e}", label(q, v))),
            None => said.push(format!("{} was not read", label(q, v))),
        }
    }
    let Some((&id, _)) = votes.iter().find(|(_, n)| **n >= quorum) else {
        let named: Vec<String> = votes
            .iter()
            .map(|(id, n)| format!("{id:x} by {n}"))
            .collect();
        said.extend((!named.is_empty()).then(|| format!("leaders named: {}", named.join(", "))));
        return Err(format!(
            "no leader named by a quorum ({quorum} of {} voting members): {}",
            voters.len(),
            said.join("; ")
        ));
    };
    let Some(member) = view.members.iter().find(|m| m.id == id) else {
        return Err(format!("the leader {id:x} is not in the member list"));
    };
    let name = label(q, member);
    match view.statuses.get(&id) {
        Some(Ok(status)) => Ok(Leader {
            member,
            status,
            name,
        }),
        Some(Err(e)) => Err(format!("the leader {name} does not answer: {e}")),
        None => Err(format!("the leader {name} was not read")),
    }
}

/// Why member `m` (its status `status`) is not healthy against `leader`; `None` when it is.
fn unhealthy(
    q: &Question,
    m: &Member,
    status: Option<&Result<Status, String>>,
    leader: &Leader<'_>,
    max_gap: u64,
) -> Option<String> {
    let name = label(q, m);
    let s = match status {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Some(format!("{name} does not answer: {e}")),
        None => return Some(format!("{name} was not read")),
    };
    if s.header.member_id != m.id {
        return Some(format!(
            "{name}'s address answers as member {:x}, not {:x}",
            s.header.member_id, m.id
        ));
    }
    if !s.errors.is_empty() {
        return Some(format!("{name} reports: {}", s.errors.join(", ")));
    }
    if s.leader != leader.member.id {
        return Some(format!(
            "{name} follows {:x}, not the leader {}",
            s.leader, leader.name
        ));
    }
    if s.raft_term != leader.status.raft_term {
        return Some(format!(
            "{name} is in raft term {}, the leader in {}",
            s.raft_term, leader.status.raft_term
        ));
    }
    let gap = leader
        .status
        .raft_index
        .saturating_sub(s.raft_applied_index);
    (gap > max_gap).then(|| {
        format!(
            "{name} has applied {} of the leader's {} raft entries, {gap} behind (limit {max_gap})",
            s.raft_applied_index, leader.status.raft_index
        )
    })
}

/// The leader is among the step's pods: the voter to move leadership to, or why there is none.
fn move_leader(
    q: &Question,
    view: &ClusterView,
    leader: &Leader<'_>,
    health: &dyn Fn(&Member) -> Option<String>,
) -> Verdict<MoveLeader> {
    let Some((leader_ordinal, leader_pod)) = pod_of(q, leader.member) else {
        return Verdict::Wait("the leader is behind no pod".into(), CATCH_UP_SECONDS);
    };
    let mut refused = Vec::new();
    let mut candidates = Vec::new();
    for m in view.members.iter().filter(|m| m.id != leader.member.id) {
        let Some((ordinal, pod)) = pod_of(q, m) else {
            continue;
        };
        if q.in_step(&pod) {
            continue;
        }
        if m.is_learner {
            refused.push(format!("{pod} is a learner"));
        } else if let Some(why) = health(m) {
            refused.push(why);
        } else {
            let applied = match view.statuses.get(&m.id) {
                Some(Ok(s)) => s.raft_applied_index,
                _ => 0,
            };
            let gap = leader.status.raft_index.saturating_sub(applied);
            candidates.push((
                !q.updated(ordinal),
                gap,
                std::cmp::Reverse(ordinal),
                pod,
                m.id,
            ));
        }
    }
    candidates.sort();
    // No candidate at all: the `Wait` below says why of every member.
    if candidates
        .first()
        .is_some_and(|(not_updated, ..)| *not_updated)
    {
        let waiting = updated_not_ready(q, view, leader.member.id, health);
        if !waiting.is_empty() {
            return Verdict::Wait(
                format!(
                    "the etcd leader {leader_pod} waits for a member on updateRevision to take over: {}",
                    waiting.join("; ")
                ),
                CATCH_UP_SECONDS,
            );
        }
    }
    match candidates.into_iter().next() {
        Some((_, _, _, target, target_id)) => Verdict::Act(MoveLeader {
            leader: leader_pod,
            leader_ordinal,
            target,
            target_id,
        }),
        None => Verdict::Wait(
            format!(
                "the etcd leader {leader_pod} is in the step and no voting member can take over: {}",
                if refused.is_empty() {
                    "no other voting member".to_string()
                } else {
                    refused.join("; ")
                }
            ),
            CATCH_UP_SECONDS,
        ),
    }
}

/// Why each pod outside the step already on `updateRevision` is not a voter leadership can move to yet
/// — not a member, or unhealthy — leaving out a learner (never a target) and the leader itself.
fn updated_not_ready(
    q: &Question,
    view: &ClusterView,
    leader_id: u64,
    health: &dyn Fn(&Member) -> Option<String>,
) -> Vec<String> {
    q.updated_outside_step()
        .into_iter()
        .filter_map(|name| {
            let member = view
                .members
                .iter()
                .find(|m| pod_of(q, m).is_some_and(|(_, pod)| pod == name));
            match member {
                None => Some(format!("{name} is not a member of the cluster")),
                Some(m) if m.id == leader_id || m.is_learner => None,
                Some(m) => health(m),
            }
        })
        .collect()
}
