//! The `GroupBusy` gate (`<prefix>/rollout-group`): which member holds the group (`group_holder`),
//! `check_group` for the holder and the others, the annotation's values, and `plan::plan` over a group:
//! one set steps at a time, the first by name unless a member started, and other namespaces, groups,
//! ungrouped and unguarded sets are independent.

use crate::common::plans::*;
use crate::common::*;
use k8s_openapi::api::apps::v1::StatefulSet;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::{self, ConfigError};
use sts_stepper::gates::{self, Idle, Verdict};
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::plan;
use sts_stepper::plan::events::EventType;

// ---- GroupBusy: group_holder and check_group -------------------------------------------------------

#[rstest]
#[case::all_unstarted_first_by_name(&[("c", Some(3), true), ("a", Some(3), true), ("b", Some(3), true)], Some("a"))]
#[case::started_first(&[("a", Some(3), true), ("c", Some(2), true), ("b", Some(3), true)], Some("c"))]
#[case::started_then_name(&[("c", Some(1), true), ("b", Some(2), true), ("a", Some(3), true)], Some("b"))]
#[case::partition_absent_counts_as_started(&[("a", Some(3), true), ("b", None, true)], Some("b"))]
#[case::partition_zero_counts_as_started(&[("a", Some(3), true), ("z", Some(0), true)], Some("z"))]
#[case::partition_above_replicas_not_started(&[("b", Some(3), true), ("a", Some(5), true)], Some("a"))]
#[case::unstaged_never_holds(&[("a", Some(3), false), ("b", Some(3), true)], Some("b"))]
#[case::unstaged_started_never_holds(&[("a", Some(1), false), ("b", Some(3), true)], Some("b"))]
#[case::none_staged(&[("a", Some(3), false), ("b", Some(0), false)], None)]
#[case::empty(&[], None)]
fn group_holder_order(#[case] members: &[(&str, Option<i32>, bool)], #[case] want: Option<&str>) {
    let sets: Vec<StatefulSet> = members
        .iter()
        .map(|(n, p, staged)| set_from(member_json("ns", n, *p, *staged, Some("kafka"))))
        .collect();
    let got = gates::group_holder(sets.iter()).and_then(|s| s.metadata.name.as_deref());
    assert_eq!(got, want);
}

#[rstest]
#[case::no_holder(None, None)]
#[case::holder_is_self(Some(member_json("ns", "web", Some(3), true, Some("kafka"))), None)]
#[case::other_holder_unstarted(
    Some(member_json("ns", "a", Some(3), true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 0/3, partition 3)")
)]
#[case::other_holder_started(
    Some(member_json("ns", "a", Some(2), true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 1/3, partition 2)")
)]
#[case::other_holder_partition_absent(
    Some(member_json("ns", "a", None, true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 2/3, partition 0)")
)]
#[case::same_name_other_uid(
    Some(member_json("other", "web", Some(3), true, Some("kafka"))),
    Some("rollout-group kafka: web rolls out first (updated 0/3, partition 3)")
)]
fn check_group_holder_and_non_holder(#[case] holder: Option<Value>, #[case] want: Option<&str>) {
    let s = set_from(member_json("ns", "web", Some(3), true, Some("kafka")));
    let holder = holder.map(set_from);
    let got = gates::check_group(&s, "kafka", holder.as_ref());
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::GroupBusy, d))),
    }
}

#[rstest]
#[case::absent(None, Ok(None))]
#[case::named(Some("kafka"), Ok(Some("kafka")))]
#[case::empty(Some(""), Err(()))]
#[case::blank(Some("  "), Err(()))]
fn rollout_group_values(#[case] value: Option<&str>, #[case] want: Result<Option<&str>, ()>) {
    let s = set_from(member_json("ns", "web", Some(3), true, value));
    let got = config::rollout_group(&s, &keys());
    match want {
        Ok(w) => assert_eq!(got, Ok(w)),
        Err(()) => {
            let e = got.expect_err("invalid");
            assert_eq!(
                e,
                ConfigError::EmptyRolloutGroup {
                    key: "safe-rollout.dev/rollout-group".into()
                }
            );
            assert_eq!(
                e.to_string(),
                "safe-rollout.dev/rollout-group: empty; expected a group name (\"kafka\")"
            );
        }
    }
}

// ---- GroupBusy: through the plan ------------------------------------------------------------------

