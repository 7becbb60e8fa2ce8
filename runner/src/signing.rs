//! Cosign signatures of what is published (the policy artifact, the stepper image), written with the
//! `sigstore` crate (the one Kubewarden's policy-fetcher verifies with) as `cosign sign --key` writes them:
//! a "simple signing" payload naming the manifest digest, signed with an ECDSA P-256 key, pushed as the
//! one layer (media type `application/vnd.dev.cosign.simplesigning.v1+json`, the signature in its
//! `dev.cosignproject.cosign/signature` annotation) of the tag `sha256-<digest>.sig` beside the artifact.
//!
//! Keys are cosign's: `cosign generate-key-pair` writes the same `ENCRYPTED SIGSTORE PRIVATE KEY` PEM
//! (scrypt + NaCl secretbox) and `PUBLIC KEY` PEM as [`generate_key_pair`], and each reads the other's.

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow};
use sigstore::cosign::constraint::PrivateKeySigner;
use sigstore::cosign::payload::simple_signing::Optional;
use sigstore::cosign::{Constraint, CosignCapabilities, SignatureLayer};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{SigStoreSigner, SigningScheme};
use sigstore::registry::oci_reference::OciReference;
use zeroize::Zeroizing;

use crate::registry::{self, parse_reference};
use crate::sigstore_client::{cosign_client, sigstore_auth};

/// The environment variable holding the private key's password, as cosign reads it.
pub const PASSWORD_ENV: &str = "COSIGN_PASSWORD";
/// A key given as `env://NAME` is read from the environment variable NAME (as cosign's `--key env://…`).
pub const ENV_SCHEME: &str = "env://";

/// Where a private key comes from: `--key FILE` or `--key env://VARIABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    File(std::path::PathBuf),
    Env(String),
}

impl KeySource {
    /// Parses a `--key` value: `env://NAME` or a path.
    ///
    /// # Errors
    /// When it is empty or `env://` names no variable.
    pub fn parse(value: &str) -> Result<Self> {
        if value.is_empty() {
            return Err(anyhow!(
                "--key is empty; expected a cosign private key file or {ENV_SCHEME}VARIABLE"
            ));
        }
        match value.strip_prefix(ENV_SCHEME) {
            Some("") => Err(anyhow!(
                "--key {value}: no variable name; expected {ENV_SCHEME}VARIABLE (e.g. {ENV_SCHEME}COSIGN_PRIVATE_KEY)"
            )),
            Some(name) => Ok(Self::Env(name.to_string())),
            None => Ok(Self::File(value.into())),
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::Env(name) => format!("{ENV_SCHEME}{name}"),
        }
    }

    fn read(&self) -> Result<Zeroizing<Vec<u8>>> {
        match self {
            Self::File(path) => std::fs::read(path)
                .map(Zeroizing::new)
                .with_context(|| format!("--key: cannot read the private key file {}", path.display())),
            Self::Env(name) => std::env::var(name)
                .map(|v| Zeroizing::new(v.into_bytes()))
                .map_err(|_| anyhow!("--key {ENV_SCHEME}{name}: the environment variable {name} is not set (or not UTF-8); expected a cosign private key PEM in it")),
        }
    }
}

/// Loads a cosign private key (ECDSA P-256, `ENCRYPTED SIGSTORE PRIVATE KEY` or unencrypted PKCS#8 PEM)
/// with `password` (cosign's `COSIGN_PASSWORD`; may be empty) and returns its signer.
///
/// # Errors
/// When the key cannot be read, is not a PEM private key, the password is wrong, or the key is not
/// ECDSA P-256 (what cosign generates); the message names the key's source.
pub fn load_signer(source: &KeySource, password: &[u8]) -> Result<SigStoreSigner> {
    let pem = source.read()?;
    let text = String::from_utf8_lossy(&pem);
    let pair = if text.contains("ENCRYPTED SIGSTORE PRIVATE KEY")
        || text.contains("ENCRYPTED COSIGN PRIVATE KEY")
    {
        SigStoreKeyPair::from_encrypted_pem(&pem, password).map_err(|e| {
            anyhow!(
                "--key {}: cannot decrypt the cosign private key with ${PASSWORD_ENV} ({e}); is the password right?",
                source.describe()
            )
        })?
    } else if text.contains("PRIVATE KEY-----") {
        SigStoreKeyPair::from_pem(&pem).map_err(|e| {
            anyhow!(
                "--key {}: not a PKCS#8 private key PEM ({e})",
                source.describe()
            )
        })?
    } else {
        return Err(anyhow!(
            "--key {}: not a private key; expected a PEM block `-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----` (cosign generate-key-pair, runner generate-key-pair)",
            source.describe()
        ));
    };
    pair.to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
        .map_err(|e| {
            anyhow!(
                "--key {}: expected an ECDSA P-256 key, as cosign generates ({e})",
                source.describe()
            )
        })
}

