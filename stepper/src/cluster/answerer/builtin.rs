//! The configured built-in answerers, found by name ([`Answerers`]): one [`BuiltIn`] per entry of
//! `--answerer-config`, with the sets it serves.

use std::collections::BTreeMap;
use std::time::Duration;

use super::file::Configured;
use super::kinds::BuiltIn;
use super::question::Question;
use crate::config::Serves;
use crate::gates::approval::webhook::answer::WebhookAnswer;

/// The answerers of `--answerer-config`, by name.
#[derive(Clone, Debug, Default)]
pub struct Answerers {
    by_name: BTreeMap<String, (Serves, BuiltIn)>,
}

impl Answerers {
    /// The answerers `entries` configure (names already checked unique by `file::parse`).
    pub fn new(entries: Vec<Configured>) -> Answerers {
        Answerers {
            by_name: entries
                .into_iter()
                .map(|c| (c.name, (c.serves, c.builtin)))
                .collect(),
        }
    }

    /// The configured names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    /// The answerer named `name`, if configured.
    pub fn get(&self, name: &str) -> Option<&BuiltIn> {
        self.by_name.get(name).map(|(_, b)| b)
    }

    /// The sets the answerer `name` serves, if configured.
    pub fn serves(&self, name: &str) -> Option<&Serves> {
        self.by_name.get(name).map(|(s, _)| s)
    }

    /// The longest one answer may take among them (`None` without any): it stretches the default
    /// `--check-deadline` as a webhook's timeout does.
    pub fn longest_call(&self) -> Option<Duration> {
        self.by_name.values().map(|(_, b)| b.longest_call()).max()
    }

    /// The answer of the answerer `name` to the request `body`. Never fails: no answer is
    /// [`WebhookAnswer::Error`] — also a question about a set the entry does not serve, refused before
    /// the system is called (the gates refuse such a set first: `InvalidAnnotation`).
    pub async fn answer(&self, name: &str, body: &serde_json::Value) -> WebhookAnswer {
        let Some((serves, builtin)) = self.by_name.get(name) else {
            return WebhookAnswer::Error(format!("no --answerer-config entry named {name:?}"));
        };
        match Question::read(body) {
            Ok(q) => {
                let set = &q.stateful_set;
                if !serves.admits(&set.namespace, &set.name) {
                    return WebhookAnswer::Error(format!(
                        "--answerer-config entry {name:?} serves {serves}, not {}/{}: not called",
                        set.namespace, set.name
                    ));
                }
                builtin.answer(&q).await
            }
            Err(e) => WebhookAnswer::Error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::answerer::file::parse;

    /// An entry bound to `e2e/cache` answers a question about `manual/cache` with the refusal, before
    /// any connection (its Sentinel is port 9, where nothing listens: a read would fail otherwise).
    #[tokio::test]
    async fn a_question_about_a_set_it_does_not_serve_is_never_answered() {
        let text = "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n  - name: cache\n    serves: [e2e/cache]\n    timeoutSeconds: 1\n    redisSentinel: {masterName: mymaster, sentinels: [\"127.0.0.1:9\"], address: \"127.0.0.1:9\"}\n";
        let answerers = Answerers::new(parse(text).expect("valid"));
        let body = |ns: &str| {
            serde_json::json!({
                "requestId": "5f0c2a9e41d7b3c8", "phase": "Update", "replicas": 3,
                "statefulSet": {"namespace": ns, "name": "cache"},
                "pods": [{"name": "cache-2", "ordinal": 2}], "updateRevision": "cache-2",
                "partition": {"from": 3, "to": 2}
            })
        };
        match answerers.answer("cache", &body("manual")).await {
            WebhookAnswer::Error(e) => assert_eq!(
                e,
                "--answerer-config entry \"cache\" serves e2e/cache, not manual/cache: not called"
            ),
            other => panic!("{other:?}"),
        }
        match answerers.answer("cache", &body("e2e")).await {
            WebhookAnswer::Error(e) => {
                assert!(e.starts_with("Redis Sentinel: no Sentinel answered"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
}
