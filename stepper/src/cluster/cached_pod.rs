//! A pod as `watch`'s caches keep it ([`CachedPod`]): the fields a pass reads, packed.
//!
//! A cluster has many more pods than StatefulSets, and a small object held for the process's life costs
//! its fields and, as much again, one allocation per string (headers, rounding) and map node. So beside
//! the identity the reflector keys its store by, a cached pod holds its labels in one string, its
//! annotations under the prefix in another ([`CachedPod::keep`]: the approval handshake's requests and
//! answers), only its StatefulSet ownerReferences, two timestamps, the phase and the `Ready` condition
//! (module doc of [`crate::cluster::cached`] for who reads what), and is unpacked into a k8s-openapi
//! `Pod` when a pass reads it ([`From`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::Deserialize;

use crate::config::Keys;

mod wire;

/// The pod condition the pass reads (Kubernetes `PodReady`); the others are not kept.
const READY: &str = "Ready";

/// The owner kind kept (the only one any reader looks for).
const STATEFULSET: &str = "StatefulSet";

/// Separates the keys and values of [`CachedPod`]'s packed labels: a NUL never occurs in a label.
const NUL: char = '\0';

/// A pod as `watch`'s caches keep it (module doc).
#[derive(Clone, Debug, Deserialize)]
#[serde(from = "wire::Wire")]
pub struct CachedPod {
    /// Name, namespace, uid and resourceVersion only (the store's key, the delete preconditions).
    pub metadata: ObjectMeta,
    /// `None`: no `labels` field.
    labels: Option<Packed>,
    /// The annotations under the prefix once [`CachedPod::keep`] ran (all of them before); `None`: no
    /// `annotations` field. Kept even when none is the stepper's: a write tells an absent map from a
    /// present one (`plan::patch::annotation_ops`).
    annotations: Option<Packed>,
    /// The ownerReferences of kind StatefulSet.
    owners: Option<Box<[Owner]>>,
    created: Option<Time>,
    deleting: Option<Time>,
    /// `None`: no `status` field.
    status: Option<State>,
}

/// A StatefulSet ownerReference: name, uid, `controller`.
type Owner = (Box<str>, Box<str>, Option<bool>);

#[derive(Clone, Debug, PartialEq)]
struct State {
    phase: Option<Box<str>>,
    /// `None`: no `conditions` field; `Some(None)`: conditions, none of them `Ready`.
    ready: Option<Option<Ready>>,
}

#[derive(Clone, Debug, PartialEq)]
struct Ready {
    status: Box<str>,
    reason: Option<Box<str>>,
    last_transition_time: Option<Time>,
}

/// A string map packed in one string: `key NUL value NUL key NUL value`, in key order (`""`: empty).
#[derive(Clone, Debug, PartialEq)]
struct Packed(Box<str>);

