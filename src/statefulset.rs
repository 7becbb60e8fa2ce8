//! Small predicates over a typed StatefulSet, used by the stepper (the policy reads the JSON: `view.rs`).
//!
//! Each follows DESIGN.md's vocabulary; where a rule comes from Kubernetes, the doc comment names the
//! source. All are total: absent fields take the Kubernetes defaults, never panic.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::annotations::{self, TRUE};

/// `spec.replicas`, or 1 when absent (Kubernetes API defaulting for `apps/v1` StatefulSets). A count of pods.
pub fn replicas(sts: &StatefulSet) -> i32 {
    sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

/// `spec.updateStrategy.rollingUpdate.partition`, `None` when absent (Kubernetes then treats it as 0).
pub fn partition(sts: &StatefulSet) -> Option<i32> {
    sts.spec
        .as_ref()?
        .update_strategy
        .as_ref()?
        .rolling_update
        .as_ref()?
        .partition
}

/// `spec.minReadySeconds` in seconds, 0 when absent.
pub fn min_ready_seconds(sts: &StatefulSet) -> i32 {
    sts.spec
        .as_ref()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0)
}

/// The annotation `<prefix>/<name>`, if present.
pub fn annotation<'a>(sts: &'a StatefulSet, prefix: &str, name: &str) -> Option<&'a str> {
    sts.metadata
        .annotations
        .as_ref()?
        .get(&annotations::key(prefix, name))
        .map(String::as_str)
}

/// True when the annotation `<prefix>/<name>` is exactly `"true"`.
pub fn is_annotation_true(sts: &StatefulSet, prefix: &str, name: &str) -> bool {
    annotation(sts, prefix, name) == Some(TRUE)
}

/// True when `spec.updateStrategy.type` is `OnDelete`: the controller never replaces pods by itself, so
/// there is nothing to stage (Kubernetes `OnDeleteStatefulSetStrategyType`).
pub fn is_on_delete(sts: &StatefulSet) -> bool {
    update_strategy_type(sts) == Some("OnDelete")
}

/// True when `spec.updateStrategy.type` is `RollingUpdate` or absent (the Kubernetes default).
pub fn is_rolling_update(sts: &StatefulSet) -> bool {
    matches!(update_strategy_type(sts), None | Some("RollingUpdate"))
}

fn update_strategy_type(sts: &StatefulSet) -> Option<&str> {
    sts.spec
        .as_ref()?
        .update_strategy
        .as_ref()?
        .type_
        .as_deref()
}

/// True when annotated `<prefix>/force-rolling-update: "true"`: native, ungated rolling update.
pub fn is_forced(sts: &StatefulSet, prefix: &str) -> bool {
    is_annotation_true(sts, prefix, annotations::FORCE_ROLLING_UPDATE)
}

/// True for a set the policy and stepper manage: `RollingUpdate` (or absent) and not forced.
pub fn is_guarded(sts: &StatefulSet, prefix: &str) -> bool {
    is_rolling_update(sts) && !is_forced(sts, prefix)
}

/// True when the controller has seen the current spec and every replica is Ready:
/// `status.observedGeneration == metadata.generation` and `status.readyReplicas == spec.replicas`, and also
/// `status.availableReplicas == spec.replicas` when `minReadySeconds > 0`. No status: false.
pub fn is_fully_ready(sts: &StatefulSet) -> bool {
    let Some(status) = sts.status.as_ref() else {
        return false;
    };
    let want = replicas(sts);
    let observed = status.observed_generation.is_some()
        && status.observed_generation == sts.metadata.generation;
    let ready = status.ready_replicas.unwrap_or(0) == want;
    let available = min_ready_seconds(sts) == 0 || status.available_replicas.unwrap_or(0) == want;
    observed && ready && available
}

/// True when some pod of the set ever became Ready: the sticky `<prefix>/initialized: "true"` annotation,
/// or `status.readyReplicas >= 1`. A set that was never initialized is not gated, so a broken first
/// deployment can be fixed by a plain re-apply.
pub fn is_initialized(sts: &StatefulSet, prefix: &str) -> bool {
    is_annotation_true(sts, prefix, annotations::INITIALIZED)
        || sts
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            >= 1
}

