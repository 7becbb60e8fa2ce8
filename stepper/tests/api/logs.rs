//! Quiet logs (issue 20): one INFO line per leadership change — acquired, lost, another holder — and
//! none per renewal; a pass that decides nothing logs one line, its summary. The log is captured as
//! the binary writes it (tracing-subscriber's JSON format) at INFO, the default level.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use crate::mock_api::*;
use crate::support::lease_server::{Shared, candidate};
use serde_json::{Value, json};
use sts_stepper::commands::log_pass;
use tokio::time::sleep;
use tracing::subscriber::DefaultGuard;

/// The lines written so far.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Captures this thread's log at INFO and above, one JSON object per line, until the guard drops.
    fn start() -> (Self, DefaultGuard) {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || writer.clone())
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    }

    fn lines(&self) -> Vec<Value> {
        let bytes = self.0.lock().expect("buffer").clone();
        String::from_utf8(bytes)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// `message` of every line, tagged with its `identity` when it has one.
    fn messages(&self) -> Vec<String> {
        self.lines()
            .iter()
            .map(|l| {
                let who = l["identity"].as_str().unwrap_or("-");
                format!("{who}: {}", l["message"].as_str().unwrap_or(""))
            })
            .collect()
    }
}

/// Two replicas for minutes of virtual time (a renews every 2 s, b reads every 2 s), then a is cut
/// off and b takes over, then b resigns: exactly one line per change.
#[tokio::test(start_paused = true)]
async fn one_line_per_leadership_change_none_per_renewal() {
    let (log, _guard) = Captured::start();
    let store = Shared::default();
    let (a, a_cut) = candidate(&store, "a");
    sleep(Duration::from_millis(10)).await;
    let (b, _) = candidate(&store, "b");
    sleep(Duration::from_secs(120)).await;
    assert!(a.is_leader() && !b.is_leader());
    assert_eq!(
        log.messages(),
        [
            "a: leader election: acquired the Lease: this replica leads",
            "b: leader election: the Lease is held by a",
        ],
        "two minutes of renewals and reads: no line"
    );
    a_cut.store(true, Ordering::SeqCst);
    sleep(Duration::from_secs(60)).await;
    assert!(b.is_leader() && !a.is_leader());
    b.resign();
    sleep(Duration::from_secs(5)).await;
    let messages = log.messages();
    assert_eq!(
        messages[2..],
        [
            "a: leader election: Lease request failed (retrying every retry period)",
            "a: leader election: lost the Lease: this replica stops writing",
            "b: leader election: acquired the Lease: this replica leads",
            "b: leader election: resigned: released the Lease",
        ],
        "{messages:#?}"
    );
    let lost = &log.lines()[3];
    assert_eq!(lost["level"], "WARN");
    assert_eq!(lost["reason"], "no renewal within the renew deadline");
    let held = &log.lines()[1];
    assert_eq!(
        (&held["level"], &held["holder"]),
        (&json!("INFO"), &json!("a"))
    );
}

/// The reads of a pass over `moment` where demo/web is the one candidate, its annotations set by `f`.
fn reads(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<Expect> {
    let mut list: Value =
        serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    let set = &mut list["items"][0];
    set["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    f(set);
    let mut script = vec![get(STS_ALL, serde_json::to_vec(&list).expect("json"))];
    script.extend(web_candidate_reads(
        fixture_body(&format!("{moment}-pods.json")),
        fixture_body(&format!("{moment}-pdbs.json")),
    ));
    script
}

/// A pass whose one set waits on a gate it already announced (web-1 NotReady, blocked-reason
/// PodNotReady): nothing is written, one line — the summary.
#[tokio::test]
async fn a_pass_that_decides_nothing_logs_one_line() {
    let script = reads("3-web1-notready", |s| {
        s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    });
    let (report, seen) = pass_in_default_scope(script).await;
    assert_eq!(seen.len(), 3, "reads only");
    let (log, _guard) = Captured::start();
    log_pass(&report.expect("pass"), 0.1);
    let lines = log.lines();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["message"], "pass done");
    assert_eq!(lines[0]["blocked"], 1);
}

/// The same set the first time it waits on that gate: the Blocked Event and its record are written,
/// so its line is INFO, then the summary.
#[tokio::test]
async fn a_pass_that_announces_a_new_wait_logs_it() {
    let mut script = reads("3-web1-notready", |_| {});
    let mut stored: Value =
        serde_json::from_slice(&fixture_body("3-web1-notready-statefulsets.json")).expect("json");
    let mut stored = stored["items"][0].take();
    stored["kind"] = json!("StatefulSet");
    stored["apiVersion"] = json!("apps/v1");
    script.push(patch(
        PATCH_WEB,
        200,
        serde_json::to_vec(&stored).expect("json"),
    ));
    script.push(post_event("demo"));
    let (report, _) = pass_in_default_scope(script).await;
    let (log, _guard) = Captured::start();
    log_pass(&report.expect("pass"), 0.1);
    let messages: Vec<String> = log
        .lines()
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l["level"].as_str().unwrap_or(""),
                l["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            "INFO demo/web: Blocked PodNotReady web-1: ContainersNotReady",
            "INFO pass done"
        ]
    );
}

/// A step the API server fails (500): the set's line is ERROR and names the error's reason, the
/// `sts_safe_rollout_errors_total` label.
#[tokio::test]
async fn an_errored_set_logs_its_error_reason() {
    let mut script = reads("1-staged", |_| {});
    script.push(patch(
        PATCH_WEB,
        500,
        status_body(500, "InternalError", "etcdserver: request timed out"),
    ));
    let (report, _) = pass_in_default_scope(script).await;
    let (log, _guard) = Captured::start();
    log_pass(&report.expect("pass"), 0.1);
    let lines = log.lines();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(
        (&lines[0]["level"], &lines[0]["error_reason"]),
        (&json!("ERROR"), &json!("ApiStatus")),
        "{:#?}",
        lines[0]
    );
    assert_eq!(lines[1]["errored"], 1);
}

/// A replica that lost the Lease before the pass's write: the set's line is INFO, `NotLeader`, with no
/// error reason; the summary counts it apart from the errors.
#[tokio::test(start_paused = true)]
async fn a_lost_lease_is_logged_at_info_not_as_an_error() {
    let store = Shared::default();
    let (a, _) = candidate(&store, "a");
    sleep(Duration::from_millis(10)).await;
    let (b, _) = candidate(&store, "b");
    sleep(Duration::from_millis(10)).await;
    assert!(a.is_leader() && !b.is_leader());
    let (cluster, server) = mock_cluster(
        sts_stepper::cluster::kube::Scope::default(),
        reads("1-staged", |_| {}),
    );
    let guarded = sts_stepper::leader::cluster::LeaderCluster {
        inner: &cluster,
        leadership: &b,
    };
    let report = sts_stepper::pass::run_pass(&guarded, &Default::default(), now())
        .await
        .expect("pass");
    drop(cluster);
    server.await.expect("the reads only");
    let (log, _guard) = Captured::start();
    log_pass(&report, 0.1);
    let lines = log.lines();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0]["level"], "INFO");
    assert_eq!(
        lines[0]["message"],
        "demo/web: NotLeader (lost the Lease mid-pass: patch statefulset demo/web not sent, \
         nothing more written)"
    );
    assert_eq!(lines[0]["error_reason"], "");
    assert_eq!(
        (&lines[1]["errored"], &lines[1]["not_leader"]),
        (&json!(0), &json!(1))
    );
}
