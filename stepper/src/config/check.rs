//! The border for the Prometheus check: its annotations into one [`CheckConfig`].
//!
//! Reads `prometheus-query*`, and the counting every check shares ([`CheckLimits`], [`limits`]):
//! `check-period-seconds`, `success-threshold`, `failure-limit` and `check-error-limit`.

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::annotations::PROMETHEUS_QUERY;

use super::endpoints::Flag;
use super::error::ConfigError;
use super::keys::Keys;

/// One query of a check: the annotation it came from and its PromQL expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The annotation key, e.g. `safe-rollout.dev/prometheus-query-2` (names the query in messages).
    pub annotation: String,
    /// The PromQL expression.
    pub expr: String,
}

/// The flag configuring the one Prometheus a set's `prometheus-query` asks.
pub const PROMETHEUS_FLAG: Flag = Flag {
    flag: "--prometheus-url",
    named: false,
    noun: "Prometheus",
    none: "no --prometheus-url",
};

/// A set's Prometheus check, read from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckConfig {
    /// The queries, unnumbered first, then by number (`-2` before `-10`).
    pub queries: Vec<Query>,
    /// How its checks are counted.
    pub limits: CheckLimits,
}

/// How a gated check's results are counted (`crate::gates::check`): the same annotations for every
/// kind of check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckLimits {
    /// Seconds between checks (≥ 1).
    pub period_seconds: u32,
    /// Consecutive passed checks needed (≥ 1).
    pub success_threshold: u32,
    /// Failed checks (an answer saying no) since the last step that pause the rollout (≥ 1); `None`:
    /// never pause.
    pub failure_limit: Option<u32>,
    /// Consecutive checks that got no answer that record the rollout as Degraded (≥ 1).
    pub error_limit: u32,
}

/// Default `check-period-seconds`.
pub const DEFAULT_PERIOD_SECONDS: u32 = 30;
/// Default `check-error-limit`: four checks in a row without an answer (two minutes at the default
/// period) say the check's source is down, not that one request was unlucky.
pub const DEFAULT_ERROR_LIMIT: u32 = 4;

/// The counting annotations of a set with a check (`check-period-seconds`, `success-threshold`,
/// `failure-limit`, `check-error-limit`), defaults filled in.
///
/// # Errors
/// [`ConfigError::CheckCount`]: a value that is not a whole number ≥ 1.
pub fn limits(set: &StatefulSet, keys: &Keys) -> Result<CheckLimits, ConfigError> {
    let all = set.metadata.annotations.as_ref();
    let get = |key: &str| positive(key, all.and_then(|a| a.get(key)).map(String::as_str));
    Ok(CheckLimits {
        period_seconds: get(keys.of(names::CHECK_PERIOD_SECONDS))?
            .unwrap_or(DEFAULT_PERIOD_SECONDS),
        success_threshold: get(keys.of(names::SUCCESS_THRESHOLD))?.unwrap_or(1),
        failure_limit: get(keys.of(names::FAILURE_LIMIT))?,
        error_limit: get(keys.of(names::CHECK_ERROR_LIMIT))?.unwrap_or(DEFAULT_ERROR_LIMIT),
    })
}

fn positive(key: &str, value: Option<&str>) -> Result<Option<u32>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.parse::<u32>() {
        Ok(n) if n >= 1 && value.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(n)),
        _ => Err(ConfigError::CheckCount {
            key: key.to_string(),
            value: value.to_string(),
        }),
    }
}

/// The query number of annotation `name` (`prometheus-query` → 0, `prometheus-query-7` → 7), `None`
/// when `name` does not start with `prometheus-query`, `Some(Err(()))` for any other name that does
/// (`prometheus-query-0`, `-01`, `-+1`, `-x`, `prometheus-query1`: a typo that would silently drop a
/// query).
fn query_number(name: &str) -> Option<Result<u32, ()>> {
    let rest = name.strip_prefix(PROMETHEUS_QUERY)?;
    if rest.is_empty() {
        return Some(Ok(0));
    }
    // `prometheus-query1`, `prometheus-query-x`, `prometheus-query-+1`: a typo, never silently dropped.
    let Some(digits) = rest.strip_prefix('-') else {
        return Some(Err(()));
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return Some(Err(()));
    }
    Some(match digits.parse::<u32>() {
        Ok(n) if (1..=999).contains(&n) => Ok(n),
        _ => Err(()),
    })
}

/// Reads the set's Prometheus check from its annotations: `Ok(None)` when no `prometheus-query*`
/// annotation is set (the other check annotations are then not read).
///
/// # Errors
/// [`ConfigError::EmptyQuery`], [`ConfigError::QueryName`] (a query annotation with a bad number such
/// as `prometheus-query-x`), [`ConfigError::CheckCount`] (a period / threshold / limit that is not a
/// whole number ≥ 1).
pub fn check_config(set: &StatefulSet, keys: &Keys) -> Result<Option<CheckConfig>, ConfigError> {
    let Some(all) = set.metadata.annotations.as_ref() else {
        return Ok(None);
    };
    let mut queries: Vec<(u32, Query)> = Vec::new();
    let own = format!("{}/", keys.prefix());
    for (k, v) in all {
        let Some(name) = k.strip_prefix(&own) else {
            continue;
        };
        match query_number(name) {
            None => {}
            Some(Err(())) => {
                return Err(ConfigError::QueryName {
                    key: k.clone(),
                    query: keys.of(names::PROMETHEUS_QUERY).to_string(),
                });
            }
            Some(Ok(_)) if v.trim().is_empty() => {
                return Err(ConfigError::EmptyQuery { key: k.clone() });
            }
            Some(Ok(n)) => queries.push((
                n,
                Query {
                    annotation: k.clone(),
                    expr: v.trim().to_string(),
                },
            )),
        }
    }
    if queries.is_empty() {
        return Ok(None);
    }
    let limits = limits(set, keys)?;
    queries.sort_by_key(|(n, _)| *n);
    Ok(Some(CheckConfig {
        queries: queries.into_iter().map(|(_, q)| q).collect(),
        limits,
    }))
}
