//! Rejections name the field as before: every malformed value of a field the decision reads (pinned in
//! `test_data/field-errors.json` from main's typed k8s-openapi read) gets exactly the message main wrote,
//! through the `validate` entry point. Fields the decision never reads are no longer type-checked (the API
//! server decodes every object before admission); one case here shows that.

use std::path::Path;

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::{Value, json};

fn payload() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/admission/update-image.json");
    let review: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json!({"request": review["request"], "settings": {}})
}

/// Replaces (or, with `None`, removes) the value at a JSON Pointer whose parent is an object.
fn edit(root: &mut Value, pointer: &str, value: Option<&Value>) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    let map = root.pointer_mut(parent).and_then(Value::as_object_mut);
    let map = map.unwrap_or_else(|| panic!("{parent} is not an object"));
    match value {
        Some(v) => map.insert(last, v.clone()),
        None => map.remove(&last),
    };
}

fn answer(payload: &Value) -> ValidationResponse {
    let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
    serde_json::from_slice(&raw).unwrap()
}

#[test]
fn malformed_fields_the_decision_reads_are_refused_with_mains_messages() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/field-errors.json");
    let pinned: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = pinned["cases"].as_array().unwrap();
    assert!(cases.len() > 200, "the pinned table is complete");
    let base = payload();
    for case in cases {
        let pointer = case["pointer"].as_str().unwrap();
        let mut p = base.clone();
        edit(&mut p, pointer, case.get("value"));
        let response = answer(&p);
        assert!(
            !response.accepted,
            "{pointer} = {:?}: accepted",
            case.get("value")
        );
        assert_eq!(
            response.message.as_deref(),
            case["message"].as_str(),
            "{pointer} = {:?}",
            case.get("value")
        );
    }
}

#[test]
fn fields_the_decision_never_reads_are_not_type_checked() {
    let mut p = payload();
    edit(&mut p, "/request/object/spec/serviceName", Some(&json!(5)));
    let response = answer(&p);
    assert!(response.accepted, "{:?}", response.message);
    let mutated = response
        .mutated_object
        .expect("the template change is staged");
    assert_eq!(
        mutated["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        3
    );
    assert_eq!(
        mutated["spec"]["serviceName"], 5,
        "the object is returned as sent"
    );
}
