//! The simulated application as a Redis with Sentinel (`protocol: redisSentinel` in a scenario): the
//! stepper's approval questions answered by the built-in Sentinel answerer's own decision
//! ([`crate::cluster::answerer::kinds::sentinel::decide`]) over what the Sentinels and the pods' `INFO
//! replication` would say, so the simulation's property tests cover that answerer in both stepper modes.
//!
//! The world as Redis would answer: pod `<set>-<i>` is the Redis at `<set>-<i>:6379`; the application's
//! primary is the master every Sentinel names (flagged `failover_in_progress` while a failover is under
//! way); every other pod Ready is a replica linked to it, its offset caught up once it has been Ready for
//! the application's `answer_seconds` (far behind before); a pod not Ready answers nothing and Sentinel
//! flags it `s_down`; a denial on any pod is a quorum Sentinel cannot reach (`NOQUORUM`). A failover the
//! decision asks for moves the primary as the webhook's switchovers do ([`super::application`]: after
//! `switchover_seconds`, to a Ready pod outside the step, Sentinel's pick).

use serde_json::Value;

use super::system_reply::system_reply;
use super::webhook::Reply;
use super::world::World;
use crate::cluster::answerer::Acted;
use crate::cluster::answerer::kinds::sentinel::decide::{Action, decide};
use crate::cluster::answerer::kinds::sentinel::entry::DEFAULT_MAX_LAG_BYTES;
use crate::cluster::answerer::kinds::sentinel::view::{Fields, Pod, View};
use crate::cluster::answerer::question::Question;

/// The master's replication offset (bytes).
const OFFSET: u64 = 50_000_000;

fn fields(pairs: &[(&str, String)]) -> Fields {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

impl World {
    /// What the Sentinels and the pods say at `self.t` (the module's rules).
    pub fn sentinel_view(&self) -> View {
        let name = self.name();
        let address = |o: u32| format!("{name}-{o}:6379");
        let app = self.application.as_ref();
        let primary = app.and_then(|a| a.primary);
        let answer_seconds = app.map_or(0, |a| a.answer_seconds);
        let failing_over = app.is_some_and(|a| a.switchover.is_some());
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let ready = |o: u32| {
            self.pods
                .get(&o)
                .filter(|p| !p.terminating() && p.running_and_ready())
        };
        let mut seen = Vec::new();
        let mut pods = Vec::new();
        for o in 0..replicas {
            let up = ready(o);
            if Some(o) != primary {
                let flags = if up.is_some() {
                    "slave"
                } else {
                    "slave,s_down,disconnected"
                };
                seen.push(fields(&[
                    ("ip", format!("{name}-{o}")),
                    ("port", "6379".into()),
                    ("flags", flags.into()),
                    (
                        "master-link-status",
                        if up.is_some() { "ok" } else { "err" }.into(),
                    ),
                    ("slave-priority", "100".into()),
                    ("last-ok-ping-reply", "200".into()),
                    ("info-refresh", "1000".into()),
                ]));
            }
            let info = match (up, primary) {
                (None, _) => Err(format!("{name}-{o}: connection refused")),
                (Some(_), Some(p)) if p == o => Ok(fields(&[
                    ("role", "master".into()),
                    ("master_repl_offset", OFFSET.to_string()),
                ])),
                (Some(pod), p) => {
                    let caught_up = pod
                        .ready_since
                        .is_some_and(|s| self.t - s >= answer_seconds);
                    Ok(fields(&[
                        ("role", "slave".into()),
                        (
                            "master_host",
                            p.map_or(String::new(), |p| format!("{name}-{p}")),
                        ),
                        ("master_port", "6379".into()),
                        ("master_link_status", "up".into()),
                        ("master_sync_in_progress", "0".into()),
                        (
                            "slave_repl_offset",
                            if caught_up { OFFSET } else { 0 }.to_string(),
                        ),
                    ]))
                }
            };
            pods.push(Pod {
                name: format!("{name}-{o}"),
                ordinal: o,
                address: address(o),
                resolved: Vec::new(),
                info,
            });
        }
        let flags = if failing_over {
            "master,failover_in_progress"
        } else {
            "master"
        };
        let quorum = match app {
            Some(a) if !a.denials.is_empty() => Err("NOQUORUM 1 usable Sentinels".to_string()),
            _ => Ok(
                "OK 3 usable Sentinels. Quorum and failover authorization can be reached".into(),
            ),
        };
        View {
            master_name: "mymaster".into(),
            named: vec![("sentinel".into(), primary.map(address))],
            master: fields(&[("flags", flags.into())]),
            replicas: seen,
            quorum,
            pods,
        }
    }

    /// The answer of the simulated Redis with Sentinel to the request `body`, a failover started when
    /// the decision asks for one; as an HTTP reply, so the stepper reads it as any other.
    pub(super) fn sentinel_reply(&mut self, body: &Value) -> Reply {
        let view = self.sentinel_view();
        system_reply(
            body,
            |q| decide(q, &view, DEFAULT_MAX_LAG_BYTES),
            |q, action| self.fail_over(q, action),
        )
    }

    /// `CLIENT PAUSE` and `SENTINEL FAILOVER`: started once, Sentinel promoting a Ready pod outside the
    /// step; a demotion (never needed here: a pod stops acting as master as the role moves) is taken.
    fn fail_over(&mut self, q: &Question, action: &Action) -> Acted {
        let Action::Failover(f) = action else {
            return Acted::Started("the old master made a replica".into());
        };
        let t = self.t;
        let step: Vec<u32> = q.pods.iter().map(|p| p.ordinal).collect();
        let from = q
            .set_pods()
            .into_iter()
            .find(|(_, n)| *n == f.master)
            .map(|(o, _)| o);
        let Some(from) = from else {
            return Acted::Failed(format!("no pod {}", f.master));
        };
        let target = self.switchover_target(from, &step);
        let Some(app) = self.application.as_mut() else {
            return Acted::Failed("no application".into());
        };
        match (app.switchover, target) {
            (Some(_), _) => Acted::Started("INPROG Failover already in progress".into()),
            (None, Some(to)) => {
                app.switchover = Some((from, to, t + app.switchover_seconds));
                Acted::Started(format!(
                    "failover of mymaster from {} requested; confirming",
                    f.master
                ))
            }
            (None, None) => Acted::Refused("NOGOODSLAVE No suitable replica to promote".into()),
        }
    }
}
