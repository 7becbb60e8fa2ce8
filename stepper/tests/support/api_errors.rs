//! The API server's real error answers (`fixtures/api/errors/`, a v1.28 API server): each body with its
//! HTTP code ([`error_body`]), what it means ([`expected`]: every file in the directory must be there),
//! and the messages the tests name.
#![allow(dead_code)] // each test crate uses a subset

use std::path::PathBuf;

use sts_stepper::cluster::api_error::{ApiAnswer, MissingRule};

/// The message of the admission webhook's denial.
pub const WEBHOOK_MESSAGE: &str = "admission webhook \"sts-safe-rollout.e2e.safe-rollout.dev\" denied \
     the request: spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater \
     than or equal to 0";
/// The message of the failed validation.
pub const VALIDATION_MESSAGE: &str = "StatefulSet.apps \"s000\" is invalid: spec.replicas: Invalid \
     value: -1: must be greater than or equal to 0";
/// The message of the RBAC authorizer's 403.
pub const FORBIDDEN_MESSAGE: &str = "pods \"web-0\" is forbidden: User \
     \"system:serviceaccount:sts-safe-rollout:sts-stepper\" cannot delete resource \"pods\" in API \
     group \"\" in the namespace \"e2e\"";
/// The message of a JSON Patch whose `test` op failed (a lost race).
pub const TEST_FAILED_MESSAGE: &str =
    "the server rejected our request due to an error in our request";

/// `fixtures/api/`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/api")
}

/// The bytes of `fixtures/api/{file}`; a StatefulSet list's sets marked as the policy marks every
/// set it stages (`safe-rollout.dev/guarded: "true"`: the capture predates the mark, and the stepper
/// steps only marked sets).
pub fn fixture(file: &str) -> Vec<u8> {
    let raw =
        std::fs::read(fixtures().join(file)).unwrap_or_else(|e| panic!("read fixture {file}: {e}"));
    if !file.ends_with("statefulsets.json") {
        return raw;
    }
    let mut list: serde_json::Value = serde_json::from_slice(&raw).expect("a list");
    for set in list["items"].as_array_mut().into_iter().flatten() {
        set["metadata"]["annotations"]["safe-rollout.dev/guarded"] = "true".into();
    }
    serde_json::to_vec(&list).expect("json")
}

/// An error body and its HTTP code (the file name's number, as the fixtures' README says).
pub fn error_body(file: &str) -> (u16, Vec<u8>) {
    let code = file[..3]
        .parse()
        .unwrap_or_else(|e| panic!("{file}: no HTTP code: {e}"));
    (code, fixture(&format!("errors/{file}")))
}

/// What each real body means. Every file in the directory must be here.
pub fn expected(file: &str) -> ApiAnswer {
    match file {
        "422-json-patch-test-failed.json" => ApiAnswer::LostRace {
            message: TEST_FAILED_MESSAGE.into(),
        },
        "409-conflict-stale-resourceversion.json" => ApiAnswer::LostRace {
            message: "Operation cannot be fulfilled on statefulsets.apps \"s001\": the object has \
                      been modified; please apply your changes to the latest version and try again"
                .into(),
        },
        "404-not-found.json" => ApiAnswer::Gone {
            message: "statefulsets.apps \"nosuch\" not found".into(),
        },
        "422-validation-failed.json" => ApiAnswer::Rejected {
            message: VALIDATION_MESSAGE.into(),
            causes: vec![(
                "spec.replicas".into(),
                "Invalid value: -1: must be greater than or equal to 0".into(),
            )],
        },
        "400-admission-webhook-denied.json" => ApiAnswer::WebhookDenied {
            webhook: "sts-safe-rollout.e2e.safe-rollout.dev".into(),
            message: WEBHOOK_MESSAGE.into(),
        },
        "403-forbidden-delete-pod.json" => ApiAnswer::Forbidden {
            missing_rule: Some(MissingRule {
                user: "system:serviceaccount:sts-safe-rollout:sts-stepper".into(),
                verb: "delete".into(),
                resource: "pods".into(),
                group: String::new(),
                namespace: Some("e2e".into()),
            }),
            message: FORBIDDEN_MESSAGE.into(),
        },
        other => panic!("{other}: a new error fixture: say what it means here"),
    }
}
