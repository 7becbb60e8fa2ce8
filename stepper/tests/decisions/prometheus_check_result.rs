//! The `PrometheusCheck` gate's counting as a pure function (`check_result`): due or not, passed, waiting
//! or paused, failures and unanswered checks counted apart; and the state it keeps between passes
//! (`current_state` of `<prefix>/prometheus-check`, `CheckState`'s annotation shape). Every time is a
//! fixed timestamp (`now()` = 2026-11-23T01:20:00Z).

use crate::common::plans::*;
use crate::common::prometheus_check::*;
use crate::common::*;
use k8s_openapi::api::apps::v1::StatefulSet;
use rstest::rstest;
use std::sync::Arc;
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::check::prometheus::{
    CheckConfig, CheckResult, CheckState, QueryOutcome, check_result, current_state,
};

/// The stored `<prefix>/prometheus-check` of `set` under `prefix`, as the stepper reads it.
fn stored(set: &StatefulSet, prefix: &str) -> Option<String> {
    SetConfig::parse(set, &Arc::new(Keys::new(prefix)))
        .stamps
        .state("prometheus-check")
        .map(str::to_string)
}

const Q1: &str = "safe-rollout.dev/prometheus-query-1";

/// `st` after `errors` consecutive checks without an answer, the last for `cause`.
fn st_err(successes: u32, failures: u32, errors: u32, secs_ago: i64, cause: &str) -> CheckState {
    CheckState {
        errors,
        last_error: Some(cause.into()),
        ..st(successes, failures, secs_ago, None)
    }
}

fn new_state(successes: u32, failures: u32, last_failure: Option<&str>) -> Option<CheckState> {
    Some(st(successes, failures, 0, last_failure))
}

fn wait(detail: &str, state: Option<CheckState>) -> CheckResult {
    CheckResult::Wait {
        detail: detail.into(),
        state,
    }
}

#[rstest]
#[case::due_without_state(cfg(&[(Q0, "up")], 30, 1, None), None, None, CheckResult::Due)]
#[case::due_after_exactly_one_period(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 30, None)), None, CheckResult::Due)]
#[case::due_when_passed_but_period_over(cfg(&[(Q0, "up")], 30, 1, None), Some(st(1, 0, 31, None)), None, CheckResult::Due)]
#[case::pass_at_threshold_1(cfg(&[(Q0, "up")], 30, 1, None), None, Some(vec![QueryOutcome::NonEmpty(3)]),
    CheckResult::Pass { state: new_state(1, 0, None) })]
#[case::wait_below_threshold(cfg(&[(Q0, "up")], 30, 2, None), None, Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 30s", new_state(1, 0, None)))]
#[case::pass_reaching_threshold(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 30, None)), Some(vec![QueryOutcome::NonEmpty(1)]),
    CheckResult::Pass { state: new_state(2, 0, None) })]
#[case::success_keeps_failures(cfg(&[(Q0, "up")], 10, 3, Some(5)), Some(st(1, 2, 10, Some("old"))), Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("2 of 3 consecutive checks passed, 2 failed of limit 5; next check in 10s", new_state(2, 2, None)))]
#[case::empty_resets_successes(cfg(&[(Q0, "up")], 30, 3, None), Some(st(2, 0, 30, None)), Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 3 consecutive checks passed, 1 failed; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 1, Some(EMPTY_Q0))))]
#[case::no_answer_is_an_error_not_a_failure(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 1, 45, None)),
    Some(vec![QueryOutcome::Error("connection refused".into())]),
    wait("0 of 1 consecutive checks passed, 1 failed of limit 3, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: connection refused; next check in 30s",
         Some(st_err(0, 1, 1, 0, "safe-rollout.dev/prometheus-query got no answer: connection refused"))))]
#[case::an_error_resets_the_successes_and_adds_to_the_errors(cfg(&[(Q0, "up")], 30, 3, None), Some(st_err(2, 0, 2, 30, "old")),
    Some(vec![QueryOutcome::Error("HTTP 503 Service Unavailable".into())]),
    wait("0 of 3 consecutive checks passed, 0 failed, 3 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: HTTP 503 Service Unavailable; next check in 30s",
         Some(st_err(0, 0, 3, 0, "safe-rollout.dev/prometheus-query got no answer: HTTP 503 Service Unavailable"))))]
