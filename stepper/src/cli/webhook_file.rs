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
//!     serves: [db/postgres]                              # the sets that may name it (NAMESPACE/NAME, * for any)
//!     url: https://approver.db.svc:8443/approve          # http:// or https://
//!     timeoutSeconds: 30                                  # optional; default --webhook-timeout
//!     tls:                                                # optional (https only): caFile, certFile + keyFile, serverName
//!       caFile: /var/run/secrets/db-approver/ca.crt       # default --webhook-ca-file
//!     auth:                                               # optional: basic {username | usernameFile, passwordFile} or bearerTokenFile
//!       bearerTokenFile: /var/run/secrets/db-approver/token
//! ```
//!
//! `tls` and `auth` are `config::endpoint_auth`'s, as in the HTTP checks' file; every secret a file read
//! at every call. An entry's `bearerTokenFile` beside `name` and `url` (the file's first form) is kept as
//! a synonym of `auth: {bearerTokenFile}`. Read once, when the stepper starts (docs/approvals.md: with
//! kustomize's `configMapGenerator` a change of the file rolls the stepper's pod). A URL comes from here
//! or from a flag, never from an annotation.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::cli::endpoint_file::{API_VERSION, MAX_TIMEOUT_SECONDS};
use crate::cli::endpoint_file::{
    FileEndpoint, Sources, Written, check_header, endpoint, read_text, yaml_error,
};
use crate::config::endpoint_auth::{AuthFields, TlsFields};
use crate::config::serves::{FORM, Serves};

/// The file's `kind`.
pub const KIND: &str = "WebhookConfig";

/// One webhook the stepper may call: its name (a DNS label, what `<prefix>/pre-update-webhook` holds),
/// its URL (http or https), its own call timeout when the file gives one (`None`: `--webhook-timeout`),
/// its TLS and credentials.
pub type WebhookEndpoint = FileEndpoint;

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
    #[serde(default)]
    serves: Option<Vec<String>>,
    url: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
    #[serde(default)]
    bearer_token_file: Option<PathBuf>,
    #[serde(default)]
    tls: Option<TlsFields>,
    #[serde(default)]
    auth: Option<AuthFields>,
}

/// Reads the webhooks of the `--webhook-config` file at `path` ([`parse`]).
///
/// # Errors
/// The file cannot be read, or [`parse`]'s errors; each message starts `--webhook-config <path>: `.
pub fn read(path: &Path) -> Result<Vec<(WebhookEndpoint, Serves)>, String> {
    let at = format!("--webhook-config {}", path.display());
    let text = read_text("--webhook-config", path)?;
    parse(&text).map_err(|e| format!("{at}: {e}"))
}

/// The webhooks of a `--webhook-config` file's text (the module's schema), in the file's order.
///
/// # Errors
/// Not YAML of the schema (the parser's message names the line and the column, quotes that line, and
/// for an unknown field names the expected ones), another `apiVersion` or `kind`, a name that is not a DNS label or given
/// twice, `serves` missing or not of its form (`config::serves`), a URL that is not http(s), a
/// `timeoutSeconds` of 0 or over [`MAX_TIMEOUT_SECONDS`], `tls` or `auth` refused
/// (`config::endpoint_auth`), `bearerTokenFile` both beside `url` and in `auth`; each message names the
/// entry (`webhooks[i]`), the field and the expected form. Each webhook comes with the sets it serves.
pub fn parse(text: &str) -> Result<Vec<(WebhookEndpoint, Serves)>, String> {
    let file: File = serde_saphyr::from_str(text).map_err(|e| {
        format!("{}; expected apiVersion: {API_VERSION}, kind: {KIND}, webhooks: [{{name, serves, url, timeoutSeconds, tls, auth}}]", yaml_error(&e, text))
    })?;
    check_header(&file.api_version, &file.kind, KIND)?;
    let mut endpoints: Vec<WebhookEndpoint> = Vec::new();
    let mut serves = Vec::new();
    for (i, entry) in file.webhooks.into_iter().enumerate() {
        let at = format!("webhooks[{i}]");
        serves.push(match &entry.serves {
            Some(patterns) => Serves::parse(patterns, &format!("{at}.serves"))?,
            None => {
                return Err(format!(
                    "{at}.serves: missing; expected the sets that may name {:?}, as {FORM} (a webhook hears only the sets it names: docs/approvals.md, \"Which sets a webhook serves\")",
                    entry.name
                ));
            }
        });
        let auth = match (entry.bearer_token_file, entry.auth) {
            (None, auth) => auth,
            (Some(p), _) if p.as_os_str().is_empty() => {
                return Err(format!(
                    "{at}.bearerTokenFile: empty; expected the path of a file holding the token"
                ));
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{at}.bearerTokenFile: given beside auth; expected one of them (auth.bearerTokenFile is the same)"
                ));
            }
            (Some(p), None) => Some(AuthFields {
                basic: None,
                bearer_token_file: Some(p),
            }),
        };
        let written = Written {
            name: entry.name,
            url: entry.url,
            timeout_seconds: entry.timeout_seconds,
            tls: entry.tls,
            auth,
        };
        let checked = endpoint(&at, &endpoints, written)?;
        endpoints.push(checked);
    }
    Ok(endpoints.into_iter().zip(serves).collect())
}

