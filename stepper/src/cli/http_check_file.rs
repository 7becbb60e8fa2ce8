//! The HTTP checks the stepper may GET, from `--http-check NAME=URL` flags and the YAML file of
//! `--http-check-config` (a ConfigMap's key mounted in the stepper's pod), merged into one list: the
//! file is the way to give a check its own timeout, TLS and credentials (Elasticsearch 8 and OpenSearch
//! are https with authentication by default).
//!
//! The file, versioned as the webhooks' (`webhook_file`; an `apiVersion` and a `kind`, unknown fields
//! refused):
//!
//! ```yaml
//! apiVersion: safe-rollout.dev/v1alpha1
//! kind: HttpCheckConfig
//! checks:
//!   - name: es-health                                    # a DNS label; a set's http-check names it
//!     url: https://logs-es-http.search.svc:9200/_cluster/health
//!     timeoutSeconds: 5                                   # optional; default --http-check-timeout
//!     tls:                                                # optional (https only)
//!       caFile: /var/run/secrets/es-http-ca/ca.crt        # besides the web PKI roots
//!     auth:                                               # optional: basic or bearerTokenFile
//!       basic:
//!         username: elastic                               # or usernameFile
//!         passwordFile: /var/run/secrets/es-elastic-user/elastic
//! ```
//!
//! `tls` and `auth` are `config::endpoint_auth`'s: every secret a file, read at every call. Read once,
//! when the stepper starts. A URL comes from here or from a flag, never from an annotation.

use std::path::Path;

use serde::Deserialize;

use crate::cli::endpoint_file::{
    API_VERSION, FileEndpoint, Sources, Written, check_header, endpoint, read_text, yaml_error,
};
use crate::cli::values::named_url;
use crate::config::endpoint_auth::{AuthFields, TlsFields};

/// The file's `kind`.
pub const KIND: &str = "HttpCheckConfig";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    api_version: String,
    kind: String,
    checks: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    name: String,
    url: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
    #[serde(default)]
    tls: Option<TlsFields>,
    #[serde(default)]
    auth: Option<AuthFields>,
}

/// Reads the checks of the `--http-check-config` file at `path` ([`parse`]).
///
/// # Errors
/// The file cannot be read, or [`parse`]'s errors; each message starts `--http-check-config <path>: `.
pub fn read(path: &Path) -> Result<Vec<FileEndpoint>, String> {
    let text = read_text("--http-check-config", path)?;
    parse(&text).map_err(|e| format!("--http-check-config {}: {e}", path.display()))
}

/// The checks of an `--http-check-config` file's text (the module's schema), in the file's order.
///
/// # Errors
/// Not YAML of the schema (the parser's message names the line and the column and quotes it),
/// another `apiVersion` or `kind`, a name that is not a DNS label or given twice, a URL that is not
/// http(s), a `timeoutSeconds` of 0 or over 600, `tls` or `auth` refused; each message names the
/// entry (`checks[i]`), the field and the expected form.
pub fn parse(text: &str) -> Result<Vec<FileEndpoint>, String> {
    let file: File = serde_saphyr::from_str(text).map_err(|e| {
        format!(
            "{}; expected apiVersion: {API_VERSION}, kind: {KIND}, checks: [{{name, url, timeoutSeconds, tls, auth}}]",
            yaml_error(&e, text)
        )
    })?;
    check_header(&file.api_version, &file.kind, KIND)?;
    let mut checks: Vec<FileEndpoint> = Vec::new();
    for (i, entry) in file.checks.into_iter().enumerate() {
        let written = Written {
            name: entry.name,
            url: entry.url,
            timeout_seconds: entry.timeout_seconds,
            tls: entry.tls,
            auth: entry.auth,
        };
        let checked = endpoint(&format!("checks[{i}]"), &checks, written)?;
        checks.push(checked);
    }
    Ok(checks)
}

/// The `--http-check` flags' pairs, then the file's entries: one list with each name once.
///
/// # Errors
/// A name both in a flag and in the file (or twice among the flags), naming it and both sources.
pub fn merge(
    flags: &[(String, String)],
    file: Vec<FileEndpoint>,
) -> Result<Vec<FileEndpoint>, String> {
    let sources = Sources {
        flag: "--http-check",
        file_flag: "--http-check-config",
        noun: "HTTP check",
    };
    crate::cli::endpoint_file::merge(&sources, flags, file)
}

