//! Admission as the API server runs a MutatingAdmissionPolicy with JSON Patch mutations: match the request,
//! evaluate the variables and each mutation's CEL, apply the patch, default again, and answer with the
//! resulting object (or a denial, under `failurePolicy: Fail`).
//!
//! Approximations (besides those of [`crate::kubernetes_cel`]):
//! - Variables are evaluated eagerly in order; one that fails is left out of `variables`, so an expression
//!   that reads it fails (Kubernetes evaluates them lazily: the same outcome, another error message).
//! - Only `matchConstraints.resourceRules` is matched (group, version, resource, operation; a subresource
//!   matches only a rule naming it). The binding's namespaceSelector and objectSelector are not: the tests'
//!   requests are all of objects they select (`tests/scope.rs` holds them equal to the Kubewarden policy's).
//! - No runtime cost accounting (the API server's per-call and per-policy CEL cost budgets).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow};
use cel::objects::{Key, Map};
use cel::{Env, Program, Value};

use crate::defaulting::default_update_strategy;
use crate::kubernetes_cel::{environment, to_cel};
use crate::policy::{MutatingPolicy, ResourceRule};

/// What the API server makes of one admission request after this policy.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The policy does not match the request (another resource, a subresource, another operation).
    NotMatched,
    /// Matched; the object is stored as it came (the mutations produced no change).
    Unchanged,
    /// Matched; the object after the patch and the API server's re-defaulting.
    Mutated(serde_json::Value),
    /// The request is denied: an expression or the patch failed under `failurePolicy: Fail`.
    Denied(String),
}

/// A compiled policy, ready to admit many requests.
pub struct Twin {
    env: Arc<Env>,
    rules: Vec<ResourceRule>,
    variables: Vec<(String, Program)>,
    json_patches: Vec<Program>,
    fail_closed: bool,
}

