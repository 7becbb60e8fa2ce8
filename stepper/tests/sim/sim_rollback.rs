//! A rollback written by the stepper (issue 36), through the `Cluster` interface on the simulated
//! controller with the real policy: the set rolled part way, the ControllerRevision of
//! `status.currentRevision` read, `rollback_patch` sent. Admission stages the revert (partition =
//! replicas, decision table row `StagedOnUpdate`), the controller makes the old revision the update
//! revision again with a new `.revision` (upstream `getStatefulSetRevisions`), and the stepper's
//! passes step it back one pod at a time, never two down — past a pod stuck on the failed revision too.

use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_safe_rollout_rules::decision::Row;
use sts_stepper::cluster::{Cluster, PatchOutcome};
use sts_stepper::config::{FailedRevision, Keys};
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use sts_stepper::plan::rollback::template_of;

use crate::rollback_support::rollback_patch;
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::history::{template, template_image};
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};

const REPLICAS: i32 = 5;

/// `demo/web` with `pod_management_policy`: 5 pods on v1, Running and Ready; v2 applied and staged by
/// the policy (second 0).
fn staged(pod_management_policy: &str) -> SimCluster {
    let shape = SetShape {
        name: "web".into(),
        namespace: "demo".into(),
        replicas: REPLICAS,
        pod_management_policy: pod_management_policy.into(),
        min_ready_seconds: 0,
        image: "v1".into(),
    };
    let mut world = World::new(&shape, Timing::default(), true, DEFAULT_PREFIX, 1).expect("create");
    let mut apply = world.set.clone();
    apply["spec"]["template"] = template("web", "v2");
    world.write(apply, "apply").expect("apply v2");
    world.tick(0);
    assert_eq!(world.partition(), REPLICAS, "staged by the policy");
    SimCluster::new(world)
}

