//! The whole stepper pass (`run_pass_with`) over a simulated cluster, gated by a real Prometheus: it
//! steps while the query returns a result, stops when it turns empty, pauses at the failure limit, and
//! finishes the rollout once the application is healthy and a person lifted the pause.
//!
//! Setup and skipping: `support/prometheus_app.rs`.

use crate::support::prometheus::{PrometheusServer, Web};
use crate::support::prometheus_app::{HEALTHY, client, healthy_app};
use crate::support::prometheus_bin::prometheus_or_skip;
use sts_safe_rollout_rules::annotations::{self, PAUSED_REASON};
use sts_stepper::cluster::Checks;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::{Outcome, PassOptions, run_pass_with};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};

const PREFIX: &str = "safe-rollout.dev";

/// One virtual second of the simulated cluster and a stepper pass at it.
async fn sim_second(cluster: &SimCluster, checks: &Checks, opts: &PassOptions, t: i64) -> Outcome {
    cluster.world().tick(t);
    let report = run_pass_with(cluster, checks, opts, timestamp(t))
        .await
        .expect("pass");
    assert_eq!(report.sets.len(), 1);
    report.sets[0].outcome.clone()
}

fn sim_annotation(cluster: &SimCluster, name: &str) -> Option<String> {
    cluster.world().set["metadata"]["annotations"][annotations::key(PREFIX, name)]
        .as_str()
        .map(str::to_string)
}

/// The whole stepper pass (`run_pass_with`) over a simulated cluster, gated by the real Prometheus:
/// steps while the query returns a result, stops when it turns empty, pauses at the failure limit,
/// and finishes the rollout once the application is healthy and a person lifted the pause.
#[tokio::test]
async fn stepper_pass_steps_only_while_the_query_returns_a_result() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = Checks {
        prometheus: Some(client(&prom.url())),
        ..Checks::default()
    };

    let shape = SetShape {
        name: "web".into(),
        namespace: "demo".into(),
        replicas: 3,
        pod_management_policy: "Parallel".into(),
        min_ready_seconds: 0,
        image: "app:v1".into(),
    };
    let mut world =
        World::new(&shape, Timing::default(), true, PREFIX, 1).expect("the policy admits it");
    // A template change, staged by the policy at partition = replicas, with a check.
    let mut new = world.set.clone();
    new["spec"]["template"] = template("web", "app:v2");
    for (name, value) in [
        ("prometheus-query", "sts_test_healthy == 1"),
        ("success-threshold", "2"),
        ("check-period-seconds", "5"),
        ("failure-limit", "3"),
    ] {
        new["metadata"]["annotations"][annotations::key(PREFIX, name)] = value.into();
    }
    world.write(new, "apply").expect("the policy admits it");
    assert_eq!(world.partition(), 3);
    let cluster = SimCluster::new(world);
    let opts = PassOptions::default();
    let partition = |cluster: &SimCluster| cluster.world().partition();

    // Healthy: the check counts two passed checks, five seconds apart, then the stepper steps.
    let mut t = 0;
    let mut checks_before_step = 0;
    while partition(&cluster) == 3 {
        assert!(t < 120, "no step within 120 s while healthy");
        match sim_second(&cluster, &c, &opts, t).await {
            Outcome::Blocked(b) if b.reason == Reason::PrometheusCheck => checks_before_step += 1,
            Outcome::Stepped { from: 3, to: 2 } => {}
            other => panic!("t={t}: unexpected {other}"),
        }
        t += 1;
    }
    assert!(
        checks_before_step >= 5,
        "stepped after {checks_before_step} blocked passes; the second check is 5 s after the first"
    );

    // Unhealthy: no step; three failed checks pause the rollout.
    app.set(HEALTHY, 0.0);
    prom.wait_until("sts_test_healthy == 0", true).await;
    let mut last = None;
    while sim_annotation(&cluster, annotations::PAUSED).is_none() {
        assert!(
            t < 300,
            "not paused within 300 s while unhealthy; last: {last:?}"
        );
        let outcome = sim_second(&cluster, &c, &opts, t).await;
        assert!(
            !matches!(outcome, Outcome::Stepped { .. }),
            "t={t}: stepped while the query is empty"
        );
        last = Some(outcome);
        t += 1;
    }
    assert_eq!(partition(&cluster), 2);
    let reason = sim_annotation(&cluster, PAUSED_REASON).unwrap_or_default();
    assert!(
        reason.contains("failure-limit 3") && reason.contains("returned an empty result"),
        "{reason}"
    );
    for _ in 0..30 {
        let outcome = sim_second(&cluster, &c, &opts, t).await;
        assert!(
            matches!(&outcome, Outcome::Blocked(b) if b.reason == Reason::Paused),
            "t={t}: {outcome}"
        );
        t += 1;
    }

    // Healthy again and the pause lifted by a person: the rollout completes.
    app.set(HEALTHY, 1.0);
    prom.wait_until("sts_test_healthy == 1", true).await;
    {
        let mut world = cluster.world();
        let mut new = world.set.clone();
        let annotations = new["metadata"]["annotations"]
            .as_object_mut()
            .expect("annotations");
        annotations.remove(&annotations::key(PREFIX, annotations::PAUSED));
        annotations.remove(&annotations::key(PREFIX, PAUSED_REASON));
        world.write(new, "annotate").expect("metadata-only change");
    }
    let start = t;
    while !cluster.world().rollout_complete() {
        assert!(t < start + 300, "rollout not complete within 300 s");
        sim_second(&cluster, &c, &opts, t).await;
        t += 1;
    }
    assert_eq!(partition(&cluster), 0);
}
