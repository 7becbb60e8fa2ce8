//! The runner binary end to end: the real AdmissionReviews through the compiled policy.wasm, and every
//! failure path giving a one-line error and a non-zero exit.
//!
//! policy.wasm comes from `make policy.wasm` (`POLICY_WASM` overrides its path).

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

#[test]
fn shared_admission_reviews_through_policy_wasm() {
    let policy = policy_wasm();
    let expected: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(repo().join("test_data/expected-admission.json")).unwrap(),
    )
    .unwrap();
    let dir = repo().join("fixtures/admission");
    let mut checked = 0;
    for (file, want) in expected.iter().filter(|(k, _)| k.as_str() != "//") {
        let request = dir.join(file);
        let out = runner(&[
            "run",
            "--request-path",
            request.to_str().unwrap(),
            policy.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{file}: {}", stderr(&out));
        let response = stdout_json(&out);
        let review: Value =
            serde_json::from_str(&std::fs::read_to_string(&request).unwrap()).unwrap();
        assert_eq!(response["uid"], review["request"]["uid"], "{file}: uid");
        assert_eq!(response["allowed"], want["allowed"], "{file}: allowed");
        assert_eq!(decoded_patch(&response), want["patch"], "{file}: patch");
        let has_patch = !want["patch"].is_null();
        assert_eq!(
            response.get("patchType").is_some(),
            has_patch,
            "{file}: patchType"
        );
        if let Some(message) = want.get("message") {
            assert_eq!(&response["status"]["message"], message, "{file}: message");
            assert_eq!(response["status"]["code"], 400, "{file}: code");
        } else {
            assert!(
                response.get("status").is_none(),
                "{file}: status must be absent"
            );
        }
        assert!(response["auditAnnotations"].is_null() && response["warnings"].is_null());
        checked += 1;
    }
    assert!(checked >= 17, "only {checked} fixtures checked");
}

#[test]
fn a_bare_admission_request_gets_the_same_answer_as_the_review() {
    let policy = policy_wasm();
    let review_path = repo().join("test_data/update-template.json");
    let review: Value =
        serde_json::from_str(&std::fs::read_to_string(&review_path).unwrap()).unwrap();
    let bare = std::env::temp_dir().join(format!("runner-bare-{}.json", std::process::id()));
    std::fs::write(&bare, review["request"].to_string()).unwrap();
    let a = runner(&[
        "run",
        "-r",
        review_path.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    let b = runner(&[
        "run",
        "-r",
        bare.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    std::fs::remove_file(&bare).ok();
    assert!(a.status.success() && b.status.success());
    assert_eq!(stdout_json(&a), stdout_json(&b));
    assert!(!decoded_patch(&stdout_json(&a)).is_null());
}

#[test]
fn refused_settings_exit_1_like_kwctl() {
    let policy = policy_wasm();
    let request = repo().join("test_data/create.json");
    let out = runner(&[
        "run",
        "-r",
        request.to_str().unwrap(),
        "--settings-json",
        r#"{"annotationPrefix": "Bad_Prefix"}"#,
        policy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_json(&out)["valid"], false);
    let err = stderr(&out);
    assert!(
        err.starts_with("Error: Provided settings are not valid: annotationPrefix: "),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn settings_from_a_yaml_file_apply() {
    let policy = policy_wasm();
    let request = repo().join("test_data/create-forced.json");
    let settings = repo().join("test_data/settings-moco.yaml");
    let out = runner(&[
        "run",
        "-r",
        request.to_str().unwrap(),
        "--settings-path",
        settings.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The MOCO prefix: the set is guarded (its safe-rollout.dev force annotation is not read), marked
    // under that prefix and staged.
    let patch = decoded_patch(&stdout_json(&out));
    assert_eq!(
        patch,
        serde_json::json!([
            {"op": "add", "path": "/metadata/annotations/moco.cybozu.com~1guarded", "value": "true"},
            {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": 3}
        ])
    );
}

/// (arguments, what stderr must mention)
fn failure_cases(tmp: &Path) -> Vec<(Vec<String>, &'static str)> {
    let policy = policy_wasm().to_string_lossy().into_owned();
    let request = repo()
        .join("test_data/create.json")
        .to_string_lossy()
        .into_owned();
    let bad_json = tmp.join("bad.json");
    std::fs::write(&bad_json, "{not json").unwrap();
    let not_wasm = tmp.join("not.wasm");
    std::fs::write(&not_wasm, "hello").unwrap();
    let no_exports = tmp.join("empty.wasm");
    std::fs::write(&no_exports, wat::parse_str("(module)").unwrap()).unwrap();
    let trap = tmp.join("trap.wasm");
    std::fs::write(
        &trap,
        wat::parse_str(
            r#"(module
                 (memory (export "memory") 1)
                 (func (export "wapc_init"))
                 (func (export "__guest_call") (param i32 i32) (result i32) unreachable))"#,
        )
        .unwrap(),
    )
    .unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    vec![
        (
            vec![
                "run".into(),
                "-r".into(),
                "/nonexistent/request.json".into(),
                policy.clone(),
            ],
            "cannot read request file /nonexistent/request.json",
        ),
        (
            vec!["run".into(), "-r".into(), s(&bad_json), policy.clone()],
            "is not valid JSON",
        ),
        (
            vec![
                "run".into(),
                "-r".into(),
                request.clone(),
                "/nonexistent/policy.wasm".into(),
            ],
            "cannot read policy /nonexistent/policy.wasm",
        ),
        (
            vec!["run".into(), "-r".into(), request.clone(), s(&not_wasm)],
            "not a WebAssembly module",
        ),
        (
            vec!["run".into(), "-r".into(), request.clone(), s(&no_exports)],
            "waPC",
        ),
        (
            vec!["run".into(), "-r".into(), request.clone(), s(&trap)],
            "unreachable",
        ),
        (
            vec![
                "run".into(),
                "-r".into(),
                request.clone(),
                "--settings-json".into(),
                "{".into(),
                policy.clone(),
            ],
            "--settings-json is not valid JSON",
        ),
        (
            vec![
                "run".into(),
                "-r".into(),
                request.clone(),
                "https://example/p.wasm".into(),
            ],
            "scheme https:// is not supported",
        ),
        (
            vec![
                "run".into(),
                "-r".into(),
                request.clone(),
                "registry://".into(),
            ],
            "policy registry://: no image reference",
        ),
        // Nothing listens on loopback port 1: refused at once, and the error names the reference.
        (
            vec![
                "run".into(),
                "-r".into(),
                request.clone(),
                "registry://127.0.0.1:1/policies/p:v1".into(),
            ],
            "cannot pull policy registry://127.0.0.1:1/policies/p:v1 over plain HTTP",
        ),
        (
            vec!["pull".into(), "127.0.0.1:1/policies/p:v1".into()],
            "127.0.0.1:1/policies/p:v1: expected registry://",
        ),
        (
            vec![
                "push".into(),
                request.clone(),
                "registry://127.0.0.1:1/policies/p:v1".into(),
            ],
            "refusing to push to registry://127.0.0.1:1/policies/p:v1: the file is not a WebAssembly module",
        ),
    ]
}

#[test]
fn failures_are_one_line_errors_with_a_non_zero_exit() {
    let tmp = std::env::temp_dir().join(format!("runner-cli-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (args, needle) in failure_cases(&tmp) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = runner(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("Error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn bench_reports_per_evaluation_figures() {
    let policy = policy_wasm();
    let request = repo().join("test_data/update-template.json");
    let out = runner(&[
        "bench",
        "-r",
        request.to_str().unwrap(),
        "--iterations",
        "20",
        "--warm-up",
        "2",
        policy.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("evaluations: 20 (after 2 warm-up)"), "{text}");
    assert!(text.contains("allowed=true mutated=true"), "{text}");
    assert!(text.contains("validate:    mean "), "{text}");
}

#[test]
fn help_explains_the_flags() {
    let out = runner(&["run", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--request-path",
        "--settings-path",
        "--settings-json",
        "AdmissionReview",
    ] {
        assert!(text.contains(flag), "run --help lacks {flag}: {text}");
    }
}

/// The compilation cache's entries under `dir`, recursively, sorted: files named by their hash alone (the
/// cache worker's `HASH.stats` usage counters and `.cleanup` locks, written in the background, are left out).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if !path.file_name().unwrap().to_string_lossy().contains('.') {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_second_run_reads_the_compiled_module_from_the_cache() {
    let policy = policy_wasm();
    let request = repo().join("test_data/update-template.json");
    let tmp = std::env::temp_dir().join(format!("runner-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    // The default cache is wasmtime's, under $XDG_CACHE_HOME.
    let xdg = tmp.join("xdg");
    let cache = xdg.join("wasmtime");
    let run = |extra: &[&str], no_cache_env: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
        command
            .args(["run", "-r", request.to_str().unwrap()])
            .args(extra)
            .arg(&policy)
            .env("XDG_CACHE_HOME", &xdg)
            .env_remove("RUNNER_NO_CACHE")
            .env_remove("RUNNER_CACHE_DIR");
        if let Some(value) = no_cache_env {
            command.env("RUNNER_NO_CACHE", value);
        }
        let out = command.output().expect("runner starts");
        assert!(out.status.success(), "{}", stderr(&out));
        stdout_json(&out)
    };

    let uncached = run(&["--no-cache"], None);
    assert_eq!(run(&[], Some("1")), uncached);
    assert!(
        !xdg.exists(),
        "--no-cache or RUNNER_NO_CACHE=1 wrote to the cache"
    );

    let first = run(&[], None);
    let stored = files_under(&cache.join("modules"));
    assert_eq!(stored.len(), 1, "one compiled module cached: {stored:?}");
    let second = run(&[], None);
    assert_eq!(files_under(&cache.join("modules")), stored, "nothing new");
    assert_eq!(
        first, uncached,
        "the cached module answers as the compiled one"
    );
    assert_eq!(second, uncached);

    // bench says where the module came from: this run found it in the cache given by --cache-dir.
    let out = runner(&[
        "bench",
        "-r",
        request.to_str().unwrap(),
        "--iterations",
        "1",
        "--warm-up",
        "0",
        "--cache-dir",
        cache.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(module from the cache + "), "{text}");
    std::fs::remove_dir_all(&tmp).ok();
}
