//! Hand-made edges of the rule, one row each, on shapes the API server can store: defaults it
//! applies, absent fields (the counters it omits when 0, a status not written yet), a generation not
//! observed yet, empty annotations, every annotation, and the guarded mark. Each row says what Argo CD
//! (the Lua, and the stepper) and Flux report. Fields of the wrong type are not rows: the API server's
//! schema refuses them, and the checks trust it as Argo CD's and Flux's own checks do.

mod common;

use gitops_health::flux::FluxStatus;
use rstest::rstest;
use serde_json::{Value, json};

use common::{Renderings, fixture_set, marked};

const STEPPING: &str = "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4";
const REV: &str = "web-7d7598bf9d";
const WAITING: &str = "approval of web-3 on web-7d7598bf9d asked at 2026-11-26T15:00:00Z, deadline 2026-11-26T15:10:00Z";
const IN_PROGRESS: FluxStatus = FluxStatus::InProgress;
const CURRENT: FluxStatus = FluxStatus::Current;
const FAILED: FluxStatus = FluxStatus::Failed;
const GUARDED_PTR: &str = "/metadata/annotations/safe-rollout.dev~1guarded";

/// 2-stepped-4 (partition 4, web-4 updated, all Ready) marked by the policy, with `edits` applied: a
/// JSON Pointer and the new value, or `None` to remove the field.
fn edited(edits: &[(&str, Option<Value>)]) -> Value {
    let mut object = marked(fixture_set("2-stepped-4"));
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
// Defaults and absent fields, on the marked set.
#[case::as_recorded(vec![], "Progressing", STEPPING, IN_PROGRESS)]
#[case::no_annotations_no_mark(vec![("/metadata/annotations", None)], "Healthy",
    "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready", CURRENT)]
#[case::no_updated_replicas_is_0(vec![("/status/updatedReplicas", None)], "Progressing",
    "stepping: 0 of 5 pods on web-7d7598bf9d, partition 4", IN_PROGRESS)]
#[case::no_rolling_update_is_partition_0(vec![("/spec/updateStrategy/rollingUpdate", None)], "Progressing",
    "rolling out: 1 of 5 pods on web-7d7598bf9d", IN_PROGRESS)]
#[case::no_update_strategy_is_rolling_update(vec![("/spec/updateStrategy", None)], "Progressing",
    "rolling out: 1 of 5 pods on web-7d7598bf9d", IN_PROGRESS)]
#[case::partition_above_replicas(vec![("/spec/updateStrategy/rollingUpdate/partition", Some(json!(7)))], "Progressing",
    "staged, waiting for the stepper: 1 of 5 pods on web-7d7598bf9d", IN_PROGRESS)]
#[case::no_update_revision(vec![("/status/updateRevision", None)], "Progressing",
    "stepping: 1 of 5 pods on (none), partition 4", IN_PROGRESS)]
#[case::rolled_back_revisions_equal_pods_left(vec![("/status/currentRevision", Some(json!(REV)))], "Progressing",
    STEPPING, IN_PROGRESS)]
#[case::complete(
    complete(),
    "Healthy",
    "rollout complete: 5 pods on web-7d7598bf9d, all Ready",
    CURRENT
)]
#[case::zero_replicas(vec![("/spec/replicas", Some(json!(0))), ("/status/readyReplicas", Some(json!(0))),
    ("/status/updatedReplicas", Some(json!(0))), ("/status/currentRevision", Some(json!(REV)))],
    "Healthy", "rollout complete: 0 pods on web-7d7598bf9d, all Ready", CURRENT)]
#[case::no_replicas_is_1(with(complete(), &[("/spec/replicas", None), ("/status/readyReplicas", Some(json!(1)))]),
    "Healthy", "rollout complete: 1 pods on web-7d7598bf9d, all Ready", CURRENT)]
#[case::min_ready_without_available(with(complete(), &[("/spec/minReadySeconds", Some(json!(10))), ("/status/availableReplicas", None)]),
    "Progressing", "waiting for pods: 0 of 5 pods available (minReadySeconds 10)", IN_PROGRESS)]
#[case::more_ready_than_replicas(with(complete(), &[("/status/readyReplicas", Some(json!(6)))]),
    "Progressing", "waiting for pods: 6 of 5 pods Ready", IN_PROGRESS)]
#[case::status_empty(vec![("/status", Some(json!({})))], "Progressing",
    "waiting for the StatefulSet controller to observe generation 3 (observed none)", IN_PROGRESS)]
#[case::no_generation(vec![("/metadata/generation", None)], "Progressing",
    "waiting for the StatefulSet controller to observe generation none (observed 3)", IN_PROGRESS)]
// The annotations.
#[case::paused_empty_reason(vec![("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true"))), ("/metadata/annotations/safe-rollout.dev~1paused-reason", Some(json!("")))],
    "Suspended", "paused", IN_PROGRESS)]
#[case::paused_complete_set(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true")))]),
    "Suspended", "paused", IN_PROGRESS)]
