//! Connecting as kubectl does: which kubeconfig (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`,
//! else the in-cluster service account), which context (`--context`), and the current namespace
//! ([`crate::cli::namespace`]).
//!
//! Unlike kube-rs's `Config::infer`, a kubeconfig that exists but cannot be read is an error, not a
//! silent fall back to the in-cluster service account (client-go's `DeferredLoadingClientConfig`
//! uses in-cluster only without a kubeconfig).

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::cli::{GlobalArgs, NamespaceSource};

/// The in-cluster service account's namespace file (kubelet-mounted).
pub const SERVICE_ACCOUNT_NAMESPACE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The kube client configuration for the flags and where the current namespace comes from.
///
/// # Errors
/// A kubeconfig that cannot be read or has no such context (naming the file), or no kubeconfig and
/// no in-cluster service account.
pub async fn load(g: &GlobalArgs) -> Result<(Config, NamespaceSource)> {
    let options = KubeConfigOptions {
        context: g.context.clone(),
        ..KubeConfigOptions::default()
    };
    let (kubeconfig, from) = match &g.kubeconfig {
        Some(path) => (Some(read(path)?), path.display().to_string()),
        None => match Kubeconfig::from_env().context("reading $KUBECONFIG")? {
            Some(kc) => (Some(kc), "$KUBECONFIG".into()),
            None => match default_path().filter(|p| p.exists()) {
                Some(path) => (Some(read(&path)?), path.display().to_string()),
                None => (None, String::new()),
            },
        },
    };
    let Some(kubeconfig) = kubeconfig else {
        if let Some(context) = &g.context {
            bail!(
                "--context {context}: no kubeconfig ($KUBECONFIG, ~/.kube/config or --kubeconfig)"
            );
        }
        let mut config = Config::incluster().context(
            "no Kubernetes configuration: no kubeconfig ($KUBECONFIG, ~/.kube/config, \
             --kubeconfig) and not in a pod (in-cluster service account)",
        )?;
        config.apply_debug_overrides();
        let source = NamespaceSource::InCluster {
            pod_namespace: std::env::var("POD_NAMESPACE").ok(),
            service_account_namespace: std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE).ok(),
        };
        return Ok((config, source));
    };
    let context_namespace = context_namespace(&kubeconfig, g.context.as_deref());
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| format!("loading kubeconfig {from}"))?;
    config.apply_debug_overrides();
    Ok((config, NamespaceSource::Kubeconfig { context_namespace }))
}

/// The kube client and the current namespace for the flags ([`load`]).
///
/// # Errors
/// As [`load`], or a client that cannot be built from the configuration.
pub async fn client(g: &GlobalArgs) -> Result<(Client, String)> {
    let (config, source) = load(g).await?;
    let client =
        crate::cluster::kube_client::client(config).context("creating the Kubernetes client")?;
    Ok((client, source.current_namespace()))
}

fn read(path: &std::path::Path) -> Result<Kubeconfig> {
    Kubeconfig::read_from(path).with_context(|| format!("reading kubeconfig {}", path.display()))
}

/// `~/.kube/config` (kubectl's default kubeconfig).
fn default_path() -> Option<PathBuf> {
    std::env::home_dir().map(|home| home.join(".kube").join("config"))
}

/// The `namespace` of `context` (else of `current-context`) in `kubeconfig`, as written.
fn context_namespace(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let name = context.or(kubeconfig.current_context.as_deref())?;
    kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == name)?
        .context
        .as_ref()?
        .namespace
        .clone()
}
