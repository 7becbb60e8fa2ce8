//! The `--answerer-config` file: the built-in answerers a set's `<prefix>/pre-update-webhook` may name
//! (a ConfigMap's key mounted in the stepper's pod; read once, at start). Versioned as Kubernetes
//! component configurations are (an `apiVersion` and a `kind`, unknown fields refused):
//!
//! ```yaml
//! apiVersion: safe-rollout.dev/v1alpha1
//! kind: AnswererConfig
//! answerers:
//!   - name: pg-main              # a DNS label; a set's pre-update-webhook names it
//!     serves: [db/postgres]      # the sets that may name it: NAMESPACE/NAME, * for any (required)
//!     timeoutSeconds: 5          # optional; one read of the system (default 5)
//!     patroni: {address: "http://{pod}.{service}.{namespace}.svc:8008"}
//! ```
//!
//! Each entry has exactly one kind's object (`patroni`, `etcd`), read by that kind's `entry` module. Addresses
//! and credentials come only from here: an annotation names an entry, never a host; and only the sets
//! its `serves` admits may name it (`config::serves`: another team's set never makes the stepper act on
//! this entry's system).

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::kinds::{BuiltIn, Entry, KINDS};
use crate::config::endpoints::is_dns_label;
use crate::config::serves::{FORM, Serves};

/// The file's `apiVersion`.
pub const API_VERSION: &str = "safe-rollout.dev/v1alpha1";
/// The file's `kind`.
pub const KIND: &str = "AnswererConfig";
/// The default bound of one read of a system (seconds).
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 5;
/// The longest `timeoutSeconds` accepted.
pub const MAX_TIMEOUT_SECONDS: u64 = 120;

/// One entry of the file, checked: its name, the sets it serves, its kind's client.
#[derive(Clone, Debug)]
pub struct Configured {
    /// A DNS label; what a set's `pre-update-webhook` names.
    pub name: String,
    /// The sets that may name it.
    pub serves: Serves,
    /// Its kind's client.
    pub builtin: BuiltIn,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    api_version: String,
    kind: String,
    answerers: Vec<Entry>,
}

