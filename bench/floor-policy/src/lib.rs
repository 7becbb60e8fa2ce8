//! The floor any Kubewarden SDK policy pays: the SDK parses the validation payload, the policy accepts.
//! Compiled with the same release profile as the real policy, it gives BENCHMARKS.md its baseline.

use kubewarden_policy_sdk::wapc_guest as guest;
use kubewarden_policy_sdk::{accept_request, protocol_version_guest, request::ValidationRequest};

/// Registers `validate`, `validate_settings` and `protocol_version`.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings);
    guest::register_function("protocol_version", protocol_version_guest);
}

/// Parses the payload as every SDK policy does, then accepts.
fn validate(payload: &[u8]) -> guest::CallResult {
    let _request: ValidationRequest<serde_json::Value> = ValidationRequest::new(payload)?;
    accept_request()
}

/// Accepts any settings.
fn validate_settings(_payload: &[u8]) -> guest::CallResult {
    Ok(br#"{"valid":true}"#.to_vec())
}
