//! The MutatingAdmissionPolicy of `deploy/native/`, read from its YAML: its variables and JSON Patch
//! mutations (CEL source text), and the render-time rewrite of the annotation prefix.

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::Value;

/// Where the policy lives, relative to the repository root.
pub const POLICY_PATH: &str = "deploy/native/mutating-admission-policy.yaml";

/// The annotation prefix the manifest ships with (the policy's `annotationPrefix` default).
pub const SHIPPED_PREFIX: &str = "safe-rollout.dev";

/// The one line that holds the prefix: the expression of the variable `prefix`. `deploy/render.sh`
/// rewrites exactly this line, and [`rewrite_prefix`] does the same for the tests.
pub const PREFIX_LINE: &str = "      expression: \"'safe-rollout.dev'\"";

/// `matchConstraints.resourceRules[*]` of the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRule {
    /// `apiGroups` (`*` matches any).
    pub api_groups: Vec<String>,
    /// `apiVersions` (`*` matches any).
    pub api_versions: Vec<String>,
    /// `resources`, `resource/subresource` for a subresource (`*` matches any main resource).
    pub resources: Vec<String>,
    /// `operations` (`*` matches any).
    pub operations: Vec<String>,
}

impl ResourceRule {
    fn from_json(rule: &Value) -> Result<ResourceRule> {
        let list = |field: &str| -> Result<Vec<String>> {
            rule.get(field)
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_owned)).collect())
                .ok_or_else(|| anyhow!("{field}: expected a list of strings"))
        };
        Ok(ResourceRule {
            api_groups: list("apiGroups")?,
            api_versions: list("apiVersions")?,
            resources: list("resources")?,
            operations: list("operations")?,
        })
    }
}

/// One named CEL expression of `spec.variables`, in the manifest's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The name expressions use after `variables.`.
    pub name: String,
    /// CEL source.
    pub expression: String,
}

/// What the twin evaluates from the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutatingPolicy {
    /// `spec.variables`, in order (each may read the ones before it).
    pub variables: Vec<Variable>,
    /// `spec.mutations[*].jsonPatch.expression`, in order; each evaluates to a list of `JSONPatch`.
    pub json_patches: Vec<String>,
    /// `spec.matchConditions[*].expression` (evaluated before the variables; cannot read them).
    pub match_conditions: Vec<String>,
    /// `spec.failurePolicy`.
    pub failure_policy: String,
    /// `spec.matchConstraints.resourceRules`.
    pub resource_rules: Vec<ResourceRule>,
}

