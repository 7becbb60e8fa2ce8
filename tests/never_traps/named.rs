//! Hand-picked inputs: malformed fields rejected with the field named, and a 1 MiB annotation decided as
//! any other.

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::{Value, json};

use crate::corpus::{fixture, set_pointer};

#[test]
fn named_bad_inputs_are_rejected_with_the_field_or_accepted() {
    let base = fixture("update-image");
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
    let mut payload = fixture("update-image");
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