/// Reads one `--http-check` value, `NAME=URL`: NAME a DNS label, URL http(s).
///
/// # Errors
/// A message naming the flag and the expected form.
pub fn parse_flag(s: &str) -> Result<(String, String), String> {
    named_url(
        "--http-check",
        "es-health=http://elasticsearch.search:9200/_cluster/health",
        s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::endpoint_auth::{Credentials, Username};

    const GOOD: &str = "apiVersion: safe-rollout.dev/v1alpha1
kind: HttpCheckConfig
checks:
  - name: es-health
    url: https://logs-es-http.search.svc:9200/_cluster/health
    timeoutSeconds: 5
    tls:
      caFile: /var/run/secrets/es-http-ca/ca.crt
    auth:
      basic:
        username: elastic
        passwordFile: /var/run/secrets/es-elastic-user/elastic
  - name: kafka-rest
    url: http://kafka-rest.kafka:8082/v3/clusters/main/brokers/0
";

    #[test]
    fn the_file_gives_checks_with_their_tls_and_auth_in_order() {
        let checks = parse(GOOD).expect("good file");
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["es-health", "kafka-rest"]);
        assert_eq!(checks[0].timeout, Some(std::time::Duration::from_secs(5)));
        assert_eq!(
            checks[0].access.credentials,
            Some(Credentials::Basic {
                username: Username::Value("elastic".into()),
                password_file: "/var/run/secrets/es-elastic-user/elastic".into(),
            })
        );
        assert!(checks[0].access.tls.is_some());
        assert_eq!(checks[1].access, Default::default());
    }

    #[test]
    fn a_bad_file_names_the_entry_the_field_and_the_expected_form() {
        let cases = [
            (
                GOOD.replace("HttpCheckConfig", "WebhookConfig"),
                "kind: HttpCheckConfig",
            ),
            (
                GOOD.replace("  - name: kafka-rest", "  - name: es-health"),
                "checks[1]: name \"es-health\" given twice",
            ),
            (GOOD.replace("caFile", "ca"), "unknown field `ca`"),
            (
                GOOD.replace(": 5\n", ": 0\n"),
                "checks[0].timeoutSeconds: 0: expected whole seconds from 1 to 600",
            ),
            (
                GOOD.replace(
                    "        passwordFile: /var/run/secrets/es-elastic-user/elastic\n",
                    "",
                ),
                "checks[0].auth.basic.passwordFile: missing",
            ),
            (
                GOOD.replace("https://logs", "http://logs"),
                "checks[0].tls: given for \"http://logs-es-http",
            ),
            (
                GOOD.replace("http://kafka-rest", "kafka-rest"),
                "checks[1]: URL \"kafka-rest",
            ),
            (
                "kind: HttpCheckConfig\n".to_string(),
                "missing field `apiVersion`",
            ),
        ];
        for (text, wanted) in cases {
            let e = parse(&text).expect_err(&text);
            assert!(e.contains(wanted), "{wanted:?} not in {e:?}");
        }
    }

    #[test]
    fn read_names_the_flag_and_merge_each_name_once() {
        let e = read(Path::new("/nonexistent/checks.yaml")).expect_err("missing");
        assert!(
            e.starts_with("--http-check-config /nonexistent/checks.yaml: "),
            "{e}"
        );
        let flags = vec![("kafka-rest".to_string(), "http://other:1/x".to_string())];
        let e = merge(&flags, parse(GOOD).expect("good")).expect_err("twice");
        assert!(
            e.contains("HTTP check \"kafka-rest\" is configured both by --http-check and in --http-check-config"),
            "{e}"
        );
        let flags = vec![("pg".to_string(), "http://pg:1/x".to_string())];
        let all = merge(&flags, parse(GOOD).expect("good")).expect("merged");
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["pg", "es-health", "kafka-rest"]);
    }

    #[test]
    fn the_flag_is_name_equals_url() {
        assert_eq!(
            parse_flag("es=http://es:9200/_cluster/health"),
            Ok(("es".into(), "http://es:9200/_cluster/health".into()))
        );
        assert!(parse_flag("kafka-rest=https://k.example/v3/clusters?x=1=2").is_ok());
        for bad in [
            "es",
            "=http://es",
            "Es=http://es",
            "es_1=http://es",
            "es=ftp://es",
            "es=http://",
            "es=es:9200",
            "es=http://a b",
        ] {
            let e = parse_flag(bad).expect_err(bad);
            assert!(
                e.starts_with("--http-check ") && e.contains("expected NAME=URL"),
                "{e}"
            );
        }
    }
}
