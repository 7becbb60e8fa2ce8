//! `bench`: per-evaluation figures after the warm-up.

use crate::{policy_wasm, repo, runner, stderr};

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
