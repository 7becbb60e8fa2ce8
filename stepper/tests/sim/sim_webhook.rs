//! The simulated application's approval webhook (`stepper/src/sim/webhook.rs`, docs/approvals.md,
//! "Webhook"): its rules on plain data, its failures as the stepper's own reader takes them, and the
//! two primary-last scenarios (`scenarios/primary-last.yaml` on the pods, `primary-last-webhook.yaml`
//! through the webhook) played with the real policy and the real stepper, with what each must show.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use sts_stepper::sim::application::{Application, Protocol};
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::scenario::{self, Run, Scenario};
use sts_stepper::sim::webhook::{Request, RequestPod, Verdict, WebhookFailure, decide};
use sts_stepper::sim::world::{SetShape, World};

fn request(phase: &str, pods: &[(u32, bool)]) -> Request {
    Request {
        api_version: "safe-rollout.dev/v1alpha1".into(),
        kind: "UpdateApprovalRequest".into(),
        request_id: "5f0c2a9e41d7b3c8".into(),
        phase: phase.into(),
        pods: (pods.iter())
            .map(|(o, primary)| RequestPod {
                name: format!("web-{o}"),
                ordinal: *o,
                primary: *primary,
            })
            .collect(),
        update_revision: "web-7d".into(),
    }
}

#[test]
fn the_application_denies_then_waits_then_switches_over_then_approves() {
    let mut app = Application::new(Some(2), 5, 10);
    app.denials.insert(1, ("replica lagging".into(), 70));
    let update = request("Update", &[(1, false)]);
    assert_eq!(
        decide(&app, &update, 60, 60),
        Verdict::Deny("web-1: replica lagging".into()),
        "a denial comes at once, before the answer's delay"
    );
    assert_eq!(
        decide(&app, &update, 60, 69),
        Verdict::Deny("web-1: replica lagging".into())
    );
    assert_eq!(
        decide(&app, &update, 60, 70),
        Verdict::Approve,
        "lifted at 70"
    );
    let update = request("Update", &[(4, false)]);
    assert_eq!(
        decide(&app, &update, 10, 12),
        Verdict::Wait("checking web-4".into(), 3),
        "answer_seconds from the first sight of the request"
    );
    assert_eq!(decide(&app, &update, 10, 15), Verdict::Approve);
    let switchover = request("Switchover", &[(2, true)]);
    assert_eq!(
        decide(&app, &switchover, 10, 15),
        Verdict::SwitchOver(2),
        "the role moves first"
    );
    app.primary = Some(4);
    assert_eq!(
        decide(&app, &switchover, 10, 15),
        Verdict::Approve,
        "the role moved: approved"
    );
}

fn world(app: Application) -> World {
    let shape = SetShape {
        name: "web".into(),
        namespace: "demo".into(),
        replicas: 5,
        pod_management_policy: "OrderedReady".into(),
        min_ready_seconds: 0,
        image: "v1".into(),
    };
    let mut w = World::new(&shape, Timing::default(), true, DEFAULT_PREFIX, 1).expect("create");
    w.application = Some(app);
    w
}

fn body(phase: &str, ordinal: u32, primary: bool, revision: &str) -> serde_json::Value {
    json!({
        "apiVersion": "safe-rollout.dev/v1alpha1", "kind": "UpdateApprovalRequest",
        "requestId": format!("{phase}-{ordinal}"), "phase": phase,
        "pods": [{"name": format!("web-{ordinal}"), "uid": "u", "ordinal": ordinal, "labels": {}, "primary": primary}],
        "updateRevision": revision,
    })
}

fn error_of(answer: WebhookAnswer) -> String {
    match answer {
        WebhookAnswer::Error(cause) => cause,
        WebhookAnswer::Decided(a) => panic!("a decision: {a:?}"),
    }
}

#[test]
fn a_failing_or_silent_webhook_gives_the_stepper_an_error_of_each_kind_and_never_a_decision() {
    let mut app = Application::new(Some(2), 0, 10);
    app.protocol = Protocol::Webhook;
    app.webhook.name = "app".into();
    let mut w = world(app);
    let rev = w.status_str("updateRevision");
    w.application.as_mut().expect("app").webhook.failing = Some((10, None));
    let causes: Vec<String> = (0..4)
        .map(|_| {
            error_of(
                w.answer_webhook("app", &body("Update", 4, false, &rev))
                    .answer(),
            )
        })
        .collect();
    for (cause, want) in causes.iter().zip([
        "operation timed out",
        "Connection refused",
        "HTTP 500",
        "HTTP 200: not JSON",
    ]) {
        assert!(cause.contains(want), "{cause:?} for {want:?}");
    }
    for kind in WebhookFailure::ALL {
        error_of(kind.reply("http://app").answer());
    }
    w.t = 10;
    let approved = w
        .answer_webhook("app", &body("Update", 4, false, &rev))
        .answer();
    assert!(
        matches!(&approved, WebhookAnswer::Decided(a) if a.decision == Decision::Approve),
        "{approved:?}"
    );
    w.application.as_mut().expect("app").silent = true;
    let silent = error_of(
        w.answer_webhook("app", &body("Update", 3, false, &rev))
            .answer(),
    );
    assert!(silent.contains("timed out"), "{silent}");
    let other = error_of(
        w.answer_webhook("db", &body("Update", 3, false, &rev))
            .answer(),
    );
    assert!(other.contains("no --webhook named \"db\""), "{other}");
    w.application.as_mut().expect("app").silent = false;
    let bad = error_of(w.answer_webhook("app", &json!({"kind": "Other"})).answer());
    assert!(bad.starts_with("HTTP 400"), "{bad}");
    let hook = &w.application.as_ref().expect("app").webhook;
    let calls: BTreeMap<&str, u64> = hook.calls.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        calls,
        BTreeMap::from([("Approve", 1), ("Error", 6)]),
        "a call to another name is not the application's"
    );
    assert_eq!(
        hook.replies.get(&(4, rev.clone())),
        Some(&(Some(Decision::Approve), 10))
    );
    assert_eq!(
        hook.replies.get(&(3, rev)),
        Some(&(None, 10)),
        "an error is recorded as no decision"
    );
}

