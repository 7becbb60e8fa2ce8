//! The gates and their verdict as pure functions: the four real fixture moments and every gate's edge.
mod common;

use common::*;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use rstest::rstest;
use serde_json::json;
use sts_stepper::config::{ConfigError, Keys, step_size};
use sts_stepper::gates::{self, GateOptions, Idle, Verdict, decide};
use sts_stepper::model::pods::{self, PdbView, ordinal};
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::rollout::complete::rollout_complete;

fn opts() -> GateOptions {
    GateOptions::default()
}

fn decide_with(
    set: &StatefulSet,
    pods: &[Pod],
    pdbs: &[PodDisruptionBudget],
    opts: &GateOptions,
    now: Timestamp,
) -> Verdict {
    let by_ordinal = pods::pods_by_ordinal(set, pods.iter());
    let views: Vec<PdbView<'_>> = pdbs.iter().map(PdbView::new).collect();
    decide(set, &by_ordinal, &views, opts, now)
}

fn decide_one(set: &StatefulSet, pods: &[Pod]) -> Verdict {
    decide_with(set, pods, &[], &opts(), now())
}

fn step(from: i32, to: i32, rev: &str) -> Verdict {
    Verdict::Step {
        from,
        to,
        update_revision: rev.into(),
    }
}

fn blocked(reason: Reason, detail: &str) -> Verdict {
    Verdict::Blocked(Blocked::new(reason, detail))
}

fn moment_verdict(name: &str, opts: &GateOptions, now: Timestamp) -> Verdict {
    let snap = moment(name);
    assert_eq!(snap.statefulsets.len(), 1, "{name}: one StatefulSet");
    decide_with(&snap.statefulsets[0], &snap.pods, &snap.pdbs, opts, now)
}

// ---- the four real moments ----------------------------------------------------------------------

#[rstest]
#[case::staged("1-staged", step(5, 4, REV_NEW))]
#[case::stepped_4("2-stepped-4", step(4, 3, REV_NEW))]
#[case::web1_notready(
    "3-web1-notready",
    blocked(Reason::PodNotReady, "web-1: ContainersNotReady")
)]
#[case::complete("4-complete", Verdict::Idle(Idle::UpToDate))]
fn fixture_moments(#[case] name: &str, #[case] want: Verdict) {
    assert_eq!(moment_verdict(name, &opts(), now()), want);
}

#[test]
fn fixture_3_pdb_has_no_disruption_left() {
    let snap = moment("3-web1-notready");
    let set = &snap.statefulsets[0];
    let by_ordinal = pods::pods_by_ordinal(set, snap.pods.iter());
    assert_eq!(by_ordinal.len(), 5);
    let views: Vec<_> = snap.pdbs.iter().map(PdbView::new).collect();
    let err = gates::check_pdbs(set, &by_ordinal, &views).unwrap_err();
    assert_eq!(err.reason, Reason::PdbBlocked);
    assert_eq!(
        err.detail,
        "PodDisruptionBudget web: disruptionsAllowed 0 (currentHealthy 4, desiredHealthy 4)"
    );
    // Moment 2 has one disruption left: the PDB gate passes.
    let snap2 = moment("2-stepped-4");
    let views2: Vec<_> = snap2.pdbs.iter().map(PdbView::new).collect();
    let by2 = pods::pods_by_ordinal(&snap2.statefulsets[0], snap2.pods.iter());
    assert_eq!(
        gates::check_pdbs(&snap2.statefulsets[0], &by2, &views2),
        Ok(())
    );
}

#[test]
fn fixture_moments_rollout_complete_only_at_4() {
    for name in MOMENTS {
        let snap = moment(name);
        let set = &snap.statefulsets[0];
        let by = pods::pods_by_ordinal(set, snap.pods.iter());
        let views: Vec<_> = snap.pdbs.iter().map(PdbView::new).collect();
        let got = rollout_complete(set, &by, &views, &opts(), now());
        match name {
            "4-complete" => assert_eq!(got, Ok(())),
            "3-web1-notready" => assert_eq!(got.unwrap_err().reason, Reason::PodNotReady),
            _ => assert_eq!(got.unwrap_err().reason, Reason::StepInProgress, "{name}"),
        }
    }
}

