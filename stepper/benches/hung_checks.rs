//! One whole pass (`run_pass_with`) over 100 staged StatefulSets, each with a Prometheus check, when
//! Prometheus accepts connections and never answers (issue 29 item 2): the simulated fleet
//! (`sim::fleet::Fleet`: the real policy, controller and pass) and a listener on 127.0.0.1 that
//! reads each request and answers nothing. With `--check-concurrency` 8 and `--check-deadline`
//! defaulting to twice `--prometheus-timeout`, the pass lasts about two timeouts, not 100 (the
//! queries used to run one after another). Prints the wall time of each pass and the connections the
//! listener accepted.
//!
//! Run: `cargo bench -p sts-stepper --bench hung_checks` (`TIMEOUT_MS`, default 1000; `SETS`,
//! default 100; `CONCURRENCY`, default 8).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use sts_safe_rollout_rules::annotations;
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use sts_stepper::gates::GateOptions;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::probes::ProbeOptions;
use sts_stepper::pass::{PassOptions, run_pass_with};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::fleet::Fleet;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `sets` members, each staged (a template change through the policy) with a Prometheus check.
fn fleet(sets: u64) -> Fleet {
    let prefix = annotations::DEFAULT_PREFIX;
    let members = (0..sets)
        .map(|i| {
            let shape = SetShape {
                name: format!("db-{i}"),
                namespace: "demo".into(),
                replicas: 3,
                pod_management_policy: "Parallel".into(),
                min_ready_seconds: 0,
                image: "v1".into(),
            };
            let mut world =
                World::new(&shape, Timing::default(), true, prefix, i + 1).expect("created");
            let mut new = world.set.clone();
            new["spec"]["template"] = template(&world.name(), "v2");
            new["metadata"]["annotations"][annotations::key(prefix, "prometheus-query")] =
                json!(format!("up{{set=\"db-{i}\"}} == 1"));
            world.write(new, "apply").expect("staged");
            SimCluster::new(world)
        })
        .collect();
    Fleet { members }
}

fn main() {
    let timeout = Duration::from_millis(env("TIMEOUT_MS", 1000));
    let sets = env("SETS", 100);
    let concurrency = env("CONCURRENCY", 8) as usize;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let server = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    hold(&mut socket).await;
                });
            }
        });
        let prometheus = PrometheusClient::new(&PrometheusConfig {
            url,
            timeout,
            auth: Auth::None,
            ca_file: None,
        })
        .expect("client");
        let checks = Checks {
            prometheus: Some(prometheus),
            ..Checks::default()
        };
        let fleet = fleet(sets);
        let opts = PassOptions {
            gates: GateOptions::default(),
            probes: ProbeOptions {
                concurrency,
                deadline: Some(timeout * 2),
                ..ProbeOptions::default()
            },
            ..PassOptions::default()
        };
        for pass in 1..=3 {
            // A check period (30 s) apart in the simulated clock: each pass's checks are due.
            let t = 40 * pass;
            for m in &fleet.members {
                m.world().tick(t);
            }
            let before = accepted.load(Ordering::SeqCst);
            let started = Instant::now();
            let report = run_pass_with(&fleet, &checks, &opts, timestamp(t))
                .await
                .expect("pass");
            let took = started.elapsed();
            let held = report
                .sets
                .iter()
                .filter(|s| s.blocked_reason() == Some(Reason::PrometheusCheck))
                .count();
            println!(
                "pass {pass}: {sets} sets, --prometheus-timeout {timeout:?}, --check-concurrency \
                 {concurrency}, --check-deadline {:?}: {:.2} s ({:.2} timeouts); {held} held by \
                 PrometheusCheck; {} connections",
                timeout * 2,
                took.as_secs_f64(),
                took.as_secs_f64() / timeout.as_secs_f64(),
                accepted.load(Ordering::SeqCst) - before
            );
        }
        server.abort();
    });
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
