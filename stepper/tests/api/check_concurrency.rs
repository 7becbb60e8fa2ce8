//! Checks run concurrently, bounded, under a whole-pass deadline (issue 29 item 2): the probe round
//! of a pass (`pass::gather_probes`) against a Prometheus stand-in on 127.0.0.1 that accepts
//! connections and never answers, counting them. The counts are deterministic: no query can end
//! before its 30 s timeout, so within the deadline exactly `--check-concurrency` queries are ever
//! started, and what the deadline cuts is an error of its check. (How long a pass over 100 such sets
//! takes is a benchmark: `benches/hung_checks.rs`, BENCHMARKS.md.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::*;
use crate::mock_api::*;
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use sts_stepper::gates::GateOptions;
use sts_stepper::gates::check::prometheus::QueryOutcome;
use sts_stepper::pass::gather_probes;
use sts_stepper::pass::probes::ProbeOptions;
use sts_stepper::plan::{Planner, Snapshot};
use tokio::task::JoinHandle;

/// Accepts connections on 127.0.0.1 and never answers; counts the connections accepted. Stops when
/// dropped.
struct Silent {
    url: String,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Silent {
    async fn start() -> Silent {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                // Read the request, answer nothing, hold the connection until the client leaves.
                tokio::spawn(async move {
                    hold(&mut socket).await;
                });
            }
        });
        Silent {
            url,
            accepted,
            task,
        }
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `n` staged, Ready sets `s0…`, each with one Prometheus query: every one reaches the check.
fn checked_sets(n: usize) -> Snapshot {
    let mut snap = Snapshot::default();
    for i in 0..n {
        let name = format!("s{i}");
        let mut v = set_json(&name, 3, Some(3), 0);
        let a = &mut v["metadata"]["annotations"];
        a["safe-rollout.dev/prometheus-query"] = format!("up{{set=\"{name}\"}} == 1").into();
        a["safe-rollout.dev/initialized"] = "true".into();
        snap.statefulsets.push(set_from(v).into());
        snap.pods.extend(pods(&name, 3, 3));
    }
    snap
}

/// The probe round over `sets` checked sets against `prometheus`, as `opts` says; the query outcomes
/// by set index.
async fn probe_round(prometheus: &Silent, sets: usize, opts: ProbeOptions) -> Vec<QueryOutcome> {
    let client = PrometheusClient::new(&PrometheusConfig {
        url: prometheus.url.clone(),
        timeout: Duration::from_secs(30),
        auth: Auth::None,
        ca_file: None,
    })
    .expect("client");
    let checks = Checks {
        prometheus: Some(client),
        ..Checks::default()
    };
    let snap = checked_sets(sets);
    let gates = GateOptions::default();
    let planner = Planner::new(&snap, &gates);
    // No owner to read: the API server is asked nothing.
    let (cluster, server) = mock_cluster(Scope::default(), Vec::new());
    let (probes, errors) = gather_probes(&cluster, &checks, &planner, &snap, &opts, now()).await;
    drop(cluster);
    assert!(server.await.expect("mock API server").is_empty());
    assert!(errors.is_empty());
    (0..sets)
        .map(|i| {
            let mut got = probes[&i].prometheus.clone().expect("queries outcome");
            assert_eq!(got.len(), 1);
            got.remove(0)
        })
        .collect()
}

#[tokio::test]
async fn at_most_check_concurrency_queries_are_in_flight() {
    let prometheus = Silent::start().await;
    let outcomes = probe_round(
        &prometheus,
        9,
        ProbeOptions {
            concurrency: 3,
            deadline: Some(Duration::from_secs(3)),
            ..ProbeOptions::default()
        },
    )
    .await;
    assert_eq!(
        prometheus.accepted.load(Ordering::SeqCst),
        3,
        "three queries started at once, none more while they hang"
    );
    for o in &outcomes {
        assert!(
            matches!(o, QueryOutcome::Error(cause) if cause.contains("--check-deadline of 3s")),
            "{o:?}"
        );
    }
}

#[tokio::test]
async fn the_deadline_ends_the_round_and_makes_the_rest_errors() {
    let prometheus = Silent::start().await;
    let outcomes = probe_round(
        &prometheus,
        3,
        ProbeOptions {
            concurrency: 1,
            deadline: Some(Duration::from_millis(500)),
            ..ProbeOptions::default()
        },
    )
    .await;
    // One query in flight at a time: the first hangs past the deadline, the others never start.
    assert_eq!(prometheus.accepted.load(Ordering::SeqCst), 1);
    assert_eq!(
        outcomes,
        vec![
            QueryOutcome::Error("no answer within the pass's --check-deadline of 500ms".into());
            3
        ]
    );
}

/// Reads what the client sends, answers nothing, and returns once the client closed the connection.
async fn hold(socket: &mut tokio::net::TcpStream) {
    let mut buf = [0u8; 4096];
    loop {
        if socket.readable().await.is_err() {
            return;
        }
        match socket.try_read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
}
