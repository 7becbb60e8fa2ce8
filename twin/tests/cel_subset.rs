//! Issue item 3: every expression of `deploy/native/` stays within the CEL a Kubernetes 1.36 API server
//! accepts for a MutatingAdmissionPolicy (allowlist and sources in `native_twin::subset`), and the checker
//! itself refuses what the API server refuses.

mod common;

use common::manifest_text;
use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use native_twin::policy::MutatingPolicy;
use native_twin::subset::{Violation, check};

fn shipped() -> MutatingPolicy {
    MutatingPolicy::from_yaml(&manifest_text()).expect("the manifest reads")
}

#[test]
fn every_shipped_expression_is_in_the_kubernetes_subset() {
    let policy = shipped();
    assert!(
        policy.variables.len() > 10,
        "the policy's variables were read"
    );
    let violations = check(&policy);
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_shipped_policy_fails_closed_and_never_reinvokes() {
    let text = manifest_text();
    let policy = shipped();
    assert_eq!(policy.failure_policy, "Fail");
    assert!(text.contains("\n  reinvocationPolicy: Never\n"));
    assert!(
        policy.match_conditions.is_empty(),
        "conditions are variables (matchConditions cannot read them)"
    );
}

fn violations_of(variable: &str, expression: &str) -> Vec<Violation> {
    let mut policy = shipped();
    let slot = policy
        .variables
        .iter_mut()
        .find(|v| v.name == variable)
        .expect("a shipped variable");
    slot.expression = expression.to_owned();
    check(&policy)
}

#[test]
fn loops_unknown_functions_and_undeclared_names_are_refused() {
    let cases = [
        (
            "forced",
            "object.spec.template.spec.containers.all(c, c.image != '')",
            "comprehension",
        ),
        (
            "forced",
            "object.spec.template.spec.containers.exists(c, c.name == 'x')",
            "comprehension",
        ),
        (
            "forced",
            "base64.decode('eA==') == b'x'",
            "function `decode`",
        ),
        (
            "forced",
            "params.data.annotationPrefix == ''",
            "identifier `params`",
        ),
        (
            "forced",
            "variables.row == 'Forced'",
            "`variables.row` is not a variable defined before",
        ),
        (
            "forced",
            "Object.spec{replicas: 1} == object.spec",
            "type `Object.spec` cannot be constructed",
        ),
        ("forced", "object.spec.replicas >", "does not parse"),
    ];
    for (variable, expression, want) in cases {
        let found = violations_of(variable, expression);
        assert!(
            found.iter().any(|v| v.problem.contains(want)),
            "{expression}: expected a violation containing {want:?}, got {found:#?}"
        );
        assert!(
            found.iter().all(|v| v.place.ends_with(variable)),
            "{found:#?}"
        );
    }
}

#[test]
fn match_conditions_cannot_read_variables() {
    let mut policy = shipped();
    policy.match_conditions.push("variables.forced".into());
    let found = check(&policy);
    assert!(
        found.iter().any(|v| v.place == "spec.matchConditions[0]"
            && v.problem
                .contains("`variables.forced` is not a variable defined before")),
        "{found:#?}"
    );
}

/// `specChanged` compares every field of apps/v1 StatefulSetSpec but the partition. The struct literals below
/// name every field without `..Default::default()`, so a field added to k8s-openapi fails to compile here
/// until the list (and the manifest) are updated.
#[test]
fn spec_changed_compares_every_statefulset_spec_field() {
    let spec = StatefulSetSpec {
        min_ready_seconds: Some(1),
        ordinals: Some(StatefulSetOrdinals { start: Some(0) }),
        persistent_volume_claim_retention_policy: Some(
            StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: None,
                when_scaled: None,
            },
        ),
        pod_management_policy: Some("Parallel".into()),
        replicas: Some(1),
        revision_history_limit: Some(1),
        selector: Default::default(),
        service_name: Some("web".into()),
        template: Default::default(),
        update_strategy: Some(StatefulSetUpdateStrategy {
            rolling_update: Some(RollingUpdateStatefulSetStrategy {
                max_unavailable: None,
                partition: Some(0),
            }),
            type_: Some("RollingUpdate".into()),
        }),
        volume_claim_templates: Some(vec![]),
    };
    let spec = serde_json::to_value(spec).unwrap();
    let policy = shipped();
    let compared = &policy
        .variables
        .iter()
        .find(|v| v.name == "specChanged")
        .expect("variable specChanged")
        .expression;
    for field in spec
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "updateStrategy")
    {
        let term = format!("object.spec.?{field} != oldObject.spec.?{field}");
        assert!(
            compared.contains(&term),
            "specChanged does not compare {field}"
        );
    }
    for term in [
        "object.spec.?updateStrategy.?type != oldObject.spec.?updateStrategy.?type",
        "object.spec.?updateStrategy.?rollingUpdate.?maxUnavailable != oldObject.spec.?updateStrategy.?rollingUpdate.?maxUnavailable",
    ] {
        assert!(
            compared.contains(term),
            "specChanged does not compare {term}"
        );
    }
}
