//! The compilation cache: `--no-cache` and `RUNNER_NO_CACHE` write nothing, a second run reads the module
//! the first compiled, and the cached module answers as a fresh compile.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{policy_wasm, repo, runner, stderr, stdout_json};

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
