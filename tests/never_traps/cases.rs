//! A fuzz case: arbitrary bytes or JSON, a real request with plausible and arbitrary edits, or a real
//! request's bytes corrupted; and the payload it stands for.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::corpus::{corpus, remove_pointer, set_pointer};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-5i64..20).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        Just(Value::from("true")),
        Just(Value::from("RollingUpdate")),
        Just(Value::from("OnDelete")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,8}",
                    Just("partition".to_string()),
                    Just("replicas".to_string()),
                    Just("safe-rollout.dev/force-rolling-update".to_string()),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Field paths (JSON Pointer) in a real request where a malformed value is most likely to hurt.
const PATHS: &[&str] = &[
    "/request",
    "/request/kind",
    "/request/kind/kind",
    "/request/operation",
    "/request/subResource",
    "/request/dryRun",
    "/request/object",
    "/request/oldObject",
    "/request/object/metadata",
    "/request/object/metadata/annotations",
    "/request/object/metadata/annotations/safe-rollout.dev~1force-rolling-update",
    "/request/object/metadata/annotations/safe-rollout.dev~1last-partition-update",
    "/request/object/metadata/generation",
    "/request/object/spec",
    "/request/object/spec/replicas",
    "/request/object/spec/updateStrategy",
    "/request/object/spec/updateStrategy/type",
    "/request/object/spec/updateStrategy/rollingUpdate",
    "/request/object/spec/updateStrategy/rollingUpdate/partition",
    "/request/object/spec/template",
    "/request/object/spec/minReadySeconds",
    "/request/oldObject/metadata",
    "/request/oldObject/metadata/annotations",
    "/request/oldObject/spec/replicas",
    "/request/oldObject/spec/updateStrategy/rollingUpdate/partition",
    "/request/oldObject/status",
    "/request/oldObject/status/readyReplicas",
    "/request/oldObject/status/observedGeneration",
    "/settings",
    "/settings/annotationPrefix",
];

/// A plausible edit of a real request: the values a real StatefulSet takes where the table looks, so most
/// edited requests stay valid StatefulSets and walk every row.
fn plausible_edit() -> impl Strategy<Value = (String, Option<Value>)> {
    let side = prop_oneof![Just("object"), Just("oldObject")];
    let count = prop_oneof![Just(None), (0i64..8).prop_map(|n| Some(json!(n)))];
    let prefix = prop_oneof![Just("safe-rollout.dev"), Just("moco.cybozu.com")];
    let annotation = prop_oneof![
        Just("force-rolling-update"),
        Just("initialized"),
        Just("last-partition-update")
    ];
    let annotation_value = prop_oneof![
        Just(None),
        Just(Some(json!("true"))),
        Just(Some(json!("True"))),
        Just(Some(json!("2026-11-23T00:00:00Z"))),
        Just(Some(json!("2026-11-23T00:05:00Z"))),
    ];
    prop_oneof![
        (side.clone(), count.clone()).prop_map(|(s, v)| (format!("/request/{s}/spec/replicas"), v)),
        (side.clone(), count.clone()).prop_map(|(s, v)| (
            format!("/request/{s}/spec/updateStrategy/rollingUpdate/partition"),
            v
        )),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/readyReplicas"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/availableReplicas"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/observedGeneration"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/metadata/generation"), v)),
        (side.clone(), prop_oneof![Just(None), Just(Some(json!(10)))])
            .prop_map(|(s, v)| (format!("/request/{s}/spec/minReadySeconds"), v)),
        (
            side.clone(),
            prop_oneof![
                Just(None),
                Just(Some(json!("RollingUpdate"))),
                Just(Some(json!("OnDelete")))
            ]
        )
            .prop_map(|(s, v)| (format!("/request/{s}/spec/updateStrategy/type"), v)),
        (
            side.clone(),
            prop_oneof![Just(json!("nginx:1.25")), Just(json!("nginx:1.26"))]
        )
            .prop_map(|(s, v)| (
                format!("/request/{s}/spec/template/spec/containers/0/image"),
                Some(v)
            )),
        (side, prefix.clone(), annotation, annotation_value)
            .prop_map(|(s, p, a, v)| (format!("/request/{s}/metadata/annotations/{p}~1{a}"), v)),
        prop_oneof![
            Just("CREATE"),
            Just("UPDATE"),
            Just("DELETE"),
            Just("CONNECT")
        ]
        .prop_map(|op| ("/request/operation".to_string(), Some(json!(op)))),
        prop_oneof![
            Just(None),
            Just(Some(json!(""))),
            Just(Some(json!("status")))
        ]
        .prop_map(|v| ("/request/subResource".to_string(), v)),
        prefix.prop_map(|p| ("/settings/annotationPrefix".to_string(), Some(json!(p)))),
    ]
}

/// One fuzz case: how a payload is made from the corpus.
#[derive(Debug, Clone)]
pub(crate) enum Case {
    /// Arbitrary bytes.
    Bytes(Vec<u8>),
    /// An arbitrary JSON value, as the payload or as its request.
    Json(Value, bool),
    /// A real request, its `oldObject` optionally replaced by its `object` first (so only the edits
    /// differ), then plausible edits (`None` removes) and arbitrary values at sensitive paths.
    Edited {
        fixture: usize,
        same_old: bool,
        plausible: Vec<(String, Option<Value>)>,
        arbitrary: Vec<(usize, Value)>,
    },
    /// A real request's bytes with some bytes overwritten.
    Corrupted(usize, Vec<(usize, u8)>),
}

pub(crate) fn arb_case() -> impl Strategy<Value = Case> {
    let fixtures = corpus().len();
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Case::Bytes),
        1 => (arb_json(), any::<bool>()).prop_map(|(v, wrap)| Case::Json(v, wrap)),
        6 => (
            0..fixtures,
            any::<bool>(),
            prop::collection::vec(plausible_edit(), 0..6),
            prop::collection::vec((0..PATHS.len(), arb_json()), 0..2),
        )
            .prop_map(|(fixture, same_old, plausible, arbitrary)| Case::Edited {
                fixture,
                same_old,
                plausible,
                arbitrary,
            }),
        1 => (0..fixtures, prop::collection::vec((any::<usize>(), any::<u8>()), 1..4))
            .prop_map(|(f, edits)| Case::Corrupted(f, edits)),
    ]
}

/// The payload a case stands for, and whether the oracle may judge it (it is valid JSON).
pub(crate) fn payload_of(case: &Case) -> (Vec<u8>, Option<Value>) {
    match case {
        Case::Bytes(b) => (b.clone(), None),
        Case::Json(v, wrap) => {
            let v = if *wrap {
                json!({"request": v, "settings": {}})
            } else {
                v.clone()
            };
            (v.to_string().into_bytes(), Some(v))
        }
        Case::Edited {
            fixture,
            same_old,
            plausible,
            arbitrary,
        } => {
            let mut p = corpus()[*fixture].clone();
            if *same_old && p["request"]["object"].is_object() {
                p["request"]["oldObject"] = p["request"]["object"].clone();
            }
            for (pointer, value) in plausible {
                match value {
                    Some(v) => set_pointer(&mut p, pointer, v.clone()),
                    None => remove_pointer(&mut p, pointer),
                }
            }
            for (path, value) in arbitrary {
                set_pointer(&mut p, PATHS[*path], value.clone());
            }
            (p.to_string().into_bytes(), Some(p))
        }
        Case::Corrupted(f, edits) => {
            let mut bytes = corpus()[*f].to_string().into_bytes();
            for (at, b) in edits {
                let i = at % bytes.len();
                bytes[i] = *b;
            }
            (bytes, None)
        }
    }
}
