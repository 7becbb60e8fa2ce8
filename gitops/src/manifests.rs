//! The files `deploy/gitops/` ships, read as Argo CD and Flux would read them.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use serde::Deserialize;

use crate::flux::HealthCheckExprs;

/// The argocd-cm key of the StatefulSet health check (`resource.customizations.health.<group>_<kind>`,
/// argo-cd `util/settings/settings.go`).
pub const ARGOCD_CM_KEY: &str = "resource.customizations.health.apps_StatefulSet";

/// The repository's root (the workspace).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `deploy/gitops/argocd/resource_customizations/apps/StatefulSet/`: health.lua, health_test.yaml,
/// testdata/.
pub fn argocd_check_dir() -> PathBuf {
    repo_root().join("deploy/gitops/argocd/resource_customizations/apps/StatefulSet")
}

/// `deploy/gitops/argocd/argocd-cm.yaml`, the patch users apply.
pub fn argocd_cm_path() -> PathBuf {
    repo_root().join("deploy/gitops/argocd/argocd-cm.yaml")
}

/// `deploy/gitops/flux/statefulset-health.yaml`, the patch users apply.
pub fn flux_patch_path() -> PathBuf {
    repo_root().join("deploy/gitops/flux/statefulset-health.yaml")
}

/// The text of `path`.
///
/// # Errors
/// It cannot be read.
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))
}

/// The health script an argocd-cm patch (`argocd-cm.yaml`, as shipped or rendered) installs.
///
/// # Errors
/// Not a ConfigMap named argocd-cm with [`ARGOCD_CM_KEY`].
pub fn argocd_cm_script(path: &Path) -> Result<String> {
    #[derive(Deserialize)]
    struct ConfigMap {
        kind: String,
        metadata: Metadata,
        data: std::collections::BTreeMap<String, String>,
    }
    #[derive(Deserialize)]
    struct Metadata {
        name: String,
    }
    let cm: ConfigMap = serde_saphyr::from_str(&read(path)?)
        .with_context(|| format!("{}: a ConfigMap", path.display()))?;
    if cm.kind != "ConfigMap" || cm.metadata.name != "argocd-cm" {
        return Err(anyhow!("{}: not the ConfigMap argocd-cm", path.display()));
    }
    cm.data
        .get(ARGOCD_CM_KEY)
        .cloned()
        .ok_or_else(|| anyhow!("{}: no data key {ARGOCD_CM_KEY}", path.display()))
}

/// The `apps/v1` `StatefulSet` entry a Flux patch (`statefulset-health.yaml`, as shipped or rendered)
/// adds: a JSON 6902 `add` of `/spec/healthCheckExprs`.
///
/// # Errors
/// Not such a patch, or no such entry.
pub fn flux_entry(path: &Path) -> Result<HealthCheckExprs> {
    #[derive(Deserialize)]
    struct Op {
        op: String,
        path: String,
        value: Vec<HealthCheckExprs>,
    }
    let ops: Vec<Op> = serde_saphyr::from_str(&read(path)?)
        .with_context(|| format!("{}: a JSON 6902 patch", path.display()))?;
    ops.into_iter()
        .filter(|op| op.op == "add" && op.path == "/spec/healthCheckExprs")
        .flat_map(|op| op.value)
        .find(|e| e.api_version == "apps/v1" && e.kind == "StatefulSet")
        .ok_or_else(|| anyhow!("{}: no apps/v1 StatefulSet entry", path.display()))
}

/// One test of Argo CD's `health_test.yaml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArgoTest {
    /// The expected result.
    pub health_status: ExpectedHealth,
    /// The object, relative to the check's directory.
    pub input_path: String,
}

/// `healthStatus` of an Argo CD health test: both must match exactly.
#[derive(Clone, Debug, Deserialize)]
pub struct ExpectedHealth {
    /// The status code.
    pub status: String,
    /// The message.
    pub message: String,
}

/// The tests of `dir/health_test.yaml` (Argo CD's format: `tests: [{healthStatus, inputPath}]`).
///
/// # Errors
/// The file is missing or not in that format.
pub fn argo_tests(dir: &Path) -> Result<Vec<ArgoTest>> {
    #[derive(Deserialize)]
    struct File {
        tests: Vec<ArgoTest>,
    }
    let path = dir.join("health_test.yaml");
    let file: File = serde_saphyr::from_str(&read(&path)?)
        .with_context(|| format!("{}: Argo CD's health_test.yaml format", path.display()))?;
    Ok(file.tests)
}

/// A YAML object file (a test input) as JSON.
///
/// # Errors
/// Not YAML.
pub fn yaml_object(path: &Path) -> Result<serde_json::Value> {
    serde_saphyr::from_str(&read(path)?).with_context(|| format!("{}: YAML", path.display()))
}
