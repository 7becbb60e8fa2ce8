//! sts-safe-rollout: a Kubewarden policy that stages StatefulSet template changes behind the
//! rolling-update partition.
//!
//! This file holds the waPC entry points only: the payload is read by [`request`], answered by
//! [`response::evaluate`], whose table is [`decision`], a pure function over the request's own JSON.
//! Everything but the waPC glue and the settings' SDK `Validatable` lives in the SDK-free
//! `sts-safe-rollout-rules` crate (`rules/`), shared with the stepper; its modules are re-exported here
//! under their old paths.

pub use sts_safe_rollout_rules::{annotations, decision, field_error, request, response, view};

pub mod settings;

use kubewarden_policy_sdk::settings::{SettingsValidationResponse, Validatable};
use kubewarden_policy_sdk::wapc_guest as guest;
use kubewarden_policy_sdk::{
    accept_request, logging, mutate_request, protocol_version_guest, reject_request,
};
use lazy_static::lazy_static;
use slog::{Logger, info, o, warn};

use response::Response;

lazy_static! {
    static ref LOG_DRAIN: Logger = Logger::root(
        logging::KubewardenDrain::new(),
        o!("policy" => "sts-safe-rollout")
    );
}

/// HTTP status code sent with a rejection of a malformed request (Bad Request).
const BAD_REQUEST: u16 = 400;

/// Registers the waPC functions Kubewarden calls: `validate`, `validate_settings`, `protocol_version`.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings);
    guest::register_function("protocol_version", protocol_version_guest);
}

/// waPC `validate`: decides one admission request (payload `{"request": …, "settings": …}`).
/// Always answers with a ValidationResponse: accept, accept with `mutated_object`, or reject with a
/// message naming the malformed field. Never returns an error for bad input.
pub fn validate(payload: &[u8]) -> guest::CallResult {
    let payload = match request::parse_payload(payload) {
        Ok(p) => p,
        Err(e) => return reject_request(Some(e.into_message()), Some(BAD_REQUEST), None, None),
    };
    let settings = match settings::parse(&payload.settings).and_then(|s| s.validate().map(|()| s)) {
        Ok(s) => s,
        Err(message) => {
            return reject_request(
                Some(format!("invalid settings: {message}")),
                Some(BAD_REQUEST),
                None,
                None,
            );
        }
    };
    let uid = payload.request.uid.clone().unwrap_or_default();
    match response::evaluate(payload.request, &settings.annotation_prefix) {
        Response::Accept(_) => accept_request(),
        Response::Mutate(row, object) => {
            info!(LOG_DRAIN, "mutating StatefulSet"; "uid" => uid, "row" => format!("{row:?}"));
            mutate_request(object)
        }
        Response::Reject(message) => {
            warn!(LOG_DRAIN, "rejecting malformed request"; "uid" => uid, "reason" => &message);
            reject_request(Some(message), Some(BAD_REQUEST), None, None)
        }
    }
}

/// waPC `validate_settings`: answers `{"valid": bool, "message": …}`. Unknown fields, wrong types and an
/// `annotationPrefix` that is not a DNS subdomain are refused with a message naming the field.
pub fn validate_settings(payload: &[u8]) -> guest::CallResult {
    let verdict = request::decode_json(payload)
        .map_err(|e| format!("settings: not valid JSON: {e}"))
        .and_then(|v| settings::parse(&v))
        .and_then(|s| s.validate());
    let response = match verdict {
        Ok(()) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(message) => SettingsValidationResponse {
            valid: false,
            message: Some(message),
        },
    };
    Ok(serde_json::to_vec(&response)?)
}