#[case::an_answer_ends_the_errors(cfg(&[(Q0, "up")], 30, 2, None), Some(st_err(0, 0, 5, 30, "old")),
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 30s", new_state(1, 0, None)))]
#[case::an_empty_answer_ends_the_errors_as_a_failure(cfg(&[(Q0, "up")], 30, 1, None), Some(st_err(0, 0, 5, 30, "old")),
    Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 1 consecutive checks passed, 1 failed; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 1, Some(EMPTY_Q0))))]
#[case::errors_never_pause(cfg(&[(Q0, "up")], 30, 1, Some(1)), Some(st_err(0, 0, 9, 30, "old")),
    Some(vec![QueryOutcome::Error("timeout".into())]),
    wait("0 of 1 consecutive checks passed, 0 failed of limit 1, 10 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: timeout; next check in 30s",
         Some(st_err(0, 0, 10, 0, "safe-rollout.dev/prometheus-query got no answer: timeout"))))]
#[case::second_query_empty(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::Empty]),
    wait("0 of 1 consecutive checks passed, 1 failed; last check failed: safe-rollout.dev/prometheus-query-1 returned an empty result; next check in 30s",
         new_state(0, 1, Some("safe-rollout.dev/prometheus-query-1 returned an empty result"))))]
#[case::an_empty_answer_outweighs_an_error(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::Error("HTTP 503".into()), QueryOutcome::Empty]),
    wait("0 of 1 consecutive checks passed, 1 failed; last check failed: safe-rollout.dev/prometheus-query-1 returned an empty result; next check in 30s",
         new_state(0, 1, Some("safe-rollout.dev/prometheus-query-1 returned an empty result"))))]
#[case::first_unanswered_query_named(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::Error("HTTP 503".into())]),
    wait("0 of 1 consecutive checks passed, 0 failed, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query-1 got no answer: HTTP 503; next check in 30s",
         Some(st_err(0, 0, 1, 0, "safe-rollout.dev/prometheus-query-1 got no answer: HTTP 503"))))]
#[case::missing_outcome_is_an_error(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("0 of 1 consecutive checks passed, 0 failed, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query-1 was not run; next check in 30s",
         Some(st_err(0, 0, 1, 0, "safe-rollout.dev/prometheus-query-1 was not run"))))]
#[case::all_queries_pass(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::NonEmpty(7)]),
    CheckResult::Pass { state: new_state(1, 0, None) })]
#[case::not_due_passed(cfg(&[(Q0, "up")], 30, 2, None), Some(st(2, 1, 29, None)), None, CheckResult::Pass { state: None })]
#[case::not_due_passed_above_threshold(cfg(&[(Q0, "up")], 30, 2, None), Some(st(5, 0, 0, None)),
    Some(vec![QueryOutcome::Empty]), CheckResult::Pass { state: None })]
#[case::not_due_wait_seconds_left(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 10, None)), None,
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 20s", None))]
#[case::not_due_wait_one_second_left(cfg(&[(Q0, "up")], 30, 2, Some(4)), Some(st(0, 1, 29, Some("x was empty"))), None,
    wait("0 of 2 consecutive checks passed, 1 failed of limit 4; last check failed: x was empty; next check in 1s", None))]
#[case::not_due_ignores_outcomes(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 10, None)),
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 20s", None))]
#[case::failure_limit_reached(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 2, 30, None)), Some(vec![QueryOutcome::Empty]),
    CheckResult::Pause { reason: format!("PrometheusCheck failed 3 times (failure-limit 3) since the last step; last: {EMPTY_Q0}") })]
#[case::failure_limit_1_first_failure(cfg(&[(Q0, "up")], 30, 1, Some(1)), None,
    Some(vec![QueryOutcome::Empty]),
    CheckResult::Pause { reason: format!("PrometheusCheck failed 1 times (failure-limit 1) since the last step; last: {EMPTY_Q0}") })]
#[case::failure_limit_not_reached(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 1, 30, None)), Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 1 consecutive checks passed, 2 failed of limit 3; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 2, Some(EMPTY_Q0))))]
#[case::success_at_limit_does_not_pause(cfg(&[(Q0, "up")], 30, 1, Some(2)), Some(st(0, 2, 30, None)),
    Some(vec![QueryOutcome::NonEmpty(1)]), CheckResult::Pass { state: new_state(1, 2, None) })]
