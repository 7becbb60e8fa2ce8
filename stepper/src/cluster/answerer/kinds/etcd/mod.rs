//! etcd as a built-in answerer, through etcd's gRPC-gateway JSON on each member's client URL
//! (docs/answerers.md, "etcd"; [`gateway`]): the member list from any member that answers (the pods
//! outside the step first), each member's own status (one call per member, at once), the alarm list, the
//! decision [`decide::decide`]'s, and MoveLeader sent to the leader when the leader is a pod of the step.
//! MoveLeader answers once the leader changed (etcdserver/server.go@v3.4.23 `MoveLeader`), but the
//! stepper reads the cluster again before it approves anything.
//!
//! Not etcd's gRPC client (the crate `etcd-client`): it needs `protoc` on every machine that builds the
//! stepper, and the gateway is served on the same port by every etcd since 3.3 (the research behind
//! issue 45, section 4.4).

pub mod call;
pub mod decide;
pub mod entry;
pub mod gateway;
pub mod moved;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::cluster::answerer::address::Addresses;
use crate::cluster::answerer::question::Question;
use crate::cluster::answerer::system::{Acted, System, Verdict};
use crate::cluster::endpoint_client::EndpointClient;
use crate::cluster::prometheus::read_secret;
use crate::config::endpoint_auth::Username;
use decide::{ClusterView, MoveLeader};
use gateway::{
    ALARM, AUTH_NOT_ENABLED, AUTHENTICATE, Alarms, CallError, MEMBER_LIST, MOVE_LEADER, Member,
    MemberList, STATUS, Status, Token,
};

/// The kind's name in `--answerer-config` and in the metrics.
pub const KIND: &str = "etcd";
/// One read is at most this many calls' timeouts long: authenticate, the member list, the statuses
/// (at once) and the alarms, and one more for a member that does not answer first.
pub const READ_CALLS: u32 = 4;

/// One etcd cluster's client, as an `--answerer-config` entry configures it.
#[derive(Clone, Debug)]
pub struct Etcd {
    /// The HTTP client (redirects not followed; the entry's `tls`).
    pub(super) http: EndpointClient,
    /// Where each member's client URL is.
    pub(super) addresses: Addresses,
    /// The bound of one call of a read.
    pub(super) timeout: Duration,
    /// The bound of MoveLeader.
    pub(super) move_leader_timeout: Duration,
    /// A member may have applied at most this many raft entries fewer than the leader committed.
    pub(super) max_applied_gap: u64,
    /// An etcd user (the entry's `auth.basic`): its name, and the file of its password, read at every
    /// read.
    pub(super) user: Option<(Username, PathBuf)>,
}

/// What was read: the cluster, and the token the calls carried (sent with MoveLeader too).
#[derive(Clone, Debug)]
pub struct Read {
    /// The member list, the statuses and the alarms.
    pub cluster: ClusterView,
    token: Option<String>,
}

impl Etcd {
    /// The longest one answer may take: a read, then MoveLeader.
    pub fn longest_call(&self) -> Duration {
        self.timeout * READ_CALLS + self.move_leader_timeout
    }

    /// The members' client URLs in the order they are tried for the member list: the pods outside the
    /// step first (the step's may be going), each in ordinal order; `(URL, pod)`.
    fn bases(&self, q: &Question) -> Vec<(String, String)> {
        let mut pods = q.set_pods();
        pods.sort_by_key(|(o, n)| (q.in_step(n), *o));
        pods.into_iter()
            .filter_map(|(o, n)| Some((self.addresses.of(q, &n, o)?, n)))
            .collect()
    }

    /// A token of etcd's authentication from the member at `base` (`None` without credentials, or
    /// when etcd's authentication is not enabled).
    async fn token(&self, base: &str) -> Result<Option<String>, String> {
        let Some((user, password)) = &self.user else {
            return Ok(None);
        };
        let read = |p: &Path, field: &str| read_secret(p, &format!("auth.basic.{field}"));
        let name = match user {
            Username::Value(name) => name.clone(),
            Username::File(p) => read(p, "usernameFile")?,
        };
        let body = json!({"name": name, "password": read(password, "passwordFile")?});
        let url = format!("{base}{AUTHENTICATE}");
        match call::post::<Token>(&self.http, &url, &body, None, self.timeout).await {
            Ok(t) if !t.token.is_empty() => Ok(Some(t.token)),
            Ok(_) => Err(format!("POST {url}: no token in the answer")),
            Err(CallError::Etcd(_, e)) if e.words() == AUTH_NOT_ENABLED => Ok(None),
            Err(e) => Err(format!("POST {url}: {e}")),
        }
    }

