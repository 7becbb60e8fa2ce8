//! The approval webhooks the stepper may call, from `--webhook NAME=URL` flags and the YAML file of
//! `--webhook-config` (a ConfigMap's key mounted in the stepper's pod), merged into one list.
//!
//! The file, versioned as Kubernetes component configurations are (an `apiVersion` and a `kind`, unknown
//! fields refused):
//!
//! ```yaml
//! apiVersion: safe-rollout.dev/v1alpha1
//! kind: WebhookConfig
//! webhooks:
//!   - name: db-approver                                  # a DNS label; a set's pre-update-webhook names it
//!     url: https://approver.db.svc:8443/approve          # http:// or https://
//!     timeoutSeconds: 30                                  # optional; default --webhook-timeout
//!     bearerTokenFile: /var/run/secrets/db-approver/token # optional; sent as Authorization: Bearer
//! ```
//!
//! Read once, when the stepper starts (docs/approvals.md: with kustomize's `configMapGenerator` a change
//! of the file rolls the stepper's pod). A URL comes from here or from a flag, never from an annotation.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cli::values::named_url_problem;

/// The file's `apiVersion`.
pub const API_VERSION: &str = "safe-rollout.dev/v1alpha1";
/// The file's `kind`.
pub const KIND: &str = "WebhookConfig";
/// The longest `timeoutSeconds` accepted (10 minutes): a call longer than a pass is waited for would
/// hold every other set's pass.
pub const MAX_TIMEOUT_SECONDS: u64 = 600;

/// One webhook the stepper may call: its name (a DNS label, what `<prefix>/pre-update-webhook` holds),
/// its URL (http or https), and its own call timeout when the file gives one (`None`: `--webhook-timeout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// The name a set's `<prefix>/pre-update-webhook` selects.
    pub name: String,
    /// Where the stepper POSTs.
    pub url: String,
    /// The whole call's bound (connect, send, answer); `None`: `--webhook-timeout`.
    pub timeout: Option<Duration>,
    /// A file holding a bearer token sent as `Authorization: Bearer <token>`, read at every call (a
    /// mounted Secret or projected token that rotates); `None`: no `Authorization` header.
    pub bearer_token_file: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    api_version: String,
    kind: String,
    webhooks: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    name: String,
    url: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
    #[serde(default)]
    bearer_token_file: Option<PathBuf>,
}

/// Reads the webhooks of the `--webhook-config` file at `path` ([`parse`]).
///
/// # Errors
/// The file cannot be read, or [`parse`]'s errors; each message starts `--webhook-config <path>: `.
pub fn read(path: &Path) -> Result<Vec<WebhookEndpoint>, String> {
    let at = format!("--webhook-config {}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    parse(&text).map_err(|e| format!("{at}: {e}"))
}

/// The webhooks of a `--webhook-config` file's text (the module's schema), in the file's order.
///
/// # Errors
/// Not YAML of the schema (the parser's message names the line and the column, quotes that line, and
/// for an unknown field names the expected ones), another `apiVersion` or `kind`, a name that is not a DNS label or given
/// twice, a URL that is not http(s), a `timeoutSeconds` of 0 or over [`MAX_TIMEOUT_SECONDS`]; each
/// message names the entry (`webhooks[i]`) and the expected form.
pub fn parse(text: &str) -> Result<Vec<WebhookEndpoint>, String> {
    let file: File = serde_saphyr::from_str(text).map_err(|e| {
        format!("{}; expected apiVersion: {API_VERSION}, kind: {KIND}, webhooks: [{{name, url, timeoutSeconds, bearerTokenFile}}]", yaml_error(&e, text))
    })?;
    if file.api_version != API_VERSION || file.kind != KIND {
        return Err(format!(
            "apiVersion {:?}, kind {:?}: expected apiVersion: {API_VERSION} and kind: {KIND}",
            file.api_version, file.kind
        ));
    }
    let mut endpoints: Vec<WebhookEndpoint> = Vec::new();
    for (i, entry) in file.webhooks.into_iter().enumerate() {
        let at = format!("webhooks[{i}]");
        if let Some(problem) = named_url_problem(&entry.name, &entry.url) {
            return Err(format!("{at}: {problem}"));
        }
        if endpoints.iter().any(|e| e.name == entry.name) {
            return Err(format!(
                "{at}: name {:?} given twice; expected each name once",
                entry.name
            ));
        }
        let timeout = match entry.timeout_seconds {
            None => None,
            Some(s) if (1..=MAX_TIMEOUT_SECONDS).contains(&s) => Some(Duration::from_secs(s)),
            Some(s) => {
                return Err(format!(
                    "{at}.timeoutSeconds: {s}: expected whole seconds from 1 to {MAX_TIMEOUT_SECONDS}"
                ));
            }
        };
        if entry
            .bearer_token_file
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(format!(
                "{at}.bearerTokenFile: empty; expected the path of a file holding the token"
            ));
        }
        endpoints.push(WebhookEndpoint {
            name: entry.name,
            url: entry.url,
            timeout,
            bearer_token_file: entry.bearer_token_file,
        });
    }
    Ok(endpoints)
}

/// The YAML parser's message on one line, with the line it points at quoted (the field and its
/// value): `invalid u64 at line 6, column 21: `timeoutSeconds: soon``.
fn yaml_error(e: &serde_saphyr::Error, text: &str) -> String {
    let message = e.without_snippet().to_string();
    let line = e
        .location()
        .and_then(|at| usize::try_from(at.line()).ok()?.checked_sub(1))
        .and_then(|i| text.lines().nth(i))
        .map(str::trim)
        .filter(|l| !l.is_empty());
    match line {
        Some(line) => format!("{message}: `{line}`"),
        None => message,
    }
}

