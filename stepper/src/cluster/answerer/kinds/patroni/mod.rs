//! Patroni (PostgreSQL) as a built-in answerer, through Patroni's REST API (docs/answerers.md,
//! "Patroni"): `GET /cluster` from any member that answers (each lists the whole cluster, from the
//! DCS), the decision [`decide`]'s, and `POST /switchover {"leader", "candidate"}` when the leader is a
//! pod of the step. Patroni answers a switchover once it is done or failed (its own wait is
//! `2 × max(10, loop_wait)` seconds), so that call has its own, longer bound; the stepper then reads the
//! cluster again before it approves anything (a `200` is not taken as proof that the role moved).

pub mod decide;
pub mod entry;

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::cluster::answerer::address::Addresses;
use crate::cluster::answerer::question::Question;
use crate::cluster::answerer::system::{Acted, System, Verdict};
use crate::cluster::endpoint_client::{EndpointClient, describe};
use decide::{ClusterView, Switchover};

/// The kind's name in `--answerer-config` and in the metrics.
pub const KIND: &str = "patroni";

/// One Patroni cluster's client, as an `--answerer-config` entry configures it.
#[derive(Clone, Debug)]
pub struct Patroni {
    /// The HTTP client (redirects not followed), with the entry's TLS and credentials.
    pub(super) http: EndpointClient,
    /// Where each member's REST API is.
    pub(super) addresses: Addresses,
    /// The bound of one `GET /cluster`.
    pub(super) timeout: Duration,
    /// The bound of the `POST /switchover`.
    pub(super) switchover_timeout: Duration,
    /// A replica may be at most this many bytes behind the leader (the step's, and a candidate's).
    pub(super) max_lag_bytes: u64,
}

/// What was read: the cluster, and the REST API that answered (where a switchover is sent).
#[derive(Clone, Debug)]
pub struct Read {
    /// `GET /cluster`.
    pub cluster: ClusterView,
    /// The base URL of the member that answered.
    pub base: String,
}

impl Patroni {
    /// The longest one answer may take: a read, then a switchover.
    pub fn longest_call(&self) -> Duration {
        self.timeout + self.switchover_timeout
    }

    /// The members' REST APIs in the order they are tried: the pods outside the step first (the step's
    /// may be going), each in ordinal order.
    fn bases(&self, q: &Question) -> Vec<(String, String)> {
        let mut pods = q.set_pods();
        pods.sort_by_key(|(o, n)| (q.in_step(n), *o));
        pods.into_iter()
            .filter_map(|(o, n)| Some((self.addresses.of(q, &n, o)?, n)))
            .collect()
    }
}

impl System for Patroni {
    type View = Read;
    type Action = Switchover;

    async fn read(&self, q: &Question) -> Result<Read, String> {
        let mut errors = Vec::new();
        for (base, pod) in self.bases(q) {
            let url = format!("{base}/cluster");
            let got = async {
                let request = self.http.request(Method::GET, &url)?;
                let r = request.timeout(self.timeout).send().await;
                let r = r.map_err(|e| describe(&e))?;
                let status = r.status();
                let body = r.bytes().await.map_err(|e| describe(&e))?;
                if !status.is_success() {
                    return Err(format!("HTTP {}", status.as_u16()));
                }
                serde_json::from_slice::<ClusterView>(&body)
                    .map_err(|e| format!("not Patroni's /cluster JSON: {e}"))
            }
            .await;
            match got {
                Ok(cluster) => return Ok(Read { cluster, base }),
                Err(e) => errors.push(format!("{pod} ({url}): {e}")),
            }
        }
        Err(format!(
            "Patroni: no member answered GET /cluster: {}",
            if errors.is_empty() {
                "no member address configured".to_string()
            } else {
                errors.join("; ")
            }
        ))
    }

    fn decide(&self, q: &Question, view: &Read) -> Verdict<Switchover> {
        decide::decide(q, &view.cluster, self.max_lag_bytes)
    }

    async fn act(&self, _q: &Question, view: &Read, s: &Switchover) -> Acted {
        let url = format!("{}/switchover", view.base);
        let request = match self.http.request(Method::POST, &url) {
            Ok(r) => r,
            Err(e) => return Acted::Failed(e),
        };
        let request = request
            .timeout(self.switchover_timeout)
            .header("Content-Type", "application/json")
            // Patroni needs a Content-Length (no chunked body): a body of bytes has one.
            .body(json!({"leader": s.leader, "candidate": s.candidate}).to_string());
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => return Acted::Failed(format!("POST {url}: {}", describe(&e))),
        };
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
        let what = format!("switchover {} → {}", s.leader, s.candidate);
        match status {
            200 | 202 => Acted::Started(format!("Patroni: {what}: {body}; confirming")),
            // "Switchover status unknown": Patroni may still be switching over.
            503 if body.contains("unknown") => {
                Acted::Started(format!("Patroni: {what}: HTTP 503: {body}; confirming"))
            }
            400 | 412 | 503 => {
                Acted::Refused(format!("Patroni refused the {what}: HTTP {status}: {body}"))
            }
            401 | 403 => Acted::Failed(format!(
                "Patroni: {what}: HTTP {status}: {body} (the entry's credentials)"
            )),
            _ => Acted::Failed(format!("Patroni: {what}: HTTP {status}: {body}")),
        }
    }
}
