//! Unit tests of `signing.rs`.

use super::*;
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};

fn reference() -> OciReference {
    oci_reference("registry://127.0.0.1:5000/policies/p:v1").unwrap()
}

fn digest() -> String {
    format!("sha256:{}", "ab".repeat(32))
}

fn key_file(dir: &std::path::Path, pem: &str) -> KeySource {
    let path = dir.join("cosign.key");
    std::fs::write(&path, pem).unwrap();
    KeySource::File(path)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("runner-signing-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_generated_key_is_cosigns_encrypted_pem_and_signs_what_its_public_key_verifies() {
    let (private, public) = generate_key_pair(b"pw").unwrap();
    assert!(
        private.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"),
        "{}",
        &private[..60]
    );
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"), "{public}");
    assert!(
        !private.contains('\r') && !public.contains('\r'),
        "PEM lines end with LF, as cosign's"
    );
    let dir = temp_dir("roundtrip");
    let signer = load_signer(&key_file(&dir, &private), b"pw").unwrap();
    let mut layer = unsigned_layer(&reference(), &digest(), &BTreeMap::new()).unwrap();
    sign_layer(&mut layer, signer).unwrap();
    let verifier = PublicKeyVerifier::try_from(public.as_bytes()).unwrap();
    assert!(verifier.verify(&layer).unwrap());
    // Another key's public half does not verify it.
    let (_, other) = generate_key_pair(b"").unwrap();
    let verifier = PublicKeyVerifier::try_from(other.as_bytes()).unwrap();
    assert!(!verifier.verify(&layer).unwrap());
    // A payload changed after signing (another digest) does not verify either.
    layer.raw_data = String::from_utf8(layer.raw_data.clone())
        .unwrap()
        .replace("abab", "cdcd")
        .into_bytes();
    let verifier = PublicKeyVerifier::try_from(public.as_bytes()).unwrap();
    assert!(!verifier.verify(&layer).unwrap());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_payload_is_cosigns_simple_signing_with_the_repository_and_annotations() {
    let annotations = parse_annotations(&["env=prod".into(), "by=make sign".into()]).unwrap();
    let layer = unsigned_layer(&reference(), &digest(), &annotations).unwrap();
    let payload: serde_json::Value = serde_json::to_value(&layer.simple_signing).unwrap();
    assert_eq!(
        payload["critical"]["type"],
        "cosign container image signature"
    );
    assert_eq!(
        payload["critical"]["image"]["docker-manifest-digest"],
        digest()
    );
    assert_eq!(
        payload["critical"]["identity"]["docker-reference"],
        "127.0.0.1:5000/policies/p"
    );
    assert_eq!(payload["optional"]["env"], "prod");
    assert_eq!(payload["optional"]["by"], "make sign");
    assert!(layer.simple_signing.satisfies_manifest_digest(&digest()));
    let plain = unsigned_layer(&reference(), &digest(), &BTreeMap::new()).unwrap();
    assert!(plain.simple_signing.optional.is_none());
}

#[test]
fn a_wrong_password_or_a_public_key_or_garbage_is_refused_naming_the_key() {
    let (private, public) = generate_key_pair(b"right").unwrap();
    let dir = temp_dir("refused");
    let e = load_signer(&key_file(&dir, &private), b"wrong")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot decrypt") && e.contains("COSIGN_PASSWORD") && e.contains("cosign.key"),
        "{e}"
    );
    let e = load_signer(&key_file(&dir, &public), b"")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a private key") && e.contains("ENCRYPTED SIGSTORE PRIVATE KEY"),
        "{e}"
    );
    let e = load_signer(&key_file(&dir, "hello"), b"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a private key"), "{e}");
    let missing = KeySource::File(dir.join("missing.key"));
    let e = format!("{:#}", load_signer(&missing, b"").unwrap_err());
    assert!(
        e.contains("--key: cannot read the private key file") && e.contains("missing.key"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_key_comes_from_a_file_or_an_environment_variable() {
    assert_eq!(
        KeySource::parse("cosign.key").unwrap(),
        KeySource::File("cosign.key".into())
    );
    assert_eq!(
        KeySource::parse("env://K").unwrap(),
        KeySource::Env("K".into())
    );
    let e = KeySource::parse("env://").unwrap_err().to_string();
    assert!(e.contains("expected env://VARIABLE"), "{e}");
    let e = KeySource::parse("").unwrap_err().to_string();
    assert!(e.contains("--key is empty"), "{e}");
    let unset = KeySource::Env("RUNNER_TEST_SURELY_UNSET_KEY".into());
    let e = load_signer(&unset, b"").unwrap_err().to_string();
    assert!(
        e.contains("env://RUNNER_TEST_SURELY_UNSET_KEY") && e.contains("is not set"),
        "{e}"
    );
    // The variable's value is read as the PEM itself (a CI secret); PATH is set and is no key.
    // (No set_var here: tests run in threads that read the environment.)
    let e = load_signer(&KeySource::Env("PATH".into()), b"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("--key env://PATH: not a private key"), "{e}");
}

#[test]
fn annotations_must_be_key_equals_value() {
    assert_eq!(
        parse_annotations(&["a=b=c".into()]).unwrap(),
        BTreeMap::from([("a".to_string(), "b=c".to_string())])
    );
    for bad in ["novalue", "=x"] {
        let e = parse_annotations(&[bad.into()]).unwrap_err().to_string();
        assert!(e.contains("expected KEY=VALUE") && e.contains(bad), "{e}");
    }
}

#[test]
fn signing_an_unreachable_registry_is_an_error_naming_the_reference() {
    let (private, _) = generate_key_pair(b"").unwrap();
    let dir = temp_dir("unreachable");
    let signer = load_signer(&key_file(&dir, &private), b"").unwrap();
    let uri = "registry://127.0.0.1:1/policies/p:v1";
    let e = sign(uri, signer, &BTreeMap::new(), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot sign registry://127.0.0.1:1/policies/p:v1"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
