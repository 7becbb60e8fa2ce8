//! Hand-made edges of the rule, one row each: defaults the API server applies, absent fields, every
//! annotation, and malformed objects (wrong types, a non-numeric partition) — which must give
//! Progressing or Degraded with a message, never a Lua or CEL error. Each row says what Argo CD (the
//! Lua; the stepper too when the object is a typed StatefulSet) and Flux report.

mod common;

use gitops_health::flux::FluxStatus;
use rstest::rstest;
use serde_json::{Value, json};

use common::{Renderings, fixture_set};

/// What Flux reports for a row: a status, or Unknown because its own `NestedInt64` pre-check of
/// `status.observedGeneration` / `metadata.generation` fails (before any expression runs).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Flux {
    Is(FluxStatus),
    PrecheckFails,
}

const STEPPING: &str = "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4";
const REV: &str = "web-7d7598bf9d";

/// 2-stepped-4 (partition 4, web-4 updated, all Ready) with `edits` applied: a JSON Pointer and the
/// new value, or `None` to remove the field.
fn edited(edits: &[(&str, Option<Value>)]) -> Value {
    let mut object = fixture_set("2-stepped-4");
    for (pointer, value) in edits {
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let parent = object
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{parent} exists"));
        let fields = parent.as_object_mut().expect("an object");
        match value {
            Some(v) => fields.insert(key.replace("~1", "/"), v.clone()),
            None => fields.remove(&key.replace("~1", "/")),
        };
    }
    object
}

/// The fixture's last pod rolled out and every status counter caught up (nothing staged).
fn complete() -> Vec<(&'static str, Option<Value>)> {
    vec![
        (
            "/spec/updateStrategy/rollingUpdate/partition",
            Some(json!(0)),
        ),
        ("/status/updatedReplicas", Some(json!(5))),
        ("/status/currentReplicas", Some(json!(5))),
        ("/status/currentRevision", Some(json!(REV))),
    ]
}

fn with(
    mut base: Vec<(&'static str, Option<Value>)>,
    more: &[(&'static str, Option<Value>)],
) -> Vec<(&'static str, Option<Value>)> {
    base.extend(more.iter().cloned());
    base
}

#[rstest]
// Defaults and absent fields (typed StatefulSets: the stepper agrees).
#[case::as_recorded(vec![], "Progressing", STEPPING, Flux::Is(FluxStatus::InProgress))]
#[case::no_annotations(vec![("/metadata/annotations", None)], "Progressing", STEPPING, Flux::Is(FluxStatus::InProgress))]
#[case::no_updated_replicas_is_0(vec![("/status/updatedReplicas", None)], "Progressing",
    "stepping: 0 of 5 pods on web-7d7598bf9d, partition 4", Flux::Is(FluxStatus::InProgress))]
#[case::no_rolling_update_is_partition_0(vec![("/spec/updateStrategy/rollingUpdate", None)], "Progressing",
    "rolling out: 1 of 5 pods on web-7d7598bf9d", Flux::Is(FluxStatus::InProgress))]
#[case::no_update_strategy_is_rolling_update(vec![("/spec/updateStrategy", None)], "Progressing",
    "rolling out: 1 of 5 pods on web-7d7598bf9d", Flux::Is(FluxStatus::InProgress))]
#[case::partition_above_replicas(vec![("/spec/updateStrategy/rollingUpdate/partition", Some(json!(7)))], "Progressing",
    "staged, waiting for the stepper: 1 of 5 pods on web-7d7598bf9d", Flux::Is(FluxStatus::InProgress))]
#[case::no_update_revision(vec![("/status/updateRevision", None)], "Progressing",
    "stepping: 1 of 5 pods on (none), partition 4", Flux::Is(FluxStatus::InProgress))]
#[case::rolled_back_revisions_equal_pods_left(vec![("/status/currentRevision", Some(json!(REV)))], "Progressing",
    STEPPING, Flux::Is(FluxStatus::InProgress))]
#[case::complete(
    complete(),
    "Healthy",
    "rollout complete: 5 pods on web-7d7598bf9d, all Ready",
    Flux::Is(FluxStatus::Current)
)]
#[case::zero_replicas(vec![("/spec/replicas", Some(json!(0))), ("/status/readyReplicas", Some(json!(0))),
    ("/status/updatedReplicas", Some(json!(0))), ("/status/currentRevision", Some(json!(REV)))],
    "Healthy", "rollout complete: 0 pods on web-7d7598bf9d, all Ready", Flux::Is(FluxStatus::Current))]
#[case::no_replicas_is_1(with(complete(), &[("/spec/replicas", None), ("/status/readyReplicas", Some(json!(1)))]),
    "Healthy", "rollout complete: 1 pods on web-7d7598bf9d, all Ready", Flux::Is(FluxStatus::Current))]
