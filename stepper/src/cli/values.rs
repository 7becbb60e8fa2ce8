//! The command line's value parsers: a target StatefulSet (kubectl's forms), an annotation prefix, a
//! duration.

use jiff::SignedDuration;
use sts_safe_rollout_rules::annotations;

use crate::config::endpoints::is_dns_label;

/// A StatefulSet named on the command line, its namespace resolved (see [`TargetRef::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A StatefulSet as typed: `NAME`, `TYPE/NAME` (kubectl's `sts/web`) or `NAMESPACE/NAME`; the
/// namespace is `None` until [`TargetRef::resolve`] applies `-n` or the current namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRef {
    /// The namespace typed as `NAMESPACE/NAME`, if any.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

/// The resource names kubectl accepts for StatefulSets before `/NAME` (its short name, singular and
/// plural, each bare or with its group `apps` and version `v1.apps`, as `kubectl get
/// statefulset.v1.apps/web` does). A namespace named like one of them is typed with `-n`.
pub const STATEFULSET_TYPES: [&str; 9] = [
    "sts",
    "statefulset",
    "statefulsets",
    "sts.apps",
    "statefulset.apps",
    "statefulsets.apps",
    "sts.v1.apps",
    "statefulset.v1.apps",
    "statefulsets.v1.apps",
];

/// Parses a target as kubectl users type it: `web`, `sts/web`, `statefulset/web`,
/// `statefulsets/web`, `statefulset.apps/web` (any of [`STATEFULSET_TYPES`]), or `NAMESPACE/NAME`
/// (`demo/web`). A prefix before `/` that is a StatefulSet type is the type, otherwise the namespace.
///
/// # Errors
/// An empty part, more than one `/`, whitespace, or a resource type with a group that is not a
/// StatefulSet's (`deployments.apps/web`): a message naming the expected forms. (A prefix without a
/// dot, such as `deploy/web`, reads as a namespace, as it must for `NAMESPACE/NAME`.)
pub fn parse_target(s: &str) -> Result<TargetRef, String> {
    let expected = "expected NAME, sts/NAME or NAMESPACE/NAME, e.g. web, sts/web or demo/web";
    let invalid = |why: &str| format!("{s:?}: {why}; {expected}");
    let mut parts = s.split('/');
    let (first, second) = (parts.next().unwrap_or(""), parts.next());
    if parts.next().is_some() {
        return Err(invalid("more than one '/'"));
    }
    let (namespace, name) = match second {
        None => (None, first),
        Some(name) if STATEFULSET_TYPES.contains(&first.to_ascii_lowercase().as_str()) => {
            (None, name)
        }
        Some(_) if first.contains('.') => {
            return Err(invalid(&format!("{first:?} is not a StatefulSet type")));
        }
        Some(name) => (Some(first), name),
    };
    if name.is_empty() || namespace.is_some_and(str::is_empty) {
        return Err(invalid("empty namespace or name"));
    }
    if s.chars().any(char::is_whitespace) {
        return Err(invalid("whitespace"));
    }
    Ok(TargetRef {
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    })
}

/// Parses an annotation prefix with the policy's rule (`annotations::validate_prefix`).
///
/// # Errors
/// Why the prefix is not a DNS subdomain.
pub fn parse_prefix(s: &str) -> Result<String, String> {
    annotations::validate_prefix(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

/// Parses a positive duration such as `30s`, `2m`, `1h30m` (jiff's friendly format, or ISO 8601).
///
/// # Errors
/// A message with the expected form.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    match s.parse::<SignedDuration>() {
        Ok(d) if d.is_positive() => Ok(d),
        _ => Err(format!(
            "{s:?}: expected a positive duration such as 30s, 5m or 1h30m"
        )),
    }
}

/// Reads one `--webhook` value, `NAME=URL`: NAME a DNS label, URL http(s).
///
/// # Errors
/// A message naming the flag and the expected form.
pub fn parse_webhook(s: &str) -> Result<(String, String), String> {
    named_url(
        "--webhook",
        "db-approver=http://approver.db:8080/approve",
        s,
    )
}

/// `--webhook-serves NAME=SETS`: NAME a DNS label, SETS a comma-separated list of `NAMESPACE/SET`
/// (`crate::config::serves`).
///
/// # Errors
/// No `=`, a NAME that is not a DNS label, or a list not of that form; naming the flag and the form.
pub fn parse_webhook_serves(s: &str) -> Result<(String, String), String> {
    let form =
        "expected NAME=NAMESPACE/SET[,NAMESPACE/SET…], * for any, e.g. db-approver=db/postgres";
    let Some((name, list)) = s.split_once('=') else {
        return Err(format!("--webhook-serves {s:?}: no '='; {form}"));
    };
    if !is_dns_label(name) {
        return Err(format!(
            "--webhook-serves {s:?}: NAME {name:?} is not a DNS label; {form}"
        ));
    }
    crate::config::Serves::parse_list(list, &format!("--webhook-serves {name}"))?;
    Ok((name.to_string(), list.to_string()))
}

/// `NAME=URL` for `flag`: NAME a DNS label, URL http(s); `example` in the message.
pub fn named_url(flag: &str, example: &str, s: &str) -> Result<(String, String), String> {
    let form =
        format!("expected NAME=URL, NAME a DNS label and URL http:// or https://, e.g. {example}");
    let Some((name, url)) = s.split_once('=') else {
        return Err(format!("{flag} {s:?}: no '='; {form}"));
    };
    if let Some(problem) = named_url_problem(name, url) {
        return Err(format!("{flag} {s:?}: {problem}; {form}"));
    }
    Ok((name.to_string(), url.to_string()))
}

/// What is wrong with a check's or a webhook's `name` and `url` (NAME a DNS label, URL `http://` or
/// `https://` with something after it and no whitespace), `None` when nothing is: the one rule of the
/// `--http-check` and `--webhook` flags and of the `--webhook-config` file.
pub fn named_url_problem(name: &str, url: &str) -> Option<String> {
    if !is_dns_label(name) {
        return Some(format!(
            "NAME {name:?} is not a DNS label (a-z, 0-9, '-', at most 63)"
        ));
    }
    let valid = ["http://", "https://"]
        .iter()
        .any(|p| url.starts_with(p) && url.len() > p.len());
    if !valid || url.contains(char::is_whitespace) {
        return Some(format!("URL {url:?} is not an http(s) URL"));
    }
    None
}

#[cfg(test)]
mod named_url_tests {
    use super::*;

    #[test]
    fn the_webhook_flag_is_name_equals_url() {
        let e = parse_webhook("db=ftp://x").expect_err("ftp");
        assert!(
            e.starts_with("--webhook ") && e.contains("db-approver="),
            "{e}"
        );
        assert_eq!(
            parse_webhook("db=https://approver.db/approve"),
            Ok(("db".into(), "https://approver.db/approve".into()))
        );
    }
}
