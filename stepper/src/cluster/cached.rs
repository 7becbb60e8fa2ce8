//! What `watch`'s caches keep of each object: the fields a pass reads from the caches, nothing else.
//!
//! A reflector store keeps every object it lists and watches for the life of the process. At 50,000
//! pods, k8s-openapi's `Pod` costs 2.4 kB before any field is set (`PodSpec` and `PodStatus` are inline),
//! and a pod's `managedFields`, containers and unread conditions more (BENCHMARKS.md, "`watch` at 50,000
//! pods"). So StatefulSets and pods are watched as [`CachedSet`] and [`CachedPod`] (its own file,
//! `cached_pod.rs`: it is packed further, pods being many): the same API
//! objects (the same URLs, requests and watch events — they stand in for `StatefulSet` and `Pod` as kube
//! `Resource`s), decoded with only the fields below (serde skips the rest of the JSON without building
//! it). A [`CachedSet`] is built into the k8s-openapi `StatefulSet` a pass takes once per watch event
//! and shared (`Arc`): a pass over 10,000 sets copies none (BENCHMARKS.md, "A pass from caches"); a
//! [`CachedPod`] is turned back into a `Pod` when a pass reads it ([`From`]), pods being read only for
//! the candidates. PDBs, a few per namespace, stay `PodDisruptionBudget`s trimmed to what `PdbBlocked`
//! reads ([`trim_pdb`]).
//!
//! What is kept is the union of what the pass's readers declare (`plan::fields::union`; each gate's
//! beside it): `stepper/tests/decisions/fields.rs` fails when a reader declares a field kept here by none, or
//! reads one it does not declare.
//!
//! The fresh reads before a step, the owner GET and every command but `watch` read whole objects from
//! the API server; nothing is ever written back from a cached object (writes are JSON Patches whose
//! `test` ops pin the few fields read here). `stepper/tests/decisions/cached.rs` checks that a cached object gets
//! the same decisions as the whole one on the real fixtures.
//!
//! Kept, by reader:
//! - every object: `metadata.name` (the store's key: the reflector panics without it), `namespace`,
//!   `uid` and `resourceVersion` (Event references, `test` ops, delete preconditions);
//! - StatefulSet: `metadata.generation`, `ownerReferences` but `blockOwnerDeletion` (the `OwnerNotHealthy`
//!   gate), the annotations
//!   under the prefix ([`CachedSet::keep`], `Keys::owns`: all the stepper reads or writes;
//!   the map stays present when it was, even if empty, as the patches tell an absent map from an empty
//!   one — `plan::patch::annotation_ops`), `spec.{replicas, selector, updateStrategy, minReadySeconds,
//!   ordinals, podManagementPolicy, serviceName}` (`model::set`, `model::pods::start_ordinal`; the
//!   governing Service a built-in answerer reaches the members through) and the whole `status` (a dozen counts and
//!   two revision names); not kept: labels, the pod template, volume claim templates, `managedFields`,
//!   other annotations (`kubectl.kubernetes.io/last-applied-configuration` is a copy of the object);
//! - Pod: `metadata.{labels, ownerReferences, creationTimestamp, deletionTimestamp}` (selectors, the
//!   primary's selector, the revision label, ownership, recovery's clock, terminating), the annotations
//!   under the prefix ([`CachedPod::keep`]: the approval handshake's requests and answers; the map kept
//!   when present, as a set's), `status.phase` and the `Ready` condition's `type`, `status`, `reason` and
//!   `lastTransitionTime` (`model::pods::pod_unready_cause`, `gates::recovery`); not kept: the whole
//!   `spec`, container statuses, IPs, the other conditions, other annotations, `managedFields`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetOrdinals, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{
    PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use serde::Deserialize;

pub use crate::cluster::cached_pod::CachedPod;
use crate::config::{Keys, SetConfig};

/// A StatefulSet as `watch`'s caches keep it (module doc): the k8s-openapi object with only the kept
/// fields set, and its annotations parsed, both built once per watch event and shared with every pass
/// that reads them ([`CachedSet::set`], [`CachedSet::config`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(from = "wire::Set")]
pub struct CachedSet {
    set: Arc<StatefulSet>,
    /// `None` until [`CachedSet::keep`].
    config: Option<Arc<SetConfig>>,
}

impl CachedSet {
    /// The StatefulSet, as a pass reads it (shared, not copied).
    pub fn set(&self) -> &Arc<StatefulSet> {
        &self.set
    }

    /// The set's annotations as parsed by [`CachedSet::keep`] ([`SetConfig::parse`] under its keys);
    /// `None` before.
    pub fn config(&self) -> Option<&Arc<SetConfig>> {
        self.config.as_ref()
    }

    /// Drops the annotations that are not the stepper's (`keys`; the map itself stays if present), then
    /// parses the rest ([`SetConfig::parse`]): what a store does with each object before it keeps it.
    pub fn keep(&mut self, keys: &Arc<Keys>) {
        let set = Arc::make_mut(&mut self.set);
        if let Some(a) = set.metadata.annotations.as_mut() {
            a.retain(|k, _| keys.owns(k));
        }
        self.config = Some(Arc::new(SetConfig::parse(&self.set, keys)));
    }
}

