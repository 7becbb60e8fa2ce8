//! The runner's signing commands end to end (`generate-key-pair`, `sign`, `verify`, `attach-sbom`): a key
//! pair cosign's tools read, and every bad input a one-line error naming the flag or field and the expected
//! form, exit status 1, no panic. The registry round trips are in scripts/registry-test-signing.sh.

use std::path::PathBuf;
use std::process::{Command, Output};

fn runner(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command.args(args).env_remove("COSIGN_PASSWORD");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("runner starts")
}

/// Runs the runner and returns its one-line error; it must fail with status 1 and not panic.
fn error_of(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = runner(args, env);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    stderr
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("runner-signing-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn generate_key_pair_writes_cosigns_files_and_never_overwrites_them() {
    let dir = temp_dir("keys");
    let prefix = dir.join("cosign");
    let prefix = prefix.to_str().unwrap();
    let args = ["generate-key-pair", "--output-key-prefix", prefix];
    let e = error_of(&args, &[]);
    assert!(e.contains("COSIGN_PASSWORD is not set"), "{e}");

    let out = runner(&args, &[("COSIGN_PASSWORD", "pw")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let private = std::fs::read_to_string(format!("{prefix}.key")).unwrap();
    let public = std::fs::read_to_string(format!("{prefix}.pub")).unwrap();
    assert!(private.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"));
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(format!("{prefix}.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let e = error_of(&args, &[("COSIGN_PASSWORD", "pw")]);
    assert!(
        e.contains("cosign.key exists; refusing to overwrite"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{prefix}.key")).unwrap(),
        private
    );

    // The key signs only with its password.
    let uri = "registry://127.0.0.1:1/p:v1";
    let key = format!("{prefix}.key");
    let e = error_of(
        &["sign", "--key", &key, uri],
        &[("COSIGN_PASSWORD", "wrong")],
    );
    assert!(
        e.contains("cannot decrypt the cosign private key with $COSIGN_PASSWORD"),
        "{e}"
    );
    // With it, the signing gets as far as the (absent) registry.
    let e = error_of(&["sign", "--key", &key, uri], &[("COSIGN_PASSWORD", "pw")]);
    assert!(e.contains("cannot sign registry://127.0.0.1:1/p:v1"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sign_names_a_bad_key_or_annotation() {
    let uri = "registry://127.0.0.1:1/p:v1";
    let e = error_of(&["sign", "--key", "/nonexistent/cosign.key", uri], &[]);
    assert!(
        e.contains("--key: cannot read the private key file /nonexistent/cosign.key"),
        "{e}"
    );
    let e = error_of(&["sign", "--key", "env://", uri], &[]);
    assert!(e.contains("expected env://VARIABLE"), "{e}");
    let e = error_of(&["sign", "--key", "env://RUNNER_TEST_UNSET_KEY", uri], &[]);
    assert!(
        e.contains("the environment variable RUNNER_TEST_UNSET_KEY is not set"),
        "{e}"
    );
    let e = error_of(&["sign", "--key", "k", "-a", "novalue", uri], &[]);
    assert!(
        e.contains("--annotation \"novalue\": expected KEY=VALUE"),
        "{e}"
    );
    // Registry credentials are both or neither (checked after the key is read).
    let dir = temp_dir("credentials");
    let prefix = dir.join("k");
    let prefix = prefix.to_str().unwrap();
    let out = runner(
        &["generate-key-pair", "--output-key-prefix", prefix],
        &[("COSIGN_PASSWORD", "")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = format!("{prefix}.key");
    let e = error_of(
        &["sign", "--key", &key, uri],
        &[("RUNNER_REGISTRY_USERNAME", "u")],
    );
    assert!(
        e.contains("RUNNER_REGISTRY_USERNAME is set but RUNNER_REGISTRY_PASSWORD is not"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn verify_names_what_is_missing_or_malformed() {
    let uri = "registry://127.0.0.1:1/p:v1";
    let e = error_of(&["verify", uri], &[]);
    assert!(
        e.contains("nothing to verify against: give --key FILE"),
        "{e}"
    );
    let e = error_of(&["verify", "--key", "/nonexistent.pub", uri], &[]);
    assert!(e.contains("--key: cannot read /nonexistent.pub"), "{e}");

    let dir = temp_dir("verify");
    let not_a_key = dir.join("junk.pub");
    std::fs::write(&not_a_key, "junk").unwrap();
    let e = error_of(&["verify", "--key", not_a_key.to_str().unwrap(), uri], &[]);
    assert!(e.contains("not a PEM public key"), "{e}");

    let config = dir.join("verification-config.yml");
    std::fs::write(
        &config,
        "apiVersion: v1\nallOf:\n  - kind: githubAction\n    repo: r\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let e = error_of(&["verify", "--verification-config-path", config, uri], &[]);
    assert!(e.contains("allOf[0]: kind githubAction needs owner"), "{e}");
    // Not YAML: the file, then the line and the column, on the one line of the error.
    let broken = dir.join("broken.yml");
    std::fs::write(&broken, "apiVersion: v1\nallOf: [\n").unwrap();
    let broken = broken.to_str().unwrap();
    let e = error_of(&["verify", "--verification-config-path", broken, uri], &[]);
    assert!(
        e.contains(&format!("--verification-config-path {broken}: the verification config is not YAML: unclosed bracket '[' at line 2, column 8: `allOf: [`")),
        "{e}"
    );
    // A keyless requirement needs the trust root, before any network.
    let keyless = dir.join("keyless.yml");
    std::fs::write(
        &keyless,
        "apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: o\n",
    )
    .unwrap();
    let e = error_of(
        &[
            "verify",
            "--verification-config-path",
            keyless.to_str().unwrap(),
            uri,
        ],
        &[],
    );
    assert!(e.contains("needs --trusted-root FILE"), "{e}");
    // clap refuses a config with flags (its usage error: status 2).
    let out = runner(
        &[
            "verify",
            "--verification-config-path",
            config,
            "--key",
            "k",
            uri,
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("'--verification-config-path <FILE>' cannot be used with"),
        "{e}"
    );
    let e = error_of(
        &[
            "verify",
            "--github-owner",
            "o",
            "--trusted-root",
            config,
            uri,
        ],
        &[],
    );
    assert!(
        e.contains("--trusted-root: not a Sigstore trusted_root.json"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn attach_sbom_refuses_what_is_not_an_sbom() {
    let dir = temp_dir("sbom");
    let file = dir.join("sbom.json");
    std::fs::write(&file, "{\"name\": \"x\"}").unwrap();
    let e = error_of(
        &[
            "attach-sbom",
            "--sbom",
            file.to_str().unwrap(),
            "registry://127.0.0.1:1/p:v1",
        ],
        &[],
    );
    assert!(e.contains("--sbom: neither CycloneDX"), "{e}");
    let e = error_of(
        &[
            "attach-sbom",
            "--sbom",
            "/nonexistent.json",
            "registry://127.0.0.1:1/p:v1",
        ],
        &[],
    );
    assert!(e.contains("--sbom: cannot read /nonexistent.json"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
