//! The simulated application as a Patroni cluster (`protocol: patroni` in a scenario): the stepper's
//! approval questions answered by the built-in Patroni answerer's own decision
//! ([`crate::cluster::answerer::kinds::patroni::decide`]) over a `GET /cluster` the world gives, so the
//! simulation's property tests cover that answerer in both stepper modes.
//!
//! The world as Patroni would list it: each pod's member while its pod runs — `running` once Ready,
//! `starting` before (no timeline) —, none while it terminates or is gone (Patroni's member key
//! expires); the application's primary is the `leader`; a member Ready for less than the application's
//! `answer_seconds` reports lag `"unknown"` (still catching up), the others lag 0; a denial on any pod
//! is maintenance mode (`"pause": true`). A switchover the decision asks for is started as the
//! webhook's are ([`super::application`]: the role moves after `switchover_seconds`).

use serde_json::Value;

use super::system_reply::system_reply;
use super::webhook::Reply;
use super::world::World;
use crate::cluster::answerer::Acted;
use crate::cluster::answerer::kinds::patroni::decide::{
    ClusterView, Lag, Member, Switchover, decide,
};
use crate::cluster::answerer::kinds::patroni::entry::DEFAULT_MAX_LAG_BYTES;
use crate::cluster::answerer::question::Question;

impl World {
    /// `GET /cluster` of the simulated Patroni cluster at `self.t` (the module's rules).
    pub fn patroni_cluster(&self) -> ClusterView {
        let Some(app) = self.application.as_ref() else {
            return ClusterView::default();
        };
        let name = self.name();
        let members = self
            .pods
            .values()
            .filter(|p| !p.terminating() && p.running_at <= self.t)
            .map(|p| {
                let ready = p.running_and_ready();
                let leader = app.primary == Some(p.ordinal);
                let caught_up = p
                    .ready_since
                    .is_some_and(|since| self.t - since >= app.answer_seconds);
                Member {
                    name: format!("{name}-{}", p.ordinal),
                    role: if leader { "leader" } else { "replica" }.into(),
                    state: if ready { "running" } else { "starting" }.into(),
                    timeline: ready.then_some(1),
                    lag: (!leader).then(|| {
                        if caught_up {
                            Lag::Bytes(0)
                        } else {
                            Lag::Unknown("unknown".into())
                        }
                    }),
                    tags: Default::default(),
                }
            })
            .collect();
        ClusterView {
            members,
            pause: !app.denials.is_empty(),
        }
    }

    /// The answer of the simulated Patroni cluster to the request `body`, a switchover started when
    /// the decision asks for one; as an HTTP reply, so the stepper reads it as any other.
    pub(super) fn patroni_reply(&mut self, body: &Value) -> Reply {
        let view = self.patroni_cluster();
        system_reply(
            body,
            |q| decide(q, &view, DEFAULT_MAX_LAG_BYTES),
            |q, s| self.switch_over(q, s),
        )
    }

    /// `POST /switchover`: started (once; the role moves after `switchover_seconds`), or refused when
    /// the candidate's pod is gone.
    fn switch_over(&mut self, q: &Question, s: &Switchover) -> Acted {
        let t = self.t;
        let ordinal_of = |member: &str| {
            q.set_pods()
                .into_iter()
                .find(|(_, n)| n == member)
                .map(|(o, _)| o)
        };
        let (Some(from), Some(to)) = (ordinal_of(&s.leader), ordinal_of(&s.candidate)) else {
            return Acted::Refused(format!("candidate does not exists: {}", s.candidate));
        };
        let Some(app) = self.application.as_mut() else {
            return Acted::Failed("no application".into());
        };
        if app.switchover.is_none() {
            app.switchover = Some((from, to, t + app.switchover_seconds));
        }
        Acted::Started(format!(
            "switchover {} → {}: Successfully switched over; confirming",
            s.leader, s.candidate
        ))
    }
}