/// Trims a PodDisruptionBudget to what `PdbBlocked` reads (`gates::on_pods::PDB_READS`) and its
/// identity: `spec.selector` and `status.{disruptionsAllowed, currentHealthy, desiredHealthy}`.
pub fn trim_pdb(pdb: &mut PodDisruptionBudget) {
    let m = &mut pdb.metadata;
    pdb.metadata = ObjectMeta {
        name: m.name.take(),
        namespace: m.namespace.take(),
        uid: m.uid.take(),
        resource_version: m.resource_version.take(),
        ..ObjectMeta::default()
    };
    pdb.spec = pdb.spec.take().map(|s| PodDisruptionBudgetSpec {
        selector: s.selector,
        ..PodDisruptionBudgetSpec::default()
    });
    pdb.status = pdb.status.take().map(|s| PodDisruptionBudgetStatus {
        disruptions_allowed: s.disruptions_allowed,
        current_healthy: s.current_healthy,
        desired_healthy: s.desired_healthy,
        ..PodDisruptionBudgetStatus::default()
    });
}

/// Each cached type stands in for its k8s-openapi type as a kube `Resource` (same group, version,
/// kind and URL), so `Api<CachedPod>` lists and watches pods; `$object` is the `ObjectMeta`'s owner.
macro_rules! stands_in_for {
    ($cached:ty, $k8s:ty, |$this:ident| $object:expr, |$this_mut:ident| $object_mut:expr) => {
        impl k8s_openapi::Resource for $cached {
            const API_VERSION: &'static str = <$k8s as k8s_openapi::Resource>::API_VERSION;
            const GROUP: &'static str = <$k8s as k8s_openapi::Resource>::GROUP;
            const KIND: &'static str = <$k8s as k8s_openapi::Resource>::KIND;
            const VERSION: &'static str = <$k8s as k8s_openapi::Resource>::VERSION;
            const URL_PATH_SEGMENT: &'static str =
                <$k8s as k8s_openapi::Resource>::URL_PATH_SEGMENT;
            type Scope = <$k8s as k8s_openapi::Resource>::Scope;
        }

        impl k8s_openapi::Metadata for $cached {
            type Ty = ObjectMeta;

            fn metadata(&self) -> &ObjectMeta {
                let $this = self;
                &$object.metadata
            }

            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                let $this_mut = self;
                &mut $object_mut.metadata
            }
        }
    };
}

// The reflector reads `metadata`; a set's is written only before it is shared and parsed (`keep`).
stands_in_for!(CachedSet, StatefulSet, |c| c.set, |c| Arc::make_mut(
    &mut c.set
));
stands_in_for!(CachedPod, Pod, |c| c, |c| c);

/// The JSON shapes decoded: only the fields kept (serde skips every other field unread).
mod wire {
    use super::*;

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SetMeta {
        name: Option<String>,
        namespace: Option<String>,
        uid: Option<String>,
        resource_version: Option<String>,
        generation: Option<i64>,
        labels: Option<BTreeMap<String, String>>,
        annotations: Option<BTreeMap<String, String>>,
        owner_references: Option<Vec<OwnerReference>>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SetSpec {
        replicas: Option<i32>,
        #[serde(default)]
        selector: Option<LabelSelector>,
        update_strategy: Option<StatefulSetUpdateStrategy>,
        min_ready_seconds: Option<i32>,
        ordinals: Option<StatefulSetOrdinals>,
        pod_management_policy: Option<String>,
        service_name: Option<String>,
    }

    #[derive(Deserialize)]
    pub struct Set {
        #[serde(default)]
        metadata: Option<SetMeta>,
        spec: Option<SetSpec>,
        status: Option<StatefulSetStatus>,
    }

    impl From<Set> for CachedSet {
        fn from(w: Set) -> Self {
            let m = w.metadata;
            let m = m.map_or_else(ObjectMeta::default, |m| ObjectMeta {
                name: m.name,
                namespace: m.namespace,
                uid: m.uid,
                resource_version: m.resource_version,
                generation: m.generation,
                // What `OutOfScope` judges `--selector` on (`gates::scope::READS`).
                labels: m.labels,
                annotations: m.annotations,
                // What `OwnerNotHealthy` reads (`gates::on_fleet::OWNER_READS`), no more.
                owner_references: m.owner_references.map(|refs| {
                    refs.into_iter()
                        .map(|r| OwnerReference {
                            block_owner_deletion: None,
                            ..r
                        })
                        .collect()
                }),
                ..ObjectMeta::default()
            });
            CachedSet {
                set: Arc::new(StatefulSet {
                    metadata: m,
                    spec: w.spec.map(|s| StatefulSetSpec {
                        replicas: s.replicas,
                        selector: s.selector.unwrap_or_default(),
                        update_strategy: s.update_strategy,
                        min_ready_seconds: s.min_ready_seconds,
                        ordinals: s.ordinals,
                        pod_management_policy: s.pod_management_policy,
                        service_name: s.service_name,
                        ..StatefulSetSpec::default()
                    }),
                    status: w.status,
                }),
                config: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_set_keeps_its_annotation_map_even_when_none_of_them_is_the_steppers() {
        let keys = Arc::new(Keys::default());
        let mut set: CachedSet = serde_json::from_value(json!({"metadata": {"name": "web",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}",
                            "safe-rollout.dev.evil/paused": "true"}}}))
        .expect("set");
        assert!(set.config().is_none(), "parsed by keep only");
        set.keep(&keys);
        assert_eq!(set.set().metadata.annotations, Some(BTreeMap::new()));
        // Parsed after trimming: another prefix's `paused` does not pause the set.
        assert!(!set.config().expect("parsed").paused);
        let mut bare: CachedSet =
            serde_json::from_value(json!({"metadata": {"name": "web"}})).expect("set");
        bare.keep(&keys);
        assert_eq!(bare.set().metadata.annotations, None);
    }
}