#[rstest]
// web-4 became Ready at 01:10:43; minReadySeconds 30 makes it available at 01:11:13 exactly.
#[case("2026-11-23T01:11:12Z", false)]
#[case("2026-11-23T01:11:13Z", true)]
fn fixture_2_min_ready_seconds_edge(#[case] at_time: &str, #[case] steps: bool) {
    let mut snap = moment("2-stepped-4");
    Arc::make_mut(&mut snap.statefulsets[0])
        .spec
        .as_mut()
        .expect("spec")
        .min_ready_seconds = Some(30);
    let got = decide_with(
        &snap.statefulsets[0],
        &snap.pods,
        &snap.pdbs,
        &opts(),
        at(at_time),
    );
    if steps {
        assert_eq!(got, step(4, 3, REV_NEW));
    } else {
        assert_eq!(
            got,
            blocked(
                Reason::PodNotReady,
                "web-4: not available yet: Ready for 29s of minReadySeconds 30"
            )
        );
    }
}

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

// ---- PodNotReady ------------------------------------------------------------------------------------

fn pods_with(f: impl Fn(u32, &mut serde_json::Value)) -> Vec<Pod> {
    (0..5)
        .map(|i| {
            let mut v = pod_json("web", "web", i, if i >= 4 { "b" } else { "a" });
            f(i, &mut v);
            pod_from(v)
        })
        .collect()
}

#[rstest]
#[case::all_ready(|_: u32, _: &mut serde_json::Value| {}, None)]
#[case::terminating(|i: u32, v: &mut serde_json::Value| if i == 2 { v["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:19:00Z") }, Some("web-2: terminating"))]
#[case::pending(|i: u32, v: &mut serde_json::Value| if i == 1 { v["status"]["phase"] = json!("Pending") }, Some("web-1: phase Pending"))]
#[case::no_phase(|i: u32, v: &mut serde_json::Value| if i == 1 { v["status"] = json!({}) }, Some("web-1: phase Unknown"))]
#[case::not_ready_reason(|i: u32, v: &mut serde_json::Value| if i == 2 { v["status"]["conditions"][0] = json!({"type": "Ready", "status": "False", "reason": "ContainersNotReady"}) }, Some("web-2: ContainersNotReady"))]
#[case::not_ready_no_reason(|i: u32, v: &mut serde_json::Value| if i == 2 { v["status"]["conditions"][0]["status"] = json!("Unknown") }, Some("web-2: NotReady"))]
#[case::no_ready_condition(|i: u32, v: &mut serde_json::Value| if i == 0 { v["status"]["conditions"] = json!([]) }, Some("web-0: no Ready condition"))]
#[case::two_failures(|i: u32, v: &mut serde_json::Value| if i == 1 || i == 2 { v["status"]["phase"] = json!("Failed") }, Some("web-1: phase Failed (and 1 more)"))]
fn pod_not_ready_cases(#[case] f: fn(u32, &mut serde_json::Value), #[case] want: Option<&str>) {
    let s = set("web", 5, Some(4), 1);
    let got = decide_one(&s, &pods_with(f));
    match want {
        None => assert_eq!(got, step(4, 3, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::PodNotReady, d)),
    }
}

fn not_ready(v: &mut serde_json::Value) {
    v["status"]["conditions"][0] =
        json!({"type": "Ready", "status": "False", "reason": "ContainersNotReady"});
}

#[test]
fn a_pod_already_down_that_the_step_replaces_does_not_block_it() {
    // Partition 4 of 5: the step 4→3 replaces web-3 (on currentRevision), which is down already (a bad
    // pod, a failed node): replacing it takes nothing more down. Its PDB budget is spent by web-3 itself.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 3 {
            not_ready(v)
        }
    });
    let budget = [pdb("web", json!({"matchLabels": {"app": "web"}}), 0)];
    assert_eq!(
        decide_with(&s, &p, &budget, &opts(), now()),
        step(4, 3, "b")
    );
    let mut missing = pods("web", 5, 4);
    missing.remove(3);
    assert_eq!(decide_one(&s, &missing), step(4, 3, "b"));
}

#[test]
fn a_pod_down_below_the_step_still_blocks_it() {
    // MOCO's incident: web-0 is down; the step would replace Ready web-2.
    let s = set("web", 3, Some(3), 0);
    let p: Vec<Pod> = (0..3)
        .map(|i| {
            let mut v = pod_json("web", "web", i, "a");
            if i == 0 {
                not_ready(&mut v);
            }
            pod_from(v)
        })
        .collect();
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-0: ContainersNotReady")
    );
    // Both the replaced pod and a lower one down: the lower one blocks.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 3 || i == 1 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-1: ContainersNotReady")
    );
}

