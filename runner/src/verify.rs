//! `runner verify`: checks an artifact's cosign signatures against a [`VerificationConfig`], as
//! `kwctl verify` and a policy-server with a verification config do.
//!
//! The sigstore crate reads the `sha256-<digest>.sig` tag of the artifact's current manifest digest and
//! keeps the signature layers whose payload names that digest (and, for keyless ones, whose certificate
//! chains to Fulcio with a Rekor bundle); each requirement is then checked against those layers.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use oci_client::manifest::OciManifest;
use sigstore::cosign::{CosignCapabilities, SignatureLayer};
use sigstore::errors::SigstoreError;
use sigstore::trust::ManualTrustRoot;

use crate::registry;
use crate::sigstore_client::{cosign_client, oci_auth, sigstore_auth};
use crate::verification_config::{AnyOf, Requirement, Subject, VerificationConfig};

/// The media type of a cosign simple-signing layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";

/// What [`verify`] found.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The verified manifest digest (`sha256:…`).
    pub digest: String,
    /// The requirements met, described.
    pub satisfied: Vec<String>,
    /// How many signatures of this digest the registry holds.
    pub signatures: usize,
}

/// The requirements of `kwctl verify`'s flags as a config: each `--key` (PEM text) and the GitHub or
/// certificate identity, all required (`allOf`), each with `annotations`.
///
/// # Errors
/// When no requirement is given, `--github-repo` comes without `--github-owner`, or `--cert-email`
/// without `--cert-oidc-issuer` (or the reverse).
pub fn config_from_flags(
    keys: &[String],
    github_owner: Option<&str>,
    github_repo: Option<&str>,
    cert_email: Option<&str>,
    cert_oidc_issuer: Option<&str>,
    annotations: &BTreeMap<String, String>,
) -> Result<VerificationConfig> {
    let mut all_of: Vec<Requirement> = keys
        .iter()
        .map(|key| Requirement::PubKey {
            owner: None,
            key: key.clone(),
            annotations: annotations.clone(),
        })
        .collect();
    match (github_owner, github_repo) {
        (Some(owner), repo) => all_of.push(Requirement::GithubAction {
            owner: owner.to_string(),
            repo: repo.map(str::to_string),
            annotations: annotations.clone(),
        }),
        (None, Some(_)) => {
            return Err(anyhow!(
                "--github-repo needs --github-owner (the user or organization owning the repository)"
            ));
        }
        (None, None) => {}
    }
    match (cert_email, cert_oidc_issuer) {
        (Some(email), Some(issuer)) => all_of.push(Requirement::GenericIssuer {
            issuer: issuer.to_string(),
            subject: Subject::Equal(email.to_string()),
            annotations: annotations.clone(),
        }),
        (None, None) => {}
        _ => {
            return Err(anyhow!(
                "--cert-email and --cert-oidc-issuer go together (e.g. --cert-email alice@example.com --cert-oidc-issuer https://github.com/login/oauth)"
            ));
        }
    }
    let config = VerificationConfig {
        api_version: "v1".into(),
        all_of,
        any_of: None,
    };
    if config.all_of.is_empty() {
        return Err(anyhow!(
            "nothing to verify against: give --key FILE, --github-owner OWNER, --cert-email with --cert-oidc-issuer, or --verification-config-path FILE"
        ));
    }
    for (field, r) in config.requirements() {
        if let Requirement::PubKey { key, .. } = r {
            sigstore::cosign::verification_constraint::PublicKeyVerifier::try_from(key.as_bytes())
                .map_err(|e| anyhow!("--key ({field}): not a PEM public key ({e}); expected cosign.pub's -----BEGIN PUBLIC KEY-----"))?;
        }
    }
    Ok(config)
}

