//! A Patroni entry of `--answerer-config` (docs/answerers.md, "Patroni"):
//!
//! ```yaml
//! - name: pg-main
//!   patroni:
//!     address: http://{pod}.{service}.{namespace}.svc:8008   # each member's REST API
//!     maxLagBytes: 1048576                                   # optional; Patroni's maximum_lag_on_failover default
//!     switchoverTimeoutSeconds: 60                           # optional; the POST /switchover's bound
//!     auth:                                                  # optional: Patroni's restapi.authentication
//!       basic: {usernameFile: /etc/patroni-api/username, passwordFile: /etc/patroni-api/password}
//!     tls: {caFile: /etc/patroni-api/ca.crt}                 # optional, with an https address (restapi.certfile)
//!     members: {pg-0: http://10.0.0.5:8008}                  # optional; a pod's address given by hand
//! ```
//!
//! `tls` and `auth` are the HTTP checks' and the webhooks' fields (`config::endpoint_auth`): every file
//! read again at each call.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::Patroni;
use crate::cluster::answerer::http_members::HttpMembers;
use crate::config::endpoint_auth::{AuthFields, TlsFields};

/// Patroni's own default `maximum_lag_on_failover` (bytes): 1 MiB (patroni/config.py).
pub const DEFAULT_MAX_LAG_BYTES: u64 = 1_048_576;
/// The default bound of `POST /switchover` (seconds): Patroni waits up to `2 × max(10, loop_wait)` for
/// the result (patroni/api.py, `poll_failover_result`), 20 s with the default `loop_wait` of 10.
pub const DEFAULT_SWITCHOVER_TIMEOUT_SECONDS: u64 = 60;
/// The longest `switchoverTimeoutSeconds` accepted.
pub const MAX_SWITCHOVER_TIMEOUT_SECONDS: u64 = 300;

/// The entry's `patroni:` object.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    members: BTreeMap<String, String>,
    #[serde(default)]
    max_lag_bytes: Option<u64>,
    #[serde(default)]
    switchover_timeout_seconds: Option<u64>,
    #[serde(default)]
    tls: Option<TlsFields>,
    #[serde(default)]
    auth: Option<AuthFields>,
}

impl Entry {
    /// The client this entry configures, each read bounded by `timeout`, built from `builder`; `field`
    /// names the entry in errors (`answerers[0].patroni`).
    ///
    /// # Errors
    /// An address that is not an http(s) URL template; `switchoverTimeoutSeconds` 0 or over
    /// [`MAX_SWITCHOVER_TIMEOUT_SECONDS`]; `tls` or `auth` refused (`config::endpoint_auth`: `tls` needs
    /// https addresses), or a TLS file that cannot be read.
    pub fn build(
        self,
        builder: reqwest::ClientBuilder,
        timeout: Duration,
        field: &str,
    ) -> Result<Patroni, String> {
        let members = HttpMembers {
            address: self.address,
            members: self.members,
            tls: self.tls,
            auth: self.auth,
        };
        let (addresses, http) = members.build(builder, "the Patroni answerer", field)?;
        let switchover = self
            .switchover_timeout_seconds
            .unwrap_or(DEFAULT_SWITCHOVER_TIMEOUT_SECONDS);
        if !(1..=MAX_SWITCHOVER_TIMEOUT_SECONDS).contains(&switchover) {
            return Err(format!(
                "{field}.switchoverTimeoutSeconds: {switchover}: expected whole seconds from 1 to {MAX_SWITCHOVER_TIMEOUT_SECONDS}"
            ));
        }
        Ok(Patroni {
            http,
            addresses,
            timeout,
            switchover_timeout: Duration::from_secs(switchover),
            max_lag_bytes: self.max_lag_bytes.unwrap_or(DEFAULT_MAX_LAG_BYTES),
        })
    }
}
