//! The three renderings of the rollout health on one object — sts-stepper's `rollout::health`, the
//! shipped Lua in Lua 5.1, the shipped CEL as Flux evaluates it — and the check that they agree.
#![allow(dead_code)] // each test crate uses a subset

use std::path::Path;
use std::sync::Arc;

use gitops_health::argocd::{HealthScript, LuaHealth};
use gitops_health::flux::{FluxHealth, FluxStatus};
use gitops_health::manifests;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::Value;
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::rollout::health::health;

/// The shipped renderings: the Lua of `argocd-cm.yaml` as an argocd-cm script (no open libraries),
/// the CEL of the Flux patch; and the annotation keys they were rendered for.
pub struct Renderings {
    pub lua: HealthScript,
    pub flux: FluxHealth,
    pub keys: Arc<Keys>,
}

/// What all three said of one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreed {
    /// Argo CD's status and message (the Lua's, equal to the stepper's).
    pub health: LuaHealth,
    /// What Flux reports, or why it reports Unknown (a missing top-level field).
    pub flux: Result<FluxStatus, String>,
}

impl Renderings {
    /// The files as shipped (prefix `safe-rollout.dev`).
    pub fn shipped() -> Renderings {
        Renderings::from_files(
            &manifests::argocd_cm_path(),
            &manifests::flux_patch_path(),
            "safe-rollout.dev",
        )
    }

    /// `argocd-cm.yaml` and `statefulset-health.yaml` as shipped or rendered for `prefix`.
    pub fn from_files(argocd_cm: &Path, flux_patch: &Path, prefix: &str) -> Renderings {
        let script = manifests::argocd_cm_script(argocd_cm).expect("argocd-cm script");
        let entry = manifests::flux_entry(flux_patch).expect("Flux entry");
        Renderings {
            lua: HealthScript::argocd_cm(script),
            flux: FluxHealth::compile(&entry).expect("the CEL compiles"),
            keys: Arc::new(Keys::new(prefix)),
        }
    }

    /// Runs the three renderings on `object` — a StatefulSet as the API server's schema allows (the
    /// renderings trust it, as Argo CD's and Flux's own checks do) — and panics, naming `name`, unless
    /// they agree: the Lua never fails; its status and message equal the stepper's; no CEL expression
    /// fails on an object that has `spec` and `status` (the top-level variables the expressions
    /// name); and there Flux's result is the Lua status's ([`FluxStatus::for_argo`]).
    pub fn check(&self, name: &str, object: &Value) -> Agreed {
        let lua = self
            .lua
            .health(object)
            .unwrap_or_else(|e| panic!("{name}: the Lua failed: {e}\n{object:#}"));
        let set: StatefulSet = serde_json::from_value(object.clone())
            .unwrap_or_else(|e| panic!("{name}: not a StatefulSet: {e}\n{object:#}"));
        let rust = health(&set, &SetConfig::parse(&set, &self.keys));
        assert_eq!(
            (lua.status.as_str(), lua.message.as_str()),
            (rust.status.as_str(), rust.message.as_str()),
            "{name}: Lua (left) and sts-stepper (right) disagree\n{object:#}"
        );
        let has_variables = object.get("spec").is_some() && object.get("status").is_some();
        for (expr, _, value) in self.flux.values(object) {
            if let Err(e) = value
                && has_variables
            {
                panic!("{name}: the CEL `{expr}` failed: {e:#}\n{object:#}");
            }
        }
        let flux = self.flux.status(object).map_err(|e| format!("{e:#}"));
        if has_variables {
            assert_eq!(
                flux,
                Ok(FluxStatus::for_argo(&lua.status)),
                "{name}: Flux's status disagrees with the Lua's {lua:?}\n{object:#}"
            );
        }
        Agreed { health: lua, flux }
    }
}

/// `fixtures/api/<file>`.
pub fn fixture(file: &str) -> Value {
    let path = manifests::repo_root().join("fixtures/api").join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The StatefulSet `web` of fixture moment `moment` (`1-staged` … `4-complete`), as a list item: as
/// captured, before the policy wrote the guarded mark.
pub fn fixture_set(moment: &str) -> Value {
    fixture(&format!("{moment}-statefulsets.json"))["items"][0].clone()
}

/// `object` with `<prefix>/guarded: "true"` under the default prefix, as the policy writes it when it
/// stages or restores the partition.
pub fn marked(mut object: Value) -> Value {
    object["metadata"]["annotations"][GUARDED] = Value::from("true");
    object
}

/// The guarded mark's key under the default prefix.
pub const GUARDED: &str = "safe-rollout.dev/guarded";
