//! The runner binary end to end: the real AdmissionReviews through the compiled policy.wasm, and every
//! failure path giving a one-line error and a non-zero exit. One module per idea: `run` (the reviews
//! through the policy, `run --help`), `settings`, `failures`, `bench` and `cache` (the compilation cache).
//!
//! policy.wasm comes from `make policy.wasm` (`POLICY_WASM` overrides its path).

mod bench;
mod cache;
mod failures;
mod run;
mod settings;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn policy_wasm() -> PathBuf {
    let path = std::env::var_os("POLICY_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("policy.wasm"));
    assert!(
        path.exists(),
        "{} is missing: build it with `make policy.wasm` (or set POLICY_WASM)",
        path.display()
    );
    path
}

fn runner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(args)
        .output()
        .expect("runner starts")
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout is not one JSON line ({e}): {text}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn decoded_patch(response: &Value) -> Value {
    match response.get("patch").and_then(Value::as_str) {
        Some(b64) => serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap(),
        None => Value::Null,
    }
}