impl MutatingPolicy {
    /// Reads the MutatingAdmissionPolicy document out of YAML text (the first document of that kind).
    ///
    /// # Errors
    /// When the text is not YAML, holds no `admissionregistration.k8s.io/v1` MutatingAdmissionPolicy, or a
    /// variable or mutation lacks the fields the API requires (named in the message), or a mutation is not of
    /// `patchType: JSONPatch` (the twin evaluates JSON Patch mutations only).
    pub fn from_yaml(text: &str) -> Result<MutatingPolicy> {
        let documents: Vec<Value> = serde_saphyr::from_multiple(text).context("not YAML")?;
        let doc = documents
            .into_iter()
            .find(|doc| {
                doc["kind"] == "MutatingAdmissionPolicy"
                    && doc["apiVersion"] == "admissionregistration.k8s.io/v1"
            })
            .ok_or_else(|| anyhow!("no admissionregistration.k8s.io/v1 MutatingAdmissionPolicy"))?;
        let spec = &doc["spec"];
        let text_at = |v: &Value, field: &str| -> Result<String> {
            v.get(field)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| anyhow!("{field}: expected a string"))
        };
        let list = |field: &str| -> &[Value] {
            spec.get(field)
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        };
        let variables = list("variables")
            .iter()
            .enumerate()
            .map(|(i, v)| {
                Ok(Variable {
                    name: text_at(v, "name").with_context(|| format!("spec.variables[{i}]"))?,
                    expression: text_at(v, "expression")
                        .with_context(|| format!("spec.variables[{i}]"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let json_patches = list("mutations")
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let kind = text_at(m, "patchType").with_context(|| format!("spec.mutations[{i}]"))?;
                if kind != "JSONPatch" {
                    bail!("spec.mutations[{i}].patchType: the twin evaluates JSONPatch only, got {kind}");
                }
                text_at(&m["jsonPatch"], "expression")
                    .with_context(|| format!("spec.mutations[{i}].jsonPatch"))
            })
            .collect::<Result<Vec<_>>>()?;
        if json_patches.is_empty() {
            bail!("spec.mutations: the API requires at least one mutation");
        }
        let match_conditions = list("matchConditions")
            .iter()
            .enumerate()
            .map(|(i, c)| {
                text_at(c, "expression").with_context(|| format!("spec.matchConditions[{i}]"))
            })
            .collect::<Result<Vec<_>>>()?;
        let failure_policy = spec
            .get("failurePolicy")
            .and_then(Value::as_str)
            .unwrap_or("Fail")
            .to_owned();
        let resource_rules = spec["matchConstraints"]["resourceRules"]
            .as_array()
            .ok_or_else(|| anyhow!("spec.matchConstraints.resourceRules: expected a list"))?
            .iter()
            .enumerate()
            .map(|(i, r)| {
                ResourceRule::from_json(r)
                    .with_context(|| format!("spec.matchConstraints.resourceRules[{i}]"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MutatingPolicy {
            variables,
            json_patches,
            match_conditions,
            failure_policy,
            resource_rules,
        })
    }
}

/// The manifest text with the annotation prefix `prefix` instead of [`SHIPPED_PREFIX`]: [`PREFIX_LINE`]
/// replaced, as `deploy/render.sh` does for `ANNOTATION_PREFIX`.
///
/// # Errors
/// When the text does not hold [`PREFIX_LINE`] exactly once, or `prefix` contains a character outside a DNS
/// subdomain's (`a-z`, `0-9`, `-`, `.`), which could break out of the CEL string literal.
pub fn rewrite_prefix(manifest: &str, prefix: &str) -> Result<String> {
    if prefix.is_empty()
        || !prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        bail!(
            "annotation prefix {prefix:?}: expected a DNS subdomain such as \"safe-rollout.dev\""
        );
    }
    let count = manifest.lines().filter(|l| *l == PREFIX_LINE).count();
    if count != 1 {
        bail!("the manifest holds the prefix line {PREFIX_LINE:?} {count} times, expected once");
    }
    let replaced = PREFIX_LINE.replace(SHIPPED_PREFIX, prefix);
    Ok(manifest
        .lines()
        .map(|l| {
            if l == PREFIX_LINE {
                replaced.as_str()
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\n\
        spec:\n  matchConstraints:\n    resourceRules:\n      - {apiGroups: [apps], apiVersions: [v1], \
        resources: [statefulsets], operations: [CREATE]}\n  variables:\n    - name: prefix\n      expression: \"'safe-rollout.dev'\"\n  \
        mutations:\n    - patchType: JSONPatch\n      jsonPatch:\n        expression: \"[]\"\n";

    #[test]
    fn reads_variables_and_mutations_in_order() {
        let policy = MutatingPolicy::from_yaml(MINIMAL).unwrap();
        assert_eq!(policy.variables.len(), 1);
        assert_eq!(policy.variables[0].name, "prefix");
        assert_eq!(policy.variables[0].expression, "'safe-rollout.dev'");
        assert_eq!(policy.json_patches, vec!["[]".to_string()]);
        assert_eq!(policy.failure_policy, "Fail");
    }

    #[test]
    fn apply_configuration_mutations_are_refused_by_name() {
        let text = MINIMAL.replace("patchType: JSONPatch", "patchType: ApplyConfiguration");
        let err = MutatingPolicy::from_yaml(&text).unwrap_err().to_string();
        assert!(err.contains("spec.mutations[0].patchType"), "{err}");
    }

    #[test]
    fn the_prefix_line_is_rewritten_once_and_bad_prefixes_refused() {
        let text = rewrite_prefix(MINIMAL, "moco.cybozu.com").unwrap();
        let policy = MutatingPolicy::from_yaml(&text).unwrap();
        assert_eq!(policy.variables[0].expression, "'moco.cybozu.com'");
        assert!(rewrite_prefix(MINIMAL, "a'+'b").is_err());
        assert!(rewrite_prefix(MINIMAL, "").is_err());
        assert!(
            rewrite_prefix(&text, "x.io").is_err(),
            "the line is gone after a rewrite"
        );
    }
}
