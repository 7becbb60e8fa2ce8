//! The signing manifests of deploy/signing/, the release workflow and artifacthub-pkg.yml name the same
//! things as the Makefile and the crate: the images `make push-image` publishes under the default
//! REGISTRY, and the identity `.github/workflows/release.yml` signs with (the repository of Cargo.toml).
//! A rename of the registry, the repository or the workflow that forgets one of them fails here, before a
//! cluster refuses a correctly signed release.

use std::path::Path;

use serde_json::Value;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn text(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml(file: &str) -> Value {
    serde_saphyr::from_str(&text(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The Makefile's default REGISTRY (`REGISTRY ?= …`).
fn registry() -> String {
    text("Makefile")
        .lines()
        .find_map(|l| l.strip_prefix("REGISTRY ?= ").map(str::to_string))
        .expect("Makefile has REGISTRY ?= …")
}

/// (owner, repo) of the crate's repository URL, https://github.com/OWNER/REPO.
fn github_repository() -> (String, String) {
    let url = env!("CARGO_PKG_REPOSITORY");
    let path = url
        .strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("repository {url} is not on github.com"));
    let (owner, repo) = path.split_once('/').expect("OWNER/REPO");
    (owner.to_string(), repo.to_string())
}

/// The subject of the release workflow's Fulcio certificates, as a regular expression for a `v*` tag.
fn release_subject_regexp() -> String {
    let (owner, repo) = github_repository();
    format!(
        r"^https://github\.com/{}/{}/\.github/workflows/release\.yml@refs/tags/v.*$",
        owner.replace('.', r"\."),
        repo.replace('.', r"\.")
    )
}

#[test]
fn the_verification_config_requires_the_release_workflows_repository() {
    let (owner, repo) = github_repository();
    let config = yaml("deploy/signing/verification-config.yml");
    assert_eq!(config["apiVersion"], "v1");
    let requirement = &config["allOf"][0];
    assert_eq!(requirement["kind"], "githubAction");
    assert_eq!(requirement["owner"], owner.as_str());
    assert_eq!(requirement["repo"], repo.as_str());
    // The workflow that signs is there, keyless (id-token), with cosign sign.
    let workflow = text(".github/workflows/release.yml");
    assert!(
        workflow.contains("id-token: write"),
        "release.yml lacks the OIDC token permission"
    );
    assert!(
        workflow.contains("cosign sign --yes"),
        "release.yml does not sign"
    );
    assert!(
        workflow.contains("tags: [\"v*\"]"),
        "release.yml does not run on v* tags"
    );
}

#[test]
fn the_image_policies_name_the_published_image_and_the_release_identity() {
    let image = format!("{}/sts-stepper", registry());
    let kyverno = yaml("deploy/signing/kyverno-verify-images.yaml");
    let verify = &kyverno["spec"]["rules"][0]["verifyImages"][0];
    assert_eq!(verify["imageReferences"][0], format!("{image}*").as_str());
    let keyless = &verify["attestors"][0]["entries"][0]["keyless"];
    assert_eq!(
        keyless["issuer"],
        "https://token.actions.githubusercontent.com"
    );
    assert_eq!(keyless["subjectRegExp"], release_subject_regexp().as_str());

    let cip = yaml("deploy/signing/cluster-image-policy.yaml");
    assert_eq!(
        cip["spec"]["images"][0]["glob"],
        format!("{image}**").as_str()
    );
    let identity = &cip["spec"]["authorities"][0]["keyless"]["identities"][0];
    assert_eq!(
        identity["issuer"],
        "https://token.actions.githubusercontent.com"
    );
    assert_eq!(identity["subjectRegExp"], release_subject_regexp().as_str());
}

#[test]
fn artifacthub_lists_both_signed_artifacts_and_the_provenance_links() {
    let a = yaml("artifacthub-pkg.yml");
    let images: Vec<&str> = a["containersImages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["image"].as_str().unwrap())
        .collect();
    let registry = registry();
    assert_eq!(
        images,
        [
            format!("{registry}/policies/sts-safe-rollout:v{VERSION}"),
            format!("{registry}/sts-stepper:v{VERSION}"),
        ]
    );
    let urls: Vec<&str> = a["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["url"].as_str().unwrap())
        .collect();
    for wanted in [
        "deploy/signing/verification-config.yml",
        "docs/publish.md",
        "sts-safe-rollout.cdx.json",
        "sts-stepper.cdx.json",
    ] {
        assert!(
            urls.iter().any(|u| u.ends_with(wanted)),
            "no link to {wanted}: {urls:?}"
        );
    }
    // The files the blob links name exist at that path in the repository.
    for url in urls.iter().filter(|u| u.contains("/blob/")) {
        let path = url.split_once(&format!("/blob/v{VERSION}/")).unwrap().1;
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(path).exists(),
            "{url}: no {path}"
        );
    }
}
