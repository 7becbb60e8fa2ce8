//! Unit tests of `verify.rs`.

use super::*;
use crate::signing::{generate_key_pair, oci_reference, sign_layer, unsigned_layer};
use sigstore::crypto::SigningScheme;
use sigstore::crypto::signing_key::SigStoreKeyPair;

/// A layer signed with a new key, and that key's public PEM.
fn signed_layer(annotations: &[(&str, &str)]) -> (SignatureLayer, String) {
    let (private, public) = generate_key_pair(b"").unwrap();
    let signer = SigStoreKeyPair::from_encrypted_pem(private.as_bytes(), b"")
        .unwrap()
        .to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
        .unwrap();
    let reference = oci_reference("127.0.0.1:5000/sts-stepper:v1").unwrap();
    let annotations = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut layer = unsigned_layer(
        &reference,
        &format!("sha256:{}", "0".repeat(64)),
        &annotations,
    )
    .unwrap();
    sign_layer(&mut layer, signer).unwrap();
    (layer, public)
}

fn flags(keys: &[String], annotations: &[(&str, &str)]) -> VerificationConfig {
    let annotations = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    config_from_flags(keys, None, None, None, None, &annotations).unwrap()
}

/// A layer as the crate returns a keyless signature it trusted (chain to Fulcio, Rekor bundle).
fn keyless_layer(subject: &str, issuer: &str, repository: Option<&str>) -> SignatureLayer {
    use sigstore::cosign::signature_layers::{CertificateSignature, CertificateSubject};
    let (mut layer, public) = signed_layer(&[]);
    let subject = if subject.contains('@') && !subject.starts_with("https://") {
        CertificateSubject::Email(subject.into())
    } else {
        CertificateSubject::Uri(subject.into())
    };
    layer.certificate_signature = Some(CertificateSignature {
        verification_key: sigstore::crypto::CosignVerificationKey::try_from_pem(public.as_bytes())
            .unwrap(),
        subject,
        issuer: Some(issuer.into()),
        github_workflow_trigger: None,
        github_workflow_sha: None,
        github_workflow_name: None,
        github_workflow_repository: repository.map(str::to_string),
        github_workflow_ref: None,
    });
    layer
}

#[test]
fn keyless_requirements_check_issuer_subject_and_workflow_repository() {
    use crate::verification_config::GITHUB_ACTIONS_ISSUER as GHA;
    let workflow = "https://github.com/sts-safe-rollout/sts-safe-rollout/.github/workflows/release.yml@refs/tags/v0.1.0";
    let ci = keyless_layer(workflow, GHA, Some("sts-safe-rollout/sts-safe-rollout"));
    let met = |yaml: &str, layer: &SignatureLayer| {
        let config = VerificationConfig::parse(&format!("apiVersion: v1\nallOf:\n{yaml}")).unwrap();
        evaluate(&config, std::slice::from_ref(layer)).is_ok()
    };
    assert!(met(
        "  - kind: githubAction\n    owner: sts-safe-rollout\n",
        &ci
    ));
    assert!(met(
        "  - kind: githubAction\n    owner: sts-safe-rollout\n    repo: sts-safe-rollout\n",
        &ci
    ));
    assert!(!met(
        "  - kind: githubAction\n    owner: sts-safe-rollout\n    repo: other\n",
        &ci
    ));
    assert!(!met("  - kind: githubAction\n    owner: sts-safe\n", &ci));
    // The same subject from another issuer is not GitHub Actions.
    let forged = keyless_layer(
        workflow,
        "https://example.com",
        Some("sts-safe-rollout/sts-safe-rollout"),
    );
    assert!(!met(
        "  - kind: githubAction\n    owner: sts-safe-rollout\n",
        &forged
    ));
    let generic = |subject: &str| {
        format!("  - kind: genericIssuer\n    issuer: {GHA}\n    subject:\n      {subject}\n")
    };
    assert!(met(&generic(&format!("equal: {workflow}")), &ci));
    assert!(met(
        &generic("urlPrefix: https://github.com/sts-safe-rollout"),
        &ci
    ));
    assert!(met(
        &generic("urlPrefix: https://github.com/sts-safe-rollout/"),
        &ci
    ));
    // urlPrefix ends at a path segment: no typo-squatting owner matches.
    assert!(!met(
        &generic("urlPrefix: https://github.com/sts-safe"),
        &ci
    ));
    let email = keyless_layer("alice@example.com", "https://github.com/login/oauth", None);
    assert!(met(
        "  - kind: genericIssuer\n    issuer: https://github.com/login/oauth\n    subject:\n      equal: alice@example.com\n",
        &email
    ));
    assert!(!met(
        "  - kind: genericIssuer\n    issuer: https://github.com/login/oauth\n    subject:\n      equal: bob@example.com\n",
        &email
    ));
}

