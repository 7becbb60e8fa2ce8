//! The JSON a [`CachedPod`] is decoded from: only the fields kept, read in place.
//!
//! A pod watch event is the whole pod (its spec, container statuses, `managedFields`, every annotation),
//! about 10 kB for a Patroni member whose `status` annotation Patroni rewrites every loop; the caches keep
//! about a tenth of it. serde skips every other field without building it, and the kept ones are read
//! without a copy where the JSON allows it (`Cow<'de, str>`: borrowed unless escaped), then packed once:
//! the labels and annotations into one string each ([`Packed`]), only the ownerReferences of kind
//! StatefulSet (name, uid, `controller`), only the `Ready` condition (`type`, `status`, `reason`,
//! `lastTransitionTime`), none of the other conditions' fields built (BENCHMARKS.md, "CPU per pod watch
//! event").
//!
//! Errors as the k8s-openapi types before them: a field of the wrong JSON type, an ownerReference without
//! `kind`, `name` or `uid`, a condition without `type` or `status`, a timestamp that is not RFC 3339.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};

use super::{CachedPod, NUL, Owner, Packed, READY, Ready, STATEFULSET, State};

/// A pod, as far as it is decoded.
#[derive(Deserialize)]
pub(super) struct Wire {
    #[serde(default)]
    metadata: Option<Meta>,
    status: Option<Status>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    labels: Option<Packed>,
    annotations: Option<Packed>,
    owner_references: Option<Owners>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
}

#[derive(Deserialize)]
struct Status {
    phase: Option<Box<str>>,
    conditions: Option<ReadyCondition>,
}

/// The ownerReferences of kind StatefulSet.
struct Owners(Box<[Owner]>);

/// One ownerReference, read in place (`apiVersion`, `blockOwnerDeletion` skipped).
#[derive(Deserialize)]
struct OwnerRef<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    uid: Cow<'a, str>,
    controller: Option<bool>,
}

/// Of a pod's conditions, the `Ready` one (`None`: none is).
struct ReadyCondition(Option<Ready>);

/// One condition, read in place (`message`, `lastProbeTime` and any other field skipped).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Condition<'a> {
    #[serde(rename = "type", borrow)]
    type_: Cow<'a, str>,
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(borrow, default)]
    reason: Option<Cow<'a, str>>,
    last_transition_time: Option<Time>,
}

/// A JSON object of strings decoded straight into its packed form: one string per map, not one per
/// key and value and a tree node per entry (a pod store decodes 50,000 pods at each re-list).
impl<'de> Deserialize<'de> for Packed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Pack;
        impl<'de> Visitor<'de> for Pack {
            type Value = Packed;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Packed, A::Error> {
                let mut packed = String::new();
                let mut first = true;
                while let Some((k, v)) = map.next_entry::<Cow<'de, str>, Cow<'de, str>>()? {
                    if !std::mem::take(&mut first) {
                        packed.push(NUL);
                    }
                    packed.push_str(&k);
                    packed.push(NUL);
                    packed.push_str(&v);
                }
                Ok(Packed(packed.into_boxed_str()))
            }
        }
        d.deserialize_map(Pack)
    }
}

impl<'de> Deserialize<'de> for Owners {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct StatefulSets;
        impl<'de> Visitor<'de> for StatefulSets {
            type Value = Owners;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of ownerReferences")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Owners, A::Error> {
                let mut owners = Vec::new();
                while let Some(r) = seq.next_element::<OwnerRef<'de>>()? {
                    if r.kind == STATEFULSET {
                        owners.push((r.name.into(), r.uid.into(), r.controller));
                    }
                }
                Ok(Owners(owners.into_boxed_slice()))
            }
        }
        d.deserialize_seq(StatefulSets)
    }
}

impl<'de> Deserialize<'de> for ReadyCondition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FindReady;
        impl<'de> Visitor<'de> for FindReady {
            type Value = ReadyCondition;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of pod conditions")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ReadyCondition, A::Error> {
                let mut ready = None;
                while let Some(c) = seq.next_element::<Condition<'de>>()? {
                    if ready.is_none() && c.type_ == READY {
                        ready = Some(Ready {
                            status: c.status.into(),
                            reason: c.reason.map(Into::into),
                            last_transition_time: c.last_transition_time,
                        });
                    }
                }
                Ok(ReadyCondition(ready))
            }
        }
        d.deserialize_seq(FindReady)
    }
}

impl From<Wire> for CachedPod {
    fn from(w: Wire) -> Self {
        let m = w.metadata.unwrap_or_default();
        CachedPod {
            metadata: ObjectMeta {
                name: m.name,
                namespace: m.namespace,
                uid: m.uid,
                resource_version: m.resource_version,
                ..ObjectMeta::default()
            },
            labels: m.labels,
            annotations: m.annotations,
            owners: m.owner_references.map(|o| o.0),
            created: m.creation_timestamp,
            deleting: m.deletion_timestamp,
            status: w.status.map(|s| State {
                phase: s.phase,
                ready: s.conditions.map(|c| c.0),
            }),
        }
    }
}
