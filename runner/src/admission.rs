//! The admission side of `kwctl run`: which request a file holds, the payload a waPC policy's `validate`
//! receives, and the AdmissionResponse built from the policy's reply.
//!
//! Shapes follow Kubewarden's policy-evaluator: the request is re-serialized through a typed
//! AdmissionRequest (absent and `null` fields are dropped), and the response carries a base64 JSON Patch
//! computed with `json_patch::diff(object, mutated_object)`.

use std::collections::HashMap;

use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{group, version, kind}` of an AdmissionRequest.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group (`""` for core).
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// `{group, version, resource}` of an AdmissionRequest.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupVersionResource {
    /// API group (`""` for core).
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Resource (plural, lowercase).
    #[serde(default)]
    pub resource: String,
}

/// An `admission.k8s.io/v1` AdmissionRequest, as policy-evaluator models it: optional fields are skipped
/// when absent, so the policy never sees an explicit `null` for them.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Request UID; echoed in the response.
    pub uid: String,
    /// Kind of `object`.
    pub kind: GroupVersionKind,
    /// Resource requested.
    pub resource: GroupVersionResource,
    /// Subresource (`status`, `scale`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// Kind of the original request, when converted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    /// Resource of the original request, when converted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    /// Subresource of the original request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// Object name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Object namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// The requesting user.
    #[serde(default)]
    pub user_info: Value,
    /// The object as it would be stored (`null` for DELETE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// The stored object (UPDATE, DELETE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// Nothing will be persisted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// CreateOptions / UpdateOptions / DeleteOptions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// Reads the AdmissionRequest out of a request file's JSON: a whole `AdmissionReview` (its `request`) or a
/// bare AdmissionRequest, as `kwctl run --request-path` accepts.
///
/// # Errors
/// When the JSON is not an object, an AdmissionReview has no `request`, or a field has the wrong type
/// (the message names it, e.g. `request.operation: invalid type: integer`).
pub fn request_from_json(document: &Value) -> Result<AdmissionRequest> {
    let Value::Object(map) = document else {
        return Err(anyhow!(
            "expected a JSON object (an AdmissionReview or an AdmissionRequest)"
        ));
    };
    let (request, prefix) = if map.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        let request = map
            .get("request")
            .filter(|r| !r.is_null())
            .ok_or_else(|| anyhow!("AdmissionReview has no `request`"))?;
        (request, "request.")
    } else {
        (document, "")
    };
    serde_path_to_error::deserialize(request)
        .map_err(|e| anyhow!("{prefix}{}: {}", e.path(), e.inner()))
}

/// The payload a waPC policy's `validate` receives: `{"request": <AdmissionRequest>, "settings": …}`.
///
/// # Errors
/// Only if serialization fails, which it does not for these types.
pub fn validate_payload(request: &AdmissionRequest, settings: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(&serde_json::json!({"request": request, "settings": settings}))
        .context("serializing the validate payload")
}

/// What a Kubewarden policy answers from `validate` (snake_case, as the SDK's `ValidationResponse`).
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
pub struct PolicyResponse {
    /// Whether the request is accepted.
    pub accepted: bool,
    /// Rejection message.
    #[serde(default)]
    pub message: Option<String>,
    /// Rejection HTTP code.
    #[serde(default)]
    pub code: Option<u16>,
    /// The object as the policy wants it stored (mutating policies only).
    #[serde(default)]
    pub mutated_object: Option<Value>,
    /// Audit annotations.
    #[serde(default)]
    pub audit_annotations: Option<HashMap<String, String>>,
    /// Warnings for the client.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// What a policy answers from `validate_settings`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SettingsResponse {
    /// Whether the settings are valid.
    pub valid: bool,
    /// Why not.
    #[serde(default)]
    pub message: Option<String>,
}

/// The `status` of an AdmissionResponse.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseStatus {
    /// Message shown to the client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// HTTP code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// An `admission.k8s.io/v1` AdmissionResponse, serialized exactly as `kwctl run` prints it (field order,
/// `patchType`/`patch`/`status` only when set, `auditAnnotations`/`warnings` as `null` when empty).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's UID.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// `JSONPatch` when `patch` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Base64 of the RFC 6902 JSON Patch from `object` to the mutated object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Message and code of a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    /// Audit annotations (`null` when none).
    pub audit_annotations: Option<HashMap<String, String>>,
    /// Warnings (`null` when none).
    pub warnings: Option<Vec<String>>,
}

impl AdmissionResponse {
    /// Builds the response from the policy's reply, as policy-evaluator's
    /// `AdmissionResponse::from_policy_validation_response` does: the patch is
    /// `json_patch::diff(object, mutated_object)`, omitted when empty; a mutation of a DELETE (no object)
    /// is refused.
    ///
    /// # Errors
    /// Only if the patch cannot be serialized.
    pub fn from_policy_response(
        uid: &str,
        object: Option<&Value>,
        reply: &PolicyResponse,
    ) -> Result<AdmissionResponse> {
        let object = object.filter(|o| !o.is_null());
        if reply.mutated_object.is_some() && object.is_none() {
            return Ok(AdmissionResponse {
                uid: uid.to_string(),
                allowed: false,
                status: Some(ResponseStatus {
                    message: Some(
                        "Incoming object is null, which happens only with DELETE operations, but the \
                         policy is attempting a mutation. This is not allowed"
                            .into(),
                    ),
                    code: None,
                }),
                ..Default::default()
            });
        }
        let patch = match (&reply.mutated_object, object) {
            (Some(mutated), Some(object)) => {
                let diff = json_patch::diff(object, mutated);
                if diff.0.is_empty() {
                    None
                } else {
                    Some(STANDARD.encode(serde_json::to_vec(&diff).context("serializing patch")?))
                }
            }
            _ => None,
        };
        let status = (reply.message.is_some() || reply.code.is_some()).then(|| ResponseStatus {
            message: reply.message.clone(),
            code: reply.code,
        });
        Ok(AdmissionResponse {
            uid: uid.to_string(),
            allowed: reply.accepted,
            patch_type: patch.as_ref().map(|_| "JSONPatch".to_string()),
            patch,
            status,
            audit_annotations: reply.audit_annotations.clone(),
            warnings: reply.warnings.clone(),
        })
    }
}

/// Parses settings given as YAML or JSON text (`--settings-path`; JSON is YAML). Empty text means `{}`.
///
/// # Errors
/// When the text is neither, with the parser's line and column.
pub fn settings_from_text(text: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let value = crate::yaml::value(text)
        .map_err(|e| anyhow!("settings are not valid YAML or JSON: {e}"))?;
    Ok(if value.is_null() {
        Value::Object(Default::default())
    } else {
        value
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(patch: &str) -> Value {
        serde_json::from_slice(&STANDARD.decode(patch).unwrap()).unwrap()
    }

    #[test]
    fn admission_review_and_bare_request_give_the_same_request() {
        let req = json!({"uid": "u1", "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
            "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
            "operation": "CREATE", "subResource": null, "object": {"a": 1}});
        let review =
            json!({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req});
        let a = request_from_json(&review).unwrap();
        let b = request_from_json(&req).unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap()
        );
        let payload: Value =
            serde_json::from_slice(&validate_payload(&a, &json!({})).unwrap()).unwrap();
        assert_eq!(payload["request"]["uid"], "u1");
        assert!(
            payload["request"].get("subResource").is_none(),
            "null subResource must be dropped"
        );
        assert!(payload["request"].get("oldObject").is_none());
        assert_eq!(payload["settings"], json!({}));
    }

    #[test]
    fn request_errors_name_the_field() {
        let err = request_from_json(&json!({"kind": "AdmissionReview", "request": {"uid": 3}}))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("request.uid: invalid type: integer"),
            "{err}"
        );
        let err = request_from_json(&json!({"kind": "AdmissionReview"})).unwrap_err();
        assert!(err.to_string().contains("no `request`"), "{err}");
        assert!(request_from_json(&json!([1])).is_err());
    }

    #[test]
    fn mutation_becomes_a_base64_json_patch() {
        let object = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}});
        let mutated = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 3}}}});
        let reply = PolicyResponse {
            accepted: true,
            mutated_object: Some(mutated),
            ..Default::default()
        };
        let resp = AdmissionResponse::from_policy_response("u", Some(&object), &reply).unwrap();
        assert!(resp.allowed);
        assert_eq!(resp.patch_type.as_deref(), Some("JSONPatch"));
        assert_eq!(
            decode(resp.patch.as_deref().unwrap()),
            json!([{"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 3}])
        );
        let line = serde_json::to_string(&resp).unwrap();
        assert!(
            line.starts_with(r#"{"uid":"u","allowed":true,"patchType":"JSONPatch","patch":""#),
            "{line}"
        );
        assert!(
            line.ends_with(r#""auditAnnotations":null,"warnings":null}"#),
            "{line}"
        );
    }

    #[test]
    fn identical_mutated_object_gives_no_patch() {
        let object = json!({"a": 1});
        let reply = PolicyResponse {
            accepted: true,
            mutated_object: Some(object.clone()),
            ..Default::default()
        };
        let resp = AdmissionResponse::from_policy_response("u", Some(&object), &reply).unwrap();
        assert_eq!(resp.patch, None);
        assert_eq!(resp.patch_type, None);
        assert_eq!(
            serde_json::to_string(&resp).unwrap(),
            r#"{"uid":"u","allowed":true,"auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn rejection_carries_status_and_mutating_a_delete_is_refused() {
        let reply = PolicyResponse {
            accepted: false,
            message: Some("no".into()),
            code: Some(400),
            ..Default::default()
        };
        let resp = AdmissionResponse::from_policy_response("u", Some(&json!({})), &reply).unwrap();
        assert!(!resp.allowed);
        assert_eq!(
            resp.status,
            Some(ResponseStatus {
                message: Some("no".into()),
                code: Some(400)
            })
        );
        let reply = PolicyResponse {
            accepted: true,
            mutated_object: Some(json!({})),
            ..Default::default()
        };
        let resp = AdmissionResponse::from_policy_response("u", None, &reply).unwrap();
        assert!(!resp.allowed);
        assert!(resp.status.unwrap().message.unwrap().contains("DELETE"));
    }

    #[test]
    fn settings_accept_yaml_json_and_empty() {
        assert_eq!(
            settings_from_text("annotationPrefix: a.b\n").unwrap(),
            json!({"annotationPrefix": "a.b"})
        );
        assert_eq!(
            settings_from_text(r#"{"annotationPrefix": "a.b"}"#).unwrap(),
            json!({"annotationPrefix": "a.b"})
        );
        assert_eq!(settings_from_text("").unwrap(), json!({}));
        assert!(settings_from_text("a: [").is_err());
    }
}
