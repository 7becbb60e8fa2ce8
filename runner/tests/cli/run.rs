//! `run`: the shared AdmissionReviews through policy.wasm answer as expected-admission.json says, a bare
//! AdmissionRequest as its review, and `run --help` names the flags.

use serde_json::Value;

use crate::{decoded_patch, policy_wasm, repo, runner, stderr, stdout_json};

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
