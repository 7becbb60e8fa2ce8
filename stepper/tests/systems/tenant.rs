//! An entry serves only the sets it names (issue 52, 2): a tenant's set in another namespace naming the
//! shared Redis with Sentinel's entry is refused by the gates (`InvalidAnnotation`, a Blocked Event
//! naming the entry and the set), in `once` and in `watch`, and the owner's Redis is never called —
//! counted by a forwarding proxy in front of each Sentinel, the entry's only way in (every read of the
//! answerer starts with the Sentinels). The owner's own set, passed the same way, is answered through
//! the proxies: the count moves, so it would have seen a call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sts_stepper::cluster::answerer::Answerers;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::Outcome;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::rollout::{Mode, passes_in};
use crate::sentinel_answerer::{config, whole};
use crate::systems::sentinel::Sentinel;
use crate::systems::shared;

/// A TCP proxy on 127.0.0.1 to port `to`, counting the connections it accepted; it stops when dropped.
struct Proxy {
    port: u16,
    accepted: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Proxy {
    async fn to(to: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let accepted = Arc::new(AtomicU64::new(0));
        let count = accepted.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Ok(mut out) = TcpStream::connect(("127.0.0.1", to)).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
            }
        });
        Proxy {
            port,
            accepted,
            task,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The connections all `proxies` accepted.
fn accepted(proxies: &[Proxy]) -> u64 {
    proxies
        .iter()
        .map(|p| p.accepted.load(Ordering::SeqCst))
        .sum()
}

/// Entry `cache`, serving `db/*`: `redis`'s Sentinels through `proxies`, its pods' Redis by `members`.
fn answerers(redis: &Sentinel, proxies: &[Proxy]) -> Answerers {
    let ports: Vec<u16> = proxies.iter().map(|p| p.port).collect();
    config(redis, &[("cache", &ports, "")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_a_tenants_set_naming_the_entry_is_refused_and_the_owners_redis_never_called() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    whole(&redis).await;
    let mut proxies = Vec::new();
    for port in redis.sentinel_ports() {
        proxies.push(Proxy::to(port).await);
    }
    for mode in [Mode::Once, Mode::Watch] {
        let answerers = answerers(&redis, &proxies);
        let (reports, events) = passes_in("manual", "redis", mode, answerers, "cache", 4).await;
        assert_eq!(
            accepted(&proxies),
            0,
            "{mode:?}: the tenant's set made the stepper call the owner's Redis"
        );
        assert!(!reports.is_empty(), "{mode:?}");
        for r in &reports {
            assert!(r.webhook_call.is_none(), "{mode:?}: {r:?}");
            match &r.outcome {
                Outcome::Blocked(b) => {
                    assert_eq!(b.reason, Reason::InvalidAnnotation, "{mode:?}: {b:?}");
                    assert!(
                        b.detail.contains(
                            "\"cache\" names webhook cache, which serves db/*, not manual/redis"
                        ),
                        "{mode:?}: {}",
                        b.detail
                    );
                }
                other => panic!("{mode:?}: {other:?}"),
            }
        }
        assert!(!Reason::InvalidAnnotation.is_expected_wait(), "a Warning");
        assert!(
            events
                .iter()
                .any(|(reason, note)| reason == "Blocked" && note.contains("not manual/redis")),
            "{mode:?}: {events:?}"
        );
    }
    // The owner's set, the same passes: the entry is asked, and the count sees it.
    let answerers = answerers(&redis, &proxies);
    let (reports, _) = passes_in("db", "redis", Mode::Once, answerers, "cache", 4).await;
    assert!(
        reports.iter().any(|r| r.webhook_call.is_some()),
        "{reports:?}"
    );
    assert!(accepted(&proxies) > 0, "the owner's set asked no Sentinel");
    whole(&redis).await;
}