#[test]
fn a_switchover_asked_through_the_webhook_moves_the_role_off_the_step_then_approves() {
    let mut app = Application::new(Some(2), 0, 10);
    app.protocol = Protocol::Webhook;
    app.webhook.name = "app".into();
    let mut w = world(app);
    let rev = w.status_str("updateRevision");
    let ask = |w: &mut World| {
        w.answer_webhook("app", &body("Switchover", 2, true, &rev))
            .answer()
    };
    let first = ask(&mut w);
    assert!(
        matches!(&first, WebhookAnswer::Decided(a) if a.decision == Decision::Wait
            && a.reason.contains("from web-2 to web-4") && a.retry_after_seconds == Some(10)),
        "{first:?}"
    );
    w.tick(9);
    assert_eq!(w.application.as_ref().and_then(|a| a.primary), Some(2));
    w.tick(10);
    assert_eq!(
        w.application.as_ref().and_then(|a| a.primary),
        Some(4),
        "moved after 10 s"
    );
    let after = ask(&mut w);
    assert!(
        matches!(&after, WebhookAnswer::Decided(a) if a.decision == Decision::Approve),
        "{after:?}"
    );
}

fn load(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.yaml"));
    let text = std::fs::read_to_string(&path).expect("read");
    Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn play(name: &str) -> Run {
    scenario::run(&load(name), false, 1).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// What both primary-last scenarios show: five steps, one pod at a time, highest ordinal first, none
/// unapproved, and the role on web-4 at the end (web-2 was replaced as a replica).
fn assert_primary_last(run: &Run) {
    let s = &run.summary;
    assert_eq!(
        s.unapproved_replacements, 0,
        "{:?}",
        run.world.unapproved_replacements
    );
    assert_eq!(
        (s.steps, s.steps_while_gate_failed, s.max_down),
        (5, 0, 1),
        "{s:?}"
    );
    assert!(s.rollout_completed.is_some(), "{s:?}");
    let restarted: Vec<u32> = run.world.restarts.iter().map(|r| r.1).collect();
    assert_eq!(restarted, [4, 3, 2, 1, 0]);
    let app = run.world.application.as_ref().expect("application");
    assert_eq!(app.primary, Some(4), "the role moved to web-4");
    let asked = events(run, "ApprovalRequested");
    assert!(asked.iter().any(|n| n.contains("switch over")), "{asked:?}");
    assert_eq!(events(run, "Approved").len(), 5, "one Approved per step");
}

fn events<'a>(run: &'a Run, reason: &str) -> Vec<&'a str> {
    (run.world.events.iter())
        .filter(|e| e.1 == reason)
        .map(|e| e.2.as_str())
        .collect()
}

#[test]
fn primary_last_on_the_pods_asks_each_pod_and_switches_over_first() {
    let run = play("primary-last");
    assert_primary_last(&run);
    assert_eq!(
        run.summary.webhook_calls, 0,
        "the handshake calls no webhook"
    );
    let blocked = events(&run, "Blocked");
    assert!(
        blocked
            .iter()
            .any(|n| n.contains("web-1 denied the update: replica lagging")),
        "{blocked:?}"
    );
}

#[test]
fn primary_last_through_the_webhook_is_approved_call_by_call_and_survives_its_errors() {
    let run = play("primary-last-webhook");
    assert_primary_last(&run);
    let w = &run.world;
    let hook = &w.application.as_ref().expect("application").webhook;
    let count = |label: &str| hook.calls.get(label).copied().unwrap_or(0);
    assert_eq!(
        count("Approve"),
        5,
        "one Approve per step: {:?}",
        hook.calls
    );
    assert!(count("Wait") >= 6 && count("Deny") >= 1, "{:?}", hook.calls);
    assert_eq!(count("Error"), 8, "40 s of errors, a pass every 5 s");
    assert_eq!(
        (run.summary.webhook_calls, run.summary.webhook_errors),
        (hook.total_calls(), 8)
    );
    assert_eq!(hook.stale_requests, 0);
    assert_eq!(
        events(&run, "ApprovalDenied").len(),
        1,
        "one Event per denial"
    );
    let degraded = events(&run, "RolloutDegraded");
    assert!(
        degraded.len() == 1 && degraded[0].contains("WebhookErrors"),
        "{degraded:?}"
    );
    let annotations = &w.set["metadata"]["annotations"];
    assert!(
        annotations[format!("{DEFAULT_PREFIX}/degraded-reason")].is_null(),
        "the next decision cleared WebhookErrors: {annotations}"
    );
    let on_pods: Vec<(u32, &String)> = (w.pods.values())
        .flat_map(|p| p.annotations.keys().map(move |k| (p.ordinal, k)))
        .filter(|(_, k)| k.starts_with(DEFAULT_PREFIX))
        .collect();
    assert!(
        on_pods.is_empty(),
        "nothing is written on the pods: {on_pods:?}"
    );
    let native = scenario::run(&load("primary-last-webhook"), true, 1).expect("native");
    assert_eq!(native.summary.webhook_calls, 0, "no stepper, no call");
}
