//! `runner`: run a Kubewarden waPC policy on an admission request, like `kwctl run` / `kwctl bench`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use clap::{Args, Parser, Subcommand};
use serde_json::Value;

use runner::admission::{self, AdmissionRequest, AdmissionResponse};
use runner::compile_cache::CacheSetting;
use runner::host::Policy;
use runner::registry;

// The registry commands' flags and output (`pull`, `push`), the bin's own module; the work is in the library.
mod registry_cli;
// The signing commands' flags and output (the bin's own module; the work is in the library).
#[cfg(feature = "signing")]
mod sign_cli;

/// Run a Kubewarden waPC policy (policy.wasm) on an admission request, the way `kwctl run` does.
///
/// The policy is loaded with wasmtime through waPC, exactly as Kubewarden's policy-server hosts it;
/// `validate_settings` is called first, then `validate` with `{"request": …, "settings": …}`. The
/// AdmissionResponse is printed on one line, as `kwctl run` prints it.
#[derive(Parser, Debug)]
#[command(name = "runner", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate one request and print the AdmissionResponse as one JSON line.
    ///
    /// Exit status: 0 when the policy answered (accepted or rejected); 1 when the settings are refused
    /// (`Error: Provided settings are not valid: …`) or anything fails (a missing file, bad JSON, a
    /// module that is not a waPC policy, a trap).
    Run(RunArgs),
    /// Evaluate one request many times in one loaded instance and print per-evaluation timings.
    Bench(BenchArgs),
    /// Pull a policy from an OCI registry, like `kwctl pull`, and print its digests.
    ///
    /// Accepts only a Kubewarden policy artifact: one layer of media type
    /// application/vnd.wasm.content.layer.v1+wasm. Prints `manifest: sha256:…` and `layer: sha256:…`
    /// (the layer digest is verified against the bytes).
    Pull(registry_cli::PullArgs),
    /// Push a policy.wasm to an OCI registry, like `kwctl push`, and print the digests the registry holds.
    ///
    /// The artifact is the one Kubewarden pushes: config `{}` of media type
    /// application/vnd.wasm.config.v1+json, one layer application/vnd.wasm.content.layer.v1+wasm.
    /// Access is anonymous: meant for test registries; publish with `make publish` (kwctl). With
    /// --digestfile, the manifest digest is also written to a file, as `buildah push --digestfile` does
    /// (`make release` pins the policy module by it).
    Push(registry_cli::PushArgs),
    /// Write a new cosign key pair (PREFIX.key, encrypted with COSIGN_PASSWORD; PREFIX.pub), as
    /// `cosign generate-key-pair` does: each tool reads the other's keys.
    #[cfg(feature = "signing")]
    GenerateKeyPair(sign_cli::GenerateKeyPairArgs),
    /// Sign a published policy or image by its manifest digest, as `cosign sign --key` does: the
    /// signature goes to the tag sha256-<digest>.sig beside it. Prints `digest:` and `signature:`.
    ///
    /// Registry credentials come from RUNNER_REGISTRY_USERNAME and RUNNER_REGISTRY_PASSWORD (else anonymous).
    #[cfg(feature = "signing")]
    Sign(sign_cli::SignArgs),
    /// Verify a policy's or image's cosign signatures, as `kwctl verify` does: with public keys, a
    /// keyless identity (GitHub Actions, an issuer and subject), or Kubewarden's verification config.
    ///
    /// Exit status 0 and `verified:` when every requirement is met; 1 and a message naming the digest
    /// when the artifact is unsigned, its signature is for another digest, or no signature meets them.
    #[cfg(feature = "signing")]
    Verify(sign_cli::VerifyArgs),
    /// Publish an SBOM (CycloneDX or SPDX JSON) beside a policy or image, as `cosign attach sbom` does:
    /// at the tag sha256-<digest>.sbom of its repository.
    #[cfg(feature = "signing")]
    AttachSbom(sign_cli::AttachSbomArgs),
}

