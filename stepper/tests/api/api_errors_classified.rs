//! The API server's error answers, classified as it means them: every real body in
//! `fixtures/api/errors/` through the pure classifier (a lost race is retried next pass, a refusal is
//! not), a ValidatingAdmissionPolicy's denial, the two 422s told apart by their causes, a 403's missing
//! RBAC rule, a webhook's denial with its own code.

use crate::support::api_errors::{
    FORBIDDEN_MESSAGE, WEBHOOK_MESSAGE, error_body, expected, fixtures,
};
use kube::core::Status;
use serde_json::json;
use sts_stepper::cluster::api_error::{ApiAnswer, classify};

fn status(file: &str) -> Status {
    serde_json::from_slice(&error_body(file).1).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn every_real_error_body_is_classified_as_the_api_server_means_it() {
    let mut files: Vec<String> = std::fs::read_dir(fixtures().join("errors"))
        .expect("errors fixture directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6, "{files:?}");
    for file in &files {
        let answer = classify(&status(file));
        assert_eq!(answer, expected(file), "{file}");
        let (code, _) = error_body(file);
        let retried = matches!(code, 404 | 409) || file == "422-json-patch-test-failed.json";
        assert_eq!(answer.is_retried_next_pass(), retried, "{file}");
    }
}

/// A ValidatingAdmissionPolicy's denial, shaped as k8s.io/apiserver's validating dispatcher builds
/// it (`admission.NewForbidden`, then reason `Invalid` and code 422 unless the policy sets a reason,
/// and the message appended as a cause without a field): a refusal naming the policy, never a lost
/// race, although it is a 422.
#[test]
fn a_validating_admission_policy_denial_is_a_refusal_naming_the_policy() {
    let message = "statefulsets.apps \"web\" is forbidden: ValidatingAdmissionPolicy \
                   'freeze-partitions' with binding 'freeze-partitions' denied request: \
                   partitions are frozen during the change freeze";
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Invalid", "code": 422,
        "details": {"name": "web", "group": "apps", "kind": "statefulsets", "causes": [
            {"message": "ValidatingAdmissionPolicy 'freeze-partitions' with binding \
                         'freeze-partitions' denied request: partitions are frozen during the \
                         change freeze"}
        ]}
    });
    let answer = classify(&serde_json::from_value(body).expect("a Status"));
    assert!(
        answer.is_refusal() && !answer.is_retried_next_pass(),
        "{answer:?}"
    );
    assert!(
        answer
            .to_string()
            .contains("ValidatingAdmissionPolicy 'freeze-partitions'")
    );
    let race = classify(&status("422-json-patch-test-failed.json"));
    assert!(!race.is_refusal());
}

#[test]
fn the_two_422s_differ_only_by_their_causes() {
    let race = status("422-json-patch-test-failed.json");
    let rejected = status("422-validation-failed.json");
    assert_eq!((race.code, race.reason.as_str()), (422, "Invalid"));
    assert_eq!((rejected.code, rejected.reason.as_str()), (422, "Invalid"));
    // `details: {}` without causes; the same body with the validation failure's causes is rejected.
    let mut with_causes = race.clone();
    with_causes.details = rejected.details.clone();
    assert!(classify(&race).is_retried_next_pass());
    assert!(matches!(
        classify(&with_causes),
        ApiAnswer::Rejected { ref causes, .. } if causes.len() == 1
    ));
}

#[test]
fn a_forbidden_answer_names_the_missing_rule_in_its_message() {
    assert_eq!(
        classify(&status("403-forbidden-delete-pod.json")).to_string(),
        format!(
            "{FORBIDDEN_MESSAGE} (missing RBAC rule: verb \"delete\", resource \"pods\", API group \
             \"\", namespace \"e2e\")"
        )
    );
    let cluster_scope = Status::failure(
        "namespaces \"demo\" is forbidden: User \"bob\" cannot get resource \"namespaces\" in API \
         group \"\" at the cluster scope",
        "Forbidden",
    )
    .with_code(403);
    let ApiAnswer::Forbidden {
        missing_rule: Some(rule),
        ..
    } = classify(&cluster_scope)
    else {
        panic!("{:?}", classify(&cluster_scope));
    };
    assert_eq!(rule.namespace, None);
    assert_eq!(
        rule.to_string().as_str().rsplit(", ").next(),
        Some("cluster scope")
    );
    // A 403 that is not the RBAC authorizer's still is Forbidden, without a rule.
    let terminating = Status::failure(
        "unable to create new content in namespace demo because it is being terminated",
        "Forbidden",
    )
    .with_code(403);
    assert!(matches!(
        classify(&terminating),
        ApiAnswer::Forbidden {
            missing_rule: None,
            ..
        }
    ));
}

#[test]
fn a_webhook_denial_with_its_own_code_is_still_the_webhook_and_a_plain_400_is_not() {
    let own_code = Status::failure(WEBHOOK_MESSAGE, "Forbidden").with_code(403);
    assert!(matches!(
        classify(&own_code),
        ApiAnswer::WebhookDenied { ref webhook, .. } if webhook == "sts-safe-rollout.e2e.safe-rollout.dev"
    ));
    let bad_request = Status::failure(
        "the body of the request was in an unknown format",
        "BadRequest",
    )
    .with_code(400);
    assert_eq!(
        classify(&bad_request),
        ApiAnswer::Other {
            code: 400,
            reason: "BadRequest".into(),
            message: "the body of the request was in an unknown format".into(),
        }
    );
    // A webhook the API server could not call is a 500, not a denial: retried, fail closed.
    let unreachable = Status::failure(
        "Internal error occurred: failed calling webhook \"x.example\": connection refused",
        "InternalError",
    )
    .with_code(500);
    assert!(matches!(
        classify(&unreachable),
        ApiAnswer::Other { code: 500, .. }
    ));
}
