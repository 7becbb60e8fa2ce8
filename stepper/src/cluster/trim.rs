//! What `watch`'s caches keep of each object: the fields a pass reads from the caches, nothing else.
//!
//! A reflector store keeps every object it lists and watches for the life of the process; at 50,000
//! pods, their `managedFields`, container specs and unread conditions are most of the memory
//! (BENCHMARKS.md, "`watch` at 50,000 pods"). Each object is trimmed as it arrives, before its store
//! keeps it (`WatchStreamExt::modify` before `reflect`). The fresh reads before a step, the owner GET and
//! every command but `watch` read whole objects from the API server; nothing is ever written back from
//! a cached object (writes are JSON Patches whose `test` ops pin the few fields read here).
//!
//! Kept, by reader (`stepper/tests/trim.rs` checks that a trimmed object gets the same decisions as the
//! whole one on the real fixtures):
//! - every object: `metadata.name` (the store's key: the reflector panics without it), `namespace`,
//!   `uid` and `resourceVersion` (Event references, `test` ops, delete preconditions);
//! - StatefulSet: `metadata.generation`, `ownerReferences` (the `OwnerNotHealthy` gate), the annotations
//!   under the prefix (`Keys::owns`: all the stepper reads or writes; the map stays present when it was,
//!   even if empty, as the patches tell an absent map from an empty one — `plan::patch::annotation_ops`),
//!   `spec.{replicas, selector, updateStrategy, minReadySeconds, ordinals}` (`model::set`,
//!   `model::pods::start_ordinal`) and the whole `status` (a dozen counts and two revision names);
//!   dropped: labels, the pod template, volume claim templates, `managedFields`, other annotations
//!   (`kubectl.kubernetes.io/last-applied-configuration` holds a copy of the whole object);
//! - Pod: `metadata.{labels, ownerReferences, creationTimestamp, deletionTimestamp}` (selectors, the
//!   revision label, ownership, recovery's clock, terminating), `status.phase` and the `Ready` condition's
//!   `type`, `status`, `reason` and `lastTransitionTime` (`model::pods::pod_unready_cause`,
//!   `gates::recovery`); dropped: the whole `spec`, container statuses, IPs, the other conditions,
//!   annotations, `managedFields`;
//! - PodDisruptionBudget: `spec` and `status` whole (few and small); dropped: labels, annotations,
//!   `managedFields`.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::config::Keys;

/// The pod condition the pass reads (Kubernetes `PodReady`); the others are dropped.
const READY: &str = "Ready";

/// The identity every cached object keeps: name, namespace, uid, resourceVersion.
fn identity(m: &mut ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: m.name.take(),
        namespace: m.namespace.take(),
        uid: m.uid.take(),
        resource_version: m.resource_version.take(),
        ..ObjectMeta::default()
    }
}

/// Trims a StatefulSet to what a pass reads (module doc); `keys` says which annotations are the
/// stepper's.
pub fn statefulset(set: &mut StatefulSet, keys: &Keys) {
    let m = &mut set.metadata;
    let annotations = m
        .annotations
        .take()
        .map(|a| a.into_iter().filter(|(k, _)| keys.owns(k)).collect());
    set.metadata = ObjectMeta {
        generation: m.generation,
        owner_references: m.owner_references.take(),
        annotations,
        ..identity(m)
    };
    set.spec = set.spec.take().map(|s| StatefulSetSpec {
        replicas: s.replicas,
        selector: s.selector,
        update_strategy: s.update_strategy,
        min_ready_seconds: s.min_ready_seconds,
        ordinals: s.ordinals,
        ..StatefulSetSpec::default()
    });
}

/// Trims a pod to what a pass reads (module doc).
pub fn pod(pod: &mut Pod) {
    let m = &mut pod.metadata;
    pod.metadata = ObjectMeta {
        labels: m.labels.take(),
        owner_references: m.owner_references.take(),
        creation_timestamp: m.creation_timestamp.take(),
        deletion_timestamp: m.deletion_timestamp.take(),
        ..identity(m)
    };
    pod.spec = None;
    pod.status = pod.status.take().map(|s| PodStatus {
        phase: s.phase,
        conditions: s.conditions.map(|cs| {
            cs.into_iter()
                .filter(|c| c.type_ == READY)
                .map(|c| PodCondition {
                    type_: c.type_,
                    status: c.status,
                    reason: c.reason,
                    last_transition_time: c.last_transition_time,
                    ..PodCondition::default()
                })
                .collect()
        }),
        ..PodStatus::default()
    });
}

/// Trims a PodDisruptionBudget to its identity, `spec` and `status` (module doc).
pub fn pdb(pdb: &mut PodDisruptionBudget) {
    pdb.metadata = identity(&mut pdb.metadata);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_set_keeps_its_annotation_map_even_when_none_of_them_is_the_steppers() {
        let keys = Keys::default();
        let mut set = StatefulSet::default();
        set.metadata.annotations = Some(BTreeMap::from([
            (
                "kubectl.kubernetes.io/last-applied-configuration".into(),
                "{}".into(),
            ),
            ("safe-rollout.dev.evil/paused".into(), "true".into()),
        ]));
        statefulset(&mut set, &keys);
        assert_eq!(set.metadata.annotations, Some(BTreeMap::new()));
        let mut bare = StatefulSet::default();
        statefulset(&mut bare, &keys);
        assert_eq!(bare.metadata.annotations, None);
    }

    #[test]
    fn a_pod_keeps_only_its_ready_condition() {
        let mut pod = Pod {
            status: Some(PodStatus {
                conditions: Some(
                    ["PodScheduled", "Ready", "ContainersReady"]
                        .map(|t| PodCondition {
                            type_: t.into(),
                            status: "True".into(),
                            message: Some("m".into()),
                            ..PodCondition::default()
                        })
                        .into(),
                ),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        self::pod(&mut pod);
        let conditions = pod.status.and_then(|s| s.conditions).expect("conditions");
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].type_, "Ready");
        assert_eq!(conditions[0].message, None);
    }
}
