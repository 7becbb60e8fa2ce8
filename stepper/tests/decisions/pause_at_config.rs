//! `<prefix>/pause-at` read at the border: every accepted form resolved against `spec.replicas`, every
//! bad form an `InvalidAnnotation` naming the annotation, the value and the expected form; and the
//! stepper's record `pause-points-passed`.

use std::sync::Arc;

use crate::common::*;
use rstest::rstest;
use serde_json::json;
use sts_stepper::config::{
    ConfigError, Keys, PassedPoints, PausePlanError, PointAt, SetConfig, pause_at,
};
use sts_stepper::gates::{GateOptions, Verdict, decide};
use sts_stepper::model::pods::pods_by_ordinal;
use sts_stepper::model::reasons::Reason;

/// `(pods, bake)` per point of `value` on `replicas`.
fn resolved(value: &str, replicas: i32) -> Vec<(i32, Option<u32>)> {
    pause_at(Some(value), replicas, &Keys::default())
        .expect("valid")
        .expect("present")
        .points
        .iter()
        .map(|p| (p.pods, p.bake_seconds))
        .collect()
}

#[rstest]
#[case("1", 5, vec![(1, None)])]
#[case("1,60%:30", 5, vec![(1, None), (3, Some(30))])]
#[case("1,50%:600", 5, vec![(1, None), (3, Some(600))])]
#[case(" 1 , 50% : 600 ", 5, vec![(1, None), (3, Some(600))])]
#[case("25%", 5, vec![(2, None)])]
#[case("1%", 5, vec![(1, None)])]
#[case("100%", 5, vec![(5, None)])]
#[case("1,2,3,4", 5, vec![(1, None), (2, None), (3, None), (4, None)])]
#[case("10%,50%", 12, vec![(2, None), (6, None)])]
#[case("2,10", 5, vec![(2, None), (10, None)])]
// Points at or past spec.replicas hold nothing and are not ordered against the others.
#[case("3,50%", 2, vec![(3, None), (1, None)])]
fn accepted_forms_resolve_against_replicas(
    #[case] value: &str,
    #[case] replicas: i32,
    #[case] want: Vec<(i32, Option<u32>)>,
) {
    assert_eq!(resolved(value, replicas), want);
}

#[test]
fn absent_is_no_plan() {
    assert_eq!(pause_at(None, 5, &Keys::default()), Ok(None));
}

#[test]
fn holding_points_are_those_below_replicas() {
    let plan = pause_at(Some("1,60%,100%,9"), 5, &Keys::default())
        .expect("valid")
        .expect("present");
    let holding: Vec<String> = plan.holding().iter().map(|p| p.at.to_string()).collect();
    assert_eq!(holding, ["1", "60%"]);
    assert_eq!(plan.points[2].at, PointAt::Percent(100));
}

#[rstest]
#[case("", "an empty point")]
#[case("1,", "an empty point")]
#[case("1,,2", "an empty point")]
#[case("abc", "\"abc\" is not a count of pods or a percentage")]
#[case("-1", "\"-1\" is not a count of pods or a percentage")]
#[case("+1", "\"+1\" is not a count of pods or a percentage")]
#[case("1.5", "\"1.5\" is not a count of pods or a percentage")]
#[case("x%", "\"x%\" is not a count of pods or a percentage")]
#[case("0", "\"0\" is not a count of pods ≥ 1")]
#[case("99999999999", "\"99999999999\" is not a count of pods ≥ 1")]
#[case("0%", "\"0%\" is not a percentage from 1% to 100%")]
#[case("101%", "\"101%\" is not a percentage from 1% to 100%")]
#[case("150%:30", "\"150%:30\" is not a percentage from 1% to 100%")]
#[case("1:", "\"1:\" has bake time \"\", not whole seconds ≥ 1")]
#[case("1:0", "\"1:0\" has bake time \"0\", not whole seconds ≥ 1")]
#[case("1:-5", "\"1:-5\" has bake time \"-5\", not whole seconds ≥ 1")]
#[case("1:10m", "\"1:10m\" has bake time \"10m\", not whole seconds ≥ 1")]
#[case("1:2:3", "\"1:2:3\" has bake time \"2:3\", not whole seconds ≥ 1")]
#[case("1,1", "point 1 is listed twice")]
#[case("50%,50%:60", "point 50% is listed twice")]
#[case("3,1", "point 1 comes after 3")]
#[case("60%,20%", "point 20% comes after 60%")]
#[case("60%,1", "point 1 (1 of 5 pods) comes after 60% (3 pods)")]
#[case("3,60%", "points 3 and 60% are both 3 of 5 pods")]
fn bad_forms_name_the_annotation_the_value_and_the_expected_form(
    #[case] value: &str,
    #[case] why: &str,
) {
    let err = pause_at(Some(value), 5, &Keys::default()).expect_err("invalid");
    let ConfigError::PausePlan {
        key,
        value: written,
        problem,
    } = &err
    else {
        panic!("not a PausePlan error: {err:?}");
    };
    assert_eq!(
        (key.as_str(), written.as_str()),
        ("safe-rollout.dev/pause-at", value)
    );
    assert_eq!(problem.to_string(), why);
    let err = err.to_string();
    assert!(
        err.starts_with(&format!(
            "safe-rollout.dev/pause-at: {value:?} is not a pause plan: {why}; expected"
        )),
        "{err}"
    );
    assert!(
        err.ends_with(
            "expected comma-separated points in increasing order, each a count of pods (\"1\") or a \
             percentage of spec.replicas from 1% to 100% (\"50%\"), optionally with a bake time in \
             whole seconds ≥ 1 (\"50%:600\"), e.g. \"1,50%:600\""
        ),
        "{err}"
    );
}

