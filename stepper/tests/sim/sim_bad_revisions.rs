//! A revision whose pods never become Ready, on the simulated StatefulSet controller: the rollout halts
//! after one pod, a fix rolls forward (replacing the stuck pod first, or after a person's delete with
//! OrderedReady), and a rollback leaves OrderedReady waiting on the stuck pod until it is deleted with
//! preconditions (`scenarios/stuck-rollout.yaml`).

use crate::support::sim_runs::{all_on, assert_guarded_invariants, load, play, restarted};
use sts_stepper::sim::scenario::{Action, Player, Scenario};

#[test]
fn a_bad_revision_halts_after_one_pod_and_a_fix_rolls_forward() {
    let s = load("bad-revision");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    let before_fix: Vec<_> = run.steps.iter().filter(|st| st.t < 60).collect();
    assert_eq!(before_fix.len(), 1, "halted after one pod: {:?}", run.steps);
    assert_eq!(run.summary.max_down, 1);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v3"));
}

#[test]
fn the_fix_replaces_the_pod_stuck_on_the_bad_revision_first_without_a_delete() {
    // The pod stuck on v2 sits below the partition the fix staged; its step is allowed because it is
    // the only pod that step replaces and it is down already: nothing more goes down.
    let s = load("bad-revision");
    assert!(
        !s.events
            .iter()
            .any(|e| matches!(e.action, Action::DeletePod(_))),
        "the scenario must not need a person's delete"
    );
    let run = play(&s, false);
    let after_fix: Vec<_> = run.steps.iter().filter(|st| st.t >= 60).collect();
    assert_eq!(
        (after_fix[0].from, after_fix[0].to),
        (3, 2),
        "{:?}",
        run.steps
    );
    assert!(
        after_fix.iter().all(|st| st.failing_gate.is_none()),
        "{:?}",
        run.steps
    );
    assert_eq!(run.summary.harmful_restarts, 0);
    assert_eq!(run.summary.max_down, 1);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
}

#[test]
fn with_ordered_ready_the_controller_itself_waits_for_the_bad_pod_until_a_person_deletes_it() {
    // Upstream updateStatefulSet (monotonic): an OrderedReady set waits for every pod to be Running and
    // Ready, so a pod stuck on a bad revision stops the controller too; Kubernetes' documented "forced
    // rollback" is to delete it. The stepper's step goes through either way.
    let mut s = load("bad-revision");
    s.set.pod_management_policy = "OrderedReady".into();
    let stuck = play(&s, false);
    assert!(
        stuck.summary.rollout_completed.is_none(),
        "{:?}",
        stuck.summary
    );
    let mut with_delete = s.clone();
    let delete: Scenario = Scenario::from_yaml(
        "name: d\nset: {replicas: 3}\nduration: 1\nevents:\n  - at: 70\n    deletePod: 2\n",
    )
    .expect("parse");
    with_delete.events.extend(delete.events);
    let run = play(&with_delete, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v3"));
}

#[test]
fn ordered_ready_waits_forever_on_the_pod_stuck_on_a_rolled_back_revision() {
    // Kubernetes issue #67250: with OrderedReady, upstream processReplica stops every sync at web-2
    // (not Running and Ready) before the rolling update, so the rollback never replaces it.
    let s = load("stuck-rollout");
    for native in [true, false] {
        let run = play(&s, native);
        let w = &run.world;
        assert!(run.summary.rollout_completed.is_none(), "{:?}", run.summary);
        assert_eq!(run.summary.ended, s.duration, "played to the end");
        let stuck = &w.pods[&2];
        assert!(w.revision_is_bad(&stuck.revision) && !stuck.running_and_ready());
        assert_ne!(stuck.revision, w.status_str("updateRevision"), "superseded");
        assert_eq!(
            restarted(&run),
            vec![2],
            "deleted once, for v2, never after the rollback"
        );
        assert_eq!(run.summary.max_down, 1);
        // From shortly after the rollback to the end, nothing moves.
        let last = run.frames.last().expect("frames");
        assert!(
            run.frames
                .iter()
                .filter(|f| f.t >= 70)
                .all(|f| f.pods == last.pods && f.partition == last.partition),
            "native={native}"
        );
    }
}

#[test]
fn deleting_the_stuck_pod_with_preconditions_lets_the_rollout_finish_with_at_most_one_pod_down() {
    let s = load("stuck-rollout");
    for native in [true, false] {
        let mut player = Player::new(&s, native, 1).expect("create");
        while player.next_second() <= 120 {
            player.play_second();
        }
        let (uid, rv) = {
            let pods = player.cluster().world().typed_pods();
            let pod = pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some("web-2"))
                .expect("web-2 listed");
            (
                pod.metadata.uid.clone().expect("uid"),
                pod.metadata
                    .resource_version
                    .clone()
                    .expect("resourceVersion"),
            )
        };
        let stale = player
            .cluster()
            .delete_pod("demo", "web-2", &uid, "0")
            .expect_err("a stale resourceVersion");
        assert_eq!(stale.code(), Some(409), "{stale}");
        assert!(
            !player.cluster().world().pods[&2].terminating(),
            "nothing deleted"
        );
        player
            .cluster()
            .delete_pod("demo", "web-2", &uid, &rv)
            .expect("delete web-2");
        while player.next_second() <= s.duration && !player.play_second() {}
        let run = player.finish();
        let done = run.summary.rollout_completed;
        assert!(
            done.is_some_and(|t| t > 120),
            "native={native}: {:?}",
            run.summary
        );
        assert!(all_on(&run, "v1"), "native={native}");
        assert_eq!(run.summary.max_down, 1, "native={native}");
        assert!(run.frames.iter().all(|f| f.down <= 1));
        if !native {
            assert_guarded_invariants(&run);
        }
    }
}

#[test]
fn a_bad_revision_natively_also_halts_after_one_pod() {
    let s = load("bad-revision");
    let mut s2 = s.clone();
    s2.events.retain(|e| e.at < 60);
    let run = play(&s2, true);
    assert_eq!(restarted(&run), vec![2]);
    assert!(run.summary.rollout_completed.is_none());
}
