//! Metrics from a pass report (`Metrics::observe`): each set's figures, steps and blocked reason, its
//! series gone with it, recovered pods, errors by reason (a lost Lease is none), the approval wait, and
//! webhook calls by name and result. The endpoints serving them: `metrics_endpoints.rs`.

use sts_stepper::cluster::ClusterError;
use sts_stepper::gates::Idle;
use sts_stepper::gates::recovery::StuckPod;
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::pass::recovery::{RecoveryOutcome, RecoveryReport};
use sts_stepper::pass::{Outcome, PassReport, SetReport};
use sts_stepper::plan::{Figures, Revisions};
use sts_stepper::serve::metrics::Metrics;

fn report(name: &str, outcome: Outcome) -> SetReport {
    SetReport {
        namespace: "demo".into(),
        name: name.into(),
        figures: Figures {
            replicas: 5,
            current_replicas: 4,
            updated_replicas: 1,
            ready_replicas: 5,
            partition: Some(4),
            last_partition_update: Some("2026-11-23T01:10:42Z".parse().expect("time")),
            revisions: Revisions::named(Some("a"), Some("b")),
            approval_wait: None,
        },
        decision_age_seconds: matches!(outcome, Outcome::Stepped { .. }).then_some(0.3),
        outcome,
        error: None,
        event_errors: vec![],
        rejection: None,
        news: true,
        webhook_call: None,
    }
}

