//! Whole rollouts through the `Cluster` interface against the simulated StatefulSet controller
//! (`sts_stepper::sim`) on its virtual clock, with the real admission policy on every write and real
//! JSON Patch semantics (`test` ops included): one step per healthy observation, none while a pod is
//! down, and never two steps for one observation.

use serde_json::json;
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_stepper::model::reasons::Reason;
use sts_stepper::pass::reads::snapshot;
use sts_stepper::pass::{Outcome, PassOptions, PassReport, execute, plan_pass, run_pass};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};

/// `ns/web`: `replicas` pods Running and Ready on image v1, with stepper `annotations` (short names),
/// then a `kubectl apply` of image v2, which the policy stages at partition = replicas; the controller
/// has observed it (second 0).
fn staged(replicas: i32, annotations: &[(&str, &str)]) -> SimCluster {
    let shape = SetShape {
        name: "web".into(),
        namespace: "ns".into(),
        replicas,
        pod_management_policy: "OrderedReady".into(),
        min_ready_seconds: 0,
        image: "v1".into(),
    };
    let mut world = World::new(&shape, Timing::default(), true, DEFAULT_PREFIX, 1).expect("create");
    for (short, value) in annotations {
        world.set["metadata"]["annotations"][format!("{DEFAULT_PREFIX}/{short}")] = json!(value);
    }
    let mut apply = world.set.clone();
    apply["spec"]["template"] = template("web", "v2");
    world.write(apply, "apply").expect("apply v2");
    world.tick(0);
    assert_eq!(world.partition(), replicas, "staged by the policy");
    SimCluster::new(world)
}

/// The next 60 virtual seconds after `minute`'s pass: the pods progress and the controller syncs.
fn one_minute(cluster: &SimCluster, minute: i64) {
    let mut world = cluster.world();
    for t in minute * 60 + 1..=minute * 60 + 60 {
        world.tick(t);
    }
}

/// The stepper's pass at the start of `minute`.
async fn pass_at(cluster: &SimCluster, minute: i64) -> PassReport {
    run_pass(cluster, &PassOptions::default(), timestamp(minute * 60))
        .await
        .expect("pass")
}

/// Every pod Running and Ready and not terminating.
fn all_ready(world: &World) -> bool {
    world
        .pods
        .values()
        .all(|p| p.running_and_ready() && !p.terminating())
}

/// The notes of the Events published with `reason`.
fn events(world: &World, reason: &str) -> Vec<String> {
    world
        .events
        .iter()
        .filter(|(_, r, _)| r == reason)
        .map(|(_, _, note)| note.clone())
        .collect()
}

fn annotation(world: &World, short: &str) -> Option<String> {
    world.set["metadata"]["annotations"][format!("{DEFAULT_PREFIX}/{short}")]
        .as_str()
        .map(str::to_string)
}

#[tokio::test]
async fn a_whole_rollout_steps_once_per_healthy_observation() {
    let sim = staged(5, &[]);
    let mut partitions = vec![sim.world().partition()];
    for minute in 0..40 {
        let (before, ready) = {
            let w = sim.world();
            (w.partition(), all_ready(&w))
        };
        let report = pass_at(&sim, minute).await;
        let after = sim.world().partition();
        if after != before {
            assert_eq!(before - after, 1, "one step per pass");
            assert!(ready, "stepped at minute {minute} while a pod was down");
            assert!(matches!(report.sets[0].outcome, Outcome::Stepped { .. }));
            partitions.push(after);
        }
        one_minute(&sim, minute);
    }
    assert_eq!(partitions, [5, 4, 3, 2, 1, 0]);
    let w = sim.world();
    let update = w.status_str("updateRevision");
    assert!(
        w.pods
            .values()
            .all(|p| p.revision == update && p.running_and_ready())
    );
    assert_eq!(events(&w, "Stepped").len(), 5);
    let complete = events(&w, "RolloutComplete");
    assert_eq!(complete.len(), 1, "{:?}", w.events);
    assert_eq!(annotation(&w, "completed-revision"), Some(update));
    assert_eq!(annotation(&w, "blocked-reason"), None);
}

#[tokio::test]
async fn a_pod_that_never_recovers_stops_the_rollout_and_says_so_once() {
    let sim = staged(5, &[]);
    let mut last = None;
    for minute in 0..40 {
        if minute == 1 {
            // web-4 runs v2 by now; from here on, v2's pods never become Ready: web-3 comes back on
            // the new revision but never Ready (a broken node, a dependency gone).
            sim.world().bad_images.push("v2".into());
        }
        last = Some(pass_at(&sim, minute).await);
        one_minute(&sim, minute);
    }
    let w = sim.world();
    assert_eq!(
        w.partition(),
        3,
        "stopped right after the step that broke web-3"
    );
    let outcome = &last.expect("passes").sets[0].outcome;
    assert_eq!(
        outcome.to_string(),
        "Blocked PodNotReady web-3: ContainersNotReady"
    );
    let blocked = events(&w, "Blocked");
    assert_eq!(
        blocked
            .iter()
            .filter(|n| n.starts_with("PodNotReady web-3"))
            .count(),
        1,
        "announced once, not once per pass: {blocked:?}"
    );
    assert_eq!(
        annotation(&w, "blocked-reason").as_deref(),
        Some(Reason::PodNotReady.as_str())
    );
}

#[tokio::test]
async fn two_steppers_never_step_twice_for_one_observation() {
    let sim = staged(5, &[]);
    let opts = PassOptions::default();
    let now = timestamp(0);
    // Both steppers read the same observation; A writes first.
    let seen_by_a = snapshot(&sim, &opts, now).await.expect("read A");
    let seen_by_b = snapshot(&sim, &opts, now).await.expect("read B");
    let plan_a = plan_pass(&sim, &sim, &seen_by_a, &opts, now).await;
    let a = execute(&sim, plan_a.into_iter().next().expect("plan A"), false).await;
    assert_eq!(a.outcome, Outcome::Stepped { from: 5, to: 4 });
    let plan_b = plan_pass(&sim, &sim, &seen_by_b, &opts, now).await;
    let b = execute(&sim, plan_b.into_iter().next().expect("plan B"), false).await;
    assert!(matches!(b.outcome, Outcome::Conflict(_)), "{:?}", b.outcome);
    let b = PassReport {
        sets: vec![b],
        ..PassReport::default()
    };
    assert!(!b.any_errored(), "a lost race is not an error");
    assert_eq!(sim.world().partition(), 4, "one step for one observation");
}

#[tokio::test]
async fn settling_delay_spaces_the_steps_on_the_virtual_clock() {
    let sim = staged(3, &[("initial-delay-seconds", "600")]);
    let mut step_minutes = vec![];
    for minute in 0..60 {
        let report = pass_at(&sim, minute).await;
        if matches!(report.sets[0].outcome, Outcome::Stepped { .. }) {
            step_minutes.push(minute);
        }
        one_minute(&sim, minute);
    }
    assert_eq!(step_minutes, [0, 10, 20], "600 s between steps");
}
