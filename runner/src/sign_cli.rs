//! The runner's signing commands (`generate-key-pair`, `sign`, `verify`): their flags and what they print.
//! The work is in the library's `signing` and `verify` modules.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args;

use runner::attach;
use runner::signing::{self, KeySource};
use runner::sigstore_client::trusted_root_from_json;
use runner::verification_config::VerificationConfig;
use runner::verify;

#[derive(Args, Debug)]
pub struct GenerateKeyPairArgs {
    /// Write PREFIX.key (the encrypted private key) and PREFIX.pub (the public key).
    #[arg(long, value_name = "PREFIX", default_value = "cosign")]
    pub output_key_prefix: String,
}

#[derive(Args, Debug)]
pub struct SignArgs {
    /// The cosign private key: a file (cosign.key) or env://VARIABLE holding its PEM. Its password is read
    /// from COSIGN_PASSWORD (empty when the key has none).
    #[arg(short = 'k', long, value_name = "KEY")]
    pub key: String,
    /// An annotation written into the signed payload (KEY=VALUE; repeatable), as `cosign sign -a`.
    #[arg(short = 'a', long = "annotation", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,
    /// What to sign, by its current manifest digest: registry://HOST/REPO:TAG (a policy) or HOST/REPO:TAG
    /// (an image); several may be given.
    #[arg(value_name = "URI", required = true)]
    pub uris: Vec<String>,
    /// Use plain HTTP for this registry (loopback registries always are).
    #[arg(long)]
    pub insecure: bool,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A public key (cosign.pub) a signature must be made with (repeatable: all required).
    #[arg(short = 'k', long = "key", value_name = "FILE")]
    pub keys: Vec<PathBuf>,
    /// An annotation the signature's payload must hold (KEY=VALUE; repeatable).
    #[arg(short = 'a', long = "annotation", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,
    /// Keyless: signed in a GitHub Actions workflow of this user or organization.
    #[arg(long, value_name = "OWNER")]
    pub github_owner: Option<String>,
    /// Keyless: …of this repository of --github-owner.
    #[arg(long, value_name = "REPO")]
    pub github_repo: Option<String>,
    /// Keyless: the certificate's subject (an email or a workflow URI), with --cert-oidc-issuer.
    #[arg(long, value_name = "SUBJECT")]
    pub cert_email: Option<String>,
    /// Keyless: the certificate's OIDC issuer, with --cert-email.
    #[arg(long, value_name = "URL")]
    pub cert_oidc_issuer: Option<String>,
    /// Kubewarden's verification config (verification-config.yml, apiVersion v1), instead of the flags above.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["keys", "annotations", "github_owner", "github_repo", "cert_email", "cert_oidc_issuer"])]
    pub verification_config_path: Option<PathBuf>,
    /// Sigstore's trusted_root.json (Fulcio's certificates, Rekor's keys): needed for keyless requirements.
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
    /// What to verify: registry://HOST/REPO:TAG (a policy) or HOST/REPO:TAG (an image), by tag or digest.
    #[arg(value_name = "URI")]
    pub uri: String,
    /// Use plain HTTP for this registry (loopback registries always are).
    #[arg(long)]
    pub insecure: bool,
}

#[derive(Args, Debug)]
pub struct AttachSbomArgs {
    /// The SBOM: a CycloneDX JSON or SPDX JSON document.
    #[arg(long, value_name = "FILE")]
    pub sbom: PathBuf,
    /// The artifact: registry://HOST/REPO:TAG (a policy) or HOST/REPO:TAG (an image), by tag or digest.
    #[arg(value_name = "URI")]
    pub uri: String,
    /// Use plain HTTP for this registry (loopback registries always are).
    #[arg(long)]
    pub insecure: bool,
}

pub fn attach_sbom(args: &AttachSbomArgs) -> Result<()> {
    let document = std::fs::read(&args.sbom)
        .with_context(|| format!("--sbom: cannot read {}", args.sbom.display()))?;
    let attached = attach::attach_sbom(&args.uri, &document, args.insecure)?;
    println!("attached: {}", args.sbom.display());
    println!("digest: {}", attached.digest);
    println!("sbom: {}", attached.reference);
    println!("media-type: {}", attached.media_type);
    Ok(())
}

pub fn generate_key_pair(args: &GenerateKeyPairArgs) -> Result<()> {
    let password = std::env::var(signing::PASSWORD_ENV).map_err(|_| {
        anyhow!(
            "{} is not set: set it to the private key's password (COSIGN_PASSWORD= for none), as cosign reads it",
            signing::PASSWORD_ENV
        )
    })?;
    let private_path = PathBuf::from(format!("{}.key", args.output_key_prefix));
    let public_path = PathBuf::from(format!("{}.pub", args.output_key_prefix));
    for path in [&private_path, &public_path] {
        if path.exists() {
            return Err(anyhow!(
                "--output-key-prefix: {} exists; refusing to overwrite a key (remove it or choose another prefix)",
                path.display()
            ));
        }
    }
    let (private, public) = signing::generate_key_pair(password.as_bytes())?;
    write_private(&private_path, private.as_bytes())?;
    std::fs::write(&public_path, public)
        .with_context(|| format!("cannot write {}", public_path.display()))?;
    println!("Private key written to {}", private_path.display());
    println!("Public key written to {}", public_path.display());
    Ok(())
}

fn write_private(path: &PathBuf, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn sign(args: &SignArgs) -> Result<()> {
    let source = KeySource::parse(&args.key)?;
    let password = std::env::var(signing::PASSWORD_ENV).unwrap_or_default();
    let annotations = signing::parse_annotations(&args.annotations)?;
    for uri in &args.uris {
        let signer = signing::load_signer(&source, password.as_bytes())?;
        let signed = signing::sign(uri, signer, &annotations, args.insecure)?;
        println!("signed: {uri}");
        println!("digest: {}", signed.digest);
        println!("signature: {}", signed.signature_reference);
    }
    Ok(())
}

pub fn verify(args: &VerifyArgs) -> Result<()> {
    let config = match &args.verification_config_path {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("--verification-config-path: cannot read {}", path.display())
            })?;
            VerificationConfig::parse(&text)
                .with_context(|| format!("--verification-config-path {}", path.display()))?
        }
        None => {
            let keys = args
                .keys
                .iter()
                .map(|p| {
                    std::fs::read_to_string(p)
                        .with_context(|| format!("--key: cannot read {}", p.display()))
                })
                .collect::<Result<Vec<_>>>()?;
            verify::config_from_flags(
                &keys,
                args.github_owner.as_deref(),
                args.github_repo.as_deref(),
                args.cert_email.as_deref(),
                args.cert_oidc_issuer.as_deref(),
                &signing::parse_annotations(&args.annotations)?,
            )?
        }
    };
    let trust = match &args.trusted_root {
        Some(path) => Some(trusted_root_from_json(&std::fs::read(path).with_context(
            || format!("--trusted-root: cannot read {}", path.display()),
        )?)?),
        None => None,
    };
    let verified = verify::verify(&args.uri, &config, trust.as_ref(), args.insecure)?;
    println!("verified: {}", args.uri);
    println!("digest: {}", verified.digest);
    println!("signatures: {}", verified.signatures);
    for s in &verified.satisfied {
        println!("satisfied: {s}");
    }
    Ok(())
}