fn has(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

#[test]
fn figures_steps_and_blocked_reason_per_statefulset() {
    let m = Metrics::new();
    let pass1 = PassReport {
        sets: vec![
            report("web", Outcome::Stepped { from: 4, to: 3 }),
            report(
                "db",
                Outcome::Blocked(Blocked::new(Reason::PodNotReady, "db-1: missing")),
            ),
        ],
        ..PassReport::default()
    };
    m.observe(&pass1, 0.25, 1_795_000_000.0);
    let text = m.encode();
    let web = r#"{namespace="demo",statefulset="web"}"#;
    let db = r#"{namespace="demo",statefulset="db"}"#;
    assert!(
        has(&text, &format!("sts_safe_rollout_replicas{web} 5")),
        "{text}"
    );
    assert!(has(
        &text,
        &format!("sts_safe_rollout_current_replicas{web} 4")
    ));
    assert!(has(
        &text,
        &format!("sts_safe_rollout_updated_replicas{web} 1")
    ));
    assert!(
        has(&text, &format!("sts_safe_rollout_partition{web} 3")),
        "partition after the step"
    );
    assert!(has(&text, &format!("sts_safe_rollout_partition{db} 4")));
    assert!(has(&text, &format!("sts_safe_rollout_steps_total{web} 1")));
    assert!(
        has(
            &text,
            &format!("sts_safe_rollout_last_partition_update_timestamp_seconds{web} 1795396242.0")
        ),
        "{text}"
    );
    assert!(has(
        &text,
        r#"sts_safe_rollout_blocked{namespace="demo",statefulset="db",reason="PodNotReady"} 1"#
    ));
    assert!(!text.contains(r#"sts_safe_rollout_blocked{namespace="demo",statefulset="web""#));
    assert!(has(
        &text,
        r#"sts_safe_rollout_passes_total{result="ok"} 1"#
    ));
    assert!(has(&text, "sts_safe_rollout_pass_duration_seconds_count 1"));
    // One step, decided on pods read 0.3 s before its write.
    assert!(has(
        &text,
        "sts_safe_rollout_step_decision_age_seconds_count 1"
    ));
    assert!(has(
        &text,
        "sts_safe_rollout_step_decision_age_seconds_sum 0.3"
    ));
    assert!(text.ends_with("# EOF\n"));

    // Next pass: db's reason changes, web left the scope: its series are gone.
    let pass2 = PassReport {
        sets: vec![report(
            "db",
            Outcome::Blocked(Blocked::new(Reason::Settling, "db: 5s left")),
        )],
        ..PassReport::default()
    };
    m.observe(&pass2, 0.1, 1_795_000_030.0);
    let text = m.encode();
    assert!(has(
        &text,
        r#"sts_safe_rollout_blocked{namespace="demo",statefulset="db",reason="Settling"} 1"#
    ));
    assert!(!text.contains(r#"reason="PodNotReady""#), "{text}");
    assert!(!text.contains(r#"statefulset="web""#), "{text}");

    // A failed snapshot marks every known set ApiError.
    m.observe_failed(0.05, 1_795_000_060.0);
    let text = m.encode();
    assert!(has(
        &text,
        r#"sts_safe_rollout_blocked{namespace="demo",statefulset="db",reason="ApiError"} 1"#
    ));
    assert!(has(
        &text,
        r#"sts_safe_rollout_passes_total{result="failed"} 1"#
    ));
    // Idle clears the blocked series.
    m.observe(
        &PassReport {
            sets: vec![report("db", Outcome::Idle(Idle::UpToDate))],
            ..PassReport::default()
        },
        0.1,
        1_795_000_090.0,
    );
    assert!(!m.encode().contains("sts_safe_rollout_blocked{"));
}

#[test]
fn recovered_pods_count_only_deletions() {
    let m = Metrics::new();
    let recovery = |outcome: RecoveryOutcome| RecoveryReport {
        namespace: "demo".into(),
        statefulset: "web".into(),
        pod: StuckPod {
            name: "web-2".into(),
            uid: "u".into(),
            resource_version: "7".into(),
            ordinal: 2,
            revision: "b".into(),
            expected_revision: "a".into(),
            not_ready_seconds: 400,
            failed_revision: false,
        },
        outcome,
        event_error: None,
    };
    for outcome in [
        RecoveryOutcome::Deleted,
        RecoveryOutcome::WouldDelete,
        RecoveryOutcome::Conflict("changed".into()),
        RecoveryOutcome::Deleted,
    ] {
        let pass = PassReport {
            sets: vec![report("web", Outcome::Idle(Idle::PartitionZero))],
            recoveries: vec![recovery(outcome)],
        };
        m.observe(&pass, 0.1, 1_795_000_000.0);
    }
    let text = m.encode();
    assert!(
        has(
            &text,
            r#"sts_safe_rollout_recovered_pods_total{namespace="demo",statefulset="web"} 2"#
        ),
        "{text}"
    );
}

/// `errors_total{reason}` per `ClusterError` kind (`ClusterError::reason`); a lost Lease — a set
/// `NotLeader`, a recovery DELETE not sent — is no error: not counted, the pass `ok`.
#[test]
fn errors_are_counted_by_the_errors_reason_and_a_lost_lease_is_not_one() {
    let (action, message) = (
        String::from("patch statefulset demo/web"),
        String::from("m"),
    );
    let errors = [
        ClusterError::Refused {
            action: action.clone(),
            code: 403,
            message: message.clone(),
        },
        ClusterError::Api {
            action: action.clone(),
            code: 503,
            message: message.clone(),
        },
        ClusterError::Transport {
            action: action.clone(),
            message: message.clone(),
        },
        ClusterError::Unexpected {
            action: action.clone(),
            message,
        },
    ];
    let m = Metrics::new();
    let sets = errors
        .iter()
        .map(|e| SetReport {
            error: Some(e.clone()),
            ..report(
                "web",
                Outcome::Blocked(Blocked::new(Reason::ApiError, e.to_string())),
            )
        })
        .collect();
    let errored = PassReport {
        sets,
        ..PassReport::default()
    };
    assert!(errored.any_errored());
    m.observe(&errored, 0.1, 1_795_000_000.0);
    let not_leader = PassReport {
        sets: vec![report("web", Outcome::NotLeader(action.clone()))],
        recoveries: vec![RecoveryReport {
            namespace: "demo".into(),
            statefulset: "web".into(),
            pod: StuckPod {
                name: "web-2".into(),
                uid: "u".into(),
                resource_version: "7".into(),
                ordinal: 2,
                revision: "b".into(),
                expected_revision: "a".into(),
                not_ready_seconds: 400,
                failed_revision: false,
            },
            outcome: RecoveryOutcome::NotLeader("delete pod demo/web-2".into()),
            event_error: None,
        }],
    };
    assert!(!not_leader.any_errored());
    assert_eq!(not_leader.sets[0].error_reason(), None);
    m.observe(&not_leader, 0.1, 1_795_000_030.0);
    let text = m.encode();
    let counted: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("sts_safe_rollout_errors_total{"))
        .collect();
    assert_eq!(
        counted.len(),
        4,
        "one series per reason, none for NotLeader: {text}"
    );
    for reason in ["Refused", "ApiStatus", "Transport", "WriteOverridden"] {
        let line = format!("sts_safe_rollout_errors_total{{reason=\"{reason}\"}} 1");
        assert!(has(&text, &line), "{line}: {text}");
    }
    assert!(has(
        &text,
        r#"sts_safe_rollout_passes_total{result="errored"} 1"#
    ));
    assert!(has(
        &text,
        r#"sts_safe_rollout_passes_total{result="ok"} 1"#
    ));
    assert!(
        !text.contains(r#"sts_safe_rollout_blocked{namespace="demo",statefulset="web""#),
        "a NotLeader set is not blocked: {text}"
    );
}

#[test]
fn the_approval_wait_and_its_timeout_while_a_step_waits_for_the_application() {
    let m = Metrics::new();
    let mut waiting = report(
        "pg",
        Outcome::Blocked(Blocked::new(
            Reason::ApprovalPending,
            "pg: waiting 40 s of 600 s for approval of pg-2 on b",
        )),
    );
    waiting.figures.approval_wait = Some((40, 600));
    let pass = |sets| PassReport {
        sets,
        ..PassReport::default()
    };
    m.observe(&pass(vec![waiting.clone()]), 0.1, 1_795_000_000.0);
    let text = m.encode();
    let pg = r#"{namespace="demo",statefulset="pg"}"#;
    assert!(
        has(
            &text,
            &format!("sts_safe_rollout_approval_wait_seconds{pg} 40")
        ),
        "{text}"
    );
    assert!(
        has(
            &text,
            &format!("sts_safe_rollout_approval_timeout_seconds{pg} 600")
        ),
        "{text}"
    );
    // Approved and stepped: the series go.
    let mut stepped = waiting;
    stepped.outcome = Outcome::Stepped { from: 3, to: 2 };
    stepped.figures.approval_wait = None;
    m.observe(&pass(vec![stepped]), 0.1, 1_795_000_030.0);
    let text = m.encode();
    assert!(
        !text.contains("sts_safe_rollout_approval_wait_seconds{"),
        "{text}"
    );
    assert!(
        !text.contains("sts_safe_rollout_approval_timeout_seconds{"),
        "{text}"
    );
}

#[test]
fn webhook_calls_are_counted_by_name_and_result() {
    let m = Metrics::new();
    let call = |result: &'static str| {
        let mut r = report("pg", Outcome::Idle(sts_stepper::gates::Idle::UpToDate));
        r.webhook_call = Some(("db-approver".into(), result));
        PassReport {
            sets: vec![r],
            ..PassReport::default()
        }
    };
    for result in ["Wait", "Error", "Error", "Approve"] {
        m.observe(&call(result), 0.1, 1_795_000_000.0);
    }
    m.observe(&PassReport::default(), 0.1, 1_795_000_010.0); // no call: nothing counted
    let text = m.encode();
    for (result, n) in [("Wait", 1), ("Error", 2), ("Approve", 1)] {
        let line = format!(
            "sts_safe_rollout_webhook_calls_total{{webhook=\"db-approver\",kind=\"webhook\",result=\"{result}\"}} {n}"
        );
        assert!(has(&text, &line), "{line} in {text}");
    }
    assert!(!text.contains("result=\"Deny\""), "{text}");
}

#[test]
fn a_built_in_answerers_calls_carry_its_kind() {
    let m = Metrics::new();
    m.name_approval_kinds([("pg-main".to_string(), "patroni")]);
    let mut r = report("pg", Outcome::Idle(sts_stepper::gates::Idle::UpToDate));
    r.webhook_call = Some(("pg-main".into(), "Deny"));
    let pass = PassReport {
        sets: vec![r],
        ..PassReport::default()
    };
    m.observe(&pass, 0.1, 1_795_000_000.0);
    let line = "sts_safe_rollout_webhook_calls_total{webhook=\"pg-main\",kind=\"patroni\",result=\"Deny\"} 1";
    assert!(has(&m.encode(), line), "{line} in {}", m.encode());
}
