//! Which step a set gets, as pure functions: pod ordinals (numbers, sorted numerically, shifted by
//! `spec.ordinals.start`), the partition and replicas edges, the step size (`<prefix>/step`), and the
//! sets left idle or unguarded.

use crate::common::verdicts::*;
use crate::common::*;

use k8s_openapi::api::core::v1::Pod;
use rstest::rstest;
use serde_json::json;
use sts_stepper::config::{ConfigError, Keys, step_size};
use sts_stepper::gates::{Idle, Verdict};
use sts_stepper::model::pods::{self, ordinal};
use sts_stepper::model::reasons::Reason;

// ---- ordinals ---------------------------------------------------------------------------------------

#[rstest]
#[case("web", "web-0", Some(0))]
#[case("web", "web-9", Some(9))]
#[case("web", "web-10", Some(10))]
#[case("web-x", "web-x-1", Some(1))]
#[case("web", "web-x-1", None)]
#[case("web", "web-01", None)]
#[case("web", "web-", None)]
#[case("web", "webx-1", None)]
#[case("web", "web-1-2", None)]
#[case("web", "web--1", None)]
#[case("web", "web-+1", None)]
#[case("web", "web-99999999999", None)]
#[case("web", "db-1", None)]
fn ordinals_parse_as_numbers(#[case] set: &str, #[case] pod: &str, #[case] want: Option<u32>) {
    assert_eq!(ordinal(set, pod), want);
}