#[case::blocked_reason_empty(vec![("/metadata/annotations/safe-rollout.dev~1blocked-reason", Some(json!("")))], "Progressing", STEPPING, IN_PROGRESS)]
#[case::approval_pending(vec![("/metadata/annotations/safe-rollout.dev~1blocked-reason", Some(json!("ApprovalPending"))),
    ("/metadata/annotations/safe-rollout.dev~1approval-pending", Some(json!(WAITING)))], "Progressing",
    "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4; next step blocked: ApprovalPending: approval of web-3 on web-7d7598bf9d asked at 2026-11-26T15:00:00Z, deadline 2026-11-26T15:10:00Z",
    IN_PROGRESS)]
#[case::approval_pending_empty(vec![("/metadata/annotations/safe-rollout.dev~1blocked-reason", Some(json!("ApprovalPending"))),
    ("/metadata/annotations/safe-rollout.dev~1approval-pending", Some(json!("")))], "Progressing",
    "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4; next step blocked: ApprovalPending", IN_PROGRESS)]
#[case::approval_pending_without_a_block(vec![("/metadata/annotations/safe-rollout.dev~1approval-pending", Some(json!(WAITING)))],
    "Progressing", STEPPING, IN_PROGRESS)]
#[case::degraded_complete_set(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1degraded-reason", Some(json!("StepRejected: denied")))]),
    "Degraded", "StepRejected: denied", FAILED)]
#[case::forced_ignores_annotations(with(complete(), &[("/metadata/annotations/safe-rollout.dev~1force-rolling-update", Some(json!("true"))),
    ("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true"))), ("/metadata/annotations/safe-rollout.dev~1degraded-reason", Some(json!("x")))]),
    "Healthy", "unguarded (force-rolling-update): 5 of 5 pods Ready", CURRENT)]
#[case::forced_only_when_true(vec![("/metadata/annotations/safe-rollout.dev~1force-rolling-update", Some(json!("yes")))], "Progressing", STEPPING, IN_PROGRESS)]
// The guarded mark: only "true" marks a set; without it, the built-in rule and no annotation counts.
#[case::unmarked_ignores_annotations(vec![(GUARDED_PTR, None), ("/metadata/annotations/safe-rollout.dev~1paused", Some(json!("true"))),
    ("/metadata/annotations/safe-rollout.dev~1degraded-reason", Some(json!("StuckPod: web-1")))],
    "Healthy", "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready", CURRENT)]
#[case::mark_only_when_true(vec![(GUARDED_PTR, Some(json!("True")))], "Healthy",
    "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready", CURRENT)]
#[case::mark_empty(vec![(GUARDED_PTR, Some(json!("")))], "Healthy",
    "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready", CURRENT)]
#[case::unmarked_pods_above_partition_not_updated(vec![(GUARDED_PTR, None), ("/spec/updateStrategy/rollingUpdate/partition", Some(json!(2)))],
    "Progressing", "unguarded (no safe-rollout.dev/guarded mark): 1 of 3 pods on web-7d7598bf9d", IN_PROGRESS)]
#[case::unmarked_not_ready(vec![(GUARDED_PTR, None), ("/status/readyReplicas", Some(json!(3)))],
    "Progressing", "unguarded (no safe-rollout.dev/guarded mark): 3 of 5 pods Ready", IN_PROGRESS)]
#[case::unmarked_not_observed(vec![(GUARDED_PTR, None), ("/metadata/generation", Some(json!(4)))],
    "Progressing", "waiting for the StatefulSet controller to observe generation 4 (observed 3)", IN_PROGRESS)]
#[case::forced_wins_over_the_mark(vec![("/metadata/annotations/safe-rollout.dev~1force-rolling-update", Some(json!("true"))),
    ("/spec/updateStrategy/rollingUpdate/partition", Some(json!(0)))],
    "Progressing", "unguarded (force-rolling-update): 1 of 5 pods on web-7d7598bf9d", IN_PROGRESS)]
#[case::on_delete_not_ready(vec![("/spec/updateStrategy", Some(json!({"type": "OnDelete"}))), ("/status/readyReplicas", Some(json!(4)))],
    "Progressing", "unguarded (OnDelete): 4 of 5 pods Ready", IN_PROGRESS)]
#[case::on_delete_staged_is_healthy(vec![("/spec/updateStrategy", Some(json!({"type": "OnDelete"})))],
    "Healthy", "unguarded (OnDelete): 5 of 5 pods Ready", CURRENT)]
#[case::unknown_strategy(vec![("/spec/updateStrategy", Some(json!({"type": "Canary"})))],
    "Healthy", "unguarded (updateStrategy Canary): 5 of 5 pods Ready", CURRENT)]
fn edge(
    #[case] edits: Vec<(&str, Option<Value>)>,
    #[case] status: &str,
    #[case] message: &str,
    #[case] flux: FluxStatus,
) {
    let object = edited(&edits);
    let agreed = Renderings::shipped().check(&format!("{edits:?}"), &object);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        (status, message)
    );
    assert_eq!(agreed.flux, Ok(flux));
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
    let err = agreed.flux.expect_err("an absent variable fails in CEL");
    assert!(err.contains("status"), "{err}");
}
