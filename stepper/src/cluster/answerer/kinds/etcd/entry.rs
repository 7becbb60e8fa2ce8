//! An etcd entry of `--answerer-config` (docs/answerers.md, "etcd"):
//!
//! ```yaml
//! - name: etcd-main
//!   etcd:
//!     address: http://{pod}.{service}.{namespace}.svc:2379   # each member's client URL
//!     maxAppliedGap: 1000                                    # optional; raft entries behind the leader
//!     moveLeaderTimeoutSeconds: 15                           # optional; the MoveLeader's bound
//!     auth:                                                  # optional: an etcd user (etcd's own authentication)
//!       basic: {usernameFile: /etc/etcd-user/username, passwordFile: /etc/etcd-user/password}
//!     tls:                                                   # optional, with https addresses
//!       caFile: /etc/etcd-tls/ca.crt                         # etcd's --trusted-ca-file CA
//!       certFile: /etc/etcd-tls/tls.crt                      # a client certificate, for --client-cert-auth
//!       keyFile: /etc/etcd-tls/tls.key
//!     members: {etcd-0: http://10.0.0.5:2379}                # optional; a pod's client URL given by hand
//! ```
//!
//! `tls` is the HTTP checks' and the webhooks' field (`config::endpoint_auth`): every file read again
//! at each call. `auth` is their field too, but only `basic` is taken, and not as HTTP basic auth:
//! etcd's authentication trades a user and its password for a token (`/v3/auth/authenticate`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::Etcd;
use crate::cluster::answerer::http_members::HttpMembers;
use crate::config::endpoint_auth::{AuthFields, Credentials, TlsFields, credentials};

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
    tls: Option<TlsFields>,
    #[serde(default)]
    auth: Option<AuthFields>,
}

impl Entry {
    /// The client this entry configures, each call of a read bounded by `timeout`, built from
    /// `builder`; `field` names the entry in errors (`answerers[0].etcd`).
    ///
    /// # Errors
    /// An address that is not an http(s) URL template; `moveLeaderTimeoutSeconds` 0 or over
    /// [`MAX_MOVE_LEADER_TIMEOUT_SECONDS`]; `tls` or `auth` refused (`config::endpoint_auth`: `tls`
    /// needs https addresses), `auth.bearerTokenFile` (etcd takes a user), or a TLS file that cannot
    /// be read.
    pub fn build(
        self,
        builder: reqwest::ClientBuilder,
        timeout: Duration,
        field: &str,
    ) -> Result<Etcd, String> {
        let members = HttpMembers {
            address: self.address,
            members: self.members,
            tls: self.tls,
            auth: None,
        };
        let (addresses, http) = members.build(builder, "the etcd answerer", field)?;
        let user = match self.auth.map(credentials).transpose() {
            Err(e) => return Err(format!("{field}.{e}")),
            Ok(None) => None,
            Ok(Some(Credentials::Basic {
                username,
                password_file,
            })) => Some((username, password_file)),
            Ok(Some(Credentials::Bearer { .. })) => {
                return Err(format!(
                    "{field}.auth.bearerTokenFile: etcd's authentication takes a user and its password; expected auth.basic: {{username or usernameFile, passwordFile}}"
                ));
            }
        };
        let move_leader = self
            .move_leader_timeout_seconds
            .unwrap_or(DEFAULT_MOVE_LEADER_TIMEOUT_SECONDS);
        if !(1..=MAX_MOVE_LEADER_TIMEOUT_SECONDS).contains(&move_leader) {
            return Err(format!(
                "{field}.moveLeaderTimeoutSeconds: {move_leader}: expected whole seconds from 1 to {MAX_MOVE_LEADER_TIMEOUT_SECONDS}"
            ));
        }
        Ok(Etcd {
            http,
            addresses,
            timeout,
            move_leader_timeout: Duration::from_secs(move_leader),
            max_applied_gap: self.max_applied_gap.unwrap_or(DEFAULT_MAX_APPLIED_GAP),
            user,
        })
    }
}
