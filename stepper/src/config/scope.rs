//! The stepper's scope (docs/install.md, "Which StatefulSets are guarded"): the sets it may act on are
//! the sets the policy guards — never one in a namespace every scope excludes ([`EXCLUDED_NAMESPACES`]),
//! and, with `--selector`, only those whose labels match it (the policy's `objectSelector`). Judged by
//! the stepper itself on each set it lists ([`StepperScope::excludes`]), not by the API server's LIST,
//! so that a guarded set whose opt-in label was removed while an update was staged is still seen, and
//! said so (gate `OutOfScope`), instead of staying staged with nobody to tell.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::StatefulSet;
use kube::core::{Selector, SelectorExt};

use super::approval::parse_selector;

/// The namespaces every shipped scope leaves alone, labelled or not: the `NotIn` list of the policy's
/// `namespaceSelector` (`deploy/policy/cluster-admission-policy.yaml`, and the native binding's; a test
/// holds them equal).
pub const EXCLUDED_NAMESPACES: [&str; 4] = [
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "kubewarden",
];

/// The stepper's `--selector`: the label selector as written (for messages) and parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeSelector {
    /// As written, `safe-rollout.dev/guard=true`.
    pub text: String,
    /// Parsed (kubectl's `-l` grammar).
    pub selector: Selector,
}

/// Which StatefulSets the stepper acts on, beside the policy's mark (`<prefix>/guarded`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepperScope {
    /// `--selector`, when given: a set's labels must match it.
    pub selector: Option<ScopeSelector>,
    /// `--namespace-selector`, when given: a set's namespace must carry matching labels (the pass lists
    /// the namespaces it selects, [`StepperScope::excludes`]'s `covered`).
    pub namespace_selector: Option<ScopeSelector>,
}

impl StepperScope {
    /// The scope of `--selector` `selector` (`None`: every set outside [`EXCLUDED_NAMESPACES`]).
    ///
    /// # Errors
    /// The selector is not in kubectl's `-l` grammar: the message names `--selector`, the value and the
    /// expected form.
    pub fn new(selector: Option<&str>) -> Result<Self, String> {
        Ok(StepperScope {
            selector: scope_selector("--selector", selector)?,
            namespace_selector: None,
        })
    }

    /// [`StepperScope::new`] with the namespace-label scope `--namespace-selector` `namespaces`.
    ///
    /// # Errors
    /// Either selector is not in kubectl's `-l` grammar (the message names the flag).
    pub fn with_namespaces(
        selector: Option<&str>,
        namespaces: Option<&str>,
    ) -> Result<Self, String> {
        Ok(StepperScope {
            namespace_selector: scope_selector("--namespace-selector", namespaces)?,
            ..StepperScope::new(selector)?
        })
    }

    /// Why `set` is outside this scope: its namespace is one every scope excludes, or is not among
    /// `covered` (the namespaces `--namespace-selector` selects, listed this pass; `None` without it), or
    /// its labels do not match `--selector`; `None` when it is inside.
    pub fn excludes(
        &self,
        set: &StatefulSet,
        covered: Option<&BTreeSet<String>>,
    ) -> Option<String> {
        let namespace = set.metadata.namespace.as_deref().unwrap_or("");
        if EXCLUDED_NAMESPACES.contains(&namespace) {
            return Some(format!(
                "its namespace {namespace} is one the policy never covers ({})",
                EXCLUDED_NAMESPACES.join(", ")
            ));
        }
        if let (Some(ns), Some(covered)) = (&self.namespace_selector, covered)
            && !covered.contains(namespace)
        {
            return Some(format!(
                "its namespace {namespace} no longer matches the stepper's --namespace-selector {} \
                 (the namespace's label removed?)",
                ns.text
            ));
        }
        let selector = self.selector.as_ref()?;
        let none = BTreeMap::new();
        let labels = set.metadata.labels.as_ref().unwrap_or(&none);
        (!selector.selector.matches(labels)).then(|| {
            format!(
                "its labels no longer match the stepper's --selector {} (the opt-in label removed?)",
                selector.text
            )
        })
    }
}

/// `flag`'s selector `value`, parsed (`None` when absent or blank).
fn scope_selector(flag: &str, value: Option<&str>) -> Result<Option<ScopeSelector>, String> {
    let Some(text) = value.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let parsed = parse_selector(text).map_err(|e| {
        format!(
            "{flag} {text:?} is not a label selector ({e}): expected kubectl's -l form, \
             e.g. safe-rollout.dev/guard=true or tier in (db,cache)"
        )
    })?;
    Ok(Some(ScopeSelector {
        text: text.to_string(),
        selector: parsed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(namespace: &str, labels: &[(&str, &str)]) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.namespace = Some(namespace.into());
        s.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
        );
        s
    }

    #[test]
    fn the_selector_and_the_excluded_namespaces_decide() {
        let opt_in = StepperScope::new(Some("safe-rollout.dev/guard=true")).expect("selector");
        assert_eq!(
            opt_in.excludes(&set("db", &[("safe-rollout.dev/guard", "true")]), None),
            None
        );
        let out = opt_in.excludes(&set("db", &[]), None).expect("out");
        assert!(
            out.contains("--selector safe-rollout.dev/guard=true"),
            "{out}"
        );
        let every = StepperScope::new(None).expect("none");
        assert_eq!(every.excludes(&set("db", &[]), None), None);
        assert!(every.excludes(&set("kube-system", &[]), None).is_some());
        assert_eq!(StepperScope::new(Some("  ")).expect("blank"), every);
        let by_ns =
            StepperScope::with_namespaces(None, Some("safe-rollout.dev/guard=true")).expect("ns");
        let covered: BTreeSet<String> = ["db".to_string()].into();
        assert_eq!(by_ns.excludes(&set("db", &[]), Some(&covered)), None);
        let out = by_ns
            .excludes(&set("web", &[]), Some(&covered))
            .expect("out");
        assert!(out.contains("--namespace-selector"), "{out}");
        let bad = StepperScope::with_namespaces(None, Some("a in b")).expect_err("bad");
        assert!(bad.starts_with("--namespace-selector \"a in b\""), "{bad}");
    }

    #[test]
    fn a_bad_selector_names_the_flag_and_the_form() {
        let e = StepperScope::new(Some("a in b")).expect_err("bad");
        assert!(e.starts_with("--selector \"a in b\""), "{e}");
        assert!(e.contains("kubectl's -l form"), "{e}");
    }
}
