//! The two annotations that name something outside the set: `rollout-group` (the sets it rolls out
//! with, one at a time) and `owner-condition` (a condition of its controller owner).

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Keys, annotation};

/// `rollout-group`, `None` when absent.
///
/// # Errors
/// An empty value (reason `InvalidAnnotation`).
pub fn rollout_group<'a>(set: &'a StatefulSet, keys: &Keys) -> Result<Option<&'a str>, String> {
    match annotation(set, &keys.rollout_group) {
        Some(g) if g.trim().is_empty() => Err(format!(
            "{}: empty; expected a group name (\"kafka\")",
            keys.rollout_group
        )),
        other => Ok(other),
    }
}

/// `owner-condition`, `None` when absent.
///
/// # Errors
/// A value that is not a condition type (empty, or with whitespace or `/`).
pub fn owner_condition<'a>(set: &'a StatefulSet, keys: &Keys) -> Result<Option<&'a str>, String> {
    match annotation(set, &keys.owner_condition) {
        Some(c) if c.is_empty() || c.contains(char::is_whitespace) || c.contains('/') => {
            Err(format!(
                "{}: {c:?} is not a condition type; expected a name such as \"Healthy\" or \"Ready\"",
                keys.owner_condition
            ))
        }
        other => Ok(other),
    }
}
