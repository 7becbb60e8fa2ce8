//! The kinds of built-in answerer, registered in one place: each kind is one folder (its client and
//! `System` implementation in `mod.rs`, its pure decision in `decide.rs`, its `--answerer-config` object in
//! `entry.rs`), and this file names it three times — its module, its [`BuiltIn`] variant, its field of an
//! [`Entry`] (ARCHITECTURE.md, "What adding an answerer kind touches").

pub mod etcd;
pub mod patroni;
pub mod sentinel;

use std::time::Duration;

use serde::Deserialize;

use super::question::Question;
use super::system::answer;
use crate::gates::approval::webhook::answer::WebhookAnswer;

/// The kinds an entry may name, one each, as the file spells them.
pub const KINDS: &str = "patroni, redisSentinel, etcd";

/// One entry of `--answerer-config` as written: its name, its read bound, and exactly one kind's object.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    /// A DNS label; what a set's `pre-update-webhook` names.
    pub name: String,
    /// The bound of one read of the system (seconds); `None`: the file's default.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// The sets that may name it, as `NAMESPACE/NAME` patterns (`config::serves`); required.
    #[serde(default)]
    pub serves: Option<Vec<String>>,
    #[serde(default)]
    patroni: Option<patroni::entry::Entry>,
    #[serde(default)]
    redis_sentinel: Option<sentinel::entry::Entry>,
    #[serde(default)]
    etcd: Option<etcd::entry::Entry>,
}

impl Entry {
    /// The client of the entry's one kind, each read bounded by `timeout`, an HTTP client from
    /// `builder` for the kinds that speak HTTP; `at` names the entry in errors (`answerers[0]`).
    ///
    /// # Errors
    /// No kind or two, or the kind's own errors (naming `<at>.<kind>.<field>`).
    pub fn build(
        self,
        builder: reqwest::ClientBuilder,
        timeout: Duration,
        at: &str,
    ) -> Result<BuiltIn, String> {
        let given = [
            self.patroni.is_some(),
            self.redis_sentinel.is_some(),
            self.etcd.is_some(),
        ];
        match given.iter().filter(|g| **g).count() {
            0 => return Err(format!("{at}: no kind; expected one of: {KINDS}")),
            1 => {}
            _ => return Err(format!("{at}: two kinds; expected one of: {KINDS}")),
        }
        Ok(if let Some(p) = self.patroni {
            BuiltIn::Patroni(p.build(builder, timeout, &format!("{at}.patroni"))?)
        } else if let Some(r) = self.redis_sentinel {
            BuiltIn::RedisSentinel(r.build(timeout, &format!("{at}.redisSentinel"))?)
        } else if let Some(e) = self.etcd {
            BuiltIn::Etcd(e.build(builder, timeout, &format!("{at}.etcd"))?)
        } else {
            return Err(format!("{at}: no kind; expected one of: {KINDS}"));
        })
    }
}

/// One configured answerer: its kind's client.
#[derive(Clone, Debug)]
pub enum BuiltIn {
    /// Patroni's REST API ([`patroni`]).
    Patroni(patroni::Patroni),
    /// etcd's gRPC-gateway JSON ([`etcd`]).
    Etcd(etcd::Etcd),
    /// Redis with Sentinel ([`sentinel`]).
    RedisSentinel(sentinel::RedisSentinel),
}

impl BuiltIn {
    /// The kind's name as the file spells it (`patroni`): the metrics' `kind` label.
    pub fn kind(&self) -> &'static str {
        match self {
            BuiltIn::Patroni(_) => patroni::KIND,
            BuiltIn::Etcd(_) => etcd::KIND,
            BuiltIn::RedisSentinel(_) => sentinel::KIND,
        }
    }

    /// The longest one answer may take (reads and an action).
    pub fn longest_call(&self) -> Duration {
        match self {
            BuiltIn::Patroni(p) => p.longest_call(),
            BuiltIn::Etcd(e) => e.longest_call(),
            BuiltIn::RedisSentinel(s) => s.longest_call(),
        }
    }

    /// Answers `q` ([`answer`] with the kind's client).
    pub async fn answer(&self, q: &Question) -> WebhookAnswer {
        match self {
            BuiltIn::Patroni(p) => answer(p, q).await,
            BuiltIn::Etcd(e) => answer(e, q).await,
            BuiltIn::RedisSentinel(s) => answer(s, q).await,
        }
    }
}
