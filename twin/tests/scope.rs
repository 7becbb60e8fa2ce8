//! The native install is scoped as the Kubewarden one: the same rules (apps/v1 statefulsets, CREATE and
//! UPDATE, no subresource), the same opt-in label (objectSelector) and namespace exclusions, failing
//! closed.

mod common;

use common::repo;
use serde_json::Value;

fn yaml(file: &str) -> Value {
    let path = repo().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rules_namespaces_and_failure_policy_match_the_cluster_admission_policy() {
    let kubewarden = yaml("deploy/policy/cluster-admission-policy.yaml");
    let policy = yaml("deploy/native/mutating-admission-policy.yaml");
    let binding = yaml("deploy/native/mutating-admission-policy-binding.yaml");
    assert_eq!(
        policy["spec"]["matchConstraints"]["resourceRules"],
        kubewarden["spec"]["rules"]
    );
    assert_eq!(
        binding["spec"]["matchResources"]["namespaceSelector"],
        kubewarden["spec"]["namespaceSelector"]
    );
    assert_eq!(
        binding["spec"]["matchResources"]["objectSelector"],
        kubewarden["spec"]["objectSelector"]
    );
    // Opt-in by default (docs/install.md): the label, on the binding; the policy matches every write.
    assert_eq!(
        kubewarden["spec"]["objectSelector"],
        serde_json::json!({"matchLabels": {"safe-rollout.dev/guard": "true"}})
    );
    assert!(
        policy["spec"]["matchConstraints"]
            .get("objectSelector")
            .is_none()
    );
    assert_eq!(binding["spec"]["policyName"], policy["metadata"]["name"]);
    assert_eq!(
        policy["spec"]["failurePolicy"],
        kubewarden["spec"]["failurePolicy"]
    );
    assert_eq!(policy["spec"]["failurePolicy"], "Fail");
}
