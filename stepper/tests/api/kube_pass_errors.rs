//! The kube-rs cluster against a mocked API server answering a pass with errors: a failed `test` op
//! (422/409) is a conflict, a 500 on a step or a failed pod LIST blocks that set with `ApiError` while
//! the pass goes on, and an admission webhook that keeps the partition is an error, not a step.

use crate::mock_api::moments::*;
use crate::mock_api::*;
use http::Method;
use serde_json::{Value, json};
use sts_stepper::gates::Idle;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::Outcome;

#[tokio::test]
async fn a_failed_test_op_is_a_conflict_not_an_error() {
    for (code, reason) in [(422, "Invalid"), (409, "Conflict")] {
        let (report, seen) = pass_in_default_scope(lists_then(
            "1-staged",
            initialized,
            vec![patch(
                PATCH_WEB,
                code,
                status_body(
                    code,
                    reason,
                    "the server rejected our request due to an error in our request",
                ),
            )],
        ))
        .await;
        let report = report.expect("pass");
        assert!(
            matches!(&report.sets[0].outcome, Outcome::Conflict(m) if m.contains("rejected our request")),
            "{code}: {:?}",
            report.sets[0].outcome
        );
        assert!(!report.any_errored(), "{code}");
        assert_eq!(
            seen[3].body,
            step_body(5, 4),
            "{code}: no Event after a conflict"
        );
    }
}

#[tokio::test]
async fn a_500_blocks_that_set_with_api_error_and_the_pass_goes_on() {
    // Two sets: demo/web (staged, its step gets a 500) and demo/done (complete, gets its stamp).
    let mut list: Value =
        serde_json::from_slice(&list_body("1-staged", "statefulsets")).expect("json");
    list["items"][0]["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    let done_list: Value =
        serde_json::from_slice(&list_body("4-complete", "statefulsets")).expect("json");
    let mut done = done_list["items"][0].clone();
    done["metadata"]["name"] = json!("done");
    done["metadata"]["uid"] = json!("uid-done");
    list["items"].as_array_mut().expect("items").push(done);
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, serde_json::to_vec(&list).expect("json")),
        set_pods("demo", "app=web", list_body("1-staged", "pods")),
        namespace_pdbs("demo", list_body("1-staged", "pdbs")),
        patch(
            PATCH_WEB,
            500,
            status_body(500, "InternalError", "etcdserver: request timed out"),
        ),
        patch(
            "/apis/apps/v1/namespaces/demo/statefulsets/done?&fieldManager=sts-stepper",
            200,
            stored("4-complete", |_| {}),
        ),
    ])
    .await;
    let report = report.expect("pass");
    assert!(report.any_errored());
    let web = &report.sets[0];
    assert_eq!(web.blocked_reason(), Some(Reason::ApiError));
    assert_eq!(
        web.outcome.to_string(),
        "Blocked ApiError patch statefulset demo/web: etcdserver: request timed out"
    );
    assert_eq!(web.error.as_ref().and_then(|e| e.code()), Some(500));
    assert_eq!(report.sets[1].outcome, Outcome::Idle(Idle::UpToDate));
    assert!(report.sets[1].error.is_none());
    assert_eq!(seen[4].body, initialized_patch());
}

#[tokio::test]
async fn a_failed_pod_list_blocks_its_set_with_api_error_naming_the_read() {
    // The pass goes on (issue 29 item 1): the set that needed the read is blocked, its block recorded
    // and announced; the StatefulSet LIST failing is what fails a pass (tests/api/isolation.rs).
    let (report, seen) = pass_in_default_scope(vec![
        get(STS_ALL, list_body("1-staged", "statefulsets")),
        Expect {
            method: Method::GET,
            status: 500,
            response: status_body(500, "InternalError", "boom"),
            ..set_pods("demo", "app=web", Vec::new())
        },
        patch(PATCH_WEB, 200, stored("1-staged", |_| {})),
        post_event("demo"),
    ])
    .await;
    let report = report.expect("the pass goes on");
    let web = &report.sets[0];
    assert_eq!(
        web.outcome.to_string(),
        "Blocked ApiError list pods in namespace demo (app=web): boom"
    );
    assert_eq!(web.error.as_ref().and_then(|e| e.code()), Some(500));
    assert!(seen[2].body.to_string().contains(r#""value":"ApiError""#));
    assert_eq!(seen[3].body["reason"], "Blocked");
}

#[tokio::test]
async fn an_admission_webhook_keeping_the_partition_is_an_error_not_a_step() {
    let (report, _) = pass_in_default_scope(lists_then(
        "1-staged",
        initialized,
        vec![
            patch(PATCH_WEB, 200, stored("1-staged", |_| {})), // partition still 5
            // Then recorded as a refused step and announced (tests/api/rejected_writes.rs).
            patch(PATCH_WEB, 200, stored("1-staged", |_| {})),
            post_event("demo"),
        ],
    ))
    .await;
    let report = report.expect("pass");
    assert!(report.any_errored());
    assert_eq!(report.sets[0].blocked_reason(), Some(Reason::ApiError));
    assert!(
        report.sets[0]
            .rejection
            .as_ref()
            .is_some_and(|r| r.announced)
    );
}
