//! Rejection messages for malformed input, in one shape: `<field>: <problem>`, the field a dotted path.
//!
//! The payload, the settings and the StatefulSets all report through [`at`], so every message names its
//! field the same way: a dotted path from the payload (`request.object.spec.replicas`), as
//! `serde_path_to_error` writes them. Type errors keep serde's wording (`invalid type: string "3",
//! expected i32`): the values are read from the decoded JSON with serde's own deserializers.

use std::fmt::Display;

use serde::Deserialize;
use serde::de::{self, Visitor};
use serde_json::Value;

use crate::Error;

/// `"<field>: <problem>"`, e.g. `request.object.spec.replicas: invalid type: string "3", expected i32`.
pub fn at(field: &str, problem: impl Display) -> String {
    format!("{field}: {problem}")
}

/// Reads an optional scalar field: absent and `null` are `None`; a value of another type is refused with
/// serde's wording for `T` (`i32`, `i64`, `a string`), naming `field()`.
///
/// # Errors
/// [`Error::Field`]: `<field>: invalid type: …, expected i32` (or `invalid value: integer …` when out
/// of range).
pub fn optional<'v, T: Deserialize<'v>>(
    value: Option<&'v Value>,
    field: impl FnOnce() -> String,
) -> Result<Option<T>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v)
            .map(Some)
            .map_err(|e| Error::field(&field(), e)),
    }
}

/// Reads an optional string field, borrowed: as [`optional`] with `String`'s wording (`expected a string`).
///
/// # Errors
/// [`Error::Field`]: `<field>: invalid type: integer `1`, expected a string`.
pub fn optional_str(
    value: Option<&Value>,
    field: impl FnOnce() -> String,
) -> Result<Option<&str>, Error> {
    match value {
        Some(Value::String(s)) => Ok(Some(s)),
        other => optional::<String>(other, field).map(|_| None),
    }
}

/// Reads an optional object field (absent and `null` are `None`). Anything else is refused as serde refuses
/// a value for a struct named `expected` (`invalid type: integer `1`, expected StatefulSetSpec`).
///
/// # Errors
/// [`Error::Field`]: `<field>: invalid type: …, expected <expected>`.
pub fn optional_object<'v>(
    value: Option<&'v Value>,
    expected: &'static str,
    field: impl FnOnce() -> String,
) -> Result<Option<&'v serde_json::Map<String, Value>>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(Error::field(&field(), refusal(other, expected))),
    }
}

/// serde's message for `value` where a struct named `expected` was wanted (`invalid type: integer `1`,
/// expected StatefulSetSpec`).
pub fn refusal(value: &Value, expected: &'static str) -> serde_json::Error {
    match de::Deserializer::deserialize_any(value, Refuse(expected)) {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

/// A visitor that accepts nothing: serde's default for every value is `invalid type: <value>, expected <name>`.
struct Refuse(&'static str);

/// No value is ever produced.
enum Never {}

impl Visitor<'_> for Refuse {
    type Value = Never;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// "an array", "a string", … for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_keep_serdes_wording() {
        let field = || "request.object.spec.replicas".to_string();
        assert_eq!(optional::<i32>(None, field), Ok(None));
        assert_eq!(optional::<i32>(Some(&json!(null)), field), Ok(None));
        assert_eq!(optional::<i32>(Some(&json!(3)), field), Ok(Some(3)));
        let err = optional::<i32>(Some(&json!("3")), field).unwrap_err();
        assert_eq!(err.reason(), "Field");
        assert_eq!(
            err.to_string(),
            r#"request.object.spec.replicas: invalid type: string "3", expected i32"#
        );
        assert_eq!(
            optional::<i32>(Some(&json!(3_000_000_000u64)), field).map_err(|e| e.to_string()),
            Err(
                "request.object.spec.replicas: invalid value: integer `3000000000`, expected i32"
                    .into()
            )
        );
    }

    #[test]
    fn objects_are_refused_as_structs() {
        let field = || "request.object.spec".to_string();
        assert!(
            optional_object(Some(&json!({})), "S", field)
                .unwrap()
                .is_some()
        );
        assert_eq!(optional_object(Some(&json!(null)), "S", field), Ok(None));
        assert_eq!(
            optional_object(Some(&json!(1)), "StatefulSetSpec", field).map_err(|e| e.to_string()),
            Err("request.object.spec: invalid type: integer `1`, expected StatefulSetSpec".into())
        );
        assert_eq!(
            optional_object(Some(&json!([1])), "StatefulSetSpec", field).map_err(|e| e.to_string()),
            Err("request.object.spec: invalid type: sequence, expected StatefulSetSpec".into())
        );
    }
}
