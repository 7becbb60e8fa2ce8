//! A Kustomization `spec.healthCheckExprs` entry evaluated as kustomize-controller evaluates it, with
//! cel-rust standing in for cel-go.
//!
//! fluxcd/pkg `runtime/cel/status_evaluator.go` (`StatusEvaluator.Evaluate`), in order:
//! 1. `status.observedGeneration` and `metadata.generation` read with apimachinery's `NestedInt64`:
//!    both integers and different, InProgress; a read that fails (not an integer) skips this check
//!    (since fluxcd/pkg runtime v0.105.0, "runtime/cel: fix requiring int status.observedGeneration";
//!    before, it failed the evaluation);
//! 2. `inProgress`, `failed`, `current`, each when set: the first that is true decides (InProgress,
//!    Failed, Current); none true: InProgress.
//!
//! The variables are the object's top-level fields (`Evaluate` passes `u.UnstructuredContent()` to
//! `runtime/cel/expression.go`, `EvaluateBoolean`; no `self`), integers are `int`, and the
//! expressions are parsed, not compiled against declarations (`NewStatusEvaluator`): a missing field
//! is an evaluation error (Unknown, and Flux waits until its timeout). An expression must yield a
//! bool. Flux's environment (`NewExpression`) adds optional types and the strings, sets and encoders
//! extensions to the standard library; the shipped expressions use only the standard library, `has()`
//! and optional types.

use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow};
use cel::{Env, Program, Value};
use native_twin::kubernetes_cel::to_cel;
use serde::Deserialize;

/// One `spec.healthCheckExprs` entry (fluxcd/pkg `apis/kustomize` `CustomHealthCheck`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckExprs {
    /// `apps/v1` (Flux matches the group and kind only).
    pub api_version: String,
    /// `StatefulSet`.
    pub kind: String,
    /// Required: true when the resource is ready.
    pub current: String,
    /// Optional: true while it is still reconciling.
    #[serde(default)]
    pub in_progress: Option<String>,
    /// Optional: true when it failed.
    #[serde(default)]
    pub failed: Option<String>,
}

/// kstatus's result of a custom health check.
///
/// Flux has no Suspended (kstatus: Current, InProgress, Failed, Terminating, NotFound, Unknown):
/// [`FluxStatus::for_argo`] maps the four rollout health codes onto it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluxStatus {
    /// Still reconciling: Flux keeps waiting (until `spec.timeout`).
    InProgress,
    /// Failed: Flux stops waiting and marks the Kustomization not Ready.
    Failed,
    /// Ready.
    Current,
}

impl FluxStatus {
    /// What Flux should report for an Argo CD health code: `Healthy` → Current, `Degraded` → Failed,
    /// `Progressing` and `Suspended` → InProgress (a paused rollout is not done, and not failed).
    pub fn for_argo(code: &str) -> FluxStatus {
        match code {
            "Healthy" => FluxStatus::Current,
            "Degraded" => FluxStatus::Failed,
            _ => FluxStatus::InProgress,
        }
    }
}

/// An entry compiled, ready to evaluate many objects.
pub struct FluxHealth {
    env: Arc<Env>,
    expressions: Vec<(&'static str, FluxStatus, Program)>,
}

impl FluxHealth {
    /// Compiles the entry's expressions (`inProgress`, `failed`, `current`: Flux's order).
    ///
    /// # Errors
    /// An expression that does not parse (Flux refuses the Kustomization: `InvalidCELExpression`).
    pub fn compile(entry: &HealthCheckExprs) -> Result<FluxHealth> {
        let env = Arc::new(Env::stdlib());
        let mut expressions = Vec::new();
        for (name, status, source) in [
            (
                "inProgress",
                FluxStatus::InProgress,
                entry.in_progress.as_ref(),
            ),
            ("failed", FluxStatus::Failed, entry.failed.as_ref()),
            ("current", FluxStatus::Current, Some(&entry.current)),
        ] {
            if let Some(source) = source {
                let program = env
                    .compile(source)
                    .map_err(|e| anyhow!("{name}: does not compile: {e}"))?;
                expressions.push((name, status, program));
            }
        }
        Ok(FluxHealth { env, expressions })
    }

    /// The status Flux gives `object` (JSON, as the API server returns it).
    ///
    /// # Errors
    /// What Flux reports as Unknown: an expression failed or did not yield a bool (the message names
    /// it).
    pub fn status(&self, object: &serde_json::Value) -> Result<FluxStatus> {
        let observed = nested_int64(object, &["status", "observedGeneration"]);
        let generation = nested_int64(object, &["metadata", "generation"]);
        if let (Ok(Some(observed)), Ok(Some(generation))) = (observed, generation)
            && observed != generation
        {
            return Ok(FluxStatus::InProgress);
        }
        for (name, status, value) in self.values(object) {
            if value.with_context(|| name.to_string())? {
                return Ok(status);
            }
        }
        Ok(FluxStatus::InProgress)
    }

    /// Each expression's own value on `object`, in Flux's order, without the pre-check (to show
    /// that no expression fails on an object, whatever Flux would have decided before it).
    pub fn values(
        &self,
        object: &serde_json::Value,
    ) -> Vec<(&'static str, FluxStatus, Result<bool>)> {
        let mut context = cel::Context::with_env(Arc::clone(&self.env));
        if let Some(fields) = object.as_object() {
            for (k, v) in fields {
                context.add_variable_from_value(k.as_str(), to_cel(v));
            }
        }
        self.expressions
            .iter()
            .map(|(name, status, program)| {
                let value = match program.execute(&context) {
                    Ok(Value::Bool(b)) => Ok(b),
                    Ok(other) => Err(anyhow!(
                        "failed to evaluate CEL expression as boolean: {other:?}"
                    )),
                    Err(e) => Err(anyhow!("failed to evaluate the CEL expression: {e}")),
                };
                (*name, *status, value)
            })
            .collect()
    }
}

/// apimachinery's `unstructured.NestedInt64`: `Ok(None)` when a field on `path` is absent; an error
/// when a field before the last is not an object, or the last is not an integer.
///
/// # Errors
/// `<path> accessor error: …`, as apimachinery words it.
pub fn nested_int64(object: &serde_json::Value, path: &[&str]) -> Result<Option<i64>> {
    let mut at = object;
    for (i, key) in path.iter().enumerate() {
        let Some(fields) = at.as_object() else {
            return Err(anyhow!(
                "{} accessor error: {at} is not map[string]interface{{}}",
                path[..i].join(".")
            ));
        };
        match fields.get(*key) {
            None => return Ok(None),
            Some(next) => at = next,
        }
    }
    at.as_i64()
        .map(Some)
        .ok_or_else(|| anyhow!("{} accessor error: {at} is not int64", path.join(".")))
}