/// Reads the answerers of the file at `path` ([`parse`]).
///
/// # Errors
/// The file cannot be read, or [`parse`]'s errors; each message starts `--answerer-config <path>: `.
pub fn read(path: &Path) -> Result<Vec<Configured>, String> {
    let at = format!("--answerer-config {}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    parse(&text).map_err(|e| format!("{at}: {e}"))
}

/// The answerers of a file's text, in the file's order.
///
/// # Errors
/// Not YAML of the schema (the parser's message, with the line), another `apiVersion` or `kind`, a name
/// that is not a DNS label or given twice, `serves` missing or not of its form, `timeoutSeconds` 0 or
/// over [`MAX_TIMEOUT_SECONDS`], an entry with no kind or two, a kind's own errors; each naming the
/// entry (`answerers[i]`) and the field.
pub fn parse(text: &str) -> Result<Vec<Configured>, String> {
    let file: File = serde_saphyr::from_str(text).map_err(|e| {
        format!("{e}; expected apiVersion: {API_VERSION}, kind: {KIND}, answerers: [{{name, serves, timeoutSeconds, one of {KINDS}}}]")
    })?;
    if file.api_version != API_VERSION || file.kind != KIND {
        return Err(format!(
            "apiVersion {:?}, kind {:?}: expected apiVersion: {API_VERSION} and kind: {KIND}",
            file.api_version, file.kind
        ));
    }
    let mut out: Vec<Configured> = Vec::new();
    for (i, entry) in file.answerers.into_iter().enumerate() {
        let at = format!("answerers[{i}]");
        if !is_dns_label(&entry.name) {
            return Err(format!(
                "{at}.name: {:?}: expected a DNS label (lowercase letters, digits and '-', at most 63)",
                entry.name
            ));
        }
        if out.iter().any(|c| c.name == entry.name) {
            return Err(format!(
                "{at}.name: {:?} given twice; expected each name once",
                entry.name
            ));
        }
        let seconds = entry.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        if !(1..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
            return Err(format!(
                "{at}.timeoutSeconds: {seconds}: expected whole seconds from 1 to {MAX_TIMEOUT_SECONDS}"
            ));
        }
        let serves = match &entry.serves {
            Some(patterns) => Serves::parse(patterns, &format!("{at}.serves"))?,
            None => {
                return Err(format!(
                    "{at}.serves: missing; expected the sets that may name {:?}, as {FORM} (an entry serves only the sets it names: docs/answerers.md, \"Which sets an entry serves\")",
                    entry.name
                ));
            }
        };
        let timeout = Duration::from_secs(seconds);
        let name = entry.name.clone();
        let builtin = entry.build(builder(), timeout, &at)?;
        out.push(Configured {
            name,
            serves,
            builtin,
        });
    }
    Ok(out)
}

/// The HTTP client builder of one entry: redirects not followed (credentials never go to another
/// address); TLS always verified (the entry's `tls` adds its CA and client certificate).
fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("sts-stepper/", env!("CARGO_PKG_VERSION")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\n";

    #[test]
    fn an_entry_names_one_kind_and_its_address() {
        let text = format!(
            "{HEAD}answerers:\n  - name: pg-main\n    serves: [db/pg]\n    timeoutSeconds: 3\n    patroni:\n      address: \"http://{{pod}}.{{service}}.{{namespace}}.svc:8008\"\n      maxLagBytes: 0\n"
        );
        let got = parse(&text).expect("valid");
        assert_eq!(got.len(), 1);
        let Configured {
            name,
            serves,
            builtin,
        } = &got[0];
        assert_eq!(name, "pg-main");
        assert!(serves.admits("db", "pg") && !serves.admits("other", "pg"));
        assert_eq!(builtin.kind(), "patroni");
        assert_eq!(
            builtin.longest_call(),
            Duration::from_secs(
                3 + super::super::kinds::patroni::entry::DEFAULT_SWITCHOVER_TIMEOUT_SECONDS
            )
        );
    }

    /// The per-system examples of docs/examples/answerers/ are valid files, each entry of its kind and
    /// serving the set the example names.
    #[test]
    fn the_documented_examples_parse() {
        for (text, kind, namespace, set) in [
            (
                include_str!("../../../../docs/examples/answerers/patroni/answerers.yaml"),
                "patroni",
                "db",
                "postgres",
            ),
            (
                include_str!("../../../../docs/examples/answerers/redis-sentinel/answerers.yaml"),
                "redisSentinel",
                "db",
                "cache-redis-node",
            ),
            (
                include_str!("../../../../docs/examples/answerers/etcd/answerers.yaml"),
                "etcd",
                "db",
                "etcd",
            ),
        ] {
            let got = parse(text).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(got.len(), 1, "{kind}");
            assert_eq!(got[0].builtin.kind(), kind);
            assert!(
                got[0].serves.admits(namespace, set),
                "{kind}: {}",
                got[0].serves
            );
        }
    }

    /// The example the kustomize Component `deploy/stepper/answerers/` mounts is a valid file.
    #[test]
    fn the_deployed_example_parses() {
        let text = include_str!("../../../../deploy/stepper/answerers/answerers.yaml");
        let got = parse(text).expect("deploy/stepper/answerers/answerers.yaml");
        assert_eq!(got.len(), 1);
        let Configured {
            name,
            serves,
            builtin,
        } = &got[0];
        assert_eq!(name, "pg-main");
        assert!(serves.admits("db", "postgres"));
        assert!(!serves.admits("db", "other") && !serves.admits("other", "postgres"));
        assert_eq!(builtin.kind(), "patroni");
    }

    #[test]
    fn bad_entries_name_the_entry_the_field_and_the_form() {
        let patroni = "    patroni: {address: \"http://{pod}:8008\"}\n";
        for (body, words) in [
            (format!("answerers:\n  - name: PG\n{patroni}"), "answerers[0].name: \"PG\": expected a DNS label"),
            (
                format!("answerers:\n  - name: pg\n    serves: [db/pg]\n{patroni}  - name: pg\n    serves: [db/pg]\n{patroni}"),
                "answerers[1].name: \"pg\" given twice",
            ),
            ("answerers:\n  - name: pg\n    serves: [db/pg]\n".to_string(), "answerers[0]: no kind; expected one of: patroni, redisSentinel"),
            (
                format!("answerers:\n  - name: pg\n{patroni}"),
                "answerers[0].serves: missing; expected the sets that may name \"pg\", as NAMESPACE/NAME",
            ),
            (
                format!("answerers:\n  - name: pg\n    serves: [pg]\n{patroni}"),
                "answerers[0].serves[0]: \"pg\": expected NAMESPACE/NAME",
            ),
            (
                format!("answerers:\n  - name: pg\n    serves: [db/pg]\n    timeoutSeconds: 0\n{patroni}"),
                "answerers[0].timeoutSeconds: 0: expected whole seconds from 1 to 120",
            ),
            (
                "answerers:\n  - name: pg\n    serves: [db/pg]\n    patroni: {address: \"pg:8008\"}\n".to_string(),
                "answerers[0].patroni.address: \"pg:8008\": expected an http(s) URL",
            ),
            (
                "answerers:\n  - name: pg\n    serves: [db/pg]\n    patroni: {address: \"http://{pod}:8008\", auth: {basic: {username: u}}}\n".to_string(),
                "answerers[0].patroni.auth.basic.passwordFile",
            ),
            (
                "answerers:\n  - name: pg\n    serves: [db/pg]\n    patroni: {address: \"http://{pod}:8008\", tls: {caFile: /ca}}\n".to_string(),
                "answerers[0].patroni.tls: given for",
            ),
            (
                "answerers:\n  - name: pg\n    serves: [db/pg]\n    patroni: {url: \"http://{pod}:8008\"}\n".to_string(),
                "unknown field `url`",
            ),
        ] {
            let e = parse(&format!("{HEAD}{body}")).err().unwrap_or_else(|| panic!("accepted: {body}"));
            assert!(e.contains(words), "{body}\n→ {e}");
        }
        let e = parse("apiVersion: v1\nkind: WebhookConfig\nanswerers: []\n").expect_err("kind");
        assert!(
            e.contains("expected apiVersion: safe-rollout.dev/v1alpha1 and kind: AnswererConfig"),
            "{e}"
        );
    }
}