/// The sets each `--webhook NAME=URL` flag's webhook serves, from the `--webhook-serves NAME=LIST`
/// flags (`pairs`), as ([`Serves::parse_list`]) reads them.
///
/// # Errors
/// A NAME given twice, a list not of its form, or a NAME that is no `--webhook` flag's (`flags`; a
/// file's entry says its own `serves`).
pub fn flag_serves(
    pairs: &[(String, String)],
    flags: &[(String, String)],
) -> Result<Vec<(String, Serves)>, String> {
    let mut out: Vec<(String, Serves)> = Vec::new();
    for (name, list) in pairs {
        let at = format!("--webhook-serves {name}");
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("{at}: NAME given twice; expected each NAME once"));
        }
        if !flags.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "{at}: no --webhook {name}=URL flag; expected the NAME of a --webhook flag (a --webhook-config entry gives its own serves)"
            ));
        }
        out.push((name.clone(), Serves::parse_list(list, &at)?));
    }
    Ok(out)
}

/// The `--webhook` flags' pairs, then the file's entries: one list with each name once.
///
/// # Errors
/// A name both in a flag and in the file (or twice among the flags), naming it and both sources.
pub fn merge(
    flags: &[(String, String)],
    file: Vec<WebhookEndpoint>,
) -> Result<Vec<WebhookEndpoint>, String> {
    let sources = Sources {
        flag: "--webhook",
        file_flag: "--webhook-config",
        noun: "webhook",
    };
    crate::cli::endpoint_file::merge(&sources, flags, file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::endpoint_auth::{Credentials, EndpointAuth, Tls};
    use std::time::Duration;

    const GOOD: &str = "apiVersion: safe-rollout.dev/v1alpha1
kind: WebhookConfig
webhooks:
  - name: db-approver
    serves: [db/postgres]
    url: https://approver.db.svc:8443/approve
    timeoutSeconds: 30
    bearerTokenFile: /var/run/secrets/db-approver/token
  - name: kafka
    serves: [kafka/*]
    url: http://kafka-roll-check.kafka:8080/can-roll
";

    #[test]
    fn the_file_gives_names_urls_and_timeouts_in_order() {
        let parsed = parse(GOOD).expect("good file");
        let serves: Vec<String> = parsed.iter().map(|(_, s)| s.to_string()).collect();
        assert_eq!(serves, ["db/postgres", "kafka/*"]);
        let endpoints: Vec<WebhookEndpoint> = parsed.into_iter().map(|(e, _)| e).collect();
        assert_eq!(
            endpoints,
            vec![
                WebhookEndpoint {
                    name: "db-approver".into(),
                    url: "https://approver.db.svc:8443/approve".into(),
                    timeout: Some(Duration::from_secs(30)),
                    access: EndpointAuth {
                        tls: None,
                        credentials: Some(Credentials::Bearer {
                            token_file: "/var/run/secrets/db-approver/token".into()
                        }),
                    },
                },
                WebhookEndpoint {
                    name: "kafka".into(),
                    url: "http://kafka-roll-check.kafka:8080/can-roll".into(),
                    timeout: None,
                    access: EndpointAuth::default(),
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
                GOOD.replace("    serves: [db/postgres]\n", ""),
                "webhooks[0].serves: missing; expected the sets that may name \"db-approver\"",
            ),
            (
                GOOD.replace("[db/postgres]", "[postgres]"),
                "webhooks[0].serves[0]: \"postgres\": expected NAMESPACE/NAME",
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
                "invalid u64 at line 7, column 21: `timeoutSeconds: soon`",
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
            (
                GOOD.replace(
                    "    bearerTokenFile:",
                    "    auth: {bearerTokenFile: /t}\n    bearerTokenFile:",
                ),
                "webhooks[0].bearerTokenFile: given beside auth; expected one of them",
            ),
            (
                GOOD.replace("    timeoutSeconds: 30\n", "    tls: {certFile: /c.crt}\n"),
                "webhooks[0].tls.keyFile: missing; certFile and keyFile go together",
            ),
            (
                GOOD.replace(
                    "8080/can-roll\n",
                    "8080/can-roll\n    tls: {caFile: /ca.crt}\n",
                ),
                "webhooks[1].tls: given for \"http://kafka-roll-check.kafka:8080/can-roll\"; expected an https:// URL",
            ),
            (
                GOOD.replace(
                    "8080/can-roll\n",
                    "8080/can-roll\n    auth: {basic: {username: kafka}}\n",
                ),
                "webhooks[1].auth.basic.passwordFile: missing",
            ),
        ];
        for (text, wanted) in cases {
            let e = parse(&text).expect_err(&text);
            assert!(e.contains(wanted), "{wanted:?} not in {e:?}");
        }
    }

    /// An entry's `tls` and `auth` are the shared `config::endpoint_auth` fields.
    #[test]
    fn an_entry_carries_tls_and_auth() {
        let text = GOOD.replace(
            "    bearerTokenFile: /var/run/secrets/db-approver/token\n",
            "    tls: {caFile: /ca/ca.crt, certFile: /c/tls.crt, keyFile: /c/tls.key}\n    auth: {basic: {username: stepper, passwordFile: /p/password}}\n",
        );
        let endpoints = endpoints(parse(&text).expect("tls and auth"));
        let access = &endpoints[0].access;
        assert_eq!(
            access
                .tls
                .as_ref()
                .map(|t: &Tls| (t.ca_file.clone(), t.client.is_some())),
            Some((Some("/ca/ca.crt".into()), true))
        );
        assert!(matches!(
            &access.credentials,
            Some(Credentials::Basic { password_file, .. }) if password_file.as_os_str() == "/p/password"
        ));
        assert_eq!(endpoints[1].access, EndpointAuth::default());
    }

    /// The example the kustomize Component `deploy/stepper/webhooks/` mounts is a valid file.
    #[test]
    fn the_deployed_example_parses() {
        let text = include_str!("../../../deploy/stepper/webhooks/webhooks.yaml");
        let endpoints = endpoints(parse(text).expect("deploy/stepper/webhooks/webhooks.yaml"));
        assert_eq!(endpoints.len(), 1);
        assert_eq!(endpoints[0].name, "db-approver");
        assert_eq!(endpoints[0].timeout, Some(Duration::from_secs(10)));
    }

    fn endpoints(parsed: Vec<(WebhookEndpoint, Serves)>) -> Vec<WebhookEndpoint> {
        parsed.into_iter().map(|(e, _)| e).collect()
    }

    #[test]
    fn a_flags_webhook_serves_what_webhook_serves_gives() {
        let flags = vec![("pg".to_string(), "http://pg:1/x".to_string())];
        let pairs = vec![("pg".to_string(), "db/postgres,db2/*".to_string())];
        let got = flag_serves(&pairs, &flags).expect("valid");
        assert_eq!(got[0].0, "pg");
        assert!(got[0].1.admits("db2", "any") && !got[0].1.admits("db", "other"));
        let other = vec![("kafka".to_string(), "kafka/*".to_string())];
        let e = flag_serves(&other, &flags).expect_err("no such flag");
        assert!(
            e.contains("--webhook-serves kafka: no --webhook kafka=URL flag"),
            "{e}"
        );
        let bad = vec![("pg".to_string(), "postgres".to_string())];
        let e = flag_serves(&bad, &flags).expect_err("form");
        assert!(
            e.contains("--webhook-serves pg[0]: \"postgres\": expected NAMESPACE/NAME"),
            "{e}"
        );
        let twice = vec![pairs[0].clone(), pairs[0].clone()];
        assert!(flag_serves(&twice, &flags).is_err());
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
        let e = merge(&flags, endpoints(parse(GOOD).expect("good"))).expect_err("twice");
        assert!(
            e.contains("\"kafka\" is configured both by --webhook and in --webhook-config"),
            "{e}"
        );
        let twice = vec![flags[0].clone(), flags[0].clone()];
        let e = merge(&twice, Vec::new()).expect_err("twice");
        assert!(e.contains("\"kafka\" given twice"), "{e}");
        let flags = vec![("pg".to_string(), "http://pg:1/x".to_string())];
        let all = merge(&flags, endpoints(parse(GOOD).expect("good"))).expect("merged");
        let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["pg", "db-approver", "kafka"]);
    }
}
