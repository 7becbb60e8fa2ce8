//! The corpus: every real AdmissionReview as a validation payload, and the JSON Pointer edits made to it.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Value, json};

/// Every real AdmissionReview: the captures (`fixtures/admission/`, not the `sts-*`
/// objects) and this repository's `test_data/`, as validation payloads with empty settings.
fn base_payloads() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = [root.join("fixtures/admission"), root.join("test_data")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".json")
                && !name.starts_with("sts-")
                && name != "expected-admission.json"
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let review: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            json!({"request": review["request"], "settings": {}})
        })
        .collect()
}

/// The corpus, read once per process.
pub(crate) fn corpus() -> &'static [Value] {
    static CORPUS: OnceLock<Vec<Value>> = OnceLock::new();
    CORPUS.get_or_init(base_payloads)
}

/// Sets the value at a JSON Pointer, creating objects along the way where the parent is an object.
pub(crate) fn set_pointer(root: &mut Value, pointer: &str, value: Value) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = root.pointer_mut(parent) {
        map.insert(last, value);
    }
}

/// Removes the value at a JSON Pointer, if its parent is an object.
pub(crate) fn remove_pointer(root: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = root.pointer_mut(parent) {
        map.remove(&last);
    }
}

/// The corpus payload whose request uid names `name` (the captures are found by operation).
pub(crate) fn fixture(name: &str) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/admission");
    let review: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
            .unwrap();
    json!({"request": review["request"], "settings": {}})
}
