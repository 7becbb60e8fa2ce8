//! `rollout::health`: the rollout health GitOps tools should report, row by row, on the real fixtures
//! and on edits of them (the `gitops-health` crate checks the Lua and CEL renderings against it).

use std::sync::Arc;

use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::rollout::health::{Health, HealthStatus, health};

use crate::common::{REV_NEW, raw_fixture_body};

/// The StatefulSet `demo/web` of fixture moment `moment`, as JSON, as captured: before the policy
/// wrote the guarded mark.
fn captured(moment: &str) -> Value {
    let list: Value =
        serde_json::from_slice(&raw_fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    list["items"][0].clone()
}

/// [`captured`] with the guarded mark, as the policy writes it when it stages the partition.
fn fixture(moment: &str) -> Value {
    annotate(captured(moment), &[("guarded", "true")])
}

const UNMARKED: &str = "unguarded (no safe-rollout.dev/guarded mark)";

/// `object`'s health under the default prefix.
fn health_of(object: &Value) -> Health {
    let set = serde_json::from_value(object.clone()).expect("a StatefulSet");
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    health(&set, &config)
}

fn annotate(mut object: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, v) in pairs {
        object["metadata"]["annotations"][format!("safe-rollout.dev/{k}")] = json!(v);
    }
    object
}

fn edit(mut object: Value, f: impl FnOnce(&mut Value)) -> Value {
    f(&mut object);
    object
}

#[rstest]
#[case::staged(fixture("1-staged"), HealthStatus::Progressing,
    format!("staged, waiting for the stepper: 0 of 5 pods on {REV_NEW}"))]
#[case::stepped(fixture("2-stepped-4"), HealthStatus::Progressing,
    format!("stepping: 1 of 5 pods on {REV_NEW}, partition 4"))]
#[case::blocked(annotate(fixture("3-web1-notready"), &[("blocked-reason", "PodNotReady")]),
    HealthStatus::Progressing,
    format!("stepping: 1 of 5 pods on {REV_NEW}, partition 4; next step blocked: PodNotReady"))]
#[case::complete(fixture("4-complete"), HealthStatus::Healthy,
    format!("rollout complete: 5 pods on {REV_NEW}, all Ready"))]
#[case::paused(annotate(fixture("2-stepped-4"), &[("paused", "true"), ("paused-reason", "canary: 1 pod (pause point 1)")]),
    HealthStatus::Suspended, "canary: 1 pod (pause point 1)".to_string())]
#[case::paused_without_reason(annotate(fixture("2-stepped-4"), &[("paused", "true")]),
    HealthStatus::Suspended, "paused".to_string())]
#[case::paused_is_only_true(annotate(fixture("2-stepped-4"), &[("paused", "True")]),
    HealthStatus::Progressing, format!("stepping: 1 of 5 pods on {REV_NEW}, partition 4"))]
#[case::degraded_wins_over_paused(
    annotate(fixture("2-stepped-4"), &[("paused", "true"), ("degraded-reason", "FailureLimit: 3 failed checks")]),
    HealthStatus::Degraded, "FailureLimit: 3 failed checks".to_string())]
#[case::any_degraded_value(annotate(fixture("4-complete"), &[("degraded-reason", "StepRejected: denied")]),
    HealthStatus::Degraded, "StepRejected: denied".to_string())]
#[case::empty_degraded_is_absent(annotate(fixture("4-complete"), &[("degraded-reason", "")]),
    HealthStatus::Healthy, format!("rollout complete: 5 pods on {REV_NEW}, all Ready"))]
#[case::not_observed(edit(fixture("2-stepped-4"), |o| o["metadata"]["generation"] = json!(4)),
    HealthStatus::Progressing,
    "waiting for the StatefulSet controller to observe generation 4 (observed 3)".to_string())]
#[case::never_observed(edit(fixture("1-staged"), |o| o["status"] = json!({"replicas": 0})),
    HealthStatus::Progressing,
    "waiting for the StatefulSet controller to observe generation 2 (observed none)".to_string())]
#[case::no_status(edit(fixture("1-staged"), |o| { o.as_object_mut().unwrap().remove("status"); }),
    HealthStatus::Progressing, "waiting for the StatefulSet controller: no status yet".to_string())]
#[case::not_observed_wins_over_degraded(
    edit(annotate(fixture("2-stepped-4"), &[("degraded-reason", "StuckPod: web-4")]), |o| o["metadata"]["generation"] = json!(9)),
    HealthStatus::Progressing,
    "waiting for the StatefulSet controller to observe generation 9 (observed 3)".to_string())]
#[case::rolling_at_partition_0(
    edit(fixture("2-stepped-4"), |o| o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0)),
    HealthStatus::Progressing, format!("rolling out: 1 of 5 pods on {REV_NEW}"))]
#[case::blocked_reason_only_while_stepping(
    annotate(edit(fixture("2-stepped-4"), |o| o["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"})), &[("blocked-reason", "PodNotReady")]),
    HealthStatus::Progressing, format!("rolling out: 1 of 5 pods on {REV_NEW}"))]