    /// The member list (and the token) from the first member that answers, then the rest of a read.
    async fn read_all(&self, q: &Question) -> Result<Read, String> {
        let mut errors = Vec::new();
        for (base, pod) in self.bases(q) {
            let listed = async {
                let token = self.token(&base).await?;
                let url = format!("{base}{MEMBER_LIST}");
                call::post::<MemberList>(
                    &self.http,
                    &url,
                    &json!({}),
                    token.as_deref(),
                    self.timeout,
                )
                .await
                .map(|list| (token, list))
                .map_err(|e| format!("POST {url}: {e}"))
            }
            .await;
            match listed {
                Ok((token, list)) => return Ok(self.read_rest(q, &base, token, list).await),
                Err(e) => errors.push(format!("{pod}: {e}")),
            }
        }
        Err(format!(
            "etcd: no member answered: {}",
            if errors.is_empty() {
                "no member address configured".to_string()
            } else {
                errors.join("; ")
            }
        ))
    }

    /// Each member's status (at once) and the alarms (from `base`, which listed the members).
    async fn read_rest(
        &self,
        q: &Question,
        base: &str,
        token: Option<String>,
        list: MemberList,
    ) -> Read {
        let statuses = futures::future::join_all(
            list.members
                .iter()
                .map(|m| self.status(q, m, token.as_deref())),
        );
        let alarms = async {
            let url = format!("{base}{ALARM}");
            let body = json!({"action": "GET"});
            call::post::<Alarms>(&self.http, &url, &body, token.as_deref(), self.timeout)
                .await
                .map(|a| a.alarms)
                .map_err(|e| format!("POST {url}: {e}"))
        };
        let (statuses, alarms) = tokio::join!(statuses, alarms);
        Read {
            cluster: ClusterView {
                members: list.members,
                statuses: statuses.into_iter().collect(),
                alarms,
            },
            token,
        }
    }

    /// Member `m`'s own status, at the address of the pod behind it.
    async fn status(
        &self,
        q: &Question,
        m: &Member,
        token: Option<&str>,
    ) -> (u64, Result<Status, String>) {
        let Some((ordinal, pod)) = decide::pod_of(q, m) else {
            return (
                m.id,
                Err(format!(
                    "behind no pod of {} (the stepper reads only the set's pods)",
                    q.stateful_set.name
                )),
            );
        };
        let Some(base) = self.addresses.of(q, &pod, ordinal) else {
            return (m.id, Err(format!("no address configured for {pod}")));
        };
        let url = format!("{base}{STATUS}");
        let got = call::post::<Status>(&self.http, &url, &json!({}), token, self.timeout).await;
        (m.id, got.map_err(|e| format!("POST {url}: {e}")))
    }
}

impl System for Etcd {
    type View = Read;
    type Action = MoveLeader;

    async fn read(&self, q: &Question) -> Result<Read, String> {
        let bound = self.timeout * READ_CALLS;
        match tokio::time::timeout(bound, self.read_all(q)).await {
            Ok(read) => read,
            Err(_) => Err(format!(
                "etcd: no whole read within {} s ({READ_CALLS} × timeoutSeconds)",
                bound.as_secs()
            )),
        }
    }

    fn decide(&self, q: &Question, view: &Read) -> Verdict<MoveLeader> {
        decide::decide(q, &view.cluster, self.max_applied_gap)
    }

    async fn act(&self, q: &Question, view: &Read, m: &MoveLeader) -> Acted {
        let Some(base) = self.addresses.of(q, &m.leader, m.leader_ordinal) else {
            return Acted::Failed(format!("etcd: no address configured for {}", m.leader));
        };
        let url = format!("{base}{MOVE_LEADER}");
        // The ID as a decimal string, as the gateway writes a uint64 (a JSON number could lose digits).
        let body = json!({"targetID": m.target_id.to_string()});
        let got = call::post::<serde_json::Value>(
            &self.http,
            &url,
            &body,
            view.token.as_deref(),
            self.move_leader_timeout,
        )
        .await;
        moved::moved(m, got.map(|_| ()))
    }
}
