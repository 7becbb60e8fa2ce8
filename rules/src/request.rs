//! The parts of a Kubewarden validation payload (`{"request": <AdmissionRequest>, "settings": {...}}`)
//! that the policy reads, parsed tolerantly.
//!
//! The payload is decoded once into a `serde_json::Value` (what every SDK policy pays), then the few
//! request fields the policy reads are taken out of it and type-checked; `object` and `oldObject` are moved,
//! never copied. The SDK's `KubernetesAdmissionRequest` refuses an explicit `null` for string fields such as
//! `subResource` (its `#[serde(default)]` only covers absent ones) and reports errors with the whole
//! payload as context; here every field is optional and every error names its field path, so a malformed
//! request gets a rejection that says what was wrong instead of a trap.

use serde_json::{Map, Value};

use crate::Error;
use crate::field_error::{self, optional, optional_object};

/// A validation payload as Kubewarden's policy-server and `kwctl run` send it to `validate`.
#[derive(Debug, Default)]
pub struct Payload {
    /// The AdmissionRequest (camelCase, as in an `admission.k8s.io/v1` AdmissionReview's `request`).
    pub request: AdmissionRequest,
    /// The policy settings; `null` or absent means defaults.
    pub settings: Value,
}

/// The fields of an `admission.k8s.io/v1` AdmissionRequest this policy reads. Absent and `null` are the
/// same; unknown fields are ignored.
#[derive(Debug, Default)]
pub struct AdmissionRequest {
    /// Request UID, echoed in logs.
    pub uid: Option<String>,
    /// Fully-qualified kind of `object` (for `statefulsets/scale`: `autoscaling/v1 Scale`).
    pub kind: Option<GroupVersionKind>,
    /// `subResource`: `status`, `scale`, … or absent for the main resource.
    pub sub_resource: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: Option<String>,
    /// The object as it will be stored (defaults already applied by the API server).
    pub object: Option<Value>,
    /// `oldObject`: the stored object before this request (UPDATE and DELETE only).
    pub old_object: Option<Value>,
    /// `dryRun`: true when nothing will be persisted; the policy answers the same either way.
    pub dry_run: Option<bool>,
}

/// `{group, version, kind}`; the core group is the empty string.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group, `apps` for StatefulSets.
    pub group: Option<String>,
    /// API version, `v1`.
    pub version: Option<String>,
    /// Kind, `StatefulSet`.
    pub kind: Option<String>,
}

impl AdmissionRequest {
    /// True for `apps/v1 StatefulSet` on the main resource (no subresource).
    pub fn is_statefulset_main_resource(&self) -> bool {
        let is_sts = self.kind.as_ref().is_some_and(|k| {
            k.group.as_deref() == Some("apps")
                && k.version.as_deref() == Some("v1")
                && k.kind.as_deref() == Some("StatefulSet")
        });
        is_sts && self.sub_resource.as_deref().unwrap_or("").is_empty()
    }

    /// Takes the fields this policy reads out of a decoded `request` object.
    fn take(mut r: Map<String, Value>) -> Result<Self, Error> {
        let at = |path: &'static str| move || format!("request.{path}");
        let kind = match optional_object(r.get("kind"), "struct GroupVersionKind", at("kind"))? {
            None => None,
            Some(k) => Some(GroupVersionKind {
                group: optional(k.get("group"), at("kind.group"))?,
                version: optional(k.get("version"), at("kind.version"))?,
                kind: optional(k.get("kind"), at("kind.kind"))?,
            }),
        };
        Ok(AdmissionRequest {
            dry_run: optional(r.get("dryRun"), at("dryRun"))?,
            kind,
            operation: optional(r.get("operation"), at("operation"))?,
            sub_resource: optional(r.get("subResource"), at("subResource"))?,
            uid: optional(r.get("uid"), at("uid"))?,
            object: r.remove("object").filter(|v| !v.is_null()),
            old_object: r.remove("oldObject").filter(|v| !v.is_null()),
        })
    }
}

/// Parses a validation payload.
///
/// The fast path decodes straight into the fields read (serde skips the rest without building it); only
/// a payload that fails is decoded again as a `Value` and read field by field, to name the field at fault.
///
/// # Errors
/// A message naming the field path and what was expected, e.g.
/// `request.kind.kind: invalid type: integer `1`, expected a string`, or
/// `validation payload: expected value at line 1 column 1` for bytes that are not JSON.
pub fn parse_payload(payload: &[u8]) -> Result<Payload, Error> {
    match serde_json::from_slice::<fast::Payload>(payload) {
        Ok(p) => Ok(p.into()),
        Err(_) => parse_payload_naming_the_field(payload),
    }
}