/// How to reach a registry.
#[derive(Args, Debug)]
pub(crate) struct RegistryArgs {
    /// Use plain HTTP for this registry. Without it, plain HTTP is used only for a registry on the loopback
    /// interface (localhost, 127.0.0.0/8, [::1]); every other registry is reached over HTTPS.
    #[arg(long)]
    pub(crate) insecure: bool,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// File with the request: a whole AdmissionReview (`{"kind": "AdmissionReview", "request": …}`) or a
    /// bare AdmissionRequest.
    #[arg(short = 'r', long, value_name = "FILE")]
    request_path: PathBuf,
    /// File with the policy settings, YAML or JSON.
    #[arg(long, value_name = "FILE", conflicts_with = "settings_json")]
    settings_path: Option<PathBuf>,
    /// Policy settings as a JSON string, e.g. '{"annotationPrefix": "moco.cybozu.com"}'.
    #[arg(long, value_name = "JSON")]
    settings_json: Option<String>,
    /// The policy: a path to a .wasm file, file:///path/to/policy.wasm, or
    /// registry://HOST[:PORT]/REPOSITORY:TAG (pulled first; its digests are printed on stderr).
    #[arg(value_name = "POLICY")]
    policy: String,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    cache: CacheArgs,
}

/// wasmtime's compilation cache, as kwctl keeps it: a module is compiled once, later runs read it back.
#[derive(Args, Debug)]
struct CacheArgs {
    /// Compile the module every time: neither read nor write the compilation cache
    /// (RUNNER_NO_CACHE=1, true, yes or on).
    #[arg(long, env = "RUNNER_NO_CACHE", conflicts_with = "cache_dir",
          value_parser = clap::builder::FalseyValueParser::new())]
    no_cache: bool,
    /// Where compiled modules are cached [default: $XDG_CACHE_HOME/wasmtime, else ~/.cache/wasmtime].
    #[arg(long, value_name = "DIR", env = "RUNNER_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
}

impl CacheArgs {
    fn setting(&self) -> CacheSetting {
        match (&self.cache_dir, self.no_cache) {
            (_, true) => CacheSetting::Off,
            (Some(dir), false) => CacheSetting::Dir(dir.clone()),
            (None, false) => CacheSetting::Default,
        }
    }
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Evaluations measured (after warm-up).
    #[arg(long, default_value_t = 2000)]
    iterations: u32,
    /// Evaluations run before measuring, to warm caches.
    #[arg(long, default_value_t = 100)]
    warm_up: u32,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Bench(args) => bench(&args),
        Command::Pull(args) => registry_cli::pull(&args),
        Command::Push(args) => registry_cli::push(&args),
        #[cfg(feature = "signing")]
        Command::GenerateKeyPair(args) => sign_cli::generate_key_pair(&args),
        #[cfg(feature = "signing")]
        Command::Sign(args) => sign_cli::sign(&args),
        #[cfg(feature = "signing")]
        Command::Verify(args) => sign_cli::verify(&args),
        #[cfg(feature = "signing")]
        Command::AttachSbom(args) => sign_cli::attach_sbom(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

/// Everything `run` and `bench` share: the loaded policy, the request and its payload.
struct Prepared {
    policy: Policy,
    request: AdmissionRequest,
    payload: Vec<u8>,
}

fn prepare(args: &RunArgs) -> Result<Prepared> {
    let settings = match (&args.settings_path, &args.settings_json) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read settings file {}", path.display()))?;
            admission::settings_from_text(&text)
                .with_context(|| format!("settings file {}", path.display()))?
        }
        (None, Some(json)) => {
            serde_json::from_str::<Value>(json).context("--settings-json is not valid JSON")?
        }
        (None, None) => Value::Object(Default::default()),
    };
    let document = read_json(&args.request_path)?;
    let request = admission::request_from_json(&document)
        .with_context(|| format!("request file {}", args.request_path.display()))?;
    let module = load_module(&args.policy, args.registry.insecure)?;
    let policy = Policy::load(&module, &args.cache.setting())
        .with_context(|| format!("policy {}", args.policy))?;