#[test]
fn one_set_of_a_staged_group_steps_the_first_by_name() {
    // Snapshot order c, a, b: the holder is chosen by name, not by list order.
    let names = ["c", "a", "b"];
    let sets = names
        .iter()
        .map(|n| member_json("ns", n, Some(3), true, Some("kafka")))
        .collect();
    let all_pods = names.iter().flat_map(|n| member_pods("ns", n, 3)).collect();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert_eq!(by_name(&plans, "ns", "a").verdict, step(3, 2));
    assert!(by_name(&plans, "ns", "a").step_patch().is_some());
    for n in ["b", "c"] {
        let p = by_name(&plans, "ns", n);
        assert_eq!(
            p.verdict,
            blocked(
                Reason::GroupBusy,
                "rollout-group kafka: a rolls out first (updated 0/3, partition 3)"
            ),
            "{n}"
        );
        assert!(p.step_patch().is_none(), "{n}");
        assert_eq!(p.events().len(), 1, "{n}");
        assert_eq!(
            p.events()[0].type_,
            EventType::Normal,
            "{n}: an expected wait"
        );
        assert_eq!(
            to_json(&p.status_patch()),
            json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                    "value": "GroupBusy"}]),
            "{n}"
        );
    }
    let steps = plans.iter().filter(|p| p.write.is_step()).count();
    assert_eq!(steps, 1);
}

#[test]
fn a_started_member_holds_the_group_before_the_first_by_name() {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(2), true, Some("kafka")),
    ];
    let all_pods = [member_pods("ns", "a", 3), member_pods("ns", "b", 2)].concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(2, 1));
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::GroupBusy,
            "rollout-group kafka: b rolls out first (updated 1/3, partition 2)"
        )
    );
}

#[test]
fn a_blocked_holder_still_holds_and_an_idle_partition_zero_holder_too() {
    // a's pod a-1 is missing: a is blocked PodNotReady, b still waits for it.
    let mut a_pods = member_pods("ns", "a", 3);
    a_pods.remove(1);
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(sets, [a_pods, member_pods("ns", "b", 3)].concat()),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(Reason::PodNotReady, "a-1: missing")
    );
    assert!(matches!(&by_name(&plans, "ns", "b").verdict,
                     Verdict::Blocked(b) if b.reason == Reason::GroupBusy));
    // z: partition absent with an update staged (the controller rolls it): it holds the group.
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "z", None, true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(
            sets,
            [member_pods("ns", "a", 3), member_pods("ns", "z", 1)].concat(),
        ),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "z").verdict,
        Verdict::Idle(Idle::PartitionZero)
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::GroupBusy,
            "rollout-group kafka: z rolls out first (updated 2/3, partition 0)"
        )
    );
}

#[test]
fn other_namespaces_other_groups_and_ungrouped_sets_are_independent() {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(3), true, Some("kafka")),
        member_json("other", "a", Some(3), true, Some("kafka")),
        member_json("other", "b", Some(3), true, Some("kafka")),
        member_json("ns", "c", Some(3), true, Some("zk")),
        member_json("ns", "d", Some(3), true, None),
    ];
    let all_pods = [
        member_pods("ns", "a", 3),
        member_pods("ns", "b", 3),
        member_pods("other", "a", 3),
        member_pods("other", "b", 3),
        member_pods("ns", "c", 3),
        member_pods("ns", "d", 3),
    ]
    .concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    for (ns, n) in [("ns", "a"), ("other", "a"), ("ns", "c"), ("ns", "d")] {
        assert_eq!(by_name(&plans, ns, n).verdict, step(3, 2), "{ns}/{n}");
    }
    for ns in ["ns", "other"] {
        assert_eq!(
            by_name(&plans, ns, "b").verdict,
            blocked(
                Reason::GroupBusy,
                "rollout-group kafka: a rolls out first (updated 0/3, partition 3)"
            ),
            "{ns}/b"
        );
    }
}

#[rstest]
#[case::empty("")]
#[case::blank("   ")]
fn an_empty_rollout_group_is_invalid_and_holds_nothing(#[case] value: &str) {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some(value)),
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(
            sets,
            [member_pods("ns", "a", 3), member_pods("ns", "b", 3)].concat(),
        ),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::InvalidAnnotation,
            "safe-rollout.dev/rollout-group: empty; expected a group name (\"kafka\")"
        )
    );
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(3, 2));
}

#[test]
fn unguarded_members_are_ignored() {
    let forced = annotate(
        member_json("ns", "a", Some(3), true, Some("kafka")),
        &[(&key("force-rolling-update"), "true")],
    );
    let mut on_delete = member_json("ns", "a0", None, true, Some("kafka"));
    on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    let sets = vec![
        forced,
        on_delete,
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let all_pods = [
        member_pods("ns", "a", 3),
        member_pods("ns", "a0", 3),
        member_pods("ns", "b", 3),
    ]
    .concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert!(matches!(
        by_name(&plans, "ns", "a").verdict,
        Verdict::Unguarded(_)
    ));
    assert!(matches!(
        by_name(&plans, "ns", "a0").verdict,
        Verdict::Unguarded(_)
    ));
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(3, 2));
}
