//! The floor any mutating Kubewarden SDK policy pays: the SDK decodes the validation payload (the whole
//! AdmissionRequest, both objects), the policy sets one annotation on `request.object` and returns it.
//! Compiled with the same release profile as the real policy, it gives BENCHMARKS.md its baseline, as
//! the bare policy of the `kwctl bench` measurement in issue 15 did.
//!
//! With settings `{"accept": true}` it accepts instead of mutating (decode only: the lower floor).

use kubewarden_policy_sdk::wapc_guest as guest;
use kubewarden_policy_sdk::{
    accept_request, mutate_request, protocol_version_guest, request::ValidationRequest,
};
use serde_json::{Map, Value};

/// Registers `validate`, `validate_settings` and `protocol_version`.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings);
    guest::register_function("protocol_version", protocol_version_guest);
}

/// Decodes the payload as every SDK policy does, then annotates `request.object` with
/// `floor.example.com/seen: "true"` and returns it (or accepts, with `{"accept": true}`).
fn validate(payload: &[u8]) -> guest::CallResult {
    let request: ValidationRequest<Value> = ValidationRequest::new(payload)?;
    if request.settings.get("accept") == Some(&Value::Bool(true)) {
        return accept_request();
    }
    let mut object = request.request.object;
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert("floor.example.com/seen".into(), Value::from("true"));
        }
    }
    mutate_request(object)
}

/// Accepts any settings.
fn validate_settings(_payload: &[u8]) -> guest::CallResult {
    Ok(br#"{"valid":true}"#.to_vec())
}