#[test]
fn ten_or_more_replicas_sort_numerically_and_step() {
    let s = set("web", 12, Some(10), 2);
    let p = pods("web", 12, 10);
    let by = pods::pods_by_ordinal(&s, p.iter());
    assert_eq!(
        by.keys().copied().collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
    assert_eq!(decide_one(&s, &p), step(10, 9, "b"));
    // web-10 still on the old revision: the step to 10 is not done (web-10 sorts after web-9).
    let p = pods("web", 12, 11);
    assert_eq!(
        decide_one(&s, &p),
        blocked(
            Reason::StepInProgress,
            "web-10: on revision a, want updateRevision b"
        )
    );
}

// ---- partition and replicas edges ------------------------------------------------------------------

#[rstest]
#[case::partition_above_replicas(5, 7, 0, 5, step(7, 4, "b"))]
#[case::partition_equals_replicas(5, 5, 0, 5, step(5, 4, "b"))]
#[case::last_step(5, 1, 4, 1, step(1, 0, "b"))]
#[case::replicas_zero(0, 3, 0, 0, step(3, 0, "b"))]
#[case::partition_zero_staged(5, 0, 2, 3, Verdict::Idle(Idle::PartitionZero))]
fn partition_edges(
    #[case] replicas: i32,
    #[case] partition: i32,
    #[case] updated: i32,
    #[case] new_from: u32,
    #[case] want: Verdict,
) {
    let s = set("web", replicas, Some(partition), updated);
    let p = pods("web", u32::try_from(replicas).expect("count"), new_from);
    assert_eq!(decide_one(&s, &p), want);
}

#[test]
fn absent_partition_is_zero_and_idle() {
    let s = set("web", 3, None, 1);
    assert_eq!(
        decide_one(&s, &pods("web", 3, 2)),
        Verdict::Idle(Idle::PartitionZero)
    );
}

#[test]
fn up_to_date_set_is_idle_even_with_partition_at_replicas() {
    let mut v = set_json("web", 3, Some(3), 3);
    v["status"]["currentRevision"] = json!("b");
    assert_eq!(
        decide_one(&set_from(v), &pods("web", 3, 0)),
        Verdict::Idle(Idle::UpToDate)
    );
}

#[test]
fn rollback_with_equal_revisions_is_stepped() {
    // `kubectl rollout undo` mid-rollout: template back to revision a (current == update == a), pods 3
    // and 4 still on b, the policy raised the partition to 5. updatedReplicas 3 < 5: staged.
    let mut v = set_json("web", 5, Some(5), 3);
    v["status"]["currentRevision"] = json!("a");
    v["status"]["updateRevision"] = json!("a");
    let s = set_from(v.clone());
    let on_b: Vec<Pod> = (0..5)
        .map(|i| pod_from(pod_json("web", "web", i, if i >= 3 { "b" } else { "a" })))
        .collect();
    assert_eq!(decide_one(&s, &on_b), step(5, 4, "a"));
    v["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(4);
    assert_eq!(
        decide_one(&set_from(v), &on_b),
        blocked(
            Reason::StepInProgress,
            "web-4: on revision b, want updateRevision a"
        )
    );
}

// ---- unguarded and idle ------------------------------------------------------------------------------

#[test]
fn on_delete_and_forced_sets_are_left_alone() {
    let mut v = set_json("web", 3, Some(3), 0);
    v["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    assert!(matches!(
        decide_one(&set_from(v), &pods("web", 3, 3)),
        Verdict::Unguarded(_)
    ));
    let mut v = set_json("web", 3, Some(3), 0);
    v["metadata"]["annotations"]["safe-rollout.dev/force-rolling-update"] = json!("true");
    assert!(matches!(
        decide_one(&set_from(v), &pods("web", 3, 3)),
        Verdict::Unguarded(_)
    ));
}

// ---- step size -----------------------------------------------------------------------------------------

#[rstest]
#[case(None, 5, Ok(1))]
#[case(Some("1"), 5, Ok(1))]
#[case(Some("2"), 5, Ok(2))]
#[case(Some("10"), 5, Ok(10))]
#[case(Some("20%"), 5, Ok(1))]
#[case(Some("25%"), 5, Ok(2))]
#[case(Some("100%"), 5, Ok(5))]
#[case(Some("1%"), 5, Ok(1))]
#[case(Some("50%"), 0, Ok(1))]
#[case(Some("34%"), 3, Ok(2))]
#[case(Some("0"), 5, Err(()))]
#[case(Some("-1"), 5, Err(()))]
#[case(Some("+1"), 5, Err(()))]
#[case(Some("0%"), 5, Err(()))]
#[case(Some("101%"), 5, Err(()))]
#[case(Some("%"), 5, Err(()))]
#[case(Some("2.5"), 5, Err(()))]
#[case(Some(" 2"), 5, Err(()))]
#[case(Some("two"), 5, Err(()))]
#[case(Some(""), 5, Err(()))]
#[case(Some("99999999999"), 5, Err(()))]
fn step_sizes(#[case] value: Option<&str>, #[case] replicas: i32, #[case] want: Result<i32, ()>) {
    let got = step_size(value, replicas, &Keys::new("safe-rollout.dev"));
    match want {
        Ok(n) => assert_eq!(got, Ok(n)),
        Err(()) => {
            let e = got.expect_err("invalid");
            assert_eq!(
                e,
                ConfigError::StepSize {
                    key: "safe-rollout.dev/step".into(),
                    value: value.unwrap_or_default().into(),
                }
            );
            let d = e.to_string();
            assert!(d.starts_with("safe-rollout.dev/step: "), "{d}");
            assert!(d.contains("\"25%\""), "{d}");
        }
    }
}

#[rstest]
#[case("2", 5, 3)]
#[case("10", 5, 0)]
#[case("40%", 5, 3)]
#[case("100%", 5, 0)]
fn step_size_lowers_the_partition(#[case] value: &str, #[case] partition: i32, #[case] to: i32) {
    let mut v = set_json("web", 5, Some(partition), 0);
    v["metadata"]["annotations"]["safe-rollout.dev/step"] = json!(value);
    assert_eq!(
        decide_one(&set_from(v), &pods("web", 5, 5)),
        step(partition, to, "b")
    );
}

// ---- spec.ordinals.start --------------------------------------------------------------------------------

#[test]
fn start_ordinal_shifts_pods_and_partition() {
    // spec.ordinals.start 3: pods web-3..web-7; partition 4 means pod index >= 4, i.e. web-7.
    let mut v = set_json("web", 5, Some(4), 1);
    v["spec"]["ordinals"] = json!({"start": 3});
    let s = set_from(v);
    let p: Vec<Pod> = (3..8)
        .map(|i| pod_from(pod_json("web", "web", i, if i >= 7 { "b" } else { "a" })))
        .collect();
    assert_eq!(decide_one(&s, &p), step(4, 3, "b"));
    // web-7 still on the old revision: the step is in progress.
    let p_old: Vec<Pod> = (3..8)
        .map(|i| pod_from(pod_json("web", "web", i, "a")))
        .collect();
    assert_eq!(
        decide_one(&s, &p_old),
        blocked(
            Reason::StepInProgress,
            "web-7: on revision a, want updateRevision b"
        )
    );
    // Pods counted from 0 (web-0..web-4) do not satisfy a set starting at 3.
    assert_eq!(
        decide_one(&s, &pods("web", 5, 4)),
        // web-6 is missing too, but the step replaces it anyway (index 3 = web-6): not counted.
        blocked(Reason::PodNotReady, "web-5: missing (and 1 more)")
    );
}
