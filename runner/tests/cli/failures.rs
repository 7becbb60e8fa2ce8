//! Every failure path: a one-line error naming what failed, exit status 1, no panic.

use std::path::Path;

use crate::{policy_wasm, repo, runner, stderr};

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
        // A digest file that cannot be written is refused before anything is pushed (nothing listens).
        (
            vec![
                "push".into(),
                policy.clone(),
                "registry://127.0.0.1:1/policies/p:v1".into(),
                "--digestfile".into(),
                "/nonexistent-dist/policy.digest".into(),
            ],
            "--digestfile /nonexistent-dist/policy.digest: directory /nonexistent-dist does not exist",
        ),
        (
            vec![
                "push".into(),
                policy.clone(),
                "registry://127.0.0.1:1/policies/p:v1".into(),
                "--digestfile".into(),
                s(tmp),
            ],
            "is a directory; expected a file path such as dist/policy.digest",
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
