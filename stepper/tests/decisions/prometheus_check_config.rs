//! The `PrometheusCheck` gate's annotations as `check_config` reads them: the queries (`prometheus-query`,
//! `prometheus-query-<N>` in numeric order, trimmed), the period, threshold and limits with their
//! defaults, every bad name or number named in the error, and a custom prefix. The defect found here (a
//! `+` in a query number) is fixed; its test stays.

use crate::common::plans::*;
use crate::common::prometheus_check::*;
use rstest::rstest;
use sts_safe_rollout_rules::annotations as names;
use sts_stepper::config::{ConfigError, Keys, check_config};
use sts_stepper::gates::check::prometheus::CheckConfig;

fn bad_query(k: &str) -> String {
    format!(
        "{k}: not a query annotation; expected safe-rollout.dev/prometheus-query or safe-rollout.dev/prometheus-query-<N> with N from 1 to 999"
    )
}

#[rstest]
#[case::no_annotations(&[], Ok(None))]
#[case::settings_without_query(&[("safe-rollout.dev/check-period-seconds", "10"),
                                 ("safe-rollout.dev/success-threshold", "3")], Ok(None))]
#[case::other_prefix_ignored(&[("other.dev/prometheus-query", "up"),
                               ("other.dev/prometheus-query-x", "up"),
                               ("other.dev/check-period-seconds", "x")], Ok(None))]
#[case::not_a_query_name_ignored(&[("safe-rollout.dev/prometheus-queries", "up")], Ok(None))]
#[case::one_query_defaults(&[("safe-rollout.dev/prometheus-query", "up")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 30, 1, None))))]
#[case::query_is_trimmed(&[("safe-rollout.dev/prometheus-query", "  up == 1\n")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up == 1")], 30, 1, None))))]
#[case::numeric_order(&[("safe-rollout.dev/prometheus-query-10", "ten"),
                        ("safe-rollout.dev/prometheus-query-2", "two"),
                        ("safe-rollout.dev/prometheus-query", "zero"),
                        ("safe-rollout.dev/prometheus-query-1", "one")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "zero"),
                  ("safe-rollout.dev/prometheus-query-1", "one"),
                  ("safe-rollout.dev/prometheus-query-2", "two"),
                  ("safe-rollout.dev/prometheus-query-10", "ten")], 30, 1, None))))]
#[case::numbered_only(&[("safe-rollout.dev/prometheus-query-999", "last"),
                        ("safe-rollout.dev/prometheus-query-3", "three")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query-3", "three"),
                  ("safe-rollout.dev/prometheus-query-999", "last")], 30, 1, None))))]
#[case::all_settings(&[("safe-rollout.dev/prometheus-query", "up"),
                       ("safe-rollout.dev/check-period-seconds", "10"),
                       ("safe-rollout.dev/success-threshold", "3"),
                       ("safe-rollout.dev/failure-limit", "5")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 10, 3, Some(5)))))]
#[case::minimum_settings(&[("safe-rollout.dev/prometheus-query", "up"),
                           ("safe-rollout.dev/check-period-seconds", "1"),
                           ("safe-rollout.dev/success-threshold", "1"),
                           ("safe-rollout.dev/failure-limit", "1")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 1, 1, Some(1)))))]
#[case::query_0(&[("safe-rollout.dev/prometheus-query-0", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-0")))]
#[case::query_x(&[("safe-rollout.dev/prometheus-query-x", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-x")))]
#[case::query_01(&[("safe-rollout.dev/prometheus-query-01", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-01")))]
#[case::query_1000(&[("safe-rollout.dev/prometheus-query-1000", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-1000")))]
#[case::query_dash(&[("safe-rollout.dev/prometheus-query-", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-")))]
#[case::query_minus(&[("safe-rollout.dev/prometheus-query--1", "up")], Err(bad_query("safe-rollout.dev/prometheus-query--1")))]
#[case::bad_number_beside_good(&[("safe-rollout.dev/prometheus-query", "up"),
                                 ("safe-rollout.dev/prometheus-query-x", "up")],
    Err(bad_query("safe-rollout.dev/prometheus-query-x")))]
#[case::empty_query(&[("safe-rollout.dev/prometheus-query", "")],
    Err("safe-rollout.dev/prometheus-query: empty; expected a PromQL query".into()))]
#[case::blank_numbered_query(&[("safe-rollout.dev/prometheus-query", "up"), ("safe-rollout.dev/prometheus-query-2", " \n ")],
    Err("safe-rollout.dev/prometheus-query-2: empty; expected a PromQL query".into()))]
fn check_config_cases(
    #[case] pairs: &[(&str, &str)],
    #[case] want: Result<Option<CheckConfig>, String>,
) {
    let got = check_config(&set_with(pairs), &keys());
    if let Err(e) = &got {
        let query = keys().of(names::PROMETHEUS_QUERY).to_string();
        assert!(
            matches!(e, ConfigError::QueryName { query: q, .. } if *q == query)
                || matches!(e, ConfigError::EmptyQuery { .. }),
            "{e:?}"
        );
    }
    assert_eq!(got.map_err(|e| e.to_string()), want);
}

#[rstest]
fn check_config_bad_numbers_name_the_annotation(
    #[values(
        "check-period-seconds",
        "success-threshold",
        "failure-limit",
        "check-error-limit"
    )]
    name: &str,
    #[values("0", "-1", "1.5", "x", "", " 3", "+3", "99999999999")] value: &str,
) {
    let k = key(name);
    let got = check_config(
        &set_with(&[("safe-rollout.dev/prometheus-query", "up"), (&k, value)]),
        &keys(),
    );
    assert_eq!(
        got,
        Err(ConfigError::CheckCount {
            key: k.clone(),
            value: value.into(),
        })
    );
    assert_eq!(
        got.map_err(|e| e.to_string()),
        Err(format!(
            "{k}: {value:?} is not valid; expected a whole number ≥ 1 (\"3\")"
        ))
    );
}

#[test]
fn check_config_follows_a_custom_prefix() {
    let s = set_with(&[
        ("moco.cybozu.com/prometheus-query", "mine"),
        ("moco.cybozu.com/success-threshold", "2"),
        ("safe-rollout.dev/prometheus-query", "not mine"),
        ("safe-rollout.dev/success-threshold", "x"),
    ]);
    assert_eq!(
        check_config(&s, &Keys::new("moco.cybozu.com")),
        Ok(Some(cfg(
            &[("moco.cybozu.com/prometheus-query", "mine")],
            30,
            2,
            None
        )))
    );
}

#[test]
fn check_config_rejects_a_plus_sign_in_the_query_number() {
    let got = check_config(
        &set_with(&[("safe-rollout.dev/prometheus-query-+1", "up")]),
        &keys(),
    );
    assert_eq!(
        got.map_err(|e| e.to_string()),
        Err(bad_query("safe-rollout.dev/prometheus-query-+1"))
    );
}