#[case::min_ready_without_available(with(complete(), &[("/spec/minReadySeconds", Some(json!(10))), ("/status/availableReplicas", None)]),
    "Progressing", "waiting for pods: 0 of 5 pods available (minReadySeconds 10)", Flux::Is(FluxStatus::InProgress))]
#[case::more_ready_than_replicas(with(complete(), &[("/status/readyReplicas", Some(json!(6)))]),
    "Progressing", "waiting for pods: 6 of 5 pods Ready", Flux::Is(FluxStatus::InProgress))]
#[case::status_empty(vec![("/status", Some(json!({})))], "Progressing",
    "waiting for the StatefulSet controller to observe generation 3 (observed none)", Flux::Is(FluxStatus::InProgress))]
#[case::no_generation(vec![("/metadata/generation", None)], "Progressing",
    "waiting for the StatefulSet controller to observe generation none (observed 3)", Flux::Is(FluxStatus::InProgress))]
// The annotations.
#[case::paused_empty_reason(vec![("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true"))), ("/metadata/annotations/safe-rollout.dev~1paused-reason", Some(json!("")))],
    "Suspended", "paused", Flux::Is(FluxStatus::InProgress))]
#[case::paused_complete_set(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true")))]),
    "Suspended", "paused", Flux::Is(FluxStatus::InProgress))]
#[case::blocked_reason_empty(vec![("/metadata/annotations/safe-rollout.dev~1blocked-reason", Some(json!("")))], "Progressing", STEPPING, Flux::Is(FluxStatus::InProgress))]
#[case::degraded_complete_set(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1degraded-reason", Some(json!("StepRejected: denied")))]),
    "Degraded", "StepRejected: denied", Flux::Is(FluxStatus::Failed))]
#[case::forced_ignores_annotations(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1force-rolling-update", Some(json!("true"))),
    ("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true"))), ("/metadata/annotations/safe-rollout.dev~1degraded-reason", Some(json!("x")))]),
    "Healthy", "unguarded (force-rolling-update): 5 of 5 pods Ready", Flux::Is(FluxStatus::Current))]
#[case::forced_only_when_true(vec![("/metadata/annotations/safe-rollout.dev~1force-rolling-update", Some(json!("yes")))], "Progressing", STEPPING, Flux::Is(FluxStatus::InProgress))]
#[case::on_delete_not_ready(vec![("/spec/updateStrategy", Some(json!({"type": "OnDelete"}))), ("/status/readyReplicas", Some(json!(4)))],
    "Progressing", "unguarded (OnDelete): 4 of 5 pods Ready", Flux::Is(FluxStatus::InProgress))]
#[case::on_delete_staged_is_healthy(vec![("/spec/updateStrategy", Some(json!({"type": "OnDelete"})))],
    "Healthy", "unguarded (OnDelete): 5 of 5 pods Ready", Flux::Is(FluxStatus::Current))]
#[case::unknown_strategy(vec![("/spec/updateStrategy", Some(json!({"type": "Canary"})))],
    "Healthy", "unguarded (updateStrategy Canary): 5 of 5 pods Ready", Flux::Is(FluxStatus::Current))]
fn typed_edge(
    #[case] edits: Vec<(&str, Option<Value>)>,
    #[case] status: &str,
    #[case] message: &str,
    #[case] flux: Flux,
) {
    assert_row(&edits, status, message, flux, true);
}

#[rstest]
// Malformed objects (not typed StatefulSets; the API server never stores them).
#[case::partition_string(vec![("/spec/updateStrategy/rollingUpdate/partition", Some(json!("3")))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy.rollingUpdate.partition is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::partition_fraction(vec![("/spec/updateStrategy/rollingUpdate/partition", Some(json!(1.5)))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy.rollingUpdate.partition is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::partition_object(vec![("/spec/updateStrategy/rollingUpdate/partition", Some(json!({"n": 3})))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy.rollingUpdate.partition is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::replicas_string(vec![("/spec/replicas", Some(json!("five")))], "Degraded",
    "unreadable StatefulSet: spec.replicas is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::ready_string(vec![("/status/readyReplicas", Some(json!("5")))], "Degraded",
    "unreadable StatefulSet: status.readyReplicas is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::min_ready_bool(vec![("/spec/minReadySeconds", Some(json!(true)))], "Degraded",
    "unreadable StatefulSet: spec.minReadySeconds is not an integer", Flux::Is(FluxStatus::Failed))]
#[case::revision_number(vec![("/status/updateRevision", Some(json!(7)))], "Degraded",
    "unreadable StatefulSet: status.updateRevision is not a string", Flux::Is(FluxStatus::Failed))]
