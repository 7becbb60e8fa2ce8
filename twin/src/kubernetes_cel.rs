//! The pieces of Kubernetes' CEL environment for MutatingAdmissionPolicy that cel-rust lacks, on top of its
//! standard library, optional types and strings extension.
//!
//! Kubernetes (k8s.io/apiserver `pkg/admission/plugin/policy/mutating`, docs "Mutating Admission Policy")
//! declares for a JSON Patch mutation:
//! - the type `JSONPatch{op, path, from, value}`: here a struct type whose values are plain CEL maps with
//!   those keys (approximation: Kubernetes checks field types at compile time; here `op`/`path`/`from` must
//!   be strings at run time, an unknown field is an error, `op` and `path` are required);
//! - `jsonpatch.escapeKey(string)`: RFC 6901 escaping, `~` → `~0` then `/` → `~1` (as upstream);
//! - the variables `object`, `oldObject`, `request` (and `variables`, bound by [`crate::evaluate`]), typed by
//!   the API server's OpenAPI schema. Approximation: here they are dynamic JSON values, so a type error the
//!   API server would refuse at create time shows up only when evaluated; `crate::subset` checks the
//!   functions and identifiers statically instead. Integers are CEL `int` (Kubernetes: int64 for every
//!   integer field), as [`to_cel`] converts them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::common::types::{CelString, Type};
use cel::common::value::{CowVal, Val};
use cel::objects::{Key, Map};
use cel::{Env, ExecutionError, StructType, Value};

/// The struct type name expressions construct patches with.
pub const JSON_PATCH_TYPE: &str = "JSONPatch";

/// The environment the twin compiles and evaluates the policy in: cel-rust's standard library with
/// optional types (Kubernetes enables them for admission policies since 1.29), the strings extension
/// (Kubernetes' extended string library), the `JSONPatch` type and `jsonpatch.escapeKey`.
///
/// # Errors
/// Only if cel-rust refuses a declaration, which it does not for these names.
pub fn environment() -> Result<Env, cel::DeclarationError> {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)?;
    env.add_type(JsonPatchType {
        r#type: Type::new_struct(JSON_PATCH_TYPE.to_owned()),
    })?;
    cel::add_overload!(env, fn escape_key_overload: (CelString) -> CelString, name = "jsonpatch.escapeKey")?;
    Ok(env)
}

fn escape_key_overload(key: &CelString<'_>) -> CelString<'static> {
    escape_key(key.inner()).into()
}

/// RFC 6901 escaping of one JSON Pointer segment, as Kubernetes' `jsonpatch.escapeKey`.
pub fn escape_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `JSONPatch{…}`: builds a map with the given fields (see the module doc for what is checked).
struct JsonPatchType {
    r#type: Type,
}

impl StructType for JsonPatchType {
    fn get_type(&self) -> &Type {
        &self.r#type
    }

    fn new_value<'b, 'v>(
        &self,
        fields: BTreeMap<String, CowVal<'b, 'v>>,
    ) -> Result<Box<dyn Val + 'v>, ExecutionError> {
        let mut map = HashMap::new();
        for (name, value) in fields {
            let value = Value::try_from(&*value)?;
            match (name.as_str(), &value) {
                ("op" | "path" | "from", Value::String(_)) | ("value", _) => {}
                ("op" | "path" | "from", other) => {
                    return Err(ExecutionError::function_error(
                        JSON_PATCH_TYPE,
                        format!("field `{name}` must be a string, got {}", other.type_of()),
                    ));
                }
                _ => {
                    return Err(ExecutionError::no_such_key(&format!(
                        "field `{name}` on struct `{JSON_PATCH_TYPE}`"
                    )));
                }
            }
            map.insert(Key::String(Arc::new(name)), value);
        }
        for required in ["op", "path"] {
            if !map.contains_key(&Key::String(Arc::new(required.to_owned()))) {
                return Err(ExecutionError::function_error(
                    JSON_PATCH_TYPE,
                    format!("field `{required}` is required"),
                ));
            }
        }
        let patch: Box<dyn Val> = Value::Map(Map { map: Arc::new(map) }).try_into()?;
        Ok(patch)
    }
}

/// A JSON value as Kubernetes presents an object to CEL: integers are `int` (an integer beyond i64 is
/// `uint`), other numbers `double`, objects maps with string keys.
pub fn to_cel(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(to_cel).collect()))
        }
        serde_json::Value::Object(fields) => Value::Map(Map {
            map: Arc::new(
                fields
                    .iter()
                    .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                    .collect(),
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expression: &str) -> Result<Value, ExecutionError> {
        let env = Arc::new(environment().unwrap());
        let program = env.compile(expression).expect("parses");
        program.execute(&cel::Context::with_env(env))
    }

    #[test]
    fn escape_key_escapes_tilde_before_slash() {
        assert_eq!(
            escape_key("safe-rollout.dev/initialized"),
            "safe-rollout.dev~1initialized"
        );
        assert_eq!(escape_key("a~/b"), "a~0~1b");
        assert_eq!(
            eval("jsonpatch.escapeKey('k8s.io/my~label')").unwrap(),
            Value::String(Arc::new("k8s.io~1my~0label".into()))
        );
    }

    #[test]
    fn json_patch_literals_become_maps() {
        let value = eval("[JSONPatch{op: 'add', path: '/a', value: {'b': 1}}]").unwrap();
        assert_eq!(
            value.json().unwrap(),
            serde_json::json!([{"op": "add", "path": "/a", "value": {"b": 1}}])
        );
    }

    #[test]
    fn json_patch_refuses_unknown_or_mistyped_fields() {
        assert!(eval("JSONPatch{op: 'add', path: '/a', valu: 1}").is_err());
        assert!(eval("JSONPatch{op: 1, path: '/a'}").is_err());
        assert!(eval("JSONPatch{path: '/a'}").is_err());
    }

    #[test]
    fn optional_values_compare_as_in_cel_go() {
        // cel-go's Optional.Equal: none == none, of(x) == of(y) iff x == y.
        assert_eq!(eval("{}.?a == {}.?a").unwrap(), Value::Bool(true));
        assert_eq!(eval("{'a': 1}.?a == {}.?a").unwrap(), Value::Bool(false));
        assert_eq!(
            eval("{'a': 1}.?a == {'a': 1}.?a").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            eval("{'a': 1}.?a != {'a': 2}.?a").unwrap(),
            Value::Bool(true)
        );
    }

    #[test]
    fn json_integers_are_cel_ints() {
        assert_eq!(to_cel(&serde_json::json!(3)), Value::Int(3));
        assert_eq!(to_cel(&serde_json::json!(u64::MAX)), Value::UInt(u64::MAX));
        assert_eq!(to_cel(&serde_json::json!(1.5)), Value::Float(1.5));
    }
}
