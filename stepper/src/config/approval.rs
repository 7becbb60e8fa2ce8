//! The application's say before a step (docs/approvals.md): the approval handshake
//! (`<prefix>/pre-update-approval`, `<prefix>/approval-timeout-seconds`) and the primary's selector
//! (`<prefix>/primary-selector`), read from the set's annotations.

use k8s_openapi::api::apps::v1::StatefulSet;
use kube::core::{Expression, Selector, SelectorExt};
use std::collections::{BTreeMap, BTreeSet};
use sts_safe_rollout_rules::annotations as names;

use super::error::ConfigError;
use super::keys::Keys;
use crate::model::set::annotation;

/// The default of `<prefix>/approval-timeout-seconds`: seconds the stepper waits for one step's
/// approvals.
pub const DEFAULT_APPROVAL_TIMEOUT_SECONDS: i64 = 600;

/// The approval handshake of one set: on with `<prefix>/pre-update-approval: "true"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApprovalConfig {
    /// Seconds to wait for a step's approvals, from its earliest request (`approval-timeout-seconds`,
    /// default [`DEFAULT_APPROVAL_TIMEOUT_SECONDS`]; ≥ 1).
    pub timeout_seconds: i64,
}

/// `<prefix>/primary-selector`: which of the set's pods holds the primary role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimarySelector {
    /// The annotation's value, as written (for messages).
    pub text: String,
    /// The parsed selector.
    pub selector: Selector,
}

impl PrimarySelector {
    /// True when `labels` (a pod's `metadata.labels`) match.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.selector.matches(labels)
    }
}

/// The handshake of `set`: `Ok(None)` when `pre-update-approval` is absent or not `"true"`.
///
/// # Errors
/// `approval-timeout-seconds` is not a whole number of seconds ≥ 1 (detail of `InvalidAnnotation`,
/// naming the annotation and the expected form).
pub fn approval_config(
    set: &StatefulSet,
    keys: &Keys,
) -> Result<Option<ApprovalConfig>, ConfigError> {
    if !handshake_on(set, keys) {
        return Ok(None);
    }
    let timeout_seconds = approval_timeout_seconds(set, keys)?;
    Ok(Some(ApprovalConfig { timeout_seconds }))
}

/// True when `pre-update-approval` is `"true"`.
pub fn handshake_on(set: &StatefulSet, keys: &Keys) -> bool {
    annotation(set, keys.of(names::PRE_UPDATE_APPROVAL)) == Some(names::TRUE)
}

/// `approval-timeout-seconds`, default [`DEFAULT_APPROVAL_TIMEOUT_SECONDS`]: the handshake's and the
/// webhook's.
///
/// # Errors
/// Not a whole number of seconds ≥ 1 (detail of `InvalidAnnotation`).
pub fn approval_timeout_seconds(set: &StatefulSet, keys: &Keys) -> Result<i64, ConfigError> {
    match annotation(set, keys.of(names::APPROVAL_TIMEOUT_SECONDS)) {
        None => Ok(DEFAULT_APPROVAL_TIMEOUT_SECONDS),
        Some(v) => match v.parse::<u32>() {
            Ok(n) if n >= 1 && v.bytes().all(|b| b.is_ascii_digit()) => Ok(i64::from(n)),
            _ => Err(ConfigError::ApprovalTimeout {
                key: keys.of(names::APPROVAL_TIMEOUT_SECONDS).to_string(),
                value: v.to_string(),
            }),
        },
    }
}

/// The primary's selector of `set`: `Ok(None)` when `primary-selector` is absent.
///
/// # Errors
/// A value that is not a label selector (detail of `InvalidAnnotation`, naming the annotation).
pub fn primary_selector(
    set: &StatefulSet,
    keys: &Keys,
) -> Result<Option<PrimarySelector>, ConfigError> {
    let Some(text) = annotation(set, keys.of(names::PRIMARY_SELECTOR)) else {
        return Ok(None);
    };
    parse_selector(text)
        .map(|selector| {
            Some(PrimarySelector {
                text: text.to_string(),
                selector,
            })
        })
        .map_err(|problem| ConfigError::PrimarySelector {
            key: keys.of(names::PRIMARY_SELECTOR).to_string(),
            value: text.to_string(),
            problem,
        })
}