/// A new cosign key pair: the private key as cosign's encrypted PEM (with `password`, which may be
/// empty, as `COSIGN_PASSWORD=` allows), and the public key PEM.
///
/// # Errors
/// Only when the crate's key generation or encryption fails.
pub fn generate_key_pair(password: &[u8]) -> Result<(Zeroizing<String>, String)> {
    let pair = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .and_then(|s| s.to_sigstore_keypair())
        .context("cannot generate an ECDSA P-256 key")?;
    let private = pair
        .private_key_to_encrypted_pem(password)
        .context("cannot encrypt the private key")?;
    let public = pair
        .public_key_to_pem()
        .context("cannot encode the public key")?;
    // The crate ends PEM lines with CRLF; cosign writes LF (both read either).
    Ok((
        Zeroizing::new(private.replace("\r\n", "\n")),
        public.replace("\r\n", "\n"),
    ))
}

/// Parses `KEY=VALUE` annotations (`--annotation`, `-a`, as cosign's).
///
/// # Errors
/// When one has no `=` or an empty key; the message names it.
pub fn parse_annotations(values: &[String]) -> Result<BTreeMap<String, String>> {
    values
        .iter()
        .map(|v| match v.split_once('=') {
            Some((k, val)) if !k.is_empty() => Ok((k.to_string(), val.to_string())),
            _ => Err(anyhow!(
                "--annotation {v:?}: expected KEY=VALUE (e.g. --annotation env=prod)"
            )),
        })
        .collect()
}

/// The signature layer for `reference` at `digest`: cosign's payload, whose `docker-reference` is the
/// repository (`HOST/REPOSITORY`, no tag), with `annotations` in its `optional` part.
///
/// # Errors
/// Only when the payload cannot be serialized.
pub fn unsigned_layer(
    reference: &OciReference,
    digest: &str,
    annotations: &BTreeMap<String, String>,
) -> Result<SignatureLayer> {
    let mut layer = SignatureLayer::new_unsigned(reference, digest)
        .context("cannot build the signature payload")?;
    layer.simple_signing.critical.identity.docker_reference =
        format!("{}/{}", reference.registry(), reference.repository());
    if !annotations.is_empty() {
        layer.simple_signing.optional = Some(Optional {
            extra: annotations
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect(),
            ..Optional::default()
        });
    }
    Ok(layer)
}

/// Signs `layer` with `signer` (the payload's bytes, kept in `raw_data`, are what is signed).
///
/// # Errors
/// When signing fails or the layer is already signed.
pub fn sign_layer(layer: &mut SignatureLayer, signer: SigStoreSigner) -> Result<()> {
    let signed = PrivateKeySigner::new_with_signer(signer)
        .add_constraint(layer)
        .context("cannot sign the payload")?;
    if signed {
        Ok(())
    } else {
        Err(anyhow!("the signature layer was already signed"))
    }
}

/// What [`sign`] pushed.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The signed manifest's digest (`sha256:…`).
    pub digest: String,
    /// Where the signature is: `HOST/REPOSITORY:sha256-<hex>.sig`.
    pub signature_reference: String,
}

/// Signs the artifact at `uri` (`registry://HOST/REPO:TAG`, `HOST/REPO:TAG` or `…@sha256:…`; a policy or
/// an image) by its manifest digest and pushes the signature to its `sha256-<hex>.sig` tag. That tag
/// then holds this one signature (a re-sign replaces the tag; `cosign sign` after it appends to it).
///
/// # Errors
/// When the reference is invalid, the artifact is not in the registry, or the push is refused; the
/// message names `uri`.
pub fn sign(
    uri: &str,
    signer: SigStoreSigner,
    annotations: &BTreeMap<String, String>,
    insecure: bool,
) -> Result<Signed> {
    let (reference, mut client) = cosign_client(uri, insecure, None)?;
    let auth = sigstore_auth()?;
    let rt = registry::runtime()?;
    let (signature_reference, digest) = rt
        .block_on(client.triangulate(&reference, &auth))
        .map_err(|e| {
            anyhow!("cannot sign {uri}: cannot read its manifest digest from the registry ({e})")
        })?;
    let mut layer = unsigned_layer(&reference, &digest, annotations)?;
    sign_layer(&mut layer, signer)?;
    rt.block_on(client.push_signature(None, &auth, &signature_reference, vec![layer]))
        .map_err(|e| anyhow!("cannot push the signature of {uri} to {signature_reference}: {e}"))?;
    Ok(Signed {
        digest,
        signature_reference: signature_reference.to_string(),
    })
}

/// `registry://HOST/REPO:TAG` (or without the scheme) as the sigstore crate's reference.
///
/// # Errors
/// As [`parse_reference`].
pub fn oci_reference(uri: &str) -> Result<OciReference> {
    let reference = parse_reference(uri)?;
    reference
        .whole()
        .parse::<OciReference>()
        .map_err(|e| anyhow!("{uri}: not an OCI reference ({e})"))
}

#[cfg(test)]
#[path = "unit_tests/signing.rs"]
mod tests;
