//! docs/examples/approval-webhook.py, the worked webhook answerer of docs/approvals.md, run for real
//! (`python3`, on 127.0.0.1) and asked by the stepper's own client with the requests the gates build on
//! the real "1-staged" moment: an `Update` is approved, a `Switchover` waits while the role moves and is
//! then approved, a body that is not an `UpdateApprovalRequest` is a 400 (an error, never a decision).
//! The process is killed when the test ends, also on a panic.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
use sts_stepper::cluster::webhook::{Endpoint, Webhooks};
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};
use sts_stepper::gates::{self, FleetView, GateOptions, Need, Probes};
use sts_stepper::model::pods;

/// The example answerer on a free port of 127.0.0.1.
struct Answerer {
    child: Child,
    port: u16,
}

impl Drop for Answerer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Answerer {
    fn start() -> Answerer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/examples/approval-webhook.py"
        );
        let child = Command::new("python3")
            .args([script, &port.to_string(), "127.0.0.1"])
            .spawn()
            .expect("python3 runs (scripts/setup.sh installs it)");
        let answerer = Answerer { child, port };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the answerer did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        answerer
    }

    fn client(&self) -> Webhooks {
        let endpoint = Endpoint {
            name: "db-approver".into(),
            url: format!("http://127.0.0.1:{}/approve", self.port),
            timeout: Duration::from_secs(10),
            access: Default::default(),
            serves: None,
        };
        Webhooks::new(&[endpoint], None).expect("client")
    }
}

/// The body the gates ask the pass to POST for the staged set's next step (web-4), with web-4 holding
/// `role=primary` when `primary`.
fn request(primary: bool) -> Value {
    let labels: &[(u32, &str, &str)] = if primary {
        &[(4, "role", "primary")]
    } else {
        &[]
    };
    let (set, pods) = staged_with(
        &[
            ("pre-update-webhook", "db-approver"),
            ("primary-selector", "role=primary"),
        ],
        &[],
        labels,
    );
    let by_ordinal = pods::pods_by_ordinal(&set, pods.iter());
    let ev = gates::evaluate(
        &set,
        &by_ordinal,
        &[],
        FleetView::default(),
        &Probes::default(),
        &GateOptions::default(),
        now(),
    );
    match ev.need {
        Some(Need::Webhook { body, .. }) => body,
        other => panic!("expected a webhook call, got {other:?}"),
    }
}

fn decided(answer: WebhookAnswer) -> (Decision, String) {
    match answer {
        WebhookAnswer::Decided(a) => (a.decision, a.reason),
        WebhookAnswer::Error(e) => panic!("expected a decision, got the error {e}"),
    }
}

#[tokio::test]
async fn the_example_webhook_answers_the_stepper_s_requests() {
    let answerer = Answerer::start();
    let client = answerer.client();

    let update = request(false);
    assert_eq!(update["phase"], "Update");
    assert_eq!(
        decided(client.post("db-approver", &update).await),
        (Decision::Approve, "ready".into())
    );

    // A switchover: Wait while it runs (the example's switch_over finishes at once, in a thread), then
    // Approve for the same requestId.
    let switchover = request(true);
    assert_eq!(switchover["phase"], "Switchover");
    let (first, reason) = decided(client.post("db-approver", &switchover).await);
    assert_eq!(first, Decision::Wait, "{reason}");
    assert_eq!(reason, "switching the primary role away from web-4");
    let start = Instant::now();
    loop {
        let (d, reason) = decided(client.post("db-approver", &switchover).await);
        if d == Decision::Approve {
            assert_eq!(reason, "role moved away from web-4");
            break;
        }
        assert_eq!(d, Decision::Wait);
        assert!(start.elapsed() < Duration::from_secs(10), "no Approve");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Not an UpdateApprovalRequest: HTTP 400, which the stepper reads as an error.
    let WebhookAnswer::Error(e) = client.post("db-approver", &json!({"hello": 1})).await else {
        panic!("a 400 must be an error");
    };
    assert!(e.starts_with("HTTP 400"), "{e}");
}
