//! [`Keys`]: the full annotation keys (`<prefix>/<name>`) for one `--annotation-prefix`, built once for
//! every declared name ([`names::ALL`], from `rules/src/declared.rs`): a new annotation is its row there
//! and its constant, not a field here.

use std::collections::BTreeMap;

use sts_safe_rollout_rules::annotations as names;

/// The full annotation keys (`<prefix>/<name>`) for one prefix, built once from `--annotation-prefix`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
    /// `<prefix>/<name>` by short name, for every name of [`names::ALL`].
    declared: BTreeMap<&'static str, String>,
}

impl Keys {
    /// The keys under `prefix` (already validated: a DNS subdomain).
    pub fn new(prefix: &str) -> Self {
        Keys {
            prefix: prefix.to_string(),
            declared: (names::ALL.iter())
                .map(|name| (*name, names::key(prefix, name)))
                .collect(),
        }
    }

    /// The full key `<prefix>/<name>` of the declared annotation `name` (a constant of
    /// [`names`], every one a row of `names::DECLARED`), built once. A name not declared — a
    /// programming error, caught by the tests (`keys_are_asked_only_of_declared_names`) — gets the
    /// empty key, which names no annotation: nothing is read under it, and the API server refuses a
    /// write of it.
    /// A name built at run time (`prometheus-query-2`) takes [`Keys::full`].
    pub fn of(&self, name: &str) -> &str {
        debug_assert!(self.declared.contains_key(name), "{name} is not declared");
        self.declared.get(name).map_or("", String::as_str)
    }

    /// The prefix these keys are under (the simulation's admission reads it, as the policy's setting).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
    /// The full key `<prefix>/<name>` of annotation `name` (a short name, e.g. from
    /// [`sts_safe_rollout_rules::annotations::DECLARED`]).
    pub fn full(&self, name: &str) -> String {
        names::key(self.prefix(), name)
    }

    /// True for an annotation key under this prefix (`<prefix>/<name>`, any name): the only annotations
    /// the stepper reads ([`super::SetConfig::parse`], [`super::check::check_config`]) or writes.
    pub fn owns(&self, key: &str) -> bool {
        key.strip_prefix(self.prefix.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl Default for Keys {
    /// The keys under [`names::DEFAULT_PREFIX`].
    fn default() -> Self {
        Keys::new(names::DEFAULT_PREFIX)
    }
}
