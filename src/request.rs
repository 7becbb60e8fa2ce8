//! The parts of a Kubewarden validation payload (`{"request": <AdmissionRequest>, "settings": {...}}`)
//! that the policy reads, parsed tolerantly.
//!
//! The SDK's `KubernetesAdmissionRequest` refuses an explicit `null` for string fields such as
//! `subResource` (its `#[serde(default)]` only covers absent ones) and reports errors with the whole
//! payload as context; here every field is optional and every error names its field path, so a malformed
//! request gets a rejection that says what was wrong instead of a trap.

use serde::Deserialize;
use serde_json::Value;

/// A validation payload as Kubewarden's policy-server and `kwctl run` send it to `validate`.
#[derive(Deserialize, Debug, Default)]
pub struct Payload {
    /// The AdmissionRequest (camelCase, as in an `admission.k8s.io/v1` AdmissionReview's `request`).
    #[serde(default)]
    pub request: AdmissionRequest,
    /// The policy settings; `null` or absent means defaults.
    #[serde(default)]
    pub settings: Value,
}

/// The fields of an `admission.k8s.io/v1` AdmissionRequest this policy reads. Absent and `null` are the
/// same; unknown fields are ignored.
#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Request UID, echoed in logs.
    pub uid: Option<String>,
    /// Fully-qualified kind of `object` (for `statefulsets/scale`: `autoscaling/v1 Scale`).
    pub kind: Option<GroupVersionKind>,
    /// `status`, `scale`, … or absent for the main resource.
    pub sub_resource: Option<String>,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: Option<String>,
    /// The object as it will be stored (defaults already applied by the API server).
    pub object: Option<Value>,
    /// The stored object before this request (UPDATE and DELETE only).
    pub old_object: Option<Value>,
    /// True when nothing will be persisted; the policy answers the same either way.
    pub dry_run: Option<bool>,
}

/// `{group, version, kind}`; the core group is the empty string.
#[derive(Deserialize, Debug, Default, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group, `apps` for StatefulSets.
    #[serde(default)]
    pub group: Option<String>,
    /// API version, `v1`.
    #[serde(default)]
    pub version: Option<String>,
    /// Kind, `StatefulSet`.
    #[serde(default)]
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
}

/// Parses a validation payload.
///
/// # Errors
/// A message naming the field path and what was expected, e.g.
/// `request.kind.kind: invalid type: integer `1`, expected a string`.
pub fn parse_payload(payload: &[u8]) -> Result<Payload, String> {
    // The fast path is plain serde_json; only a payload that fails is parsed again with path tracking,
    // which costs on every node of the (large) objects.
    serde_json::from_slice(payload).or_else(|_| {
        let de = &mut serde_json::Deserializer::from_slice(payload);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                format!("validation payload: {}", e.inner())
            } else {
                format!("{path}: {}", e.inner())
            }
        })
    })
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
        let err = parse_payload(br#"{"request": {"kind": {"kind": 1}}}"#).unwrap_err();
        assert!(
            err.starts_with("request.kind.kind: invalid type: integer"),
            "{err}"
        );
        let err = parse_payload(b"not json").unwrap_err();
        assert!(err.starts_with("validation payload: expected"), "{err}");
        let err = parse_payload(br#"{"request": {"operation": ["UPDATE"]}}"#).unwrap_err();
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
