//! The configured built-in answerers: one [`BuiltIn`] per entry of `--answerer-config` (one variant
//! per kind), found by name ([`Answerers`]).

use std::collections::BTreeMap;
use std::time::Duration;

use super::etcd;
use super::patroni;
use super::question::Question;
use super::sentinel;
use super::system::answer;
use crate::gates::approval::webhook::answer::WebhookAnswer;

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

/// The answerers of `--answerer-config`, by name.
#[derive(Clone, Debug, Default)]
pub struct Answerers {
    by_name: BTreeMap<String, BuiltIn>,
}

impl Answerers {
    /// The answerers `entries` name (names already checked unique by [`file::parse`]).
    pub fn new(entries: Vec<(String, BuiltIn)>) -> Answerers {
        Answerers {
            by_name: entries.into_iter().collect(),
        }
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    /// The answerer named `name`, if configured.
    pub fn get(&self, name: &str) -> Option<&BuiltIn> {
        self.by_name.get(name)
    }

    /// The longest one answer may take among them (`None` without any): it stretches the default
    /// `--check-deadline` as a webhook's timeout does.
    pub fn longest_call(&self) -> Option<Duration> {
        self.by_name.values().map(BuiltIn::longest_call).max()
    }

    /// The answer of the answerer `name` to the request `body`. Never fails: no answer is
    /// [`WebhookAnswer::Error`].
    pub async fn answer(&self, name: &str, body: &serde_json::Value) -> WebhookAnswer {
        let Some(builtin) = self.by_name.get(name) else {
            return WebhookAnswer::Error(format!("no --answerer-config entry named {name:?}"));
        };
        match Question::read(body) {
            Ok(q) => builtin.answer(&q).await,
            Err(e) => WebhookAnswer::Error(e),
        }
    }
}