impl Twin {
    /// Compiles every expression of `policy`.
    ///
    /// # Errors
    /// When an expression does not parse (the message names the variable or mutation), or the policy has
    /// matchConditions (the twin does not evaluate them; this policy has none by design).
    pub fn compile(policy: &MutatingPolicy) -> Result<Twin> {
        let env = Arc::new(environment().map_err(|e| anyhow!("CEL environment: {e}"))?);
        let compile = |what: &str, source: &str| {
            env.compile(source)
                .map_err(|e| anyhow!("{what}: does not compile: {e}"))
        };
        let variables = policy
            .variables
            .iter()
            .map(|v| {
                Ok((
                    v.name.clone(),
                    compile(&format!("variable {}", v.name), &v.expression)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let json_patches = policy
            .json_patches
            .iter()
            .enumerate()
            .map(|(i, e)| compile(&format!("mutation {i}"), e))
            .collect::<Result<Vec<_>>>()?;
        if !policy.match_conditions.is_empty() {
            return Err(anyhow!(
                "matchConditions are not evaluated by the twin; the policy has none by design"
            ));
        }
        Ok(Twin {
            env,
            rules: policy.resource_rules.clone(),
            variables,
            json_patches,
            fail_closed: policy.failure_policy != "Ignore",
        })
    }

    /// Admits one `admission.k8s.io/v1` AdmissionRequest (JSON). `object` and `oldObject` must be as the API
    /// server presents them, i.e. defaulted ([`crate::defaulting`]).
    pub fn admit(&self, request: &serde_json::Value) -> Outcome {
        if !self.matches(request) {
            return Outcome::NotMatched;
        }
        let original = request.get("object").cloned().unwrap_or_default();
        let mut object = original.clone();
        for (i, program) in self.json_patches.iter().enumerate() {
            match self.mutate(request, &object, program) {
                Ok(next) => object = next,
                Err(e) if self.fail_closed => {
                    return Outcome::Denied(format!("mutation {i}: {e:#}"));
                }
                Err(_) => return Outcome::Unchanged,
            }
        }
        if object == original {
            Outcome::Unchanged
        } else {
            Outcome::Mutated(object)
        }
    }

    /// The value of one variable for `request` (for tests and diagnostics, e.g. the table row).
    ///
    /// # Errors
    /// When the variable is unknown or its expression fails.
    pub fn variable(&self, request: &serde_json::Value, name: &str) -> Result<serde_json::Value> {
        let object = request.get("object").cloned().unwrap_or_default();
        let inputs = Inputs::new(request, &object);
        let context = self.context(&inputs, self.variables(&inputs, Some(name)));
        let program = self
            .variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
            .ok_or_else(|| anyhow!("no variable {name}"))?;
        let value = program
            .execute(&context)
            .map_err(|e| anyhow!("variable {name}: {e}"))?;
        value.json().map_err(|e| anyhow!("variable {name}: {e}"))
    }

    fn matches(&self, request: &serde_json::Value) -> bool {
        let text = |v: &serde_json::Value, k: &str| {
            v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_owned()
        };
        let resource = &request["resource"];
        let sub = text(request, "subResource");
        let name = if sub.is_empty() {
            text(resource, "resource")
        } else {
            format!("{}/{sub}", text(resource, "resource"))
        };
        let any_or = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
        self.rules.iter().any(|r| {
            any_or(&r.api_groups, &text(resource, "group"))
                && any_or(&r.api_versions, &text(resource, "version"))
                && (r.resources.contains(&name)
                    || (sub.is_empty() && r.resources.iter().any(|x| x == "*")))
                && any_or(&r.operations, &text(request, "operation"))
        })
    }

    /// Evaluates one mutation against `object` (as mutated so far) and returns the patched, re-defaulted
    /// object.
    fn mutate(
        &self,
        request: &serde_json::Value,
        object: &serde_json::Value,
        program: &Program,
    ) -> Result<serde_json::Value> {
        let inputs = Inputs::new(request, object);
        let context = self.context(&inputs, self.variables(&inputs, None));
        let patch = program.execute(&context).map_err(|e| anyhow!("{e}"))?;
        let patch = patch.json().map_err(|e| anyhow!("{e}"))?;
        let patch: json_patch::Patch = serde_json::from_value(patch)
            .context("the expression did not evaluate to a list of JSONPatch")?;
        let mut patched = object.clone();
        json_patch::patch(&mut patched, &patch).map_err(|e| anyhow!("JSON Patch: {e}"))?;
        default_update_strategy(&mut patched);
        Ok(patched)
    }

    /// `variables`, evaluated in order; with `until`, only those before that one.
    fn variables(&self, inputs: &Inputs, until: Option<&str>) -> Map {
        let mut done = HashMap::new();
        for (name, program) in &self.variables {
            if until == Some(name.as_str()) {
                break;
            }
            let context = self.context(
                inputs,
                Map {
                    map: Arc::new(done.clone()),
                },
            );
            if let Ok(value) = program.execute(&context) {
                done.insert(Key::String(Arc::new(name.clone())), value);
            }
        }
        Map {
            map: Arc::new(done),
        }
    }

    fn context(&self, inputs: &Inputs, variables: Map) -> cel::Context<'static, 'static> {
        let mut context = cel::Context::with_env(Arc::clone(&self.env));
        context.add_variable_from_value("object", inputs.object.clone());
        context.add_variable_from_value("oldObject", inputs.old_object.clone());
        context.add_variable_from_value("request", inputs.request.clone());
        context.add_variable_from_value("variables", Value::Map(variables));
        context
    }
}

/// The CEL values of one evaluation, converted once (their clones share the data).
struct Inputs {
    object: Value,
    old_object: Value,
    request: Value,
}

impl Inputs {
    fn new(request: &serde_json::Value, object: &serde_json::Value) -> Inputs {
        Inputs {
            object: to_cel(object),
            old_object: to_cel(request.get("oldObject").unwrap_or(&serde_json::Value::Null)),
            request: to_cel(request),
        }
    }
}
