//! Every way an annotation can be unreadable is its own `ConfigError` variant (issue 29 item 5),
//! naming the annotation's key and the value; its message — the `InvalidAnnotation` detail — is worded
//! as it was before the errors were typed; and the gates' own cause for no step is a `StepError`.

use std::sync::Arc;

use crate::common::*;
use rstest::rstest;
use serde_json::json;
use sts_stepper::config::{
    ConfigError, ExpectError, JsonPathError, Keys, PausePlanError, SetConfig,
};
use sts_stepper::gates::{StepError, next_step};

const P: &str = "safe-rollout.dev";

fn k(name: &str) -> String {
    format!("{P}/{name}")
}

/// A staged set with `annotations` (short names), parsed.
fn parsed(annotations: &[(&str, &str)]) -> SetConfig {
    let mut v = set_json("web", 5, Some(5), 0);
    for (name, value) in annotations {
        v["metadata"]["annotations"][k(name)] = json!(value);
    }
    SetConfig::parse(&set_from(v), &Arc::new(Keys::default()))
}

const EXPECT_FORM: &str = "expected a value (\"green\"), a list \"in(green,yellow)\", or a number \
                           comparison \">=3\" (>=, >, <=, <, ==)";

#[rstest]
#[case::step(&[("step", "0")],
    ConfigError::StepSize { key: k("step"), value: "0".into() },
    "safe-rollout.dev/step: \"0\" is not a step size; expected a positive integer count of pods (\"2\") \
     or a percentage of spec.replicas from 1% to 100% (\"25%\")")]
#[case::initial_delay(&[("initial-delay-seconds", "1m")],
    ConfigError::InitialDelay { key: k("initial-delay-seconds"), value: "1m".into() },
    "safe-rollout.dev/initial-delay-seconds: \"1m\" is not a delay; expected a whole number of seconds (\"60\")")]
#[case::recover_after(&[("recover-after-seconds", "0")],
    ConfigError::RecoverAfter { key: k("recover-after-seconds"), value: "0".into() },
    "safe-rollout.dev/recover-after-seconds: \"0\" is not a duration; expected a whole number of seconds ≥ 1 (\"300\")")]
#[case::last_partition_update(&[("initial-delay-seconds", "60"), ("last-partition-update", "yesterday")],
    ConfigError::LastPartitionUpdate { key: k("last-partition-update"), value: "yesterday".into() },
    "safe-rollout.dev/last-partition-update: \"yesterday\" is not a time; expected RFC 3339 UTC (\"2026-11-23T01:10:42Z\")")]
#[case::pause_plan(&[("pause-at", "0")],
    ConfigError::PausePlan { key: k("pause-at"), value: "0".into(), problem: Box::new(PausePlanError::Count { item: "0".into() }) },
    "safe-rollout.dev/pause-at: \"0\" is not a pause plan: \"0\" is not a count of pods ≥ 1; expected \
     comma-separated points in increasing order, each a count of pods (\"1\") or a percentage of \
     spec.replicas from 1% to 100% (\"50%\"), optionally with a bake time in whole seconds ≥ 1 \
     (\"50%:600\"), e.g. \"1,50%:600\"")]
#[case::rollout_group(&[("rollout-group", " ")],
    ConfigError::EmptyRolloutGroup { key: k("rollout-group") },
    "safe-rollout.dev/rollout-group: empty; expected a group name (\"kafka\")")]
#[case::owner_condition(&[("owner-condition", "a/b")],
    ConfigError::OwnerCondition { key: k("owner-condition"), value: "a/b".into() },
    "safe-rollout.dev/owner-condition: \"a/b\" is not a condition type; expected a name such as \"Healthy\" or \"Ready\"")]
#[case::check_count(&[("prometheus-query", "up"), ("success-threshold", "0")],
    ConfigError::CheckCount { key: k("success-threshold"), value: "0".into() },
    "safe-rollout.dev/success-threshold: \"0\" is not valid; expected a whole number ≥ 1 (\"3\")")]
#[case::query_name(&[("prometheus-query-x", "up")],
    ConfigError::QueryName { key: k("prometheus-query-x"), query: k("prometheus-query") },
    "safe-rollout.dev/prometheus-query-x: not a query annotation; expected safe-rollout.dev/prometheus-query \
     or safe-rollout.dev/prometheus-query-<N> with N from 1 to 999")]
#[case::empty_query(&[("prometheus-query", " ")],
    ConfigError::EmptyQuery { key: k("prometheus-query") },
    "safe-rollout.dev/prometheus-query: empty; expected a PromQL query")]
#[case::without_http_check(&[("http-check-expect", "green")],
    ConfigError::WithoutHttpCheck { key: k("http-check-expect"), check: k("http-check") },
    "safe-rollout.dev/http-check-expect: set without safe-rollout.dev/http-check; expected \
     safe-rollout.dev/http-check naming a check configured on the stepper (--http-check NAME=URL)")]