#[test]
fn a_step_that_would_also_replace_a_ready_pod_is_blocked() {
    // Step 2: 4→2 replaces web-3 (down) and web-2 (Ready): web-2 would go down while web-3 is.
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/step"] = json!("2");
    let s = set_from(v);
    let p = pods_with(|i, v| {
        if i == 3 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-3: ContainersNotReady")
    );
}

#[test]
fn a_pod_down_on_the_update_revision_blocks() {
    // web-4 already runs updateRevision and is not Ready: the new revision may be bad. Not exempt.
    let s = set("web", 5, Some(4), 1);
    let p = pods_with(|i, v| {
        if i == 4 {
            not_ready(v)
        }
    });
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-4: ContainersNotReady")
    );
}

#[test]
fn a_missing_pod_blocks() {
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 5, 4);
    p.remove(2);
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-2: missing")
    );
}

#[test]
fn pods_of_other_statefulsets_with_similar_names_never_count() {
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 5, 4);
    p.remove(2);
    // `web-2` of another StatefulSet `web` in another namespace (another uid).
    let mut other_ns = pod_json("web", "web-elsewhere", 2, "a");
    other_ns["metadata"]["namespace"] = json!("other");
    p.push(pod_from(other_ns));
    // `web-2` in the same namespace but controlled by another uid (a stale or foreign pod).
    p.push(pod_from(pod_json("web", "impostor", 2, "a")));
    // `web-x-2`, a pod of StatefulSet `web-x`; and a pod of `web` whose name is not `web-<n>`.
    p.push(pod_from(pod_json("web-x", "web-x", 2, "a")));
    let mut odd = pod_json("web", "web", 2, "a");
    odd["metadata"]["name"] = json!("web-x-2");
    p.push(pod_from(odd));
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-2: missing")
    );
}

#[test]
fn pods_with_ordinal_at_or_above_replicas_are_ignored() {
    // Scale-down in progress: web-5 still terminating must not block a 5-replica set.
    let s = set("web", 5, Some(4), 1);
    let mut p = pods("web", 6, 4);
    p[5].metadata.deletion_timestamp = p[0]
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c[0].last_transition_time.clone());
    assert_eq!(decide_one(&s, &p), step(4, 3, "b"));
}

#[rstest]
#[case::no_time_with_min_ready(
    Some(5),
    None,
    Some("web-0: Ready without lastTransitionTime, cannot judge minReadySeconds")
)]
#[case::no_time_no_min_ready(None, None, None)]
#[case::future_transition(
    Some(5),
    Some("2026-11-23T01:21:00Z"),
    Some("web-0: not available yet: Ready for 0s of minReadySeconds 5")
)]
fn min_ready_seconds_edges(
    #[case] min_ready: Option<i32>,
    #[case] since: Option<&str>,
    #[case] want: Option<&str>,
) {
    // web-0 is the pod under test; the step 2→1 replaces web-1 (Ready for long), not web-0.
    let mut v = set_json("web", 2, Some(2), 0);
    v["spec"]["minReadySeconds"] = json!(min_ready);
    let mut p = pod_json("web", "web", 0, "a");
    p["status"]["conditions"][0]["lastTransitionTime"] = json!(since);
    let got = decide_one(
        &set_from(v),
        &[pod_from(p), pod_from(pod_json("web", "web", 1, "a"))],
    );
    match want {
        None => assert_eq!(got, step(2, 1, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::PodNotReady, d)),
    }
}

// ---- Paused, NotObserved, order ---------------------------------------------------------------------

#[rstest]
#[case("true", true)]
#[case("True", false)]
#[case("false", false)]
#[case("", false)]
fn paused_only_on_exact_true(#[case] value: &str, #[case] paused: bool) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!(value);
    let got = decide_one(&set_from(v), &pods("web", 5, 4));
    if paused {
        assert_eq!(
            got,
            blocked(Reason::Paused, "web: safe-rollout.dev/paused is \"true\"")
        );
    } else {
        assert_eq!(got, step(4, 3, "b"));
    }
}

#[test]
fn paused_comes_before_every_other_gate() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/step"] = json!("bogus");
    v["status"]["observedGeneration"] = json!(1);
    let got = decide_one(&set_from(v), &[]);
    assert!(
        matches!(
            got,
            Verdict::Blocked(Blocked {
                reason: Reason::Paused,
                ..
            })
        ),
        "{got:?}"
    );
}

