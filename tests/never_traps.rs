//! Bad input never traps: arbitrary and mutated requests through the `validate` entry point (natively;
//! in wasm a panic is a trap, which the API server turns into a failed admission). Every answer must be
//! a well-formed ValidationResponse: accepted (maybe with a JSON object as `mutated_object`) or rejected
//! with a message.

use std::path::Path;

use kubewarden_policy_sdk::response::ValidationResponse;
use proptest::prelude::*;
use serde_json::{Value, json};

fn check_well_formed(payload: &[u8]) -> Result<ValidationResponse, TestCaseError> {
    let raw = sts_safe_rollout::validate(payload)
        .map_err(|e| TestCaseError::fail(format!("validate returned an error: {e}")))?;
    let response: ValidationResponse = serde_json::from_slice(&raw)
        .map_err(|e| TestCaseError::fail(format!("not a ValidationResponse: {e}")))?;
    if response.accepted {
        prop_assert!(response.message.is_none());
        if let Some(m) = &response.mutated_object {
            prop_assert!(m.is_object(), "mutated_object must be an object: {m}");
        }
    } else {
        prop_assert!(response.mutated_object.is_none());
        prop_assert!(
            response.message.as_deref().is_some_and(|m| !m.is_empty()),
            "rejection without a message"
        );
    }
    Ok(response)
}

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

const FIXTURES: &[&str] = &[
    "create-default.json",
    "create-force.json",
    "update-image.json",
    "partition-lower-to-2.json",
    "update-partition-only.json",
    "rollout-undo.json",
    "delete.json",
    "scale-subresource.json",
];

fn base_payloads() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/admission");
    FIXTURES
        .iter()
        .map(|f| {
            let review: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
            json!({"request": review["request"], "settings": {}})
        })
        .collect()
}

/// Sets the value at a JSON Pointer, creating objects along the way where the parent is an object.
fn set_pointer(root: &mut Value, pointer: &str, value: Value) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = root.pointer_mut(parent) {
        map.insert(last, value);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_trap(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_well_formed(&bytes)?;
    }

    #[test]
    fn arbitrary_json_never_traps(value in arb_json()) {
        check_well_formed(value.to_string().as_bytes())?;
        check_well_formed(json!({"request": value, "settings": {}}).to_string().as_bytes())?;
    }

    #[test]
    fn mutated_real_requests_never_trap(
        fixture in 0..FIXTURES.len(),
        edits in prop::collection::vec((0..PATHS.len(), arb_json()), 1..4),
    ) {
        let mut payload = base_payloads().swap_remove(fixture);
        for (path, value) in edits {
            set_pointer(&mut payload, PATHS[path], value);
        }
        check_well_formed(payload.to_string().as_bytes())?;
    }
}

#[test]
fn named_bad_inputs_are_rejected_with_the_field_or_accepted() {
    let base = base_payloads().swap_remove(2); // update-image.json
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        (
            "/request/object/spec/replicas",
            json!("3"),
            Some("request.object.spec.replicas"),
        ),
        (
            "/request/object/spec/updateStrategy/rollingUpdate/partition",
            json!(-1),
            Some("spec.updateStrategy.rollingUpdate.partition"),
        ),
        (
            "/request/object/metadata",
            Value::Null,
            Some("request.object.metadata"),
        ),
        (
            "/request/object",
            json!([1, 2, 3]),
            Some("request.object: expected a StatefulSet object"),
        ),
        (
            "/request/oldObject",
            json!("x"),
            Some("request.oldObject: expected a StatefulSet object"),
        ),
        (
            "/settings",
            json!({"annotationPrefix": "Not A Prefix"}),
            Some("invalid settings: annotationPrefix"),
        ),
        ("/request/operation", json!(7), Some("request.operation")),
    ];
    for (pointer, value, needle) in cases {
        let mut payload = base.clone();
        set_pointer(&mut payload, pointer, value);
        let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
        let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
        match needle {
            Some(n) => {
                assert!(!response.accepted, "{pointer}: accepted");
                let m = response.message.unwrap_or_default();
                assert!(m.contains(n), "{pointer}: {m:?} lacks {n:?}");
            }
            None => assert!(response.accepted, "{pointer}: rejected"),
        }
    }
}

#[test]
fn a_one_mebibyte_annotation_is_decided_normally() {
    let mut payload = base_payloads().swap_remove(2);
    let big = "x".repeat(1 << 20);
    set_pointer(
        &mut payload,
        "/request/object/metadata/annotations/example.com~1big",
        json!(big),
    );
    let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
    let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
    assert!(response.accepted);
    let mutated = response.mutated_object.expect("template change is staged");
    assert_eq!(
        mutated["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        3
    );
    assert_eq!(
        mutated["metadata"]["annotations"]["example.com/big"]
            .as_str()
            .map(str::len),
        Some(1 << 20)
    );
}