/// Parses a label selector as `kubectl get -l` takes it (Kubernetes `labels.Parse`): requirements
/// separated by commas, each `k=v`, `k==v`, `k!=v`, `k in (v1,v2)`, `k notin (v1,v2)`, `k` (exists) or
/// `!k` (does not exist). Keys and values are not checked against Kubernetes' name rules beyond being
/// non-empty and free of spaces, `=`, `!`, `(`, `)` and `,`. At least one requirement.
///
/// # Errors
/// What is wrong, in a few words.
pub fn parse_selector(text: &str) -> Result<Selector, String> {
    let mut exprs = Vec::new();
    for part in split_requirements(text)? {
        exprs.push(requirement(part.trim())?);
    }
    if exprs.is_empty() {
        return Err("no requirement".into());
    }
    Ok(exprs.into_iter().collect())
}

/// Splits at the commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Err("unbalanced `)`".into()),
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unclosed `(`".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn requirement(part: &str) -> Result<Expression, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Expression::DoesNotExist(token(key.trim(), "key")?));
    }
    if let Some((key, value)) = part.split_once("!=") {
        return Ok(Expression::NotEqual(
            token(key.trim(), "key")?,
            token(value.trim(), "value")?,
        ));
    }
    if let Some((key, value)) = part.split_once('=') {
        let value = value.strip_prefix('=').unwrap_or(value);
        return Ok(Expression::Equal(
            token(key.trim(), "key")?,
            token(value.trim(), "value")?,
        ));
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = token(words.next().unwrap_or("").trim(), "key")?;
    let Some(rest) = words.next().map(str::trim) else {
        return Ok(Expression::Exists(key));
    };
    let (op, list) = rest
        .split_once('(')
        .ok_or_else(|| format!("`{part}`: expected `in (…)` or `notin (…)` after the key"))?;
    let list = list
        .strip_suffix(')')
        .ok_or_else(|| format!("`{part}`: the value list must end with `)`"))?;
    let values: BTreeSet<String> = list
        .split(',')
        .map(|v| token(v.trim(), "value"))
        .collect::<Result<_, _>>()?;
    match op.trim() {
        "in" => Ok(Expression::In(key, values)),
        "notin" => Ok(Expression::NotIn(key, values)),
        other => Err(format!("`{other}` is not an operator (in, notin)")),
    }
}

fn token(s: &str, what: &str) -> Result<String, String> {
    let bad = |c: char| c.is_whitespace() || "=!(),".contains(c);
    if s.is_empty() {
        return Err(format!("an empty {what}"));
    }
    if s.contains(bad) {
        return Err(format!("{what} `{s}` holds a space or one of = ! ( ) ,"));
    }
    Ok(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn selectors_match_as_kubectl_does() {
        let primary = labels(&[("role", "primary"), ("app", "db")]);
        let replica = labels(&[("role", "replica"), ("app", "db")]);
        for (text, on_primary, on_replica) in [
            ("role=primary", true, false),
            ("role==primary", true, false),
            ("role!=replica", true, false),
            ("role in (primary, leader)", true, false),
            ("role notin (replica)", true, false),
            ("app=db,role=primary", true, false),
            ("role", true, true),
            ("!role", false, false),
        ] {
            let s = parse_selector(text).unwrap();
            assert_eq!(s.matches(&primary), on_primary, "{text} on the primary");
            assert_eq!(s.matches(&replica), on_replica, "{text} on a replica");
        }
    }

    #[test]
    fn bad_selectors_say_why() {
        for (text, why) in [
            ("", "an empty key"),
            ("role=", "an empty value"),
            ("role in primary", "expected `in (…)`"),
            ("role in (a", "unclosed `(`"),
            ("role) ", "unbalanced"),
            ("role within (a)", "`within` is not an operator"),
            ("ro le=x", "holds a space"),
        ] {
            let e = parse_selector(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
