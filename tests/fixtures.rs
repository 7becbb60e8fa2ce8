//! Every real AdmissionReview in `fixtures/admission/` (captured from a Kubernetes v1.28.7 API
//! server) through the policy's `validate` entry point, natively, against `test_data/expected-admission.json`.
//! `runner/tests/fixtures.rs` runs the same table through the compiled policy.wasm.

use std::path::{Path, PathBuf};

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::{Value, json};
use sts_safe_rollout::response::{self, Response};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/admission")
}

fn expectations() -> serde_json::Map<String, Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/expected-admission.json");
    let mut map: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    map.remove("//");
    map
}

fn request_of(file: &str) -> Value {
    let path = fixtures_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (fixtures/admission/ is part of the repository)",
            path.display()
        )
    });
    let review: Value = serde_json::from_str(&text).unwrap();
    review["request"].clone()
}

#[test]
fn every_shared_admission_review_has_an_expectation() {
    let expected = expectations();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".json") && !name.starts_with("sts-") && !expected.contains_key(&name) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "fixtures without an expected answer: {missing:?}"
    );
}

#[test]
fn shared_admission_reviews_are_decided_as_the_table_says() {
    for (file, want) in expectations() {
        let request = request_of(&file);
        let object = request["object"].clone();
        let payload = json!({"request": request, "settings": {}});
        let raw = sts_safe_rollout::validate(payload.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{file}: validate failed: {e}"));
        let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
        assert_eq!(
            Value::Bool(response.accepted),
            want["allowed"],
            "{file}: allowed"
        );
        let patch = response
            .mutated_object
            .map(|m| serde_json::to_value(json_patch::diff(&object, &m)).unwrap())
            .unwrap_or(Value::Null);
        assert_eq!(patch, want["patch"], "{file}: patch");
        if let Some(message) = want.get("message") {
            assert_eq!(
                response.message.as_deref(),
                message.as_str(),
                "{file}: message"
            );
        }

        // The row of the table that applied, through the pure function.
        let parsed =
            sts_safe_rollout::request::parse_payload(payload.to_string().as_bytes()).unwrap();
        let row = match response::evaluate(parsed.request, "safe-rollout.dev") {
            Response::Accept(row) | Response::Mutate(row, _) => Value::from(format!("{row:?}")),
            Response::Reject(_) => Value::Null,
        };
        assert_eq!(row, want["row"], "{file}: row");
    }
}

#[test]
fn a_different_prefix_ignores_the_default_force_annotation() {
    // create-force.json carries safe-rollout.dev/force-rolling-update; with another prefix it is guarded.
    let payload = json!({"request": request_of("create-force.json"),
        "settings": {"annotationPrefix": "moco.cybozu.com"}});
    let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
    let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
    let mutated = response.mutated_object.expect("staged");
    assert_eq!(
        mutated["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        3
    );
}