#[case::http_check_name(&[("http-check", "Es")],
    ConfigError::HttpCheckName { key: k("http-check"), value: "Es".into() },
    "safe-rollout.dev/http-check: \"Es\" is not a check name; expected the NAME of a --http-check NAME=URL \
     of the stepper (a DNS label such as \"es-health\")")]
#[case::missing_jsonpath(&[("http-check", "es")],
    ConfigError::MissingJsonPath { key: k("http-check-jsonpath") },
    "safe-rollout.dev/http-check-jsonpath: missing; expected the JSONPath of the value to check, e.g. \"$.status\"")]
#[case::jsonpath(&[("http-check", "es"), ("http-check-jsonpath", "status")],
    ConfigError::JsonPath { key: k("http-check-jsonpath"), value: "status".into(), problem: Box::new(JsonPathError::NoRoot) },
    "safe-rollout.dev/http-check-jsonpath: \"status\" does not start with $; expected a JSONPath such as \
     \"$.status\" or \"$.a.b[0].c\"")]
#[case::missing_expect(&[("http-check", "es"), ("http-check-jsonpath", "$.status")],
    ConfigError::MissingExpect { key: k("http-check-expect") },
    "safe-rollout.dev/http-check-expect: missing; EXPECT_FORM")]
#[case::expect(&[("http-check", "es"), ("http-check-jsonpath", "$.status"), ("http-check-expect", ">= x")],
    ConfigError::Expect {
        key: k("http-check-expect"),
        value: ">= x".into(),
        problem: Box::new(ExpectError::NotANumber { operand: "x".into(), op: ">=" }),
    },
    "safe-rollout.dev/http-check-expect: \">= x\": \"x\" after >= is not a number; EXPECT_FORM")]
#[case::on_failure(&[("on-failure", "undo")],
    ConfigError::OnFailure { key: k("on-failure"), value: "undo".into() },
    "safe-rollout.dev/on-failure: \"undo\" is not an action on failure; expected \"pause\" or \"rollback\"")]
#[case::progress_deadline(&[("progress-deadline-seconds", "10m")],
    ConfigError::ProgressDeadline { key: k("progress-deadline-seconds"), value: "10m".into() },
    "safe-rollout.dev/progress-deadline-seconds: \"10m\" is not a deadline; expected a whole number of seconds ≥ 1 (\"600\")")]
fn each_unreadable_annotation_is_its_own_variant(
    #[case] annotations: &[(&str, &str)],
    #[case] want: ConfigError,
    #[case] message: &str,
) {
    let config = parsed(annotations);
    let got = config.invalid.clone().expect("an unreadable annotation");
    assert_eq!(got, want);
    assert_eq!(got.key(), want.key());
    assert_eq!(got.to_string(), message.replace("EXPECT_FORM", EXPECT_FORM));
    // The reason is the variant's name, stable and distinct.
    let debug = format!("{got:?}");
    assert!(
        debug.starts_with(got.reason()),
        "{debug} vs {}",
        got.reason()
    );
}

#[rstest]
#[case("", ExpectError::Empty)]
#[case("in(green", ExpectError::Unclosed)]
#[case("in(a,,b)", ExpectError::EmptyItem)]
#[case("!=3", ExpectError::UnknownComparison)]
#[case("<x", ExpectError::NotANumber { operand: "x".into(), op: "<" })]
fn each_bad_expectation_is_its_own_variant(#[case] value: &str, #[case] want: ExpectError) {
    assert_eq!(
        sts_stepper::config::http_check::parse_expect(value),
        Err(want)
    );
}

#[test]
fn a_jsonpath_that_does_not_parse_says_so() {
    let got = sts_stepper::config::http_check::check_jsonpath("$.a[");
    assert!(
        matches!(&got, Err(JsonPathError::Syntax(m)) if !m.is_empty()),
        "{got:?}"
    );
}

#[test]
fn no_step_is_pinned_for_an_unreadable_step_or_an_unobserved_revision() {
    let mut v = set_json("web", 5, Some(5), 0);
    v["metadata"]["annotations"][k("step")] = json!("x");
    let set = set_from(v);
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    let got = next_step(&set, &config).expect_err("no step");
    assert_eq!(got.reason(), "InvalidAnnotation");
    assert!(
        matches!(&got, StepError::InvalidAnnotation(ConfigError::StepSize { value, .. }) if value == "x")
    );
    assert_eq!(
        got.to_string(),
        config.invalid.expect("invalid").to_string()
    );

    let mut v = set_json("web", 5, Some(5), 0);
    v["status"]
        .as_object_mut()
        .expect("status")
        .remove("updateRevision");
    let set = set_from(v);
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    let got = next_step(&set, &config).expect_err("no step");
    assert_eq!(got, StepError::NoUpdateRevision);
    assert_eq!(got.reason(), "NoUpdateRevision");
    assert_eq!(
        got.to_string(),
        "no status.updateRevision yet; cannot pin the step"
    );
}
