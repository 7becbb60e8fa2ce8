//! Real-shaped replies for the Redis Sentinel answerer's decision tests (`answerer_sentinel.rs`), as
//! Redis 7.0.15 sends them (src/sentinel.c `addReplySentinelRedisInstance`, src/server.c INFO
//! replication; observed on a real set on 127.0.0.1): set `redis-node` of Bitnami's chart without
//! `useHostnames`, so Sentinel names pod IPs and the entry's template names pods by DNS.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::kinds::sentinel::view::{Fields, Pod, View};
use sts_stepper::cluster::answerer::question::Question;

pub const MIB: u64 = 1_048_576;
/// The master's offset in every healthy view.
pub const OFFSET: u64 = 48_213_904;

/// A question about `pods` (name, ordinal, primary) of set `redis-node` (3 replicas).
pub fn question(phase: &str, pods: &[(&str, u32, bool)], from: i32) -> Question {
    let pods: Vec<Value> = pods
        .iter()
        .map(|(n, o, p)| json!({"name": n, "ordinal": o, "primary": p}))
        .collect();
    Question::read(&json!({
        "requestId": "0123456789abcdef", "phase": phase, "pods": pods,
        "updateRevision": "redis-node-7d9f", "partition": {"from": from, "to": from - 1},
        "replicas": 3,
        "statefulSet": {"namespace": "db", "name": "redis-node", "serviceName": "redis-headless"}
    }))
    .expect("a question")
}

pub fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>()
}

pub fn ip(i: usize) -> String {
    format!("10.42.1.{}", 10 + i)
}

/// `SENTINEL REPLICAS` entry of pod `i`, following pod `master`.
pub fn sentinel_replica(i: usize, master: usize) -> Fields {
    let (ip, m) = (ip(i), self::ip(master));
    fields(&[
        ("name", &format!("{ip}:6379")),
        ("ip", &ip),
        ("port", "6379"),
        ("runid", "4c0d4e62b1d7e6f3c2a1b9d8e7f6a5b4c3d2e1f0"),
        ("flags", "slave"),
        ("link-pending-commands", "0"),
        ("link-refcount", "1"),
        ("last-ping-sent", "0"),
        ("last-ok-ping-reply", "611"),
        ("last-ping-reply", "611"),
        ("down-after-milliseconds", "60000"),
        ("info-refresh", "4375"),
        ("role-reported", "slave"),
        ("role-reported-time", "1013452"),
        ("master-link-down-time", "0"),
        ("master-link-status", "ok"),
        ("master-host", &m),
        ("master-port", "6379"),
        ("slave-priority", "100"),
        ("slave-repl-offset", "48209871"),
        ("replica-announced", "1"),
    ])
}

/// INFO replication of a replica of pod `master` at `offset`.
pub fn replica_info(master: usize, offset: u64) -> Fields {
    let o = offset.to_string();
    fields(&[
        ("role", "slave"),
        ("master_host", &ip(master)),
        ("master_port", "6379"),
        ("master_link_status", "up"),
        ("master_last_io_seconds_ago", "1"),
        ("master_sync_in_progress", "0"),
        ("slave_read_repl_offset", &o),
        ("slave_repl_offset", &o),
        ("slave_priority", "100"),
        ("slave_read_only", "1"),
        ("replica_announced", "1"),
        ("connected_slaves", "0"),
        ("master_failover_state", "no-failover"),
        ("master_repl_offset", &o),
    ])
}

pub fn master_info() -> Fields {
    fields(&[
        ("role", "master"),
        ("connected_slaves", "2"),
        (
            "slave0",
            "ip=10.42.1.11,port=6379,state=online,offset=48213904,lag=0",
        ),
        ("master_failover_state", "no-failover"),
        ("master_replid", "8a1e0c5d3b2f4e6a7c9d0b1e2f3a4b5c6d7e8f90"),
        ("master_repl_offset", &OFFSET.to_string()),
        ("repl_backlog_size", "1048576"),
    ])
}

/// Pod `redis-node-<master>` is the master, the others its replicas at offsets `OFFSET − lag`.
pub fn healthy(master: usize, lags: [u64; 3]) -> View {
    let pods = (0..3)
        .map(|i| Pod {
            name: format!("redis-node-{i}"),
            ordinal: i as u32,
            address: format!("redis-node-{i}.redis-headless.db.svc:6379"),
            resolved: vec![format!("{}:6379", ip(i))],
            info: Ok(if i == master {
                master_info()
            } else {
                replica_info(master, OFFSET - lags[i])
            }),
        })
        .collect();
    let sentinels = ["26379", "26379", "26379"]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                format!("redis-node-{i}.redis-headless.db.svc:{p}"),
                Some(format!("{}:6379", ip(master))),
            )
        })
        .collect();
    View {
        master_name: "mymaster".into(),
        named: sentinels,
        master: fields(&[
            ("name", "mymaster"),
            ("ip", &ip(master)),
            ("port", "6379"),
            ("flags", "master"),
            ("num-slaves", "2"),
            ("num-other-sentinels", "2"),
            ("quorum", "2"),
            ("failover-timeout", "180000"),
            ("parallel-syncs", "1"),
        ]),
        replicas: (0..3)
            .filter(|i| *i != master)
            .map(|i| sentinel_replica(i, master))
            .collect(),
        quorum: Ok(
            "OK 3 usable Sentinels. Quorum and failover authorization can be reached".into(),
        ),
        pods,
    }
}
