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
