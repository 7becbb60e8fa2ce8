//! The simulated application as an etcd cluster (`protocol: etcd` in a scenario): the stepper's approval
//! questions answered by the built-in etcd answerer's own decision
//! ([`crate::cluster::answerer::kinds::etcd::decide`]) over the member list, statuses and alarms the
//! world gives, so the simulation's property tests cover that answerer in both stepper modes.
//!
//! The world as etcd would answer: every pod of the set is a voting member (ID = ordinal + 1; a member
//! stays in the list while its pod is replaced); a member answers its status while its pod is Ready,
//! following the application's primary as leader, its applied index caught up once it has been Ready
//! for the application's `answer_seconds` (behind by more than the answerer's gap before); a denial on
//! any pod is a raised `NOSPACE` alarm. A `MoveLeader` the decision asks for moves the primary as the
//! webhook's switchovers do ([`super::application`]: after `switchover_seconds`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::system_reply::system_reply;
use super::webhook::Reply;
use super::world::World;
use crate::cluster::answerer::Acted;
use crate::cluster::answerer::kinds::etcd::decide::{ClusterView, MoveLeader, decide};
use crate::cluster::answerer::kinds::etcd::entry::DEFAULT_MAX_APPLIED_GAP;
use crate::cluster::answerer::kinds::etcd::gateway::{Alarm, Header, Member, Status};

/// The raft index every member reports caught up.
const INDEX: u64 = 10_000;

impl World {
    /// What the simulated etcd cluster answers at `self.t` (the module's rules).
    pub fn etcd_cluster(&self) -> ClusterView {
        let name = self.name();
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let primary = self.application.as_ref().and_then(|a| a.primary);
        let answer_seconds = self.application.as_ref().map_or(0, |a| a.answer_seconds);
        let members: Vec<Member> = (0..replicas)
            .map(|o| Member {
                id: u64::from(o) + 1,
                name: format!("{name}-{o}"),
                peer_urls: vec![format!("http://{name}-{o}:2380")],
                client_urls: vec![format!("http://{name}-{o}:2379")],
                is_learner: false,
            })
            .collect();
        let statuses: BTreeMap<u64, Result<Status, String>> = (0..replicas)
            .map(|o| {
                let id = u64::from(o) + 1;
                let pod = self
                    .pods
                    .get(&o)
                    .filter(|p| !p.terminating() && p.running_and_ready());
                let status = match pod {
                    None => Err(format!("{name}-{o}: connection refused")),
                    Some(p) => {
                        let caught_up = p.ready_since.is_some_and(|s| self.t - s >= answer_seconds);
                        Ok(Status {
                            header: Header { member_id: id },
                            version: "3.4.23".into(),
                            leader: primary.map_or(0, |l| u64::from(l) + 1),
                            raft_index: INDEX,
                            raft_term: 2,
                            raft_applied_index: if caught_up {
                                INDEX
                            } else {
                                INDEX - DEFAULT_MAX_APPLIED_GAP - 1
                            },
                            errors: Vec::new(),
                            is_learner: false,
                        })
                    }
                };
                (id, status)
            })
            .collect();
        let alarms = match &self.application {
            Some(a) if !a.denials.is_empty() => Ok(vec![Alarm {
                member_id: 1,
                alarm: "NOSPACE".into(),
            }]),
            _ => Ok(Vec::new()),
        };
        ClusterView {
            members,
            statuses,
            alarms,
        }
    }

    /// The answer of the simulated etcd cluster to the request `body`, leadership moved when the
    /// decision asks for it; as an HTTP reply, so the stepper reads it as any other.
    pub(super) fn etcd_reply(&mut self, body: &Value) -> Reply {
        let view = self.etcd_cluster();
        system_reply(
            body,
            |q| decide(q, &view, DEFAULT_MAX_APPLIED_GAP),
            |_, m| self.move_leader(m),
        )
    }

    /// `MoveLeader`: started once (the role moves after `switchover_seconds`).
    fn move_leader(&mut self, m: &MoveLeader) -> Acted {
        let t = self.t;
        let to = u32::try_from(m.target_id.saturating_sub(1)).unwrap_or(u32::MAX);
        let Some(app) = self.application.as_mut() else {
            return Acted::Failed("no application".into());
        };
        if app.switchover.is_none() {
            app.switchover = Some((m.leader_ordinal, to, t + app.switchover_seconds));
        }
        Acted::Started(format!(
            "etcd: leadership {} → {} moving; confirming",
            m.leader, m.target
        ))
    }
}
