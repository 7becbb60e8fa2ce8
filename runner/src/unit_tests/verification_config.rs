//! Unit tests of `verification_config.rs`.

use super::*;

const KEY: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQiTy5S+2JFvVlhUwWPLziM7iTM2j\nbyLgh2IjpNQN0Uio/9pZOTP/CsJmXoUNshfpTUHd3OxgHgz/6adtf2nBwQ==\n-----END PUBLIC KEY-----\n";

fn indented(key: &str) -> String {
    key.lines().map(|l| format!("      {l}\n")).collect()
}

#[test]
fn kubewardens_documented_example_parses() {
    let text = format!(
        "apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: kubewarden\n    repo: policy-server\n    annotations:\n      env: prod\nanyOf:\n  minimumMatches: 2\n  signatures:\n  - kind: pubKey\n    owner: alice\n    key: |\n{}  - kind: genericIssuer\n    issuer: https://github.com/login/oauth\n    subject:\n      equal: alice@example.com\n  - kind: genericIssuer\n    issuer: https://token.actions.githubusercontent.com\n    subject:\n      urlPrefix: https://github.com/bob\n",
        indented(KEY)
    );
    let config = VerificationConfig::parse(&text).unwrap();
    assert_eq!(config.all_of.len(), 1);
    let any = config.any_of.as_ref().unwrap();
    assert_eq!(any.minimum_matches, 2);
    assert_eq!(any.signatures.len(), 3);
    assert!(config.needs_trust_root());
    let described: Vec<String> = config
        .requirements()
        .iter()
        .map(|(f, r)| format!("{f}: {}", r.describe()))
        .collect();
    assert_eq!(
        described,
        [
            "allOf[0]: githubAction kubewarden/policy-server",
            "anyOf.signatures[0]: pubKey (owner alice)",
            "anyOf.signatures[1]: genericIssuer https://github.com/login/oauth subject alice@example.com",
            "anyOf.signatures[2]: genericIssuer https://token.actions.githubusercontent.com subject under https://github.com/bob",
        ]
    );
}

#[test]
fn a_key_only_config_needs_no_trust_root_and_any_of_defaults_to_one_match() {
    let text = format!(
        "apiVersion: v1\nanyOf:\n  signatures:\n  - kind: pubKey\n    key: |\n{}",
        indented(KEY)
    );
    let config = VerificationConfig::parse(&text).unwrap();
    assert_eq!(config.any_of.unwrap().minimum_matches, 1);
    let text = format!(
        "apiVersion: v1\nallOf:\n  - kind: pubKey\n    key: |\n{}",
        indented(KEY)
    );
    assert!(!VerificationConfig::parse(&text).unwrap().needs_trust_root());
}

#[test]
fn bad_configs_are_refused_naming_the_field_and_the_expected_form() {
    let key = indented(KEY);
    let cases = [
        ("apiVersion: v2\nallOf: []\n".to_string(), "apiVersion: \"v2\"; expected v1"),
        ("allOf: []\n".to_string(), "missing field `apiVersion`"),
        ("apiVersion: v1\n".to_string(), "no requirement"),
        ("apiVersion: v1\nallOf:\n  - kind: pubkey\n    key: x\n".to_string(), "allOf[0]: kind: unknown kind \"pubkey\"; expected pubKey, githubAction or genericIssuer"),
        ("apiVersion: v1\nallOf:\n  - kind: pubKey\n".to_string(), "allOf[0]: kind pubKey needs key"),
        ("apiVersion: v1\nallOf:\n  - kind: pubKey\n    key: not a key\n".to_string(), "allOf[0].key: not a PEM public key"),
        ("apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: a/b\n".to_string(), "allOf[0].owner: \"a/b\"; expected a GitHub user or organization"),
        ("apiVersion: v1\nallOf:\n  - kind: genericIssuer\n    issuer: x\n    subject:\n      prefix: y\n".to_string(), "allOf[0].subject.prefix: unknown field `prefix`"),
        (format!("apiVersion: v1\nanyOf:\n  minimumMatches: 2\n  signatures:\n  - kind: pubKey\n    key: |\n{key}"), "anyOf.minimumMatches: 2; expected 1 to 1"),
        ("apiVersion: v1\nallof: []\n".to_string(), "unknown field `allof`"),
        ("apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: o\n    key: k\n".to_string(), "allOf[0]: key is not a field of kind githubAction; it takes owner, repo"),
        ("apiVersion: v1\nallOf:\n  - kind: genericIssuer\n    issuer: x\n".to_string(), "allOf[0]: kind genericIssuer needs subject"),
        ("apiVersion: v1\nallOf:\n  - kind: pubKey\n    key: k\n    ownr: x\n".to_string(), "allOf[0].ownr: unknown field `ownr`"),
        ("- just a list\n".to_string(), "the verification config is not a mapping"),
        ("a: [\n".to_string(), "the verification config is not YAML"),
    ];
    for (text, needle) in cases {
        let e = VerificationConfig::parse(&text).unwrap_err().to_string();
        assert!(e.contains(needle), "{needle:?} not in: {e}");
    }
}

/// Read as `kwctl` reads it (serde_yaml): `yes`, `on` and `0123` are strings, not a boolean or a number.
#[test]
fn yaml_1_1_booleans_and_leading_zeros_stay_strings() {
    let text = "apiVersion: v1\nallOf:\n  - kind: githubAction\n    owner: on\n    repo: yes\n    annotations:\n      build: 0123\n";
    let config = VerificationConfig::parse(text).unwrap();
    let (_, requirement) = config.requirements()[0];
    assert_eq!(requirement.describe(), "githubAction on/yes");
    assert_eq!(requirement.annotations()["build"], "0123");
}