#[test]
fn the_annotation_prefix_is_honoured() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["moco.cybozu.com/paused"] = json!("true");
    let s = set_from(v);
    assert_eq!(decide_one(&s, &pods("web", 5, 4)), step(4, 3, "b"));
    let moco = GateOptions {
        keys: Arc::new(Keys::new("moco.cybozu.com")),
        ..GateOptions::default()
    };
    let got = decide_with(&s, &pods("web", 5, 4), &[], &moco, now());
    assert!(matches!(
        got,
        Verdict::Blocked(Blocked {
            reason: Reason::Paused,
            ..
        })
    ));
}

#[rstest]
#[case::behind(1, 2, Some("web: observedGeneration 1 < generation 2"))]
#[case::equal(2, 2, None)]
#[case::ahead(3, 2, None)]
fn not_observed_edge(#[case] observed: i64, #[case] generation: i64, #[case] want: Option<&str>) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["status"]["observedGeneration"] = json!(observed);
    v["metadata"]["generation"] = json!(generation);
    // Not-observed comes before the pods: even with no pods at all it is the reason.
    let p = if want.is_some() {
        vec![]
    } else {
        pods("web", 5, 4)
    };
    let got = decide_one(&set_from(v), &p);
    match want {
        Some(d) => assert_eq!(got, blocked(Reason::NotObserved, d)),
        None => assert_eq!(got, step(4, 3, "b")),
    }
}

#[test]
fn no_update_revision_is_not_observed() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["status"]
        .as_object_mut()
        .expect("status")
        .remove("updateRevision");
    assert_eq!(
        decide_one(&set_from(v), &pods("web", 5, 4)),
        blocked(
            Reason::NotObserved,
            "web: no status.updateRevision reported yet"
        )
    );
}

#[test]
fn pods_are_checked_before_the_step_in_progress() {
    // web-4 on the old revision AND web-1 not ready: PodNotReady (gate order) names web-1.
    let s = set("web", 5, Some(4), 0);
    let mut p = pods("web", 5, 5);
    p[1].status.as_mut().expect("status").phase = Some("Pending".into());
    assert_eq!(
        decide_one(&s, &p),
        blocked(Reason::PodNotReady, "web-1: phase Pending")
    );
}

// ---- Settling ------------------------------------------------------------------------------------------

#[rstest]
#[case::no_delay(None, Some("2026-11-23T01:19:59Z"), None)]
#[case::never_stepped(Some("60"), None, None)]
#[case::one_second_short(
    Some("60"),
    Some("2026-11-23T01:19:01Z"),
    Some("web: 1s of initial-delay-seconds 60 left since the last step at 2026-11-23T01:19:01Z")
)]
#[case::exactly_elapsed(Some("60"), Some("2026-11-23T01:19:00Z"), None)]
#[case::zero(Some("0"), Some("2026-11-23T01:20:00Z"), None)]
fn settling_edge(
    #[case] delay: Option<&str>,
    #[case] last: Option<&str>,
    #[case] want: Option<&str>,
) {
    let mut v = set_json("web", 5, Some(4), 1);
    if let Some(d) = delay {
        v["metadata"]["annotations"]["safe-rollout.dev/initial-delay-seconds"] = json!(d);
    }
    if let Some(l) = last {
        v["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] = json!(l);
    }
    let got = decide_one(&set_from(v), &pods("web", 5, 4));
    match want {
        None => assert_eq!(got, step(4, 3, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::Settling, d)),
    }
}

// ---- step size and InvalidAnnotation ------------------------------------------------------------------

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

#[rstest]
#[case(
    "safe-rollout.dev/step",
    "abc",
    "safe-rollout.dev/step: \"abc\" is not a step size"
)]
#[case(
    "safe-rollout.dev/initial-delay-seconds",
    "-5",
    "safe-rollout.dev/initial-delay-seconds: \"-5\" is not a delay"
)]
#[case(
    "safe-rollout.dev/initial-delay-seconds",
    "1m",
    "safe-rollout.dev/initial-delay-seconds: \"1m\" is not a delay"
)]
fn invalid_annotations_block(#[case] key: &str, #[case] value: &str, #[case] starts: &str) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"][key] = json!(value);
    match decide_one(&set_from(v), &pods("web", 5, 4)) {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::InvalidAnnotation);
            assert!(b.detail.starts_with(starts), "{}", b.detail);
        }
        other => panic!("expected InvalidAnnotation, got {other:?}"),
    }
}

