//! Policy settings (`spec.settings` of the ClusterAdmissionPolicy), checked by `validate_settings`.

use serde::Deserialize;
use serde_json::Value;

use crate::annotations;
use crate::field_error;

/// The policy's settings. Unknown fields are refused (a misspelt setting must not be silently ignored).
///
/// ```yaml
/// settings:
///   annotationPrefix: moco.cybozu.com   # default: safe-rollout.dev
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Prefix of every annotation the policy reads or writes (`<prefix>/force-rolling-update`, …): a DNS
    /// subdomain of at most 253 characters. Must match the stepper's `--annotation-prefix`.
    pub annotation_prefix: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            annotation_prefix: annotations::DEFAULT_PREFIX.to_string(),
        }
    }
}

impl kubewarden_policy_sdk::settings::Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        annotations::validate_prefix(&self.annotation_prefix)
            .map_err(|e| format!("annotationPrefix: {e}"))
    }
}

/// The one settings field, as written in the ClusterAdmissionPolicy.
const ANNOTATION_PREFIX: &str = "annotationPrefix";

/// Parses settings from JSON; `null` or absent means all defaults.
///
/// # Errors
/// A message naming the offending field and the expected form, in serde's wording, e.g.
/// ``settings: unknown field `prefix`, expected `annotationPrefix` `` or
/// `annotationPrefix: invalid type: integer `3`, expected a string`.
pub fn parse(value: &Value) -> Result<Settings, String> {
    let map = match value {
        Value::Null => return Ok(Settings::default()),
        Value::Object(map) => map,
        other => {
            let got = field_error::json_type(other);
            let problem = format!(
                "expected an object such as {{\"annotationPrefix\": \"safe-rollout.dev\"}}, got {got}"
            );
            return Err(field_error::at("settings", problem));
        }
    };
    if let Some(unknown) = map.keys().find(|k| *k != ANNOTATION_PREFIX) {
        let problem = format!("unknown field `{unknown}`, expected `{ANNOTATION_PREFIX}`");
        return Err(field_error::at("settings", problem));
    }
    match map.get(ANNOTATION_PREFIX) {
        None => Ok(Settings::default()),
        // `null` is refused, as serde refuses it for a string with a default.
        Some(v) => String::deserialize(v)
            .map(|annotation_prefix| Settings { annotation_prefix })
            .map_err(|e| field_error::at(ANNOTATION_PREFIX, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubewarden_policy_sdk::settings::Validatable;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::null(json!(null), "safe-rollout.dev")]
    #[case::empty(json!({}), "safe-rollout.dev")]
    #[case::moco(json!({"annotationPrefix": "moco.cybozu.com"}), "moco.cybozu.com")]
    fn parses_valid_settings(#[case] input: serde_json::Value, #[case] prefix: &str) {
        let s = parse(&input).expect("valid");
        assert_eq!(s.annotation_prefix, prefix);
        assert_eq!(s.validate(), Ok(()));
    }

    #[rstest]
    #[case::unknown_field(json!({"prefix": "a.b"}), "unknown field `prefix`")]
    #[case::wrong_type(json!({"annotationPrefix": 3}), "annotationPrefix: invalid type: integer `3`")]
    #[case::not_an_object(json!([1]), "settings: expected an object")]
    fn refuses_malformed_settings(#[case] input: serde_json::Value, #[case] needle: &str) {
        let err = parse(&input).unwrap_err();
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }

    #[rstest]
    #[case::uppercase("Safe-Rollout.dev")]
    #[case::slash("a/b")]
    #[case::empty("")]
    #[case::too_long(&"a".repeat(254))]
    fn refuses_prefixes_that_are_not_dns_subdomains(#[case] prefix: &str) {
        let s = Settings {
            annotation_prefix: prefix.to_string(),
        };
        let err = s.validate().unwrap_err();
        assert!(err.starts_with("annotationPrefix: "), "{err}");
    }
}
