//! What the stepper's files of endpoints share (`--webhook-config`, `webhook_file`; `--http-check-config`,
//! `http_check_file`): the header of a versioned file (`apiVersion: safe-rollout.dev/v1alpha1` and its
//! `kind`), one entry's checks (a name, an http(s) URL, its own `timeoutSeconds`, its `tls` and `auth`:
//! `config::endpoint_auth`), the YAML parser's message on one line, and the merge with the `NAME=URL`
//! flags of the same kind (each name once).

use std::path::Path;
use std::time::Duration;

use crate::cli::values::named_url_problem;
use crate::config::endpoint_auth::{AuthFields, EndpointAuth, TlsFields, endpoint_auth};

/// The files' `apiVersion`.
pub const API_VERSION: &str = "safe-rollout.dev/v1alpha1";
/// The longest `timeoutSeconds` accepted (10 minutes): a call longer than a pass is waited for would
/// hold every other set's pass.
pub const MAX_TIMEOUT_SECONDS: u64 = 600;

/// One endpoint of a file or a `NAME=URL` flag, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEndpoint {
    /// The name a set's annotation selects (a DNS label).
    pub name: String,
    /// Where the stepper sends its requests (http or https).
    pub url: String,
    /// The whole call's bound (connect, send, answer); `None`: the kind's `--…-timeout` flag.
    pub timeout: Option<Duration>,
    /// TLS and credentials; the default for a flag (the built-in web PKI roots, no credentials).
    pub access: EndpointAuth,
}

/// One entry as written, its fields taken apart by the file's own entry type.
pub struct Written {
    /// `name`.
    pub name: String,
    /// `url`.
    pub url: String,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
    /// `tls`.
    pub tls: Option<TlsFields>,
    /// `auth`.
    pub auth: Option<AuthFields>,
}

/// The text of the file `flag` names, or an error `<flag> <path>: <cause>`.
///
/// # Errors
/// The file cannot be read.
pub fn read_text(flag: &str, path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{flag} {}: {e}", path.display()))
}

/// Checks the header: `apiVersion` [`API_VERSION`] and `kind`.
///
/// # Errors
/// Another `apiVersion` or `kind`, naming both expected values.
pub fn check_header(api_version: &str, kind: &str, expected_kind: &str) -> Result<(), String> {
    if api_version != API_VERSION || kind != expected_kind {
        return Err(format!(
            "apiVersion {api_version:?}, kind {kind:?}: expected apiVersion: {API_VERSION} and kind: {expected_kind}"
        ));
    }
    Ok(())
}

/// Checks entry `at` (`webhooks[1]`) against the entries before it (`seen`).
///
/// # Errors
/// A name that is not a DNS label or given twice, a URL that is not http(s), a `timeoutSeconds` of 0
/// or over [`MAX_TIMEOUT_SECONDS`], `tls` or `auth` refused ([`endpoint_auth`]); each message names
/// the entry, the field and the expected form (`webhooks[0].tls.keyFile: missing; …`).
pub fn endpoint(at: &str, seen: &[FileEndpoint], entry: Written) -> Result<FileEndpoint, String> {
    if let Some(problem) = named_url_problem(&entry.name, &entry.url) {
        return Err(format!("{at}: {problem}"));
    }
    if seen.iter().any(|e| e.name == entry.name) {
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
    let access =
        endpoint_auth(&entry.url, entry.tls, entry.auth).map_err(|e| format!("{at}.{e}"))?;
    Ok(FileEndpoint {
        name: entry.name,
        url: entry.url,
        timeout,
        access,
    })
}

/// The YAML parser's message on one line, with the line it points at quoted (the field and its
/// value): `invalid u64 at line 6, column 21: `timeoutSeconds: soon``.
pub fn yaml_error(e: &serde_saphyr::Error, text: &str) -> String {
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

/// The names of a kind's two sources, for [`merge`]'s messages.
pub struct Sources<'a> {
    /// The `NAME=URL` flag, `--webhook`.
    pub flag: &'a str,
    /// The file's flag, `--webhook-config`.
    pub file_flag: &'a str,
    /// What one endpoint is called, `webhook`.
    pub noun: &'a str,
}

/// The flags' pairs, then the file's entries: one list with each name once.
///
/// # Errors
/// A name both in a flag and in the file (or twice among the flags), naming it and both sources.
pub fn merge(
    sources: &Sources<'_>,
    flags: &[(String, String)],
    file: Vec<FileEndpoint>,
) -> Result<Vec<FileEndpoint>, String> {
    let Sources {
        flag,
        file_flag,
        noun,
    } = sources;
    let mut all: Vec<FileEndpoint> = Vec::with_capacity(flags.len() + file.len());
    for (name, url) in flags {
        if all.iter().any(|e| &e.name == name) {
            return Err(format!(
                "{flag}: NAME {name:?} given twice; expected each NAME once"
            ));
        }
        all.push(FileEndpoint {
            name: name.clone(),
            url: url.clone(),
            timeout: None,
            access: EndpointAuth::default(),
        });
    }
    for entry in file {
        if all.iter().any(|e| e.name == entry.name) {
            return Err(format!(
                "{noun} {:?} is configured both by {flag} and in {file_flag}; expected each name once",
                entry.name
            ));
        }
        all.push(entry);
    }
    Ok(all)
}
