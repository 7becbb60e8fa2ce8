//! Why the rules refuse an input: [`Error`], one variant per cause, each with a stable
//! [`Error::reason`]. Its `Display` is the rejection message, in the one shape of [`crate::field_error`]
//! (`<field>: <problem>`), worded as before it was typed: the policy answers with it unchanged.

/// A refused input: a malformed field of the payload or the objects, a count the API server refuses
/// anyway, or an annotation prefix that is not a DNS subdomain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A value of the payload or the objects is not what the rules read: a wrong JSON type (serde's
    /// wording: `invalid type: string "3", expected i32`), a required object missing, bytes that are
    /// not JSON. The message as [`crate::field_error::at`] shapes it, `<field>: <problem>`, the field a
    /// dotted path from the payload (`request.object.spec.replicas`): built once, as the policy
    /// answers with it (a field and a problem kept apart cost policy.wasm 3 KB of formatting code).
    #[error("{0}")]
    Field(String),
    /// A negative count, which the API server's validation refuses anyway (`ValidateNonnegativeField`),
    /// in its wording.
    #[error("{field}: Invalid value: {value}: must be greater than or equal to 0")]
    Negative {
        /// `spec.replicas` or `spec.updateStrategy.rollingUpdate.partition`.
        field: &'static str,
        /// The value.
        value: i32,
    },
    /// An empty annotation prefix ([`crate::annotations::validate_prefix`]; the caller names the
    /// field).
    #[error("must not be empty; expected a DNS subdomain such as \"safe-rollout.dev\"")]
    EmptyPrefix,
    /// An annotation prefix over 253 characters.
    #[error("must be at most 253 characters (a DNS subdomain), got {0}")]
    LongPrefix(usize),
    /// An annotation prefix that is not a DNS subdomain (RFC 1123).
    #[error(
        "{0:?} is not a DNS subdomain: expected dot-separated labels of lowercase letters, digits \
         and '-', each 1-63 characters, starting and ending with a letter or digit (for example \
         \"safe-rollout.dev\")"
    )]
    NotASubdomain(String),
}

impl Error {
    /// [`Error::Field`]: `problem` at `field` ([`crate::field_error::at`]).
    pub fn field(field: &str, problem: impl std::fmt::Display) -> Self {
        Error::Field(crate::field_error::at(field, problem))
    }

    /// The message (its `Display`), moved out of an [`Error::Field`] without formatting it again.
    pub fn into_message(self) -> String {
        match self {
            Error::Field(message) => message,
            other => other.to_string(),
        }
    }

    /// The stable name of the cause (PascalCase, the variant's name; never reworded).
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Field(_) => "Field",
            Error::Negative { .. } => "Negative",
            Error::EmptyPrefix => "EmptyPrefix",
            Error::LongPrefix(_) => "LongPrefix",
            Error::NotASubdomain(_) => "NotASubdomain",
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::annotations::validate_prefix;
    use crate::decision::decide;

    #[test]
    fn each_cause_is_its_own_variant_with_the_message_unchanged() {
        let set = |replicas: i64, partition: i64| {
            json!({"metadata": {"name": "web", "namespace": "demo"},
                   "spec": {"replicas": replicas,
                            "updateStrategy": {"type": "RollingUpdate",
                                               "rollingUpdate": {"partition": partition}}}})
        };
        let err = decide(&set(-1, 0), None, "safe-rollout.dev").unwrap_err();
        assert_eq!(
            err,
            Error::Negative {
                field: "spec.replicas",
                value: -1
            }
        );
        assert_eq!(
            err.into_message(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let err = decide(&set(3, -2), None, "safe-rollout.dev").unwrap_err();
        assert_eq!(err.reason(), "Negative");
        assert_eq!(
            err.to_string(),
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -2: must be greater than \
             or equal to 0"
        );
        let err = decide(&json!([]), None, "safe-rollout.dev").unwrap_err();
        assert_eq!(err.reason(), "Field");
        assert_eq!(
            err.into_message(),
            "request.object: expected a StatefulSet object, got an array"
        );
        assert_eq!(validate_prefix(""), Err(Error::EmptyPrefix));
        assert_eq!(
            validate_prefix("A.dev"),
            Err(Error::NotASubdomain("A.dev".into()))
        );
        assert!(
            validate_prefix("A.dev")
                .unwrap_err()
                .to_string()
                .starts_with("\"A.dev\" is not a DNS subdomain: expected dot-separated labels")
        );
    }
}
