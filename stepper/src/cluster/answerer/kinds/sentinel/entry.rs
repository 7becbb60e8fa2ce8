//! A Redis Sentinel entry of `--answerer-config` (docs/answerers.md, "Redis Sentinel"), for Bitnami's
//! chart as usually deployed (a Redis and a Sentinel in each pod of `<fullname>-node`):
//!
//! ```yaml
//! - name: cache
//!   redisSentinel:
//!     masterName: mymaster                                     # sentinel monitor <name> …
//!     sentinels: ["{pod}.{service}.{namespace}.svc:26379"]     # host:port, or a template per pod
//!     address: "{pod}.{service}.{namespace}.svc:6379"          # each pod's Redis
//!     maxLagBytes: 1048576                                     # optional
//!     pauseWritesSeconds: 22                                   # optional; CLIENT PAUSE before a failover
//!     passwordFile: /etc/redis-auth/redis-password             # optional; the Redis nodes' AUTH
//!     sentinelPasswordFile: /etc/redis-auth/redis-password     # optional; the Sentinels' AUTH
//!     members: {cache-node-0: "10.0.0.5:6379"}                 # optional; a pod's Redis given by hand
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::RedisSentinel;
use super::conn::Connector;
use crate::cluster::answerer::address::{Addresses, Form};

/// The default limit of a replica's lag (bytes): 1 MiB, Redis's default `repl-backlog-size`
/// (redis.conf@7.0.15) — a replica further behind may need a full resync after a reconnect.
pub const DEFAULT_MAX_LAG_BYTES: u64 = 1_048_576;
/// The default pause of writes on the master before its failover (seconds): Bitnami's preStop hook
/// pauses for `terminationGracePeriodSeconds − 10 + 2` = 22 s with its default grace of 30
/// (bitnami/charts redis `prestop-redis.sh`); it must outlast Sentinel's reconfiguration of the old
/// master, about 10 s (one `sentinel_info_period`).
pub const DEFAULT_PAUSE_WRITES_SECONDS: u64 = 22;
/// The longest `pauseWritesSeconds` accepted.
pub const MAX_PAUSE_WRITES_SECONDS: u64 = 300;

/// The entry's `redisSentinel:` object.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    master_name: Option<String>,
    #[serde(default)]
    sentinels: Vec<String>,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    members: BTreeMap<String, String>,
    #[serde(default)]
    max_lag_bytes: Option<u64>,
    #[serde(default)]
    pause_writes_seconds: Option<u64>,
    #[serde(default)]
    password_file: Option<PathBuf>,
    #[serde(default)]
    sentinel_password_file: Option<PathBuf>,
}

/// Sentinel's rule for a master set's name: "only characters A-z 0-9 and the characters `.-_`"
/// (sentinel.conf@7.0.15, `sentinel monitor`).
fn is_master_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

impl Entry {
    /// The client this entry configures, each connection and command bounded by `timeout`; `field`
    /// names the entry in errors (`answerers[0].redisSentinel`).
    ///
    /// # Errors
    /// `masterName` missing or not Sentinel's form; `sentinels` empty or an element not a `host:port`
    /// template; the Redis addresses not `host:port`; `pauseWritesSeconds` 0 or over
    /// [`MAX_PAUSE_WRITES_SECONDS`]. Each names the field and the expected form.
    pub fn build(self, timeout: Duration, field: &str) -> Result<RedisSentinel, String> {
        let master_name = match self.master_name {
            Some(n) if is_master_name(&n) => n,
            Some(n) => {
                return Err(format!(
                    "{field}.masterName: {n:?}: expected the master set's name as `sentinel monitor` gives it (letters, digits, '.', '-', '_'), such as mymaster"
                ));
            }
            None => {
                return Err(format!(
                    "{field}.masterName: missing; expected the master set's name, such as mymaster"
                ));
            }
        };
        if self.sentinels.is_empty() {
            return Err(format!(
                "{field}.sentinels: missing or empty; expected a list of host:port or templates, such as [\"{{pod}}.{{service}}.{{namespace}}.svc:26379\"]"
            ));
        }
        let mut sentinels = Vec::new();
        for (j, s) in self.sentinels.into_iter().enumerate() {
            let at = format!("{field}.sentinels[{j}]");
            let a = Addresses::new(Some(s), BTreeMap::new(), Form::HostPort, &at)
                .map_err(|e| e.replacen(&format!("{at}.address: "), &format!("{at}: "), 1))?;
            sentinels.push(a);
        }
        let addresses = Addresses::new(self.address, self.members, Form::HostPort, field)?;
        let pause = self
            .pause_writes_seconds
            .unwrap_or(DEFAULT_PAUSE_WRITES_SECONDS);
        if !(1..=MAX_PAUSE_WRITES_SECONDS).contains(&pause) {
            return Err(format!(
                "{field}.pauseWritesSeconds: {pause}: expected whole seconds from 1 to {MAX_PAUSE_WRITES_SECONDS}"
            ));
        }
        Ok(RedisSentinel {
            connector: Connector {
                timeout,
                password_file: self.password_file,
                sentinel_password_file: self.sentinel_password_file,
            },
            master_name,
            sentinels,
            addresses,
            max_lag_bytes: self.max_lag_bytes.unwrap_or(DEFAULT_MAX_LAG_BYTES),
            pause: Duration::from_secs(pause),
        })
    }
}