/// True when an update is staged: `status.updateRevision != status.currentRevision`, or
/// `status.updatedReplicas < spec.replicas` (a rollback leaves equal revisions with pods still to replace).
/// No status: false (the controller has not reported yet).
pub fn has_staged_update(sts: &StatefulSet) -> bool {
    let Some(status) = sts.status.as_ref() else {
        return false;
    };
    status.update_revision != status.current_revision
        || status.updated_replicas.unwrap_or(0) < replicas(sts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sts(v: serde_json::Value) -> StatefulSet {
        serde_json::from_value(v).expect("valid StatefulSet")
    }

    #[test]
    fn defaults_apply_when_fields_are_absent() {
        let s = sts(json!({"metadata": {"name": "web"}}));
        assert_eq!(replicas(&s), 1);
        assert_eq!(partition(&s), None);
        assert!(is_rolling_update(&s));
        assert!(!is_on_delete(&s));
        assert!(is_guarded(&s, "safe-rollout.dev"));
        assert!(!is_fully_ready(&s));
        assert!(!is_initialized(&s, "safe-rollout.dev"));
        assert!(!has_staged_update(&s));
    }

    #[test]
    fn only_the_exact_string_true_forces() {
        for (value, forced) in [("true", true), ("True", false), ("1", false), ("", false)] {
            let s = sts(json!({"metadata": {"name": "web", "annotations": {
                "safe-rollout.dev/force-rolling-update": value}}}));
            assert_eq!(is_forced(&s, "safe-rollout.dev"), forced, "{value:?}");
            assert_eq!(is_guarded(&s, "safe-rollout.dev"), !forced, "{value:?}");
            assert!(!is_forced(&s, "moco.cybozu.com"));
        }
    }

    #[test]
    fn on_delete_is_not_guarded() {
        let s = sts(json!({"metadata": {"name": "web"}, "spec": {
            "selector": {}, "serviceName": "web", "template": {},
            "updateStrategy": {"type": "OnDelete"}}}));
        assert!(is_on_delete(&s));
        assert!(!is_guarded(&s, "safe-rollout.dev"));
    }

    #[test]
    fn fully_ready_needs_observed_generation_ready_and_available() {
        let base = json!({"metadata": {"name": "web", "generation": 2}, "spec": {
            "replicas": 3, "selector": {}, "serviceName": "web", "template": {}},
            "status": {"replicas": 3, "observedGeneration": 2, "readyReplicas": 3, "availableReplicas": 1}});
        assert!(is_fully_ready(&sts(base.clone())));
        let mut stale = base.clone();
        stale["status"]["observedGeneration"] = json!(1);
        assert!(!is_fully_ready(&sts(stale)));
        let mut not_ready = base.clone();
        not_ready["status"]["readyReplicas"] = json!(2);
        assert!(!is_fully_ready(&sts(not_ready)));
        let mut min_ready = base.clone();
        min_ready["spec"]["minReadySeconds"] = json!(10);
        assert!(!is_fully_ready(&sts(min_ready.clone())));
        min_ready["status"]["availableReplicas"] = json!(3);
        assert!(is_fully_ready(&sts(min_ready)));
    }

    #[test]
    fn staged_update_includes_rollback_with_equal_revisions() {
        let s = sts(json!({"metadata": {"name": "web"}, "spec": {
            "replicas": 3, "selector": {}, "serviceName": "web", "template": {}},
            "status": {"replicas": 3, "currentRevision": "a", "updateRevision": "a", "updatedReplicas": 2}}));
        assert!(has_staged_update(&s));
        let s = sts(json!({"metadata": {"name": "web"}, "spec": {
            "replicas": 3, "selector": {}, "serviceName": "web", "template": {}},
            "status": {"replicas": 3, "currentRevision": "a", "updateRevision": "b", "updatedReplicas": 3}}));
        assert!(has_staged_update(&s));
        let s = sts(json!({"metadata": {"name": "web"}, "spec": {
            "replicas": 3, "selector": {}, "serviceName": "web", "template": {}},
            "status": {"replicas": 3, "currentRevision": "b", "updateRevision": "b", "updatedReplicas": 3}}));
        assert!(!has_staged_update(&s));
    }

    #[test]
    fn initialized_by_annotation_or_one_ready_replica() {
        let s =
            sts(json!({"metadata": {"name": "web", "annotations": {"p.io/initialized": "true"}}}));
        assert!(is_initialized(&s, "p.io"));
        assert!(!is_initialized(&s, "safe-rollout.dev"));
        let s = sts(
            json!({"metadata": {"name": "web"}, "status": {"replicas": 3, "readyReplicas": 1}}),
        );
        assert!(is_initialized(&s, "safe-rollout.dev"));
    }
}
