//! The two annotations that name something outside the set: `rollout-group` (the sets it rolls out
//! with, one at a time) and `owner-condition` (a condition of its controller owner).

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use super::error::ConfigError;
use super::keys::Keys;
use crate::model::set::annotation;

/// `rollout-group`, `None` when absent.
///
/// # Errors
/// [`ConfigError::EmptyRolloutGroup`] (gate `InvalidAnnotation`).
pub fn rollout_group<'a>(
    set: &'a StatefulSet,
    keys: &Keys,
) -> Result<Option<&'a str>, ConfigError> {
    match annotation(set, keys.of(names::ROLLOUT_GROUP)) {
        Some(g) if g.trim().is_empty() => Err(ConfigError::EmptyRolloutGroup {
            key: keys.of(names::ROLLOUT_GROUP).to_string(),
        }),
        other => Ok(other),
    }
}

/// `owner-condition`, `None` when absent.
///
/// # Errors
/// [`ConfigError::OwnerCondition`]: not a condition type (empty, or with whitespace or `/`).
pub fn owner_condition<'a>(
    set: &'a StatefulSet,
    keys: &Keys,
) -> Result<Option<&'a str>, ConfigError> {
    match annotation(set, keys.of(names::OWNER_CONDITION)) {
        Some(c) if c.is_empty() || c.contains(char::is_whitespace) || c.contains('/') => {
            Err(ConfigError::OwnerCondition {
                key: keys.of(names::OWNER_CONDITION).to_string(),
                value: c.to_string(),
            })
        }
        other => Ok(other),
    }
}