fn check_result_cases(
    #[case] config: CheckConfig,
    #[case] state: Option<CheckState>,
    #[case] outcomes: Option<Vec<QueryOutcome>>,
    #[case] want: CheckResult,
) {
    let got = check_result(&config, state.as_ref(), outcomes.as_deref(), 3, "b", now());
    assert_eq!(got, want);
}

#[test]
fn check_result_records_the_partition_and_revision_it_was_given() {
    let got = check_result(
        &cfg(&[(Q0, "up")], 30, 2, None),
        None,
        Some(&[QueryOutcome::NonEmpty(1)]),
        7,
        "web-7c9f",
        now(),
    );
    let CheckResult::Wait { state: Some(s), .. } = got else {
        panic!("{got:?}")
    };
    assert_eq!((s.partition, s.update_revision.as_str()), (7, "web-7c9f"));
}

// ---- PrometheusCheck: current_state and CheckState ------------------------------------------------

fn with_state(raw: &str) -> StatefulSet {
    set_with(&[("safe-rollout.dev/prometheus-check", raw)])
}

#[rstest]
#[case::matching(
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":2,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    Some(st(1, 2, 30, None))
)]
#[case::matching_with_failure(
    r#"{"updateRevision":"b","partition":3,"successes":0,"failures":1,"lastCheck":"2026-11-23T01:19:30Z","lastFailure":"q empty"}"#,
    Some(st(0, 1, 30, Some("q empty")))
)]
#[case::other_partition(
    r#"{"updateRevision":"b","partition":4,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::other_revision(
    r#"{"updateRevision":"a","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::unreadable_json("{", None)]
#[case::not_json("successes=1", None)]
#[case::missing_field(r#"{"updateRevision":"b","partition":3,"successes":1}"#, None)]
#[case::bad_time(
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"yesterday"}"#,
    None
)]
#[case::negative_count(
    r#"{"updateRevision":"b","partition":3,"successes":-1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::empty_value("", None)]
fn current_state_cases(#[case] raw: &str, #[case] want: Option<CheckState>) {
    assert_eq!(
        current_state(stored(&with_state(raw), PREFIX).as_deref(), 3, "b"),
        want
    );
}

#[test]
fn current_state_absent_or_of_another_prefix_is_none() {
    assert_eq!(
        current_state(stored(&set_with(&[]), PREFIX).as_deref(), 3, "b"),
        None
    );
    let s = set_with(&[(
        "other.dev/prometheus-check",
        r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    )]);
    assert_eq!(current_state(stored(&s, PREFIX).as_deref(), 3, "b"), None);
    assert_eq!(
        current_state(stored(&s, "other.dev").as_deref(), 3, "b"),
        Some(st(1, 0, 30, None))
    );
}

#[rstest]
#[case::without_failure(
    st(1, 0, 0, None),
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:20:00Z"}"#
)]
#[case::with_failure(
    st(0, 2, 42, Some("q \"x\" empty")),
    r#"{"updateRevision":"b","partition":3,"successes":0,"failures":2,"lastCheck":"2026-11-23T01:19:18Z","lastFailure":"q \"x\" empty"}"#
)]
fn check_state_annotation_shape_and_round_trip(#[case] state: CheckState, #[case] want: &str) {
    let raw = state.to_annotation();
    assert_eq!(raw, want);
    let back: CheckState = serde_json::from_str(&raw).expect("parse back");
    assert_eq!(back, state);
    assert_eq!(
        current_state(stored(&with_state(&raw), PREFIX).as_deref(), 3, "b"),
        Some(state)
    );
}

#[test]
fn check_state_reads_the_documented_example() {
    let s: CheckState = serde_json::from_str(
        r#"{"updateRevision":"web-7c9f","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:10:42Z"}"#,
    )
    .expect("documented shape");
    assert_eq!(s.update_revision, "web-7c9f");
    assert_eq!(s.last_check, at("2026-11-23T01:10:42Z"));
    assert_eq!(s.last_failure, None);
}