#[test]
fn unreadable_last_partition_update_blocks_only_with_a_delay() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] = json!("yesterday");
    assert_eq!(
        decide_one(&set_from(v.clone()), &pods("web", 5, 4)),
        step(4, 3, "b")
    );
    v["metadata"]["annotations"]["safe-rollout.dev/initial-delay-seconds"] = json!("30");
    match decide_one(&set_from(v), &pods("web", 5, 4)) {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::InvalidAnnotation);
            assert!(b.detail.contains("last-partition-update"), "{}", b.detail);
        }
        other => panic!("expected InvalidAnnotation, got {other:?}"),
    }
}

// ---- PdbBlocked -------------------------------------------------------------------------------------------

#[rstest]
#[case::selects_none_left(json!({"matchLabels": {"app": "web"}}), 0, true)]
#[case::selects_one_left(json!({"matchLabels": {"app": "web"}}), 1, false)]
#[case::other_app(json!({"matchLabels": {"app": "db"}}), 0, false)]
#[case::empty_selects_all(json!({}), 0, true)]
#[case::expression_in(json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]}), 0, true)]
#[case::expression_not_in(json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}), 0, false)]
#[case::null_selects_none(serde_json::Value::Null, 0, false)]
fn pdb_gate(#[case] selector: serde_json::Value, #[case] allowed: i32, #[case] blocks: bool) {
    let s = set("web", 5, Some(4), 1);
    let p = pods("web", 5, 4);
    let got = decide_with(&s, &p, &[pdb("budget", selector, allowed)], &opts(), now());
    if blocks {
        assert_eq!(
            got,
            blocked(
                Reason::PdbBlocked,
                &format!(
                    "PodDisruptionBudget budget: disruptionsAllowed {allowed} (currentHealthy 3, desiredHealthy 3)"
                )
            )
        );
    } else {
        assert_eq!(got, step(4, 3, "b"));
    }
}

#[test]
fn pdb_gate_can_be_switched_off_and_ignores_other_namespaces() {
    let s = set("web", 5, Some(4), 1);
    let p = pods("web", 5, 4);
    let zero = pdb("budget", json!({}), 0);
    let off = GateOptions {
        pdb_gate: false,
        ..GateOptions::default()
    };
    assert_eq!(
        decide_with(&s, &p, std::slice::from_ref(&zero), &off, now()),
        step(4, 3, "b")
    );
    let mut elsewhere = zero;
    elsewhere.metadata.namespace = Some("other".into());
    assert_eq!(
        decide_with(&s, &p, &[elsewhere], &opts(), now()),
        step(4, 3, "b")
    );
}

#[test]
fn pdb_without_status_fails_closed() {
    let s = set("web", 5, Some(4), 1);
    let mut b = pdb("budget", json!({}), 1);
    b.status = None;
    let got = decide_with(&s, &pods("web", 5, 4), &[b], &opts(), now());
    assert!(matches!(
        got,
        Verdict::Blocked(Blocked {
            reason: Reason::PdbBlocked,
            ..
        })
    ));
}

#[test]
fn reason_names_round_trip() {
    for r in Reason::ALL {
        assert_eq!(Reason::parse(r.as_str()), Some(r));
        assert_eq!(r.to_string(), r.as_str());
    }
    assert_eq!(Reason::parse("podnotready"), None);
}

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

#[test]
fn the_gate_list_runs_in_reason_order_and_marks_the_pod_gates() {
    let order: Vec<Reason> = gates::GATES.iter().map(|g| g.reason).collect();
    let per_set: Vec<Reason> = Reason::ALL
        .into_iter()
        .filter(|r| !matches!(r, Reason::Throttled | Reason::ApiError))
        .collect();
    assert_eq!(
        order, per_set,
        "GATES and Reason::ALL disagree on the order"
    );
    let pod_gates: Vec<Reason> = gates::GATES
        .iter()
        .filter(|g| g.reads == gates::Reads::Pods)
        .map(|g| g.reason)
        .collect();
    assert_eq!(
        pod_gates,
        [
            Reason::PodNotReady,
            Reason::StepInProgress,
            Reason::PdbBlocked,
            Reason::PrimaryNotMoved,
            Reason::ApprovalPending
        ]
    );
}

/// `gates::reads_list` names exactly the gates `list_gate_block` runs (the planner reuses a block of
/// these instead of running the list gates again for a set whose pods were not read).
#[test]
fn reads_list_is_true_for_the_gates_of_the_list_only() {
    let list = [
        Reason::Paused,
        Reason::InvalidAnnotation,
        Reason::NotObserved,
        Reason::Settling,
        Reason::GroupBusy,
    ];
    for reason in Reason::ALL {
        assert_eq!(
            gates::reads_list(reason),
            list.contains(&reason),
            "{reason:?}"
        );
    }
}
