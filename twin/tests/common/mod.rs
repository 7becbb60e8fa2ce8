//! What the twin tests share: the two policies (policy.wasm through the runner's library, the CEL twin), the
//! request as the API server presents it, and the judgement of one request's two answers.
// Each test file uses a part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use native_twin::defaulting::default_update_strategy;
use native_twin::evaluate::{Outcome, Twin};
use native_twin::policy::{MutatingPolicy, POLICY_PATH, rewrite_prefix};
use runner::admission::{request_from_json, validate_payload};
use runner::compile_cache::CacheSetting;
use runner::host::Policy;
use serde_json::{Value, json};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn manifest_text() -> String {
    let path = repo().join(POLICY_PATH);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The twin for annotation prefix `prefix` (the manifest rewritten as `deploy/render.sh` does).
pub fn twin(prefix: &str) -> Twin {
    let text = rewrite_prefix(&manifest_text(), prefix).expect("prefix rewrite");
    let policy = MutatingPolicy::from_yaml(&text).expect("the manifest reads");
    Twin::compile(&policy).expect("the manifest compiles")
}

/// policy.wasm, loaded once per caller (`make policy.wasm`; `POLICY_WASM` overrides the path).
pub fn wasm() -> Policy {
    let path = std::env::var_os("POLICY_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("policy.wasm"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: build it with `make policy.wasm` (or set POLICY_WASM)",
            path.display()
        )
    });
    // No compilation cache: a test leaves nothing in the user's cache directory.
    Policy::load(&bytes, &CacheSetting::Off).expect("policy.wasm loads")
}

/// The request as the API server presents it to admission: a StatefulSet `object` and `oldObject` with
/// their update strategy defaulted (the real captures already are; a no-op there).
pub fn presented(request: &Value) -> Value {
    let mut request = request.clone();
    for field in ["object", "oldObject"] {
        if let Some(object) = request.get_mut(field)
            && object.get("kind").and_then(Value::as_str) == Some("StatefulSet")
        {
            default_update_strategy(object);
        }
    }
    request
}

/// What ends up stored, or the denial.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The request's object, unchanged.
    Unchanged,
    /// The object after the mutation and the API server's re-defaulting.
    Stored(Value),
    /// The request is denied, with this message.
    Denied(String),
}

fn stored(original: &Value, mut mutated: Value) -> Answer {
    default_update_strategy(&mut mutated);
    if &mutated == original {
        Answer::Unchanged
    } else {
        Answer::Stored(mutated)
    }
}

/// policy.wasm's answer for a presented request.
pub fn wasm_answer(policy: &Policy, request: &Value, prefix: &str) -> Answer {
    let parsed = request_from_json(request).expect("an AdmissionRequest");
    let payload = validate_payload(&parsed, &json!({"annotationPrefix": prefix})).unwrap();
    let response = policy.validate(&payload).expect("policy.wasm answers");
    match (response.accepted, response.mutated_object) {
        (false, _) => Answer::Denied(response.message.unwrap_or_default()),
        (true, None) => Answer::Unchanged,
        (true, Some(mutated)) => stored(&request["object"], mutated),
    }
}

/// The twin's answer for a presented request.
pub fn twin_answer(twin: &Twin, request: &Value) -> Answer {
    match twin.admit(request) {
        Outcome::NotMatched | Outcome::Unchanged => Answer::Unchanged,
        Outcome::Mutated(object) => stored(&request["object"], object),
        Outcome::Denied(message) => Answer::Denied(message),
    }
}

/// How the two answers relate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    /// The same object is stored (or both leave it unchanged).
    Same,
    /// They differ by design; the name is the row (docs/native-twin.md, "What differs, by design").
    ByDesign(&'static str),
}

/// `Invalid`: negative `spec.replicas` or partition. policy.wasm refuses the request itself; the twin leaves
/// it unchanged and the API server's validation refuses it right after admission. Either way it is refused.
pub const INVALID: &str = "Invalid";
/// `Malformed`: a field of the wrong JSON type. Both deny (policy.wasm with a message naming the field, the
/// twin with a CEL error under failurePolicy Fail); a real API server refuses it earlier, when decoding.
pub const MALFORMED: &str = "Malformed";

/// Judges one request: `Ok` when the answers agree or differ by a named design difference, `Err` with both
/// answers otherwise.
pub fn judge(
    twin: &Twin,
    policy: &Policy,
    request: &Value,
    prefix: &str,
) -> Result<Agreement, String> {
    let request = presented(request);
    let wasm = wasm_answer(policy, &request, prefix);
    let native = twin_answer(twin, &request);
    let row = twin.variable(&request, "row").ok();
    match (&wasm, &native) {
        _ if wasm == native => Ok(Agreement::Same),
        (Answer::Denied(_), Answer::Denied(_)) => Ok(Agreement::ByDesign(MALFORMED)),
        (Answer::Denied(_), Answer::Unchanged) if row.as_ref() == Some(&json!(INVALID)) => {
            Ok(Agreement::ByDesign(INVALID))
        }
        _ => Err(format!(
            "policy.wasm and the twin differ (twin row {row:?}):\n  policy.wasm: {wasm:?}\n  twin:        {native:?}"
        )),
    }
}
