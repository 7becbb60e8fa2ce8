//! Policy settings (`spec.settings` of the ClusterAdmissionPolicy), checked by `validate_settings`.

use serde::{Deserialize, Serialize};

use crate::annotations;

/// The policy's settings. Unknown fields are refused (a misspelt setting must not be silently ignored).
///
/// ```yaml
/// settings:
///   annotationPrefix: moco.cybozu.com   # default: safe-rollout.dev
/// ```
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
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

/// Parses settings from JSON; `null` or absent means all defaults.
///
/// # Errors
/// A message naming the offending field and the expected form, e.g.
/// ``settings: unknown field `prefix`, expected `annotationPrefix` `` or
/// `annotationPrefix: invalid type: integer `3`, expected a string`.
pub fn parse(value: &serde_json::Value) -> Result<Settings, String> {
    match value {
        serde_json::Value::Null => return Ok(Settings::default()),
        serde_json::Value::Object(_) => {}
        other => {
            return Err(format!(
                "settings: expected an object such as {{\"annotationPrefix\": \"safe-rollout.dev\"}}, got {}",
                crate::decision::json_type(other)
            ));
        }
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." || e.inner().to_string().starts_with("unknown field") {
            format!("settings: {}", e.inner())
        } else {
            format!("{path}: {}", e.inner())
        }
    })
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