    let verdict = policy.validate_settings(&settings)?;
    print_logs(&policy);
    if !verdict.valid {
        println!("{}", serde_json::to_string(&verdict)?);
        return Err(anyhow!(
            "Provided settings are not valid: {}",
            verdict.message.unwrap_or_default()
        ));
    }
    let payload = admission::validate_payload(&request, &settings)?;
    Ok(Prepared {
        policy,
        request,
        payload,
    })
}

fn run(args: &RunArgs) -> Result<()> {
    let p = prepare(args)?;
    let reply = p.policy.validate(&p.payload);
    print_logs(&p.policy);
    let response = AdmissionResponse::from_policy_response(
        &p.request.uid,
        p.request.object.as_ref(),
        &reply?,
    )?;
    println!("{}", serde_json::to_string(&response)?);
    Ok(())
}

fn bench(args: &BenchArgs) -> Result<()> {
    if args.iterations == 0 {
        return Err(anyhow!("--iterations must be at least 1"));
    }
    let load_start = Instant::now();
    let p = prepare(&args.run)?;
    let load = load_start.elapsed();
    for _ in 0..args.warm_up {
        p.policy.validate(&p.payload)?;
        p.policy.take_logs();
    }
    let mut samples = Vec::with_capacity(args.iterations as usize);
    let mut last = None;
    for _ in 0..args.iterations {
        let start = Instant::now();
        let reply = p.policy.validate(&p.payload)?;
        samples.push(start.elapsed());
        p.policy.take_logs();
        last = Some(reply);
    }
    samples.sort_unstable();
    let total: Duration = samples.iter().sum();
    let pct = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let reply = last.ok_or_else(|| anyhow!("no evaluation ran"))?;
    println!("policy:      {}", args.run.policy);
    println!("request:     {}", args.run.request_path.display());
    println!(
        "answer:      allowed={} mutated={}",
        reply.accepted,
        reply.mutated_object.is_some()
    );
    println!(
        "load:        {:.1} ms (module {} + instantiate + validate_settings)",
        load.as_secs_f64() * 1e3,
        p.policy.compilation().describe()
    );
    println!(
        "evaluations: {} (after {} warm-up)",
        samples.len(),
        args.warm_up
    );
    println!(
        "validate:    mean {:.1} µs  median {:.1} µs  p95 {:.1} µs  p99 {:.1} µs  min {:.1} µs  max {:.1} µs",
        us(total) / samples.len() as f64,
        us(pct(0.5)),
        us(pct(0.95)),
        us(pct(0.99)),
        us(samples[0]),
        us(samples[samples.len() - 1]),
    );
    Ok(())
}

/// The module's bytes from a path, a `file://` URI or a `registry://` reference.
fn load_module(uri: &str, insecure: bool) -> Result<Vec<u8>> {
    if uri.starts_with(registry::SCHEME) {
        let pulled = registry::pull(uri, insecure)?;
        eprintln!(
            "pulled {uri} manifest {} layer {}",
            pulled.manifest_digest, pulled.layer_digest
        );
        return Ok(pulled.module);
    }
    let path = policy_path(uri)?;
    std::fs::read(&path).with_context(|| format!("cannot read policy {}", path.display()))
}

fn policy_path(uri: &str) -> Result<PathBuf> {
    if let Some(path) = uri.strip_prefix("file://") {
        return Ok(PathBuf::from(path));
    }
    if let Some((scheme, _)) = uri.split_once("://") {
        return Err(anyhow!(
            "policy {uri}: scheme {scheme}:// is not supported; give a path, file:///path/to/policy.wasm or registry://HOST/REPOSITORY:TAG"
        ));
    }
    Ok(PathBuf::from(uri))
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read(path)
        .with_context(|| format!("cannot read request file {}", path.display()))?;
    serde_json::from_slice(&text)
        .with_context(|| format!("request file {} is not valid JSON", path.display()))
}

/// Policy log events go to stderr, one line each, so stdout stays one JSON line like `kwctl run`'s.
fn print_logs(policy: &Policy) {
    for event in policy.take_logs() {
        let fields: Vec<String> = event
            .fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "file" | "line" | "column"))
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect();
        eprintln!(
            "{:>7} {} {}",
            event.level.to_uppercase(),
            event.message,
            fields.join(" ")
        );
    }
}
