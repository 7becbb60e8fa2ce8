//! One scope (issue 43; docs/install.md, "Which StatefulSets are guarded") against a mocked API server
//! on the real "2-stepped-4" objects: the stepper sends no label selector with its LIST and judges its
//! `--selector` on each set; a marked set whose opt-in label is gone while an update is staged is held
//! `OutOfScope` — one status write, a Warning `Blocked` Event, no pod read, no step — and a person's
//! hand-held canary (no guarded mark) gets nothing at all, not even a read of its pods.

use crate::common::*;
use crate::mock_api::moments::*;
use crate::mock_api::*;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::config::StepperScope;
use sts_stepper::gates::GateOptions;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions};

const OPT_IN: &str = "safe-rollout.dev/guard=true";

fn opt_in() -> PassOptions {
    PassOptions {
        gates: GateOptions {
            scope: StepperScope::new(Some(OPT_IN)).expect("selector"),
            ..GateOptions::default()
        },
        ..PassOptions::default()
    }
}

fn labelled(s: &mut Value) {
    s["metadata"]["labels"] = json!({"safe-rollout.dev/guard": "true"});
    initialized(s);
}

#[tokio::test]
async fn a_marked_set_whose_opt_in_label_was_removed_is_held_out_of_scope_and_said_so() {
    let unlabelled = |s: &mut Value| initialized(s);
    let script = vec![
        // One LIST, no labelSelector: the stepper sees the set that left its selector.
        get(STS_ALL, list_with("2-stepped-4", unlabelled)),
        patch(
            "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
            200,
            stored("2-stepped-4", unlabelled),
        ),
        post_event("demo"),
    ];
    let (report, seen) = pass_with(Scope::default(), opt_in(), script).await;
    let report = report.expect("pass");
    match &report.sets[0].outcome {
        Outcome::Blocked(b) => {
            assert_eq!(b.reason, Reason::OutOfScope);
            assert!(b.detail.contains(OPT_IN), "{}", b.detail);
            assert!(b.detail.contains("release web --force"), "{}", b.detail);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        seen[1].body,
        json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                "value": "OutOfScope"}]),
        "the record only: no partition op, no pod read before it"
    );
    let event = &seen[2].body;
    assert_eq!(
        (event["reason"].as_str(), event["type"].as_str()),
        (Some("Blocked"), Some("Warning"))
    );
    // Labelled back: a candidate again, its pods are read and it steps (its own test elsewhere).
    let (report, seen) = pass_with(
        Scope::default(),
        opt_in(),
        lists_then(
            "2-stepped-4",
            labelled,
            vec![
                patch(
                    "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
                    200,
                    stored("2-stepped-4", set_partition(3)),
                ),
                post_event("demo"),
            ],
        ),
    )
    .await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 },
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_hand_held_canary_is_neither_stepped_nor_written_nor_read() {
    // partition 2 of 5 set by a person on a set the policy never marked (the raw capture carries no
    // mark), in or out of the stepper's --selector.
    let canary = |s: &mut Value| {
        s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(2);
        s["metadata"]["labels"] = json!({"safe-rollout.dev/guard": "true"});
    };
    let mut list: Value =
        serde_json::from_slice(&raw_fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    canary(&mut list["items"][0]);
    for opts in [PassOptions::default(), opt_in()] {
        let script = vec![get(STS_ALL, serde_json::to_vec(&list).expect("json"))];
        let (report, seen) = pass_with(Scope::default(), opts, script).await;
        assert_eq!(
            report.expect("pass").sets[0].outcome,
            Outcome::Unguarded(sts_stepper::gates::UNMARKED)
        );
        assert_eq!(seen.len(), 1, "one LIST and nothing else: {seen:?}");
    }
}

#[tokio::test]
async fn with_the_namespace_label_scope_a_set_of_a_namespace_that_lost_its_label_is_out_of_scope() {
    let by_namespace = |covered: &[&str]| {
        let items: Vec<Value> = covered
            .iter()
            .map(|n| json!({"metadata": {"name": n}}))
            .collect();
        serde_json::to_vec(&json!({"kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1", "metadata": {}, "items": items}))
        .expect("json")
    };
    let opts = PassOptions {
        gates: GateOptions {
            scope: StepperScope::with_namespaces(None, Some(OPT_IN)).expect("selector"),
            ..GateOptions::default()
        },
        ..PassOptions::default()
    };
    const NAMESPACES: &str = "/api/v1/namespaces?&labelSelector=safe-rollout.dev%2Fguard%3Dtrue";
    // demo lost its label: the marked, staged set is held, said once.
    let script = vec![
        get(STS_ALL, list_with("2-stepped-4", initialized)),
        get(NAMESPACES, by_namespace(&["db"])),
        patch(
            "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
            200,
            stored("2-stepped-4", initialized),
        ),
        post_event("demo"),
    ];
    let (report, seen) = pass_with(Scope::default(), opts.clone(), script).await;
    match &report.expect("pass").sets[0].outcome {
        Outcome::Blocked(b) => {
            assert_eq!(b.reason, Reason::OutOfScope);
            assert!(b.detail.contains("--namespace-selector"), "{}", b.detail);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen[2].body[0]["value"], "OutOfScope");
    // demo labelled: stepped as usual.
    let mut script = vec![
        get(STS_ALL, list_with("2-stepped-4", initialized)),
        get(NAMESPACES, by_namespace(&["demo"])),
    ];
    script.extend(lists_of("2-stepped-4", initialized).into_iter().skip(1));
    script.extend([
        patch(
            "/apis/apps/v1/namespaces/demo/statefulsets/web?&fieldManager=sts-stepper",
            200,
            stored("2-stepped-4", set_partition(3)),
        ),
        post_event("demo"),
    ]);
    let (report, _) = pass_with(Scope::default(), opts, script).await;
    assert_eq!(
        report.expect("pass").sets[0].outcome,
        Outcome::Stepped { from: 4, to: 3 }
    );
}
