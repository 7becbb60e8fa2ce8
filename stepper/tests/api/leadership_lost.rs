//! Leadership lost mid-pass (issue 29 item 5): [`LeaderCluster`] refuses the first write after the
//! Lease is gone with `ClusterError::NotLeader`, and the pass writes nothing more — to no set — and
//! reports no error: the set that met it and every later set with a write are `NotLeader`, not
//! `Blocked(ApiError)`, nothing is recorded on them and nothing is counted in
//! `sts_safe_rollout_errors_total`. Two simulated StatefulSets behind one cluster, a real election.

use std::time::Duration;

use crate::support::lease_server::{Shared, candidate};
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_stepper::cluster::wrapper::Wrapper;
use sts_stepper::cluster::{Cluster, ClusterError, PatchOutcome};
use sts_stepper::leader::Leadership;
use sts_stepper::leader::cluster::LeaderCluster;
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use sts_stepper::serve::metrics::Metrics;
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::fleet::Fleet;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::world::{SetShape, World, timestamp};
use tokio::time::sleep;

/// `demo/name`: 3 pods Running and Ready on v1, then v2 applied, which the policy stages.
fn staged(name: &str) -> SimCluster {
    let shape = SetShape {
        name: name.into(),
        namespace: "demo".into(),
        replicas: 3,
        pod_management_policy: "OrderedReady".into(),
        min_ready_seconds: 0,
        image: "v1".into(),
    };
    let mut world = World::new(&shape, Timing::default(), true, DEFAULT_PREFIX, 1).expect("create");
    let mut apply = world.set.clone();
    apply["spec"]["template"] = template(name, "v2");
    world.write(apply, "apply").expect("apply v2");
    world.tick(0);
    assert_eq!(world.partition(), 3, "staged by the policy");
    SimCluster::new(world)
}

/// `fleet`, with this replica's Lease lost right after the first StatefulSet PATCH it sends: the
/// leadership resigns between two writes of one pass.
struct LosesTheLeaseAfterOnePatch<'a> {
    fleet: &'a Fleet,
    leadership: &'a Leadership,
}

/// Only the PATCH changes: every other call goes to the fleet ([`Wrapper`]'s defaults).
impl Wrapper for LosesTheLeaseAfterOnePatch<'_> {
    type Inner = Fleet;

    fn inner(&self) -> &Fleet {
        self.fleet
    }

    async fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        let outcome = self.fleet.patch_statefulset(namespace, name, patch).await;
        self.leadership.resign();
        outcome
    }
}

#[tokio::test(start_paused = true)]
async fn a_lease_lost_between_two_writes_ends_the_passs_writes_without_an_error() {
    let store = Shared::default();
    let (leadership, _) = candidate(&store, "a");
    sleep(Duration::from_millis(10)).await;
    assert!(leadership.is_leader());
    let fleet = Fleet {
        members: vec![staged("web"), staged("db")],
    };
    let db_before = fleet.members[1].world().set.clone();
    let losing = LosesTheLeaseAfterOnePatch {
        fleet: &fleet,
        leadership: &leadership,
    };
    let guarded = LeaderCluster {
        inner: &losing,
        leadership: &leadership,
    };
    let report = run_pass(&guarded, &PassOptions::default(), timestamp(0))
        .await
        .expect("pass");

    // web: its first write went out while leading; the Event after it did not.
    let web = &report.sets[0];
    assert_eq!(web.name, "web");
    assert!(web.lost_leadership(), "{web:#?}");
    assert_eq!(web.error, None);
    assert!(
        web.event_errors
            .iter()
            .all(|e| e.reason() == "NotLeader" && e.is_not_leader()),
        "{:?}",
        web.event_errors
    );
    assert!(fleet.members[0].world().events.is_empty(), "no Event sent");

    // db: never written, not even re-read for a step; its own outcome, no error.
    let db = &report.sets[1];
    assert_eq!(db.name, "db");
    assert!(
        matches!(&db.outcome, Outcome::NotLeader(w) if w.contains("demo/db")),
        "{:?}",
        db.outcome
    );
    assert_eq!((db.error.as_ref(), db.error_reason()), (None, None));
    assert_eq!(db.blocked_reason(), None, "not Blocked(ApiError)");
    assert!(db.news, "logged at INFO");
    let db_after = fleet.members[1].world();
    assert_eq!(db_after.set, db_before, "nothing written to db");
    assert!(db_after.events.is_empty());
    drop(db_after);

    assert!(!report.any_errored());
    let metrics = Metrics::new();
    metrics.observe(&report, 0.1, 1.0);
    let text = metrics.encode();
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("sts_safe_rollout_errors_total{")),
        "{text}"
    );
    assert!(text.contains(r#"sts_safe_rollout_passes_total{result="ok"} 1"#));
}