#[test]
fn the_right_key_verifies_a_wrong_key_does_not() {
    let (layer, public) = signed_layer(&[]);
    let (_, other) = signed_layer(&[]);
    let met = evaluate(
        &flags(std::slice::from_ref(&public), &[]),
        std::slice::from_ref(&layer),
    )
    .unwrap();
    assert_eq!(met, ["allOf[0]: pubKey"]);
    let e = evaluate(&flags(&[other], &[]), &[layer])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "1 signature(s) of this digest, none meets allOf[0]: pubKey"
    );
}

#[test]
fn every_all_of_key_is_needed_and_any_of_counts_minimum_matches() {
    let (a, key_a) = signed_layer(&[]);
    let (b, key_b) = signed_layer(&[]);
    let (_, key_c) = signed_layer(&[]);
    let both = flags(&[key_a.clone(), key_b.clone()], &[]);
    assert_eq!(evaluate(&both, &[a.clone(), b.clone()]).unwrap().len(), 2);
    let e = evaluate(&both, std::slice::from_ref(&a))
        .unwrap_err()
        .to_string();
    assert!(e.contains("none meets allOf[1]: pubKey"), "{e}");
    let any = |min: usize| {
        let sig = |k: &String| {
            format!(
                "  - kind: pubKey\n    key: |\n{}",
                k.lines()
                    .map(|l| format!("      {l}\n"))
                    .collect::<String>()
            )
        };
        VerificationConfig::parse(&format!(
            "apiVersion: v1\nanyOf:\n  minimumMatches: {min}\n  signatures:\n{}{}{}",
            sig(&key_a),
            sig(&key_b),
            sig(&key_c)
        ))
        .unwrap()
    };
    assert!(evaluate(&any(2), &[a.clone(), b.clone()]).is_ok());
    let e = evaluate(&any(3), &[a, b]).unwrap_err().to_string();
    assert!(
        e.contains("anyOf: 2 of [pubKey, pubKey, pubKey] met, minimumMatches is 3"),
        "{e}"
    );
}

#[test]
fn annotations_must_be_in_the_signed_payload() {
    let (layer, public) = signed_layer(&[("env", "prod")]);
    let keys = std::slice::from_ref(&public);
    assert!(
        evaluate(
            &flags(keys, &[("env", "prod")]),
            std::slice::from_ref(&layer)
        )
        .is_ok()
    );
    assert!(
        evaluate(
            &flags(keys, &[("env", "dev")]),
            std::slice::from_ref(&layer)
        )
        .is_err()
    );
    let (plain, public) = signed_layer(&[]);
    assert!(evaluate(&flags(&[public], &[("env", "prod")]), &[plain]).is_err());
}

#[test]
fn a_key_signature_meets_no_keyless_requirement() {
    let (layer, _) = signed_layer(&[]);
    let text = "apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: sts-safe-rollout\n";
    let config = VerificationConfig::parse(text).unwrap();
    let e = evaluate(&config, &[layer]).unwrap_err().to_string();
    assert!(e.contains("githubAction sts-safe-rollout/*"), "{e}");
    // And verify asks for the trust root before any network.
    let e = verify("registry://127.0.0.1:1/p:v1", &config, None, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs --trusted-root FILE"), "{e}");
}

#[test]
fn flags_name_what_is_missing_or_malformed() {
    let none = BTreeMap::new();
    let e = config_from_flags(&[], None, None, None, None, &none)
        .unwrap_err()
        .to_string();
    assert!(e.contains("give --key FILE"), "{e}");
    let e = config_from_flags(&[], None, Some("r"), None, None, &none)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--github-repo needs --github-owner"), "{e}");
    let e = config_from_flags(&[], None, None, Some("a@b"), None, &none)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--cert-email and --cert-oidc-issuer go together"),
        "{e}"
    );
    let e = config_from_flags(&["junk".into()], None, None, None, None, &none)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--key (allOf[0]): not a PEM public key"), "{e}");
    let config = config_from_flags(&[], Some("o"), Some("r"), None, None, &none).unwrap();
    assert_eq!(config.requirements()[0].1.describe(), "githubAction o/r");
}

#[test]
fn an_unreachable_registry_is_an_error_naming_the_reference() {
    let (_, public) = signed_layer(&[]);
    let e = verify(
        "registry://127.0.0.1:1/p:v1",
        &flags(&[public], &[]),
        None,
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cannot verify registry://127.0.0.1:1/p:v1"),
        "{e}"
    );
}
