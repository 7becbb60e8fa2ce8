//! The runner's registry commands (`pull`, `push`): their flags and what they print. The work is in the
//! library's `registry` module.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::Args;

use runner::registry;

use crate::RegistryArgs;

#[derive(Args, Debug)]
pub struct PullArgs {
    /// The policy: registry://HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST].
    #[arg(value_name = "URI")]
    uri: String,
    /// Write the wasm module to this file.
    #[arg(short = 'o', long, value_name = "FILE")]
    output_path: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The policy file (policy.wasm or annotated-policy.wasm).
    #[arg(value_name = "POLICY")]
    policy: PathBuf,
    /// Where to: registry://HOST[:PORT]/REPOSITORY:TAG.
    #[arg(value_name = "URI")]
    uri: String,
    /// Also write the pushed manifest's digest (`sha256:<64 hex digits>`, no newline) to FILE, as
    /// `buildah push --digestfile` does: what `make release` pins the policy module by
    /// (registry://…@sha256:…).
    #[arg(long, value_name = "FILE")]
    digestfile: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// `pull` and `push` take only `registry://` URIs, as kwctl's do.
fn require_registry_uri(uri: &str) -> Result<()> {
    if uri.starts_with(registry::SCHEME) {
        Ok(())
    } else {
        Err(anyhow!(
            "{uri}: expected {}HOST[:PORT]/REPOSITORY:TAG",
            registry::SCHEME
        ))
    }
}

/// `runner pull`: prints `pulled:`, `manifest:`, `layer:` and `size:`.
pub fn pull(args: &PullArgs) -> Result<()> {
    require_registry_uri(&args.uri)?;
    let pulled = registry::pull(&args.uri, args.registry.insecure)?;
    if let Some(path) = &args.output_path {
        std::fs::write(path, &pulled.module)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!("pulled: {}", args.uri);
    println!("manifest: {}", pulled.manifest_digest);
    println!("layer: {}", pulled.layer_digest);
    println!("size: {}", pulled.module.len());
    Ok(())
}

/// `runner push`: prints `pushed:`, `manifest:`, `layer:` and `url:`; with `--digestfile`, writes the
/// manifest digest there too.
pub fn push(args: &PushArgs) -> Result<()> {
    require_registry_uri(&args.uri)?;
    // A digest file that cannot be written is found before anything is pushed.
    if let Some(path) = &args.digestfile {
        writable(path)?;
    }
    let module = std::fs::read(&args.policy)
        .with_context(|| format!("cannot read policy {}", args.policy.display()))?;
    let pushed = registry::push(&module, &args.uri, args.registry.insecure)?;
    if let Some(path) = &args.digestfile {
        std::fs::write(path, &pushed.manifest_digest).with_context(|| {
            format!(
                "pushed {} as {}, but cannot write --digestfile {}",
                args.uri,
                pushed.manifest_digest,
                path.display()
            )
        })?;
    }
    println!("pushed: {}", args.uri);
    println!("manifest: {}", pushed.manifest_digest);
    println!("layer: {}", pushed.layer_digest);
    println!("url: {}", pushed.manifest_url);
    Ok(())
}

/// `path`'s directory exists and `path` is not a directory: the digest can be written there.
fn writable(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(anyhow!(
            "--digestfile {}: directory {} does not exist (create it first, e.g. mkdir -p {})",
            path.display(),
            dir.display(),
            dir.display()
        ));
    }
    if path.is_dir() {
        return Err(anyhow!(
            "--digestfile {}: is a directory; expected a file path such as dist/policy.digest",
            path.display()
        ));
    }
    Ok(())
}