#[case::not_ready_after_rollout(
    edit(fixture("4-complete"), |o| o["status"]["readyReplicas"] = json!(4)),
    HealthStatus::Progressing, "waiting for pods: 4 of 5 pods Ready".to_string())]
#[case::not_available_with_min_ready(
    edit(fixture("4-complete"), |o| { o["spec"]["minReadySeconds"] = json!(30); o["status"]["availableReplicas"] = json!(3); }),
    HealthStatus::Progressing, "waiting for pods: 3 of 5 pods available (minReadySeconds 30)".to_string())]
#[case::available_ignored_without_min_ready(
    edit(fixture("4-complete"), |o| o["status"]["availableReplicas"] = json!(3)),
    HealthStatus::Healthy, format!("rollout complete: 5 pods on {REV_NEW}, all Ready"))]
#[case::on_delete_is_unguarded(
    annotate(edit(fixture("1-staged"), |o| o["spec"]["updateStrategy"] = json!({"type": "OnDelete"})), &[("paused", "true")]),
    HealthStatus::Healthy, "unguarded (OnDelete): 5 of 5 pods Ready".to_string())]
#[case::forced_rolling(
    annotate(edit(fixture("2-stepped-4"), |o| o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0)), &[("force-rolling-update", "true"), ("degraded-reason", "StuckPod: x")]),
    HealthStatus::Progressing, format!("unguarded (force-rolling-update): 1 of 5 pods on {REV_NEW}"))]
#[case::forced_not_ready(
    annotate(fixture("3-web1-notready"), &[("force-rolling-update", "true")]),
    HealthStatus::Progressing, "unguarded (force-rolling-update): 4 of 5 pods Ready".to_string())]
#[case::forced_done_as_the_builtin_rule(
    annotate(fixture("2-stepped-4"), &[("force-rolling-update", "true")]),
    HealthStatus::Healthy, "unguarded (force-rolling-update): 5 of 5 pods Ready".to_string())]
#[case::unmarked_staged_is_the_builtin_rule(captured("1-staged"), HealthStatus::Healthy,
    format!("{UNMARKED}: 5 of 5 pods Ready"))]
#[case::unmarked_hand_partition(
    edit(captured("4-complete"), |o| o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3)),
    HealthStatus::Healthy, format!("{UNMARKED}: 5 of 5 pods Ready"))]
#[case::unmarked_pods_above_partition_pending(
    edit(captured("2-stepped-4"), |o| o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3)),
    HealthStatus::Progressing, format!("{UNMARKED}: 1 of 2 pods on {REV_NEW}"))]
#[case::unmarked_not_ready(captured("3-web1-notready"), HealthStatus::Progressing,
    format!("{UNMARKED}: 4 of 5 pods Ready"))]
#[case::unmarked_ignores_paused_and_degraded(
    annotate(captured("2-stepped-4"), &[("paused", "true"), ("degraded-reason", "StuckPod: x")]),
    HealthStatus::Healthy, format!("{UNMARKED}: 5 of 5 pods Ready"))]
#[case::mark_is_only_true(annotate(captured("1-staged"), &[("guarded", "yes")]), HealthStatus::Healthy,
    format!("{UNMARKED}: 5 of 5 pods Ready"))]
#[case::replicas_default_to_1(
    edit(fixture("4-complete"), |o| { o["spec"].as_object_mut().unwrap().remove("replicas"); o["status"]["readyReplicas"] = json!(1); o["status"]["updatedReplicas"] = json!(1); }),
    HealthStatus::Healthy, format!("rollout complete: 1 pods on {REV_NEW}, all Ready"))]
fn health_row(#[case] object: Value, #[case] status: HealthStatus, #[case] message: String) {
    assert_eq!(health_of(&object), Health { status, message });
}

#[test]
fn the_prefix_is_the_configs() {
    let object = json!({
        "metadata": {"name": "db", "generation": 1,
                     "annotations": {"moco.cybozu.com/paused": "true", "moco.cybozu.com/guarded": "true",
                                     "safe-rollout.dev/degraded-reason": "x", "safe-rollout.dev/guarded": "true"}},
        "spec": {"replicas": 1, "selector": {}, "template": {}, "serviceName": "db"},
        "status": {"replicas": 1, "observedGeneration": 1, "readyReplicas": 1, "updatedReplicas": 1,
                   "currentRevision": "a", "updateRevision": "a"}
    });
    let set = serde_json::from_value(object).expect("set");
    let moco = SetConfig::parse(&set, &Arc::new(Keys::new("moco.cybozu.com")));
    assert_eq!(health(&set, &moco).status, HealthStatus::Suspended);
    let default = SetConfig::parse(&set, &Arc::new(Keys::default()));
    assert_eq!(health(&set, &default).status, HealthStatus::Degraded);
}

#[test]
fn display_is_status_then_message() {
    let h = health_of(&fixture("4-complete"));
    assert_eq!(
        h.to_string(),
        format!("Healthy: rollout complete: 5 pods on {REV_NEW}, all Ready")
    );
}
