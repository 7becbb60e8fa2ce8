//! What one read of a master set gives ([`View`]: the Sentinels' replies and each pod's `INFO
//! replication`, plain data), and which pod an instance is ([`Pod::names`]): Sentinel names an
//! instance by `ip:port`, or by hostname with `announce-hostnames yes` (src/sentinel.c@7.0.15,
//! `announce-hostnames`; Bitnami's `useHostnames` announces `<pod>.<service>.<namespace>.svc.<domain>`),
//! and a replica's INFO names its master as it was told by `REPLICAOF`.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// A reply's fields, name → value, as Redis sends them (all strings): `SENTINEL MASTER`, one entry of
/// `SENTINEL REPLICAS`, `INFO replication`.
pub type Fields = BTreeMap<String, String>;

/// What was read of the master set and its nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The master set's name (`sentinel monitor <name> …`).
    pub master_name: String,
    /// Each Sentinel that answered (its address) and the master it names (`host:port`; `None`: it knows
    /// no master of that name).
    pub named: Vec<(String, Option<String>)>,
    /// `SENTINEL MASTER <name>` of the first Sentinel that answered.
    pub master: Fields,
    /// `SENTINEL REPLICAS <name>` of the same Sentinel.
    pub replicas: Vec<Fields>,
    /// `SENTINEL CKQUORUM <name>`: `OK …`, or its error (`NOQUORUM …`).
    pub quorum: Result<String, String>,
    /// Every pod of the set, in ordinal order.
    pub pods: Vec<Pod>,
}

/// One pod's Redis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// The pod's name.
    pub name: String,
    /// Its ordinal.
    pub ordinal: u32,
    /// Its Redis's `host:port` as the entry gives it.
    pub address: String,
    /// `ip:port` for each address the host resolves to (empty for an IP, or when it did not resolve).
    pub resolved: Vec<String>,
    /// Its `INFO replication`, or why it did not answer.
    pub info: Result<Fields, String>,
}

/// `host` and `port` of `host:port` (brackets of an IPv6 literal removed).
fn split(address: &str) -> Option<(&str, &str)> {
    let (host, port) = address.rsplit_once(':')?;
    Some((host.trim_start_matches('[').trim_end_matches(']'), port))
}

impl Pod {
    /// True when Sentinel's or INFO's `address` (`host:port`) is this pod's Redis: the entry's address
    /// or one it resolves to, or a hostname whose first label is the pod's name on the entry's port.
    pub fn names(&self, address: &str) -> bool {
        let same = |a: &str| match (split(a), split(address)) {
            (Some((h1, p1)), Some((h2, p2))) => h1.eq_ignore_ascii_case(h2) && p1 == p2,
            _ => false,
        };
        if same(&self.address) || self.resolved.iter().any(|a| same(a)) {
            return true;
        }
        match (split(address), split(&self.address)) {
            (Some((host, port)), Some((_, own_port))) => {
                host.parse::<IpAddr>().is_err()
                    && host.split('.').next() == Some(self.name.as_str())
                    && port == own_port
            }
            _ => false,
        }
    }

    /// The value of `key` in its INFO (`None` without INFO or the key).
    pub fn field(&self, key: &str) -> Option<&str> {
        self.info.as_ref().ok()?.get(key).map(String::as_str)
    }
}

impl View {
    /// The pod whose Redis `address` is.
    pub fn pod_of(&self, address: &str) -> Option<&Pod> {
        self.pods.iter().find(|p| p.names(address))
    }

    /// Sentinel's entry for `pod` among the replicas.
    pub fn replica(&self, pod: &Pod) -> Option<&Fields> {
        self.replicas.iter().find(|r| {
            let (ip, port) = (get(r, "ip"), get(r, "port"));
            pod.names(&format!("{ip}:{port}"))
        })
    }
}

/// The value of `key` (empty when absent).
pub fn get<'a>(fields: &'a Fields, key: &str) -> &'a str {
    fields.get(key).map_or("", String::as_str)
}

/// True when `flags` has one of `flags` (Sentinel's comma-joined flags).
pub fn flagged(fields: &Fields, flags: &[&str]) -> bool {
    get(fields, "flags").split(',').any(|f| flags.contains(&f))
}

/// A byte count or milliseconds as Redis writes them.
pub fn number(value: Option<&str>) -> Option<u64> {
    value?.trim().parse().ok()
}