#[case::strategy_string(vec![("/spec/updateStrategy", Some(json!("RollingUpdate")))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy is not an object", Flux::Is(FluxStatus::Failed))]
#[case::strategy_type_number(vec![("/spec/updateStrategy/type", Some(json!(1)))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy.type is not a string", Flux::Is(FluxStatus::Failed))]
#[case::rolling_update_list(vec![("/spec/updateStrategy/rollingUpdate", Some(json!([{"partition": 4}])))], "Degraded",
    "unreadable StatefulSet: spec.updateStrategy.rollingUpdate is not an object", Flux::Is(FluxStatus::Failed))]
#[case::spec_string(vec![("/spec", Some(json!("web")))], "Degraded",
    "unreadable StatefulSet: spec is not an object", Flux::Is(FluxStatus::Failed))]
#[case::annotations_string(vec![("/metadata/annotations", Some(json!("paused")))], "Degraded",
    "unreadable StatefulSet: metadata.annotations is not an object", Flux::Is(FluxStatus::Failed))]
#[case::annotation_bool(vec![("/metadata/annotations/safe-rollout.dev~1paused", Some(json!(true)))], "Degraded",
    "unreadable StatefulSet: metadata.annotations[safe-rollout.dev/paused] is not a string", Flux::Is(FluxStatus::Failed))]
#[case::malformed_but_not_observed(vec![("/spec/replicas", Some(json!("five"))), ("/metadata/generation", Some(json!(9)))],
    "Progressing", "waiting for the StatefulSet controller to observe generation 9 (observed 3)", Flux::Is(FluxStatus::InProgress))]
// Malformed where Flux's own pre-check fails first (Unknown in Flux, whatever the expressions say).
#[case::observed_generation_string(vec![("/status/observedGeneration", Some(json!("3")))], "Degraded",
    "unreadable StatefulSet: status.observedGeneration is not an integer", Flux::PrecheckFails)]
#[case::generation_fraction(vec![("/metadata/generation", Some(json!(3.5)))], "Degraded",
    "unreadable StatefulSet: metadata.generation is not an integer", Flux::PrecheckFails)]
#[case::status_string(vec![("/status", Some(json!("ok")))], "Degraded",
    "unreadable StatefulSet: status is not an object", Flux::PrecheckFails)]
fn malformed_edge(
    #[case] edits: Vec<(&str, Option<Value>)>,
    #[case] status: &str,
    #[case] message: &str,
    #[case] flux: Flux,
) {
    assert_row(&edits, status, message, flux, false);
}

/// The row's object checked by all three renderings; what Argo CD and Flux report, and whether it
/// is a typed StatefulSet (which the stepper then judged too).
fn assert_row(
    edits: &[(&str, Option<Value>)],
    status: &str,
    message: &str,
    flux: Flux,
    typed: bool,
) {
    let object = edited(edits);
    let agreed = Renderings::shipped().check(&format!("{edits:?}"), &object);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        (status, message)
    );
    match flux {
        Flux::Is(want) => assert_eq!(agreed.flux, Ok(want)),
        Flux::PrecheckFails => assert!(agreed.flux.is_err(), "{:?}", agreed.flux),
    }
    assert_eq!(agreed.typed, typed, "a typed StatefulSet");
}

/// No `status` at all (never served by the API server: it writes `status` on create): the Lua and
/// the stepper say Progressing; Flux's CEL cannot name an absent top-level field (`has(status)`
/// fails too, Flux's docs say), so Flux reports Unknown and waits, as it would for InProgress.
#[test]
fn no_status_at_all() {
    let object = edited(&[("/status", None)]);
    let agreed = Renderings::shipped().check("no status", &object);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        (
            "Progressing",
            "waiting for the StatefulSet controller: no status yet"
        )
    );
    assert!(agreed.typed);
    let err = agreed.flux.expect_err("an absent variable fails in CEL");
    assert!(err.contains("status"), "{err}");
}

/// An explicit `null` (which the API server never serves for the fields read: they are omitted when
/// unset) is nil, hence absent, to the Lua and the stepper, but a value of the wrong type to the CEL,
/// which reports Failed: the one shape where Flux and Argo CD differ, documented in docs/gitops.md.
#[test]
fn an_explicit_null_is_absent_to_lua_and_a_wrong_type_to_cel() {
    let object = edited(&[(
        "/spec/updateStrategy/rollingUpdate/partition",
        Some(Value::Null),
    )]);
    let r = Renderings::shipped();
    let lua = r.lua.health(&object).expect("the Lua runs");
    assert_eq!(
        (lua.status.as_str(), lua.message.as_str()),
        ("Progressing", "rolling out: 1 of 5 pods on web-7d7598bf9d")
    );
    assert_eq!(
        r.flux.status(&object).expect("no error"),
        FluxStatus::Failed
    );
}