/// Decodes `bytes` as one JSON value (`serde_json::from_slice`). Not generic, so the policy crate calls
/// this one instantiation of the decoder (for `validate_settings`) rather than compile its own copy.
///
/// # Errors
/// serde_json's error for bytes that are not one JSON value.
pub fn decode_json(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// The diagnostic path of [`parse_payload`]: decodes a `Value`, then reads each field, naming a bad one.
fn parse_payload_naming_the_field(payload: &[u8]) -> Result<Payload, Error> {
    let whole = "validation payload";
    let value = decode_json(payload).map_err(|e| Error::field(whole, e))?;
    let Value::Object(mut top) = value else {
        return Err(Error::field(
            whole,
            field_error::refusal(&value, "struct Payload"),
        ));
    };
    let request = match top.remove("request") {
        None => AdmissionRequest::default(),
        Some(Value::Object(r)) => AdmissionRequest::take(r)?,
        Some(other) => {
            let problem = field_error::refusal(&other, "struct AdmissionRequest");
            return Err(Error::field("request", problem));
        }
    };
    Ok(Payload {
        request,
        settings: top.remove("settings").unwrap_or(Value::Null),
    })
}

/// The fast path's shapes: the same fields with serde's derive (absent and `null` are `None`, unknown
/// fields skipped without being built). Input it refuses goes to the diagnostic path, which names the
/// field.
mod fast {
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Deserialize)]
    pub struct Payload {
        #[serde(default)]
        request: AdmissionRequest,
        #[serde(default)]
        settings: Value,
    }

    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct AdmissionRequest {
        uid: Option<String>,
        kind: Option<GroupVersionKind>,
        sub_resource: Option<String>,
        operation: Option<String>,
        object: Option<Value>,
        old_object: Option<Value>,
        dry_run: Option<bool>,
    }

    #[derive(Deserialize)]
    struct GroupVersionKind {
        group: Option<String>,
        version: Option<String>,
        kind: Option<String>,
    }

    impl From<Payload> for super::Payload {
        fn from(
            Payload {
                request: r,
                settings,
            }: Payload,
        ) -> Self {
            let kind = r.kind.map(|k| super::GroupVersionKind {
                group: k.group,
                version: k.version,
                kind: k.kind,
            });
            let request = super::AdmissionRequest {
                uid: r.uid,
                kind,
                sub_resource: r.sub_resource,
                operation: r.operation,
                object: r.object,
                old_object: r.old_object,
                dry_run: r.dry_run,
            };
            super::Payload { request, settings }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_and_absent_fields_are_tolerated() {
        let p =
            parse_payload(br#"{"request": {"subResource": null, "kind": null, "object": null}}"#)
                .expect("parses");
        assert!(p.request.sub_resource.is_none());
        assert!(p.request.object.is_none());
        assert!(p.settings.is_null());
        assert!(!p.request.is_statefulset_main_resource());
    }

    #[test]
    fn errors_name_the_field() {
        let err = parse_payload(br#"{"request": {"kind": {"kind": 1}}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("request.kind.kind: invalid type: integer"),
            "{err}"
        );
        let err = parse_payload(b"not json").unwrap_err().to_string();
        assert!(err.starts_with("validation payload: expected"), "{err}");
        let err = parse_payload(br#"{"request": {"operation": ["UPDATE"]}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("request.operation: invalid type: sequence"),
            "{err}"
        );
    }

    #[test]
    fn only_apps_v1_statefulset_main_resource_is_in_scope() {
        let sts = r#"{"group":"apps","version":"v1","kind":"StatefulSet"}"#;
        for (req, in_scope) in [
            (format!(r#"{{"kind":{sts}}}"#), true),
            (format!(r#"{{"kind":{sts},"subResource":""}}"#), true),
            (format!(r#"{{"kind":{sts},"subResource":"status"}}"#), false),
            (
                r#"{"kind":{"group":"apps","version":"v1beta1","kind":"StatefulSet"}}"#.into(),
                false,
            ),
            (
                r#"{"kind":{"group":"","version":"v1","kind":"StatefulSet"}}"#.into(),
                false,
            ),
            (
                r#"{"kind":{"group":"autoscaling","version":"v1","kind":"Scale"}}"#.into(),
                false,
            ),
        ] {
            let p = parse_payload(format!(r#"{{"request":{req}}}"#).as_bytes()).unwrap();
            assert_eq!(p.request.is_statefulset_main_resource(), in_scope, "{req}");
        }
    }
}
