//! Redis with Sentinel as a built-in answerer (docs/answerers.md, "Redis Sentinel"): the master set
//! read from the Sentinels and the data nodes ([`read`]), the decision [`decide`]'s, and, when the
//! master's pod is in the step, the whole failover in one call ([`failover`]: writes paused, replicas
//! caught up, `SENTINEL FAILOVER`, a quorum of Sentinels naming the new master, the old master made its
//! replica, writes resumed) — nothing left for a later pass to finish before the pause runs out. The
//! answer is still `Wait`: a later read confirms the master elsewhere and the old one a replica.
//!
//! Spoken with redis-rs 1.8 (`tokio-comp`, no TLS: research 4.2 — four small crates, no OpenSSL), one
//! connection per call ([`conn`]); the commands are Redis 7.0's (src/sentinel.c, src/server.c).

pub mod act;
pub mod confirm;
pub mod conn;
pub mod decide;
pub mod entry;
pub mod failover;
pub mod read;
pub mod view;

use std::time::Duration;

use crate::cluster::answerer::address::Addresses;
use crate::cluster::answerer::question::Question;
use crate::cluster::answerer::system::{Acted, System, Verdict};
use conn::Connector;
use decide::Action;
use view::View;

/// The kind's name in `--answerer-config` and in the metrics.
pub const KIND: &str = "redisSentinel";

/// One master set's client, as an `--answerer-config` entry configures it.
#[derive(Clone, Debug)]
pub struct RedisSentinel {
    /// How connections are made (timeout, password files).
    pub(super) connector: Connector,
    /// The master set's name (`sentinel monitor <name> …`).
    pub(super) master_name: String,
    /// Where the Sentinels are: each a `host:port` or a template filled per pod.
    pub(super) sentinels: Vec<Addresses>,
    /// Where each pod's Redis is.
    pub(super) addresses: Addresses,
    /// A replica may be at most this many bytes behind the master.
    pub(super) max_lag_bytes: u64,
    /// How long writes are paused on the master for its failover.
    pub(super) pause: Duration,
}

impl RedisSentinel {
    /// The longest one answer may take: a read (three timeouts), then a failover, which ends within
    /// its pause, and one more timeout for its last commands.
    pub fn longest_call(&self) -> Duration {
        self.connector.timeout * 4 + self.pause
    }

    /// The Sentinels' addresses for `q`, each once, those of the pods outside the step first (the
    /// step's may be going): a template gives one per pod, a plain address one.
    fn sentinels(&self, q: &Question) -> Vec<String> {
        let mut pods = q.set_pods();
        pods.sort_by_key(|(o, n)| (q.in_step(n), *o));
        let mut out: Vec<String> = Vec::new();
        for (o, n) in &pods {
            for s in &self.sentinels {
                if let Some(a) = s.of(q, n, *o)
                    && !out.contains(&a)
                {
                    out.push(a);
                }
            }
        }
        out
    }
}

impl System for RedisSentinel {
    type View = View;
    type Action = Action;

    async fn read(&self, q: &Question) -> Result<View, String> {
        let pods = q
            .set_pods()
            .into_iter()
            .filter_map(|(o, n)| Some((n.clone(), o, self.addresses.of(q, &n, o)?)))
            .collect();
        read::read(&self.connector, &self.master_name, &self.sentinels(q), pods).await
    }

    fn decide(&self, q: &Question, view: &View) -> Verdict<Action> {
        decide::decide(q, view, self.max_lag_bytes)
    }

    async fn act(&self, q: &Question, view: &View, action: &Action) -> Acted {
        match action {
            Action::Failover(f) => {
                // Those that answered the read first, then the others (one may be back).
                let mut sentinels: Vec<String> =
                    view.named.iter().map(|(s, _)| s.clone()).collect();
                for s in self.sentinels(q) {
                    if !sentinels.contains(&s) {
                        sentinels.push(s);
                    }
                }
                let target = failover::Target {
                    master_name: &self.master_name,
                    sentinels: &sentinels,
                    quorum: view.master.get("quorum").and_then(|n| n.parse().ok()),
                    pause: self.pause,
                };
                failover::fail_over(&self.connector, &target, f).await
            }
            Action::Demote(d) => act::demote(&self.connector, d).await,
        }
    }
}