/// The `--webhook` flags' pairs, then the file's entries: one list with each name once.
///
/// # Errors
/// A name both in a flag and in the file (or twice among the flags), naming it and both sources.
pub fn merge(
    flags: &[(String, String)],
    file: Vec<WebhookEndpoint>,
) -> Result<Vec<WebhookEndpoint>, String> {
    let mut all: Vec<WebhookEndpoint> = Vec::with_capacity(flags.len() + file.len());
    for (name, url) in flags {
        if all.iter().any(|e| &e.name == name) {
            return Err(format!(
                "--webhook: NAME {name:?} given twice; expected each NAME once"
            ));
        }
        all.push(WebhookEndpoint {
            name: name.clone(),
            url: url.clone(),
            timeout: None,
            bearer_token_file: None,
        });
    }
    for entry in file {
        if all.iter().any(|e| e.name == entry.name) {
            return Err(format!(
                "webhook {:?} is configured both by --webhook and in --webhook-config; expected each name once",
                entry.name
            ));
        }
        all.push(entry);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "apiVersion: safe-rollout.dev/v1alpha1
kind: WebhookConfig
webhooks:
  - name: db-approver
    url: https://approver.db.svc:8443/approve
    timeoutSeconds: 30
    bearerTokenFile: /var/run/secrets/db-approver/token
  - name: kafka
    url: http://kafka-roll-check.kafka:8080/can-roll
";

    #[test]
    fn the_file_gives_names_urls_and_timeouts_in_order() {
        let endpoints = parse(GOOD).expect("good file");
        assert_eq!(
            endpoints,
            vec![
                WebhookEndpoint {
                    name: "db-approver".into(),
                    url: "https://approver.db.svc:8443/approve".into(),
                    timeout: Some(Duration::from_secs(30)),
                    bearer_token_file: Some("/var/run/secrets/db-approver/token".into()),
                },
                WebhookEndpoint {
                    name: "kafka".into(),
                    url: "http://kafka-roll-check.kafka:8080/can-roll".into(),
                    timeout: None,
                    bearer_token_file: None,
                },
            ]
        );
    }

    #[test]
    fn a_bad_file_names_the_field_and_the_expected_form() {
        let cases = [
            (
                GOOD.replace("timeoutSeconds", "timeout"),
                "unknown field `timeout`",
            ),
            (
                GOOD.replace("v1alpha1", "v1"),
                "expected apiVersion: safe-rollout.dev/v1alpha1",
            ),
            (
                GOOD.replace("WebhookConfig", "Webhooks"),
                "kind: WebhookConfig",
            ),
            (
                GOOD.replace("kafka\n", "db-approver\n"),
                "webhooks[1]: name \"db-approver\" given twice",
            ),
            (
                GOOD.replace("http://kafka", "kafka"),
                "webhooks[1]: URL \"kafka-roll-check",
            ),
            (
                GOOD.replace("name: kafka", "name: Kafka_1"),
                "webhooks[1]: NAME \"Kafka_1\" is not a DNS label",
            ),
            (
                GOOD.replace(": 30", ": 0"),
                "webhooks[0].timeoutSeconds: 0: expected whole seconds from 1 to 600",
            ),
            (
                GOOD.replace(": 30", ": 601"),
                "webhooks[0].timeoutSeconds: 601",
            ),
            (
                GOOD.replace(": 30", ": soon"),
                "invalid u64 at line 6, column 21: `timeoutSeconds: soon`",
            ),
            (
                "apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\n".to_string(),
                "missing field `webhooks`",
            ),
            (
                "- a list\n".to_string(),
                "expected apiVersion: safe-rollout.dev/v1alpha1, kind: WebhookConfig",
            ),
            (
                GOOD.replace("/var/run/secrets/db-approver/token", "\"\""),
                "webhooks[0].bearerTokenFile: empty",
            ),
        ];
        for (text, wanted) in cases {
            let e = parse(&text).expect_err(&text);
            assert!(e.contains(wanted), "{wanted:?} not in {e:?}");
        }
    }

    /// The example the kustomize Component `deploy/stepper/webhooks/` mounts is a valid file.
    #[test]
    fn the_deployed_example_parses() {
        let text = include_str!("../../../deploy/stepper/webhooks/webhooks.yaml");
        let endpoints = parse(text).expect("deploy/stepper/webhooks/webhooks.yaml");
        assert_eq!(endpoints.len(), 1);
        assert_eq!(endpoints[0].name, "db-approver");
        assert_eq!(endpoints[0].timeout, Some(Duration::from_secs(10)));
    }

    #[test]
    fn read_names_the_flag_and_the_path() {
        let missing = Path::new("/nonexistent/webhooks.yaml");
        let e = read(missing).expect_err("missing");
        assert!(
            e.starts_with("--webhook-config /nonexistent/webhooks.yaml: "),
            "{e}"
        );
    }

    #[test]
    fn merging_refuses_a_name_from_both_sources() {
        let flags = vec![("kafka".to_string(), "http://other:1/x".to_string())];
        let e = merge(&flags, parse(GOOD).expect("good")).expect_err("twice");
        assert!(
            e.contains("\"kafka\" is configured both by --webhook and in --webhook-config"),
            "{e}"
        );
        let twice = vec![flags[0].clone(), flags[0].clone()];
        let e = merge(&twice, Vec::new()).expect_err("twice");
        assert!(e.contains("\"kafka\" given twice"), "{e}");
        let flags = vec![("pg".to_string(), "http://pg:1/x".to_string())];
        let all = merge(&flags, parse(GOOD).expect("good")).expect("merged");
        let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["pg", "db-approver", "kafka"]);
    }
}
