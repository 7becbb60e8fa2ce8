//! Builders for the `PrometheusCheck` gate: its queries and limits ([`cfg`]), a set with annotations
//! ([`set_with`], [`prom_set_json`]), a stored check state ([`st`], [`state_json`]), and the outcomes
//! a pass read ([`outcomes`]).
#![allow(dead_code)] // each test crate uses a subset

use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::Value;
use sts_stepper::config::check::CheckLimits;
use sts_stepper::gates::Probes;
use sts_stepper::gates::check::prometheus::{CheckConfig, CheckState, Query, QueryOutcome};

use super::plans::{annotate, key};
use super::{now, set_from, set_json};

/// The query of `web`'s check.
pub const QUERY: &str = "up{job=\"web\"} == 1";

/// The query of annotation `annotation`.
pub fn q(annotation: &str, expr: &str) -> Query {
    Query {
        annotation: annotation.into(),
        expr: expr.into(),
    }
}

/// A check of `queries` every `period` seconds, passed after `threshold` successes, paused after
/// `limit` failures (error limit 4).
pub fn cfg(
    queries: &[(&str, &str)],
    period: u32,
    threshold: u32,
    limit: Option<u32>,
) -> CheckConfig {
    CheckConfig {
        queries: queries.iter().map(|(a, e)| q(a, e)).collect(),
        limits: CheckLimits {
            period_seconds: period,
            success_threshold: threshold,
            failure_limit: limit,
            error_limit: 4,
        },
    }
}

/// `web` staged at partition 3 with the annotations `pairs`.
pub fn set_with(pairs: &[(&str, &str)]) -> StatefulSet {
    set_from(annotate(set_json("web", 3, Some(3), 0), pairs))
}

/// The annotation of the first query.
pub const Q0: &str = "safe-rollout.dev/prometheus-query";

/// The stored state of partition 3 on revision `b`: `successes` and `failures`, the last check
/// `secs_ago` before [`now`](super::now), the last failure.
pub fn st(successes: u32, failures: u32, secs_ago: i64, last_failure: Option<&str>) -> CheckState {
    CheckState {
        update_revision: "b".into(),
        partition: 3,
        successes,
        failures,
        last_check: now() - SignedDuration::from_secs(secs_ago),
        last_failure: last_failure.map(str::to_string),
        ..CheckState::default()
    }
}

/// How [`Q0`] fails when it returns nothing.
pub const EMPTY_Q0: &str = "safe-rollout.dev/prometheus-query returned an empty result";

/// `web` staged at partition 3, pods ready, initialized, with one query and `extra` annotations.
pub fn prom_set_json(extra: &[(&str, &str)]) -> Value {
    let v = annotate(
        set_json("web", 3, Some(3), 0),
        &[
            (&key("prometheus-query"), QUERY),
            (&key("initialized"), "true"),
        ],
    );
    annotate(v, extra)
}

/// Probes that hold the queries' outcomes `o`.
pub fn outcomes(o: Vec<QueryOutcome>) -> Option<Probes> {
    Some(Probes {
        owner: None,
        prometheus: Some(o),
        http: None,
        webhook: None,
    })
}

/// The stored state of partition 3 on revision `b`, as its annotation's value.
pub fn state_json(successes: u32, failures: u32, last_check: &str) -> String {
    format!(
        r#"{{"updateRevision":"b","partition":3,"successes":{successes},"failures":{failures},"lastCheck":"{last_check}"}}"#
    )
}

/// The `path` of a JSON Patch operation.
pub fn path_of(op: &Value) -> &str {
    op["path"].as_str().unwrap_or_default()
}
