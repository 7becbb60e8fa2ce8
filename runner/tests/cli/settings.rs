//! Settings: refused ones exit 1 as under `kwctl`, a YAML settings file applies, and one that is not YAML
//! is named with the line at fault.

use crate::{decoded_patch, policy_wasm, repo, runner, stderr, stdout_json};

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

#[test]
fn a_settings_file_that_is_not_yaml_is_named_with_the_line_at_fault() {
    let policy = policy_wasm();
    let request = repo().join("test_data/create.json");
    let settings =
        std::env::temp_dir().join(format!("runner-settings-{}.yaml", std::process::id()));
    std::fs::write(&settings, "annotationPrefix: a.b\nnamespaces: [\n").unwrap();
    let out = runner(&[
        "run",
        "-r",
        request.to_str().unwrap(),
        "--settings-path",
        settings.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    std::fs::remove_file(&settings).ok();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let expected = format!(
        "Error: settings file {}: settings are not valid YAML or JSON: unclosed bracket '[' at line 2, column 13: `namespaces: [`",
        settings.display()
    );
    assert_eq!(err.trim_end(), expected);
}
