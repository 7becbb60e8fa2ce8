//! Which StatefulSets an endpoint serves ([`Serves`]): the `serves:` of an `--answerer-config` or
//! `--webhook-config` entry, or a `--webhook-serves NAME=…` flag.
//!
//! An annotation names an endpoint of the stepper's configuration, never a host (`config::endpoints`);
//! but whoever may edit one StatefulSet must not make the stepper act on a system that serves another
//! team's set either: a Patroni, Redis or etcd entry with fixed addresses fails over *that* database,
//! and a webhook hears questions about pods it may not know. So every entry says which sets may name
//! it, as `NAMESPACE/NAME` patterns (`*` in either place for any), and a set outside them is
//! `InvalidAnnotation` before anything is called. There is no default: an entry without `serves` is an
//! error at start (docs/answerers.md, "Which sets an entry serves"), so a file written before it is
//! never read as serving every set.

use std::fmt;

use super::dns::{is_dns_label, is_dns_subdomain};

/// The form of one pattern, for messages.
pub const FORM: &str =
    "NAMESPACE/NAME (a namespace, a StatefulSet's name, * for any), such as db/postgres or db/*";

/// One `NAMESPACE/NAME` pattern; `None` in a place is `*`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    namespace: Option<String>,
    name: Option<String>,
}

/// The sets an endpoint serves: at least one pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Serves {
    patterns: Vec<Pattern>,
}

impl Serves {
    /// The sets `patterns` name (`NAMESPACE/NAME`, `*` for any in either place); `at` names the
    /// field in errors (`answerers[0].serves`).
    ///
    /// # Errors
    /// No pattern, or one not of [`FORM`]: naming `at[i]`, the value and the form.
    pub fn parse<S: AsRef<str>>(patterns: &[S], at: &str) -> Result<Serves, String> {
        if patterns.is_empty() {
            return Err(format!(
                "{at}: empty; expected the sets it serves, as {FORM}"
            ));
        }
        let mut out = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            let p = p.as_ref().trim();
            let place = |s: &str, valid: fn(&str) -> bool| match s {
                "*" => Some(None),
                s if valid(s) => Some(Some(s.to_string())),
                _ => None,
            };
            let parsed = p.split_once('/').and_then(|(ns, name)| {
                Some((place(ns, is_dns_label)?, place(name, is_dns_subdomain)?))
            });
            match parsed {
                Some((namespace, name)) => out.push(Pattern { namespace, name }),
                None => {
                    return Err(format!("{at}[{i}]: {p:?}: expected {FORM}"));
                }
            }
        }
        Ok(Serves { patterns: out })
    }

    /// The sets of a comma-separated list (`db/postgres,db2/*`), as a flag gives them ([`Serves::parse`]).
    ///
    /// # Errors
    /// As [`Serves::parse`].
    pub fn parse_list(list: &str, at: &str) -> Result<Serves, String> {
        let patterns: Vec<&str> = list.split(',').filter(|p| !p.trim().is_empty()).collect();
        Serves::parse(&patterns, at)
    }

    /// True when set `name` in `namespace` is one of these.
    pub fn admits(&self, namespace: &str, name: &str) -> bool {
        self.patterns.iter().any(|p| {
            p.namespace.as_deref().is_none_or(|n| n == namespace)
                && p.name.as_deref().is_none_or(|n| n == name)
        })
    }
}

/// The patterns as written, comma-separated: `db/postgres, db2/*`.
impl fmt::Display for Serves {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.patterns.iter().enumerate() {
            let ns = p.namespace.as_deref().unwrap_or("*");
            let name = p.name.as_deref().unwrap_or("*");
            write!(f, "{}{ns}/{name}", if i == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_admit_their_sets_and_no_other() {
        let s = Serves::parse(&["e2e/cache", "db/*"], "serves").expect("valid");
        assert!(s.admits("e2e", "cache"));
        assert!(!s.admits("manual", "cache"));
        assert!(!s.admits("e2e", "other"));
        assert!(s.admits("db", "anything"));
        assert_eq!(s.to_string(), "e2e/cache, db/*");
        let any = Serves::parse_list("*/*", "--webhook-serves").expect("valid");
        assert!(any.admits("x", "y"));
        let named = Serves::parse_list("*/pg, ops/queue", "f").expect("valid");
        assert!(
            named.admits("a", "pg") && named.admits("ops", "queue") && !named.admits("a", "queue")
        );
    }

    #[test]
    fn bad_patterns_name_the_field_and_the_form() {
        for (list, words) in [
            (vec![], "serves: empty; expected the sets it serves"),
            (
                vec!["cache"],
                "serves[0]: \"cache\": expected NAMESPACE/NAME",
            ),
            (vec!["db/pg", "Db/pg"], "serves[1]: \"Db/pg\""),
            (vec!["db/pg/x"], "serves[0]: \"db/pg/x\""),
            (vec!["db/"], "serves[0]: \"db/\""),
        ] {
            let e = Serves::parse(&list, "serves").expect_err(words);
            assert!(e.contains(words), "{list:?}: {e}");
        }
        assert!(Serves::parse_list(" , ", "--webhook-serves db").is_err());
    }
}
