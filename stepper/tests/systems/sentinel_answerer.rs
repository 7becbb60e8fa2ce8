//! The Redis Sentinel answerer (`cluster::answerer::sentinel`) against the shared Redis with Sentinel:
//! an `--answerer-config` text naming the harness's Sentinels and each pod's Redis, asked the approval
//! webhook's `UpdateApprovalRequest` for a 3-pod set `redis` (pod `redis-i` ↔ member `redis-i`,
//! `StatefulSetMap`) as the gates ask it. Each test leaves the set whole for the next.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::{Answerers, file};
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};

use tokio::task::JoinHandle;

use crate::systems::net::free_ports;
use crate::systems::resp::{Reply, RespConn};
use crate::systems::sentinel::{MASTER_SET, Sentinel, command};
use crate::systems::shared;
use crate::until;

/// Seconds the set may take to be whole again after a change.
const HEALTHY: Duration = Duration::from_secs(60);
/// Seconds a failover may take, from the first answer to `Approve`: Sentinel promotes within a second,
/// reconfigures the other replica (a resync) and then, about 10 s later, the old master.
const FAILOVER: Duration = Duration::from_secs(45);
/// Writes a second.
const RATE: u32 = 20;
/// The tight entry's limit (bytes).
const TIGHT: u64 = 1_000;

/// Entries `cache` (defaults), `cache-tight` (`maxLagBytes` [`TIGHT`]) and `cache-lost` (a Sentinel
/// port nothing listens on), each over the harness's pods by `members`.
pub(crate) fn answerers(redis: &Sentinel) -> Answerers {
    let lost = free_ports(1)[0];
    let ports = redis.sentinel_ports();
    let tight = format!(", maxLagBytes: {TIGHT}");
    config(
        redis,
        &[
            ("cache", &ports, ""),
            ("cache-tight", &ports, &tight),
            ("cache-lost", &[lost], ""),
        ],
    )
}