/// The image of the pod at each ordinal (`?` for a revision without one).
fn images(world: &World) -> Vec<String> {
    world
        .pods
        .values()
        .map(|p| {
            world
                .revision(&p.revision)
                .and_then(|r| template_image(&r.template))
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// The stepper's pass at `minute`, then 60 virtual seconds; returns the steps of the pass and the most
/// pods down at once during the minute.
async fn minute(sim: &SimCluster, minute: i64) -> (Option<(i32, i32)>, usize) {
    let report = run_pass(sim, &PassOptions::default(), timestamp(minute * 60))
        .await
        .expect("pass");
    let step = match report.sets[0].outcome {
        Outcome::Stepped { from, to } => Some((from, to)),
        _ => None,
    };
    let mut world = sim.world();
    let mut most_down = world.down_ordinals().len();
    for t in minute * 60 + 1..=minute * 60 + 60 {
        world.tick(t);
        most_down = most_down.max(world.down_ordinals().len());
    }
    (step, most_down)
}

/// The rollback, as the stepper will write it: the set read, the ControllerRevision of its
/// `currentRevision` read, [`rollback_patch`] sent. Checks what the API server stored (the partition
/// staged back to replicas by admission, the template, the record) and returns the revision rolled
/// back to with its `.revision` as read.
async fn roll_back(sim: &SimCluster) -> (String, i64) {
    let set = sim
        .get_statefulset("demo", "web")
        .await
        .expect("read")
        .expect("set");
    let status = set.status.clone().expect("status");
    let (good, bad) = (
        status.current_revision.expect("currentRevision"),
        status.update_revision.expect("updateRevision"),
    );
    assert_ne!(good, bad);
    let revision = sim
        .get_controller_revision("demo", &good)
        .await
        .expect("read")
        .expect("the current revision exists");
    let numbered = revision.revision;
    let failed = FailedRevision {
        revision: bad.clone(),
        reason: "FailureLimit: 3 failed checks".into(),
    };
    let keys = Keys::default();
    let patch = rollback_patch(
        &set,
        &template_of(&revision).expect("template"),
        &failed,
        &keys,
    );
    let PatchOutcome::Applied(stored) = sim
        .patch_statefulset("demo", "web", &patch)
        .await
        .expect("patch")
    else {
        panic!("the rollback did not apply");
    };

    // Admission staged it like any template change: nothing rolls until the stepper steps.
    let stored_partition = stored
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition);
    assert_eq!(stored_partition, Some(REPLICAS), "staged back to replicas");
    let annotations = stored.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get(keys.of(names::FAILED_REVISION))
            .map(String::as_str),
        Some(failed.to_annotation().as_str())
    );
    {
        let world = sim.world();
        let (_, source, row) = world.admissions.last().expect("admitted").clone();
        assert_eq!((source.as_str(), row), ("patch", Row::StagedOnUpdate));
        assert_eq!(world.set["spec"]["template"], template("web", "v1"));
    }
    (good, numbered)
}

#[tokio::test]
async fn a_rollback_patch_is_staged_by_admission_and_stepped_back_one_pod_at_a_time() {
    let sim = staged("OrderedReady");
    // Roll forward until the top two pods run v2.
    let mut t = 0;
    while sim.world().partition() > REPLICAS - 2 {
        minute(&sim, t).await;
        t += 1;
        assert!(t < 20, "rolled forward two pods");
    }
    {
        // A minute without a pass: web-3 comes up on v2.
        let mut world = sim.world();
        for s in t * 60 + 1..=t * 60 + 60 {
            world.tick(s);
        }
        t += 1;
        assert_eq!(images(&world), ["v1", "v1", "v1", "v2", "v2"]);
        assert!(world.down_ordinals().is_empty(), "every pod Ready");
    }

    let (good, numbered) = roll_back(&sim).await;
    {
        let mut world = sim.world();
        world.tick(t * 60);
        assert_eq!(
            world.status_str("updateRevision"),
            good,
            "the old revision again"
        );
        assert_eq!(world.status_str("currentRevision"), good);
        let renumbered = world.revision(&good).expect("kept").number;
        assert!(renumbered > numbered, "{renumbered} after {numbered}");
        assert_eq!(world.revisions.len(), 2, "reused, not a new revision");
        assert_eq!(
            images(&world),
            ["v1", "v1", "v1", "v2", "v2"],
            "nothing rolled"
        );
    }

    // The stepper steps the revert back, one pod per step, never two pods down.
    let restarts_before = sim.world().restarts.len();
    let mut steps = Vec::new();
    for m in t..t + 10 {
        let (step, most_down) = minute(&sim, m).await;
        assert!(most_down <= 1, "minute {m}: {most_down} pods down at once");
        steps.extend(step);
    }
    let world = sim.world();
    assert_eq!(
        steps,
        [(5, 4), (4, 3)],
        "one pod per step, the bad ones only"
    );
    assert_eq!(images(&world), ["v1"; 5]);
    assert!(world.rollout_complete());
    let replaced: Vec<u32> = world.restarts[restarts_before..]
        .iter()
        .map(|(_, o, _)| *o)
        .collect();
    assert_eq!(
        replaced,
        [4, 3],
        "the pods on the failed revision, highest first"
    );
    assert!(
        world.harmful_restarts.is_empty(),
        "{:?}",
        world.harmful_restarts
    );
}

#[tokio::test]
async fn a_rollback_gets_past_the_pod_stuck_on_the_failed_revision() {
    // v2's pods never become Ready: the first step breaks web-4 and the stepper holds (PodNotReady).
    // With Parallel the controller itself does not wait on it (upstream `updateStatefulSet`, burst).
    let sim = staged("Parallel");
    sim.world().bad_images.push("v2".into());
    let mut steps = Vec::new();
    for m in 0..4 {
        steps.extend(minute(&sim, m).await.0);
    }
    assert_eq!(steps, [(5, 4)], "held after the step that broke web-4");
    assert_eq!(sim.world().down_ordinals(), [4]);

    let (good, _) = roll_back(&sim).await;
    // The revert's first step replaces only web-4, down already: it takes nothing more down (the
    // `PodNotReady` gate's rule for the pods a step replaces), and the rollout is whole again.
    let restarts_before = sim.world().restarts.len();
    let mut steps = Vec::new();
    for m in 4..12 {
        let (step, most_down) = minute(&sim, m).await;
        assert!(most_down <= 1, "minute {m}: {most_down} pods down at once");
        steps.extend(step);
    }
    let world = sim.world();
    assert_eq!(steps, [(5, 4)]);
    assert_eq!(world.status_str("updateRevision"), good);
    assert_eq!(images(&world), ["v1"; 5]);
    assert!(world.down_ordinals().is_empty(), "every pod Ready");
    assert!(world.rollout_complete());
    let replaced: Vec<u32> = world.restarts[restarts_before..]
        .iter()
        .map(|(_, o, _)| *o)
        .collect();
    // web-4, not Ready on the failed revision, is returned by the stepper's own DELETE (issue 43:
    // known bad, not left to the controller), so the controller's rolling update replaces nothing.
    assert_eq!(replaced, [] as [u32; 0]);
    assert!(
        (world.writes.iter()).any(|(_, w)| w.starts_with("DELETE pods demo/web-4")),
        "{:#?}",
        world.writes
    );
    assert!(
        world.harmful_restarts.is_empty(),
        "{:?}",
        world.harmful_restarts
    );
}