/// Checks `layers` (the trusted signatures of one digest) against `config`: every `allOf` requirement
/// met by some layer, and at least `anyOf.minimumMatches` of `anyOf.signatures`. Returns the met ones.
///
/// # Errors
/// A message listing the requirements not met.
pub fn evaluate(config: &VerificationConfig, layers: &[SignatureLayer]) -> Result<Vec<String>> {
    let met = |r: &Requirement| layers.iter().any(|l| r.satisfied_by(l));
    let mut satisfied = Vec::new();
    let mut unmet = Vec::new();
    for (field, r) in config.requirements() {
        if met(r) {
            satisfied.push(format!("{field}: {}", r.describe()));
        } else if field.starts_with("allOf") {
            unmet.push(format!("{field}: {}", r.describe()));
        }
    }
    if let Some(AnyOf {
        minimum_matches,
        signatures,
    }) = &config.any_of
    {
        let count = signatures.iter().filter(|r| met(r)).count();
        if count < *minimum_matches {
            unmet.push(format!(
                "anyOf: {count} of [{}] met, minimumMatches is {minimum_matches}",
                signatures
                    .iter()
                    .map(Requirement::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if unmet.is_empty() {
        Ok(satisfied)
    } else {
        Err(anyhow!(
            "{} signature(s) of this digest, none meets {}",
            layers.len(),
            unmet.join("; ")
        ))
    }
}

/// Verifies the artifact at `uri` (a policy or an image; by tag or digest) against `config`.
///
/// # Errors
/// When the artifact cannot be read, it has no signature tag (unsigned), the tag holds no signature of
/// its current digest (re-pushed since it was signed, or a copied signature), or no signature meets the
/// config (a wrong key, another identity); every message names `uri` and the digest.
pub fn verify(
    uri: &str,
    config: &VerificationConfig,
    trust: Option<&ManualTrustRoot<'static>>,
    insecure: bool,
) -> Result<Verified> {
    if config.needs_trust_root() && trust.is_none() {
        return Err(anyhow!(
            "a keyless requirement (githubAction, genericIssuer) needs --trusted-root FILE: Sigstore's trusted_root.json (Fulcio's certificates and Rekor's keys)"
        ));
    }
    let (reference, mut client) = cosign_client(uri, insecure, trust)?;
    let auth = sigstore_auth()?;
    let rt = registry::runtime()?;
    let (signature_reference, digest) = rt
        .block_on(client.triangulate(&reference, &auth))
        .map_err(|e| {
            anyhow!("cannot verify {uri}: cannot read its manifest from the registry ({e})")
        })?;
    let tag = signature_reference.to_string();
    // Read the signature tag first: a missing one means unsigned (the crate reports it as any error).
    let Some(count) = signature_layer_count(&tag, insecure)? else {
        return Err(anyhow!(
            "{uri} ({digest}) is not signed: the registry has no signature tag {tag}"
        ));
    };
    let none_for_this_digest = || {
        anyhow!(
            "{uri} ({digest}): the signature tag {tag} holds {count} signature layer(s), none of them for this digest (a signature copied from another artifact, or not a cosign signature)"
        )
    };
    let layers =
        match rt.block_on(client.trusted_signature_layers(&auth, &digest, &signature_reference)) {
            Ok(layers) if layers.is_empty() => return Err(none_for_this_digest()),
            Ok(layers) => layers,
            // The crate's word for "every layer names another digest or does not parse".
            Err(SigstoreError::SigstoreNoVerifiedLayer) => return Err(none_for_this_digest()),
            Err(e) => {
                return Err(anyhow!(
                    "cannot verify {uri} ({digest}): cannot read its signatures at {tag} ({e})"
                ));
            }
        };
    let satisfied = evaluate(config, &layers)
        .map_err(|e| anyhow!("{uri} ({digest}) failed verification: {e}"))?;
    Ok(Verified {
        digest,
        satisfied,
        signatures: layers.len(),
    })
}

/// The number of simple-signing layers at the signature tag `tag`, or `None` when the tag is missing.
fn signature_layer_count(tag: &str, insecure: bool) -> Result<Option<usize>> {
    let reference = registry::parse_reference(tag)?;
    let client = registry::client(&reference, insecure)?;
    let auth = oci_auth()?;
    match registry::runtime()?.block_on(client.pull_manifest(&reference, &auth)) {
        Ok((OciManifest::Image(m), _)) => Ok(Some(
            m.layers
                .iter()
                .filter(|l| l.media_type == SIMPLE_SIGNING_MEDIA_TYPE)
                .count(),
        )),
        Ok((OciManifest::ImageIndex(_), _)) => Ok(Some(0)),
        Err(oci_client::errors::OciDistributionError::ImageManifestNotFoundError(_)) => Ok(None),
        Err(oci_client::errors::OciDistributionError::RegistryError { envelope, .. })
            if envelope.errors.iter().any(|e| {
                matches!(
                    e.code,
                    oci_client::errors::OciErrorCode::ManifestUnknown
                        | oci_client::errors::OciErrorCode::NameUnknown
                )
            }) =>
        {
            Ok(None)
        }
        Err(e) => Err(anyhow!("cannot read the signature tag {tag}: {e}")),
    }
}

#[cfg(test)]
#[path = "unit_tests/verify.rs"]
mod tests;
