//! The configured built-in answerers, found by name ([`Answerers`]): one [`BuiltIn`] per entry of
//! `--answerer-config`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::kinds::BuiltIn;
use super::question::Question;
use crate::gates::approval::webhook::answer::WebhookAnswer;

/// The answerers of `--answerer-config`, by name.
#[derive(Clone, Debug, Default)]
pub struct Answerers {
    by_name: BTreeMap<String, BuiltIn>,
}

impl Answerers {
    /// The answerers `entries` name (names already checked unique by `file::parse`).
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