/// Each way a plan can be wrong is its own [`PausePlanError`] variant, with the point(s) it concerns.
#[rstest]
#[case("1,,2", PausePlanError::EmptyPoint)]
#[case("abc", PausePlanError::NotAPoint { item: "abc".into() })]
#[case("0", PausePlanError::Count { item: "0".into() })]
#[case("101%", PausePlanError::Percent { item: "101%".into() })]
#[case("1:10m", PausePlanError::BakeTime { item: "1:10m".into(), bake: "10m".into() })]
#[case("1,1", PausePlanError::ListedTwice { at: "1".into() })]
#[case("60%,20%", PausePlanError::OutOfOrder { point: "20%".into(), before: "60%".into() })]
#[case("3,60%", PausePlanError::SamePods {
    before: "3".into(), point: "60%".into(), pods: 3, replicas: 5,
})]
#[case("60%,1:30", PausePlanError::FewerPods {
    point: "1".into(), pods: 1, replicas: 5, before: "60%".into(), before_pods: 3,
})]
fn each_problem_is_its_own_variant(#[case] value: &str, #[case] want: PausePlanError) {
    let err = pause_at(Some(value), 5, &Keys::default()).expect_err("invalid");
    assert_eq!(err.reason(), "PausePlan");
    assert_eq!(
        err,
        ConfigError::PausePlan {
            key: "safe-rollout.dev/pause-at".into(),
            value: value.into(),
            problem: Box::new(want),
        }
    );
}

#[test]
fn the_error_names_the_configured_prefix() {
    let err = pause_at(Some("x"), 5, &Keys::new("moco.cybozu.com")).expect_err("invalid");
    assert_eq!(err.key(), "moco.cybozu.com/pause-at");
    let err = err.to_string();
    assert!(err.starts_with("moco.cybozu.com/pause-at: \"x\""), "{err}");
}

#[test]
fn a_bad_plan_blocks_the_set_as_invalid_annotation() {
    let mut v = set_json("web", 5, Some(5), 0);
    v["metadata"]["annotations"]["safe-rollout.dev/pause-at"] = json!("1,150%");
    let set = set_from(v);
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    assert_eq!(config.pause_at, None);
    let pods = pods("web", 5, 5);
    let by = pods_by_ordinal(&set, pods.iter());
    match decide(&set, &by, &[], &GateOptions::default(), now()) {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::InvalidAnnotation);
            assert!(
                b.detail.starts_with(
                    "safe-rollout.dev/pause-at: \"1,150%\" is not a pause plan: \"150%\" is not a \
                     percentage from 1% to 100%"
                ),
                "{}",
                b.detail
            );
        }
        other => panic!("want InvalidAnnotation, got {other:?}"),
    }
}

#[test]
fn the_record_round_trips_and_an_unreadable_one_is_no_record() {
    let record = PassedPoints {
        update_revision: "web-7d9f".into(),
        pods: 3,
        paused_at: at("2026-11-23T01:20:00Z"),
    };
    let text = record.to_annotation();
    assert_eq!(
        text,
        r#"{"updateRevision":"web-7d9f","pods":3,"pausedAt":"2026-11-23T01:20:00Z"}"#
    );
    assert_eq!(PassedPoints::parse(&text), Some(record));
    assert_eq!(PassedPoints::parse("web-7d9f:3"), None);
    assert_eq!(PassedPoints::parse(r#"{"pods":3}"#), None);
}