/// The answerers of an `--answerer-config` text with one `redisSentinel` entry per `(name, Sentinel
/// ports on 127.0.0.1, more fields of its object)`, each serving `db/*` with a 2 s timeout, its pods'
/// Redis given by `members` (the harness's pod `i` ↔ member `i`).
pub(crate) fn config(redis: &Sentinel, entries: &[(&str, &[u16], &str)]) -> Answerers {
    let map = redis.set();
    let members: Vec<String> = (0..map.len())
        .map(|i| {
            let member = map.member(i).unwrap_or_default();
            format!("{}: \"127.0.0.1:{}\"", map.pod(i), redis.port(member))
        })
        .collect();
    let members = members.join(", ");
    let mut text =
        String::from("apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n");
    for (name, ports, extra) in entries {
        let sentinels: Vec<String> = ports.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
        text.push_str(&format!(
            "  - name: {name}\n    serves: [\"db/*\"]\n    timeoutSeconds: 2\n    redisSentinel: {{masterName: {MASTER_SET}, sentinels: [{}], members: {{{members}}}{extra}}}\n",
            sentinels.join(", ")
        ));
    }
    Answerers::new(file::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

/// The question of the step replacing `pods` (ordinals) of set `redis`, `primary` marking the pod
/// `primary-selector` matches (phase `Switchover`), as the gates build it.
fn request(pods: &[usize], primary: Option<usize>) -> Value {
    let to = pods.iter().copied().min().unwrap_or(0);
    let from = pods.iter().copied().max().unwrap_or(0) + 1;
    let phase = if primary.is_some() {
        "Switchover"
    } else {
        "Update"
    };
    let pods: Vec<Value> = pods
        .iter()
        .rev()
        .map(|o| {
            json!({"name": format!("redis-{o}"), "uid": format!("uid-{o}"), "ordinal": o,
                   "labels": {}, "primary": primary == Some(*o)})
        })
        .collect();
    json!({
        "apiVersion": "safe-rollout.dev/v1alpha1", "kind": "UpdateApprovalRequest",
        "requestId": "5f0c2a9e41d7b3c8",
        "statefulSet": {"namespace": "db", "name": "redis", "uid": "set-uid",
                        "serviceName": "redis-headless", "startOrdinal": 0},
        "phase": phase, "pods": pods, "currentRevision": "redis-1", "updateRevision": "redis-2",
        "partition": {"from": from, "to": to}, "replicas": 3, "updatedReplicas": 3 - from,
        "readyReplicas": 3, "deadline": "2026-11-23T01:30:00Z"
    })
}

/// `(decision, reason)` of an answer; an error as `Err`.
fn decided(answer: WebhookAnswer) -> Result<(Decision, String), String> {
    match answer {
        WebhookAnswer::Decided(a) => Ok((a.decision, a.reason)),
        WebhookAnswer::Error(e) => Err(e),
    }
}

/// The set whole, every Sentinel agreeing, no node left paused and none guarded (a test that cuts a
/// failover short leaves both on the old master, as a stopped stepper would).
pub(crate) async fn whole(redis: &Sentinel) {
    let map = redis.set();
    for name in (0..map.len()).filter_map(|i| map.member(i)) {
        // CLIENT UNPAUSE answers OK whether or not the node was paused.
        command(redis.port(name), &["CLIENT", "UNPAUSE"])
            .await
            .unwrap();
        command(
            redis.port(name),
            &["CONFIG", "SET", "min-replicas-to-write", "0"],
        )
        .await
        .unwrap();
    }
    redis.wait_healthy(HEALTHY).await.unwrap();
    redis.wait_sentinel_view(HEALTHY).await.unwrap();
}

/// Pod ordinal of member `name`.
fn ordinal(redis: &Sentinel, name: &str) -> usize {
    redis
        .set()
        .ordinal(&redis.set().pod_of_member(name).unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_answerer_approves_a_replica_and_holds_the_next_while_another_lags() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    whole(&redis).await;
    let answerers = answerers(&redis);
    let master = redis.master().await.unwrap();
    let mut replicas: Vec<usize> = (0..3).filter(|o| *o != ordinal(&redis, &master)).collect();
    let (stepped, other) = (replicas.remove(0), replicas.remove(0));
    let (decision, reason) =
        decided(answerers.answer("cache", &request(&[stepped], None)).await).unwrap();
    assert_eq!(decision, Decision::Approve, "{reason}");
    assert!(
        reason.contains(&format!("redis-{stepped} may go: master {master}")),
        "{reason}"
    );
    // The other replica stops applying its master's stream (CLIENT PAUSE holds the master link's
    // writes too: only replicas' own links are exempt, src/server.c@7.0.15 processCommand); the master
    // takes 4 KB.
    let lagging = redis.set().member(other).unwrap().to_string();
    command(redis.port(&lagging), &["CLIENT", "PAUSE", "30000", "WRITE"])
        .await
        .unwrap();
    let value = "x".repeat(4096);
    command(redis.port(&master), &["SET", "answerer:lag", &value])
        .await
        .unwrap();
    let (decision, reason) = decided(
        answerers
            .answer("cache-tight", &request(&[stepped], None))
            .await,
    )
    .unwrap();
    assert_eq!(decision, Decision::Wait, "{reason}");
    assert!(
        reason.contains(&format!("redis-{other} lags "))
            && reason.contains(&format!("(limit {TIGHT})")),
        "{reason}"
    );
    // The default limit (1 MiB) lets the same lag pass.
    let (decision, reason) =
        decided(answerers.answer("cache", &request(&[stepped], None)).await).unwrap();
    assert_eq!(decision, Decision::Approve, "{reason}");
    command(redis.port(&lagging), &["CLIENT", "UNPAUSE"])
        .await
        .unwrap();
    let (_, took) = until("the lagging replica to catch up", HEALTHY, || async {
        match decided(
            answerers
                .answer("cache-tight", &request(&[stepped], None))
                .await,
        )? {
            (Decision::Approve, _) => Ok(()),
            (d, r) => Err(format!("{d:?}: {r}")),
        }
    })
    .await;
    eprintln!(
        "sentinel answerer: the lagging replica caught up {:.2} s after its pause ended",
        took.as_secs_f64()
    );
}

/// A patient write sent into the master's pause: writes of ids `id`, `id + 1`, … to run `run`'s set on
/// `port`, each on a fresh connection with no timeout of its own (only [`FAILOVER`]), until one has no
/// reply within 150 ms — the master is paused — which is returned, its reply awaited in a task. The
/// ones answered before are acknowledged writes like any other.
pub(crate) async fn write_into_the_pause(
    port: u16,
    run: u32,
    id: u64,
) -> JoinHandle<Result<Reply, String>> {
    let key = format!("harness:{run}");
    for k in 0..400 {
        let mut conn = RespConn::connect(port, FAILOVER).await.unwrap();
        let (key, id) = (key.clone(), (id + k).to_string());
        let mut task = tokio::spawn(async move { conn.command(&["SADD", &key, &id]).await });
        match tokio::time::timeout(Duration::from_millis(150), &mut task).await {
            // Waiting: the pause.
            Err(_) => return task,
            // Taken before the pause.
            Ok(Ok(Ok(Reply::Int(_)))) => {}
            // Refused (READONLY once the old master is a replica): returned as it came.
            Ok(Ok(other)) => return tokio::spawn(async move { other }),
            Ok(Err(e)) => panic!("the write's task: {e}"),
        }
    }
    panic!("no write to 127.0.0.1:{port} waited on a pause within 400 tries");
}

/// What [`fail_over_through_the_answerer`] saw.
struct FailedOver {
    /// The old master.
    old: String,
    /// The answers, each once, in order.
    seen: Vec<String>,
    /// From the first answer to `Approve`.
    took: Duration,
    /// The patient write that waited on the old master's pause during the failover.
    patient: Option<JoinHandle<Result<Reply, String>>>,
}

/// Asks `cache` about the step of the master's pod until `Approve`: the first answer must be the whole
/// failover done; with `patient` (run, id), a write waits on the old master's pause meanwhile
/// ([`write_into_the_pause`]).
async fn fail_over_through_the_answerer(
    redis: &Sentinel,
    answerers: &Answerers,
    switchover: bool,
    patient: Option<(u32, u64)>,
) -> FailedOver {
    let master = redis.master().await.unwrap();
    let m = ordinal(redis, &master);
    let body = request(&[m], switchover.then_some(m));
    let started = Instant::now();
    let asked = answerers.answer("cache", &body);
    let (answer, patient) = match patient {
        Some((run, id)) => {
            let port = redis.port(&master);
            let (a, p) = tokio::join!(asked, write_into_the_pause(port, run, id));
            (a, Some(p))
        }
        None => (asked.await, None),
    };
    let (decision, reason) = decided(answer).unwrap();
    assert_eq!(decision, Decision::Wait, "{reason}");
    // The whole failover in that one call: the old master is already a replica, writes resumed.
    let done = format!("failover of {MASTER_SET} from redis-{m} done in ");
    assert!(
        reason.contains(&done) && reason.contains("made its replica; writes resumed"),
        "{reason}"
    );
    let seen = std::sync::Mutex::new(vec![reason]);
    until(
        "the answerer to approve the old master's pod",
        FAILOVER,
        || async {
            let answer = decided(answerers.answer("cache", &body).await);
            let line = format!("{answer:?}");
            let mut seen = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !seen.contains(&line) {
                seen.push(line.clone());
            }
            drop(seen);
            match answer {
                Ok((Decision::Approve, _)) => Ok(()),
                Ok((Decision::Deny, r)) => panic!("denied: {r}"),
                _ => Err(line),
            }
        },
    )
    .await;
    let took = started.elapsed();
    let now = redis.master().await.unwrap();
    assert_ne!(now, master, "approved while {master} is still the master");
    let info = redis.info(&master).await.unwrap();
    assert_eq!(
        info.get("role").map(String::as_str),
        Some("slave"),
        "{info:?}"
    );
    let seen = seen
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    FailedOver {
        old: master,
        seen,
        took,
        patient,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_answerer_fails_the_master_over_under_a_writer_and_loses_no_acknowledged_write() {
    /// The patient write's id (the writer's count from 1).
    const PATIENT: u64 = 1 << 40;
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    whole(&redis).await;
    let answerers = answerers(&redis);
    let (run, writer) = redis.writer(RATE);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let f = fail_over_through_the_answerer(&redis, &answerers, true, Some((run, PATIENT))).await;
    writer
        .wait_acknowledged(10, Duration::from_secs(20))
        .await
        .unwrap();
    let report = writer.stop().await;
    let patient = tokio::time::timeout(FAILOVER, f.patient.expect("sent")).await;
    let present = redis.present(run).await.unwrap();
    eprintln!(
        "sentinel answerer: Switchover of {}'s pod approved after {:.2} s; answers: {:#?}; writer: {}; \
         the write waiting on the paused old master: {patient:?}",
        f.old,
        f.took.as_secs_f64(),
        f.seen,
        report.summary()
    );
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    // The old master, made a replica before its pause was lifted, refuses the write that waited on it
    // (READONLY; or Sentinel closed its connection): taken, it would be acknowledged and then lost.
    match patient {
        Ok(Ok(Ok(Reply::Int(n)))) => panic!(
            "the write waiting on the paused {} was taken ({n}) by a master Sentinel no longer names",
            f.old
        ),
        Ok(Ok(_)) => {}
        Ok(Err(e)) => panic!("the patient writer: {e}"),
        Err(_) => panic!(
            "the write waiting on {} had no reply within {FAILOVER:?}",
            f.old
        ),
    }
    whole(&redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_answerer_moves_the_master_without_primary_selector_an_update_question() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    whole(&redis).await;
    let answerers = answerers(&redis);
    let f = fail_over_through_the_answerer(&redis, &answerers, false, None).await;
    eprintln!(
        "sentinel answerer: Update of {}'s pod (the master) approved after {:.2} s; answers: {:#?}",
        f.old,
        f.took.as_secs_f64(),
        f.seen
    );
    whole(&redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_answerer_unreachable_sentinel_is_an_error_never_an_approval() {
    let Some(redis) = shared::sentinel().await else {
        return;
    };
    let answerers = answerers(&redis);
    for body in [request(&[2], None), request(&[0, 1], Some(0))] {
        match answerers.answer("cache-lost", &body).await {
            WebhookAnswer::Error(e) => {
                assert!(
                    e.starts_with("Redis Sentinel: no Sentinel answered: 127.0.0.1:"),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