impl Packed {
    fn pack<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut packed = String::new();
        for (i, (k, v)) in pairs.into_iter().enumerate() {
            if i > 0 {
                packed.push(NUL);
            }
            packed.push_str(k);
            packed.push(NUL);
            packed.push_str(v);
        }
        Packed(packed.into_boxed_str())
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut parts = self.0.split(NUL);
        std::iter::from_fn(move || Some((parts.next()?, parts.next()?)))
    }

    fn unpack(&self) -> BTreeMap<String, String> {
        self.pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

impl CachedPod {
    /// Drops the annotations that are not the stepper's (`keys`; the map itself stays if present): what
    /// a pod store does with each pod before it keeps it.
    pub fn keep(&mut self, keys: &Keys) {
        if let Some(a) = &self.annotations {
            self.annotations = Some(Packed::pack(a.pairs().filter(|(k, _)| keys.owns(k))));
        }
    }

    /// True when `self` keeps what `other` keeps, but maybe for the `resourceVersion`: a watch event
    /// that changed only what the caches drop (another owner's annotation, such as the `status` Patroni
    /// rewrites every loop; the spec; container statuses; `managedFields`) gives a pod equal to the one
    /// stored (`cluster::pod_news`).
    pub fn same_kept(&self, other: &CachedPod) -> bool {
        let (m, o) = (&self.metadata, &other.metadata);
        m.name == o.name
            && m.namespace == o.namespace
            && m.uid == o.uid
            && self.labels == other.labels
            && self.annotations == other.annotations
            && self.owners == other.owners
            && self.created == other.created
            && self.deleting == other.deleting
            && self.status == other.status
    }

    /// The uid of the StatefulSet controlling this pod (as `model::pods::controller_uid`).
    pub fn controller_uid(&self) -> Option<&str> {
        self.owners
            .as_deref()?
            .iter()
            .find(|(_, _, controller)| *controller == Some(true))
            .map(|(_, uid, _)| &**uid)
    }
}

impl From<&CachedPod> for Pod {
    fn from(c: &CachedPod) -> Self {
        let owners = c.owners.as_deref().map(|refs| {
            refs.iter()
                .map(|(name, uid, controller)| OwnerReference {
                    // Not kept: no reader looks at it (`model::fields::OWNERSHIP`).
                    api_version: String::new(),
                    kind: STATEFULSET.into(),
                    name: name.to_string(),
                    uid: uid.to_string(),
                    controller: *controller,
                    ..OwnerReference::default()
                })
                .collect()
        });
        Pod {
            metadata: ObjectMeta {
                labels: c.labels.as_ref().map(Packed::unpack),
                annotations: c.annotations.as_ref().map(Packed::unpack),
                owner_references: owners,
                creation_timestamp: c.created.clone(),
                deletion_timestamp: c.deleting.clone(),
                ..c.metadata.clone()
            },
            spec: None,
            status: c.status.as_ref().map(|s| PodStatus {
                phase: s.phase.as_deref().map(str::to_string),
                conditions: s.ready.as_ref().map(|ready| {
                    ready
                        .iter()
                        .map(|r| PodCondition {
                            type_: READY.into(),
                            status: r.status.to_string(),
                            reason: r.reason.as_deref().map(str::to_string),
                            last_transition_time: r.last_transition_time.clone(),
                            ..PodCondition::default()
                        })
                        .collect()
                }),
                ..PodStatus::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// `pod` as a pod store keeps it (decoded, then [`CachedPod::keep`]), read back as a pass reads it.
    fn cached(pod: Value) -> Pod {
        let mut c = serde_json::from_value::<CachedPod>(pod).expect("pod");
        c.keep(&Keys::default());
        Pod::from(&c)
    }

    #[test]
    fn keeps_what_the_pass_reads_and_nothing_else() {
        let conditions: Vec<_> = ["PodScheduled", "Ready", "ContainersReady"]
            .map(|t| json!({"type": t, "status": "True", "message": "m", "reason": "R"}))
            .into();
        let pod = cached(json!({
            "metadata": {"name": "web-0", "namespace": "demo", "uid": "u", "resourceVersion": "7",
                         "labels": {"app": "web", "controller-revision-hash": "web-1"},
                         "annotations": {"a": "b", "safe-rollout.dev/update-requested": "web-2",
                                         "safe-rollout.dev.evil/update-approved": "web-2"},
                         "managedFields": [{"manager": "kubelet"}],
                         "ownerReferences": [
                             {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                              "uid": "s", "controller": true},
                             {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "x"}]},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Running", "conditions": conditions}}));
        let m = &pod.metadata;
        assert_eq!(
            (m.name.as_deref(), m.namespace.as_deref(), m.uid.as_deref()),
            (Some("web-0"), Some("demo"), Some("u"))
        );
        assert_eq!(m.resource_version.as_deref(), Some("7"));
        let labels = m.labels.as_ref().expect("labels");
        assert_eq!(
            labels.get("controller-revision-hash").map(String::as_str),
            Some("web-1")
        );
        assert_eq!(labels.len(), 2);
        // The stepper's annotations only (another prefix's are not its own).
        let own = BTreeMap::from([("safe-rollout.dev/update-requested".into(), "web-2".into())]);
        assert_eq!(m.annotations.as_ref(), Some(&own));
        assert_eq!(m.managed_fields, None);
        let owners = m.owner_references.as_ref().expect("owners");
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].uid.as_str(), owners[0].controller),
            ("s", Some(true))
        );
        assert_eq!(pod.spec, None);
        let status = pod.status.expect("status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let conditions = status.conditions.expect("conditions");
        assert_eq!(conditions.len(), 1);
        assert_eq!(
            (
                conditions[0].type_.as_str(),
                conditions[0].reason.as_deref()
            ),
            ("Ready", Some("R"))
        );
        assert_eq!(conditions[0].message, None);
    }

    #[test]
    fn absent_fields_stay_absent_and_empty_ones_empty() {
        let bare = cached(json!({"metadata": {"name": "web-0"}}));
        assert_eq!(bare.metadata.labels, None);
        assert_eq!(bare.metadata.annotations, None);
        assert_eq!(bare.status, None);
        let empty = cached(
            json!({"metadata": {"name": "web-0", "labels": {}, "annotations": {}},
                                  "status": {"conditions": []}}),
        );
        assert_eq!(empty.metadata.labels, Some(BTreeMap::new()));
        assert_eq!(empty.metadata.annotations, Some(BTreeMap::new()));
        // A map of other owners' annotations only stays a map (empty): a write then adds keys one
        // by one instead of a whole map (`plan::patch::annotation_ops`).
        let foreign = cached(json!({"metadata": {"name": "web-0",
                                    "annotations": {"example.com/owned-by-app": "keep-me"}}}));
        assert_eq!(foreign.metadata.annotations, Some(BTreeMap::new()));
        assert_eq!(empty.status.and_then(|s| s.conditions), Some(vec![]));
    }

    #[test]
    fn same_kept_ignores_what_is_not_kept_and_the_resource_version() {
        let keys = Keys::default();
        let pod = |rv: &str, status: &str, ready: &str, image: &str| {
            let mut c = serde_json::from_value::<CachedPod>(json!({
                "metadata": {"name": "pg-0", "namespace": "db", "uid": "u", "resourceVersion": rv,
                             "annotations": {"status": status}, "managedFields": [{"manager": rv}]},
                "spec": {"containers": [{"name": "postgres", "image": image}]},
                "status": {"phase": "Running", "conditions": [
                    {"type": "PodScheduled", "status": "True", "message": rv},
                    {"type": "Ready", "status": ready}]}}))
            .expect("pod");
            c.keep(&keys);
            c
        };
        let stored = pod("1", "{\"xlog_location\":1}", "True", "postgres:16");
        assert!(stored.same_kept(&pod("2", "{\"xlog_location\":2}", "True", "postgres:17")));
        assert!(!stored.same_kept(&pod("2", "{}", "False", "postgres:16")));
        let mut other_uid = stored.clone();
        other_uid.metadata.uid = Some("v".into());
        assert!(!stored.same_kept(&other_uid));
    }

    #[test]
    fn malformed_kept_fields_are_errors_and_unkept_ones_are_not_read() {
        let decode = |pod: Value| serde_json::from_value::<CachedPod>(pod).map(|_| ());
        // A field no reader keeps may hold anything.
        assert!(
            decode(json!({"metadata": {"name": "p", "managedFields": 7}, "spec": "x"})).is_ok()
        );
        for bad in [
            json!({"metadata": {"ownerReferences": [{"kind": "StatefulSet", "name": "s"}]}}),
            json!({"metadata": {"ownerReferences": {"kind": "StatefulSet"}}}),
            json!({"metadata": {"labels": {"a": 1}}}),
            json!({"metadata": {"creationTimestamp": "yesterday"}}),
            json!({"status": {"conditions": [{"type": "Ready"}]}}),
            json!({"status": {"conditions": [{"type": "Ready", "status": "True",
                                              "lastTransitionTime": 5}]}}),
        ] {
            assert!(decode(bad.clone()).is_err(), "{bad}");
        }
    }
}
