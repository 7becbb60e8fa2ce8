//! An etcd entry of `--answerer-config` (docs/answerers.md, "etcd"):
//!
//! ```yaml
//! - name: etcd-main
//!   etcd:
//!     address: http://{pod}.{service}.{namespace}.svc:2379   # each member's client URL
//!     maxAppliedGap: 1000                                    # optional; raft entries behind the leader
//!     moveLeaderTimeoutSeconds: 15                           # optional; the MoveLeader's bound
//!     usernameFile: /etc/etcd-auth/username                  # optional, with passwordFile: etcd's own users
//!     passwordFile: /etc/etcd-auth/password
//!     members: {etcd-0: http://10.0.0.5:2379}                # optional; a pod's client URL given by hand
//! ```
//!
//! TLS client certificates (`--client-cert-auth`) are not read here: the shared endpoint TLS
//! configuration gives them to every kind.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::Etcd;
use crate::cluster::answerer::address::{Addresses, Form};

/// The default `maxAppliedGap` (raft entries): etcd calls "tens of entries" between applied and
/// committed a healthy gap and refuses new proposals past 5000 (`maxGapBetweenApplyAndCommitIndex`,
/// etcdserver/v3_server.go@v3.4.23); 1000 is well above the first — two statuses read a few
/// milliseconds apart under thousands of writes a second — and a fifth of the second, so a member
/// still replaying what it missed while its pod was replaced holds the next step.
pub const DEFAULT_MAX_APPLIED_GAP: u64 = 1000;
/// The default bound of MoveLeader (seconds): etcd answers once the leader changed, and etcd's own
/// request timeout is `5 s + 2 × election timeout` (etcdserver/config.go@v3.4.23 `ReqTimeout`), 7 s
/// with the default 1 s election timeout; twice that, rounded up.
pub const DEFAULT_MOVE_LEADER_TIMEOUT_SECONDS: u64 = 15;
/// The longest `moveLeaderTimeoutSeconds` accepted.
pub const MAX_MOVE_LEADER_TIMEOUT_SECONDS: u64 = 300;

/// The entry's `etcd:` object.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    members: BTreeMap<String, String>,
    #[serde(default)]
    max_applied_gap: Option<u64>,
    #[serde(default)]
    move_leader_timeout_seconds: Option<u64>,
    #[serde(default)]
    username_file: Option<PathBuf>,
    #[serde(default)]
    password_file: Option<PathBuf>,
}

impl Entry {
    /// The client this entry configures, each call of a read bounded by `timeout`, built from
    /// `builder`; `field` names the entry in errors (`answerers[0].etcd`).
    ///
    /// # Errors
    /// An address that is not an http(s) URL template; `moveLeaderTimeoutSeconds` 0 or over
    /// [`MAX_MOVE_LEADER_TIMEOUT_SECONDS`]; one of `usernameFile`, `passwordFile` without the other.
    pub fn build(
        self,
        builder: reqwest::ClientBuilder,
        timeout: Duration,
        field: &str,
    ) -> Result<Etcd, String> {
        let http = builder
            .build()
            .map_err(|e| format!("{field}: building the HTTP client: {e}"))?;
        let addresses = Addresses::new(self.address, self.members, Form::Url, field)?;
        let move_leader = self
            .move_leader_timeout_seconds
            .unwrap_or(DEFAULT_MOVE_LEADER_TIMEOUT_SECONDS);
        if !(1..=MAX_MOVE_LEADER_TIMEOUT_SECONDS).contains(&move_leader) {
            return Err(format!(
                "{field}.moveLeaderTimeoutSeconds: {move_leader}: expected whole seconds from 1 to {MAX_MOVE_LEADER_TIMEOUT_SECONDS}"
            ));
        }
        let credentials = match (self.username_file, self.password_file) {
            (None, None) => None,
            (Some(u), Some(p)) => Some((u, p)),
            _ => {
                return Err(format!(
                    "{field}: usernameFile and passwordFile go together (an etcd user and its password)"
                ));
            }
        };
        Ok(Etcd {
            http,
            addresses,
            timeout,
            move_leader_timeout: Duration::from_secs(move_leader),
            max_applied_gap: self.max_applied_gap.unwrap_or(DEFAULT_MAX_APPLIED_GAP),
            credentials,
        })
    }
}
