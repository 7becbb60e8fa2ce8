//! `watch`'s caches keep only what a pass reads (`cluster::cached`): on the real fixtures, a snapshot of
//! the objects as the caches decode and keep them gets exactly the decisions of the whole objects —
//! candidates, plans (verdicts, patches — the pods' too —, Events, figures), recovery findings, the
//! early-pass trigger — at every moment of the recorded rollout, under several annotation sets,
//! partitions, `minReadySeconds` and times, and through every state of the approval handshake on the
//! pods (asked, approved, denied, a primary, annotations of other owners beside them).

use std::sync::Arc;

use crate::common::states::{full, handshake};
use crate::common::*;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::cluster::cached::{CachedPod, CachedSet, trim_pdb};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::GateOptions;
use sts_stepper::pass::recovery::findings;
use sts_stepper::plan::{Planner, SetPlan, Snapshot, needs_pods, plan};

/// The same snapshot as `watch`'s caches hold it: each object decoded from its JSON as the watches
/// decode it, kept as the stores keep it, and read back as a pass reads it. The annotations a store
/// parses once ([`CachedSet::keep`], handed to a pass instead of a parse of its own) must be those of
/// the whole object: checked here for every set.
fn cached(snap: &Snapshot, keys: &Keys) -> Snapshot {
    fn decode<T: serde::de::DeserializeOwned>(o: &impl serde::Serialize) -> T {
        serde_json::from_value(serde_json::to_value(o).expect("json")).expect("decodes")
    }
    let mut t = snap.clone();
    t.statefulsets = snap
        .statefulsets
        .iter()
        .map(|s| {
            let mut c: CachedSet = decode(&**s);
            let keys = Arc::new(keys.clone());
            c.keep(&keys);
            let config = c.config().expect("parsed by keep");
            assert_eq!(
                **config,
                SetConfig::parse(s, &keys),
                "parsed as the whole set"
            );
            c.set().clone()
        })
        .collect();
    t.pods = snap
        .pods
        .iter()
        .map(|p| {
            let mut c = decode::<CachedPod>(p);
            c.keep(keys);
            Pod::from(&c)
        })
        .collect();
    t.pdbs.iter_mut().for_each(trim_pdb);
    t
}

#[rstest]
fn a_cached_snapshot_gets_the_decisions_of_the_whole_one(
    #[values("1-staged", "2-stepped-4", "3-web1-notready", "4-complete")] moment: &str,
    #[values(
        json!({}),
        json!({"safe-rollout.dev/initialized": "true"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/step": "2",
               "safe-rollout.dev/recover-after-seconds": "60",
               "safe-rollout.dev/blocked-reason": "PodNotReady"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/paused": "true"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/step": "x"}),
    )]
    annotations: Value,
    #[values(0, 30)] min_ready_seconds: i32,
    #[values(None, Some(1))] partition: Option<i32>,
    #[values("2026-11-23T01:10:50Z", "2026-11-23T01:20:00Z", "2026-11-23T03:00:00Z")] at: &str,
    #[values(true, false)] pdb_gate: bool,
) {
    let now: Timestamp = at.parse().expect("time");
    let opts = GateOptions {
        pdb_gate,
        recover_stuck_pods: true,
        ..GateOptions::default()
    };
    let whole = full(moment, &annotations, min_ready_seconds, partition);
    let cached = cached(&whole, &opts.keys);
    assert_ne!(
        serde_json::to_vec(&whole.pods).expect("json").len(),
        serde_json::to_vec(&cached.pods).expect("json").len(),
        "the pods are kept smaller"
    );

    let (a, b) = (Planner::new(&whole, &opts), Planner::new(&cached, &opts));
    assert_eq!(a.candidates(now), b.candidates(now));
    assert_eq!(a.recovery_candidates(true), b.recovery_candidates(true));

    // A plan carries the set's recovery finding (`--recover-stuck-pods` is on), and the set as read:
    // the same but for the fields the cache drops, so the plans are compared with the same Event
    // reference instead.
    let decided = |snap: &Snapshot| -> Vec<(ObjectReference, SetPlan)> {
        plan(snap, &opts, now)
            .into_iter()
            .map(|mut p| {
                let reference = p.reference();
                p.set = Arc::default();
                (reference, p)
            })
            .collect()
    };
    assert_eq!(decided(&whole), decided(&cached));
    assert_eq!(
        needs_pods(&whole.statefulsets, &opts.keys),
        needs_pods(&cached.statefulsets, &opts.keys)
    );
}

#[rstest]
fn the_approval_handshake_is_decided_on_the_cache_as_on_the_whole_pods(
    #[values("1-staged", "2-stepped-4", "3-web1-notready")] moment: &str,
    #[values("none", "asked", "approved", "denied", "stale")] state: &str,
    #[values(None, Some(3), Some(4))] primary: Option<u32>,
    #[values("2026-11-23T01:16:00Z", "2026-11-23T03:00:00Z")] at: &str,
) {
    let now: Timestamp = at.parse().expect("time");
    let opts = GateOptions::default();
    let whole = handshake(moment, state, primary);
    let cached = cached(&whole, &opts.keys);
    for p in &cached.pods {
        let notes = p.metadata.annotations.as_ref().expect("the map is kept");
        assert!(
            !notes.contains_key("example.com/owned-by-app"),
            "only the stepper's are kept"
        );
    }
    let decided = |snap: &Snapshot| -> Vec<(ObjectReference, SetPlan)> {
        plan(snap, &opts, now)
            .into_iter()
            .map(|mut p| {
                let reference = p.reference();
                p.set = Arc::default();
                (reference, p)
            })
            .collect()
    };
    assert_eq!(decided(&whole), decided(&cached));
}

#[test]
fn the_handshake_cases_reach_requests_approvals_denials_and_withdrawals() {
    use sts_stepper::gates::approval::PodWriteKind;
    // Guards the test above: its cases write a request, step on an approval, handle a denial and
    // withdraw stale requests; a whole-map replacement would show here as an `annotated: false` write.
    let opts = GateOptions::default();
    let now = at("2026-11-23T01:16:00Z");
    let kinds = |state: &str| -> Vec<PodWriteKind> {
        let plans = plan(&handshake("1-staged", state, None), &opts, now);
        assert!(
            plans[0].pod_writes.iter().all(|w| w.annotated),
            "the maps are present"
        );
        plans[0].pod_writes.iter().map(|w| w.kind.clone()).collect()
    };
    assert!(kinds("none").contains(&PodWriteKind::Request(
        sts_stepper::gates::approval::Phase::Update
    )));
    assert!(matches!(
        kinds("denied").as_slice(),
        [PodWriteKind::Denied(_)]
    ));
    assert!(kinds("stale").contains(&PodWriteKind::Withdraw));
    let approved = plan(&handshake("1-staged", "approved", None), &opts, now);
    assert!(
        matches!(
            approved[0].verdict,
            sts_stepper::gates::Verdict::Step { .. }
        ),
        "{:?}",
        approved[0].verdict
    );
}

#[test]
fn the_cases_above_reach_steps_blocks_and_recoveries() {
    // Guards the test above against comparing only idle plans: the fixtures with these annotations
    // give a step, a PodNotReady block and a stuck-pod finding.
    let opts = GateOptions {
        recover_stuck_pods: true,
        ..GateOptions::default()
    };
    let init = json!({"safe-rollout.dev/initialized": "true",
                      "safe-rollout.dev/recover-after-seconds": "60"});
    let stepping = plan(&full("2-stepped-4", &init, 0, None), &opts, now());
    assert!(
        matches!(
            stepping[0].verdict,
            sts_stepper::gates::Verdict::Step { .. }
        ),
        "{:?}",
        stepping[0].verdict
    );
    let late = at("2026-11-23T03:00:00Z");
    let notready = full("3-web1-notready", &init, 0, Some(1));
    let blocked = plan(&notready, &opts, late);
    assert!(
        matches!(blocked[0].verdict, sts_stepper::gates::Verdict::Blocked(_)),
        "{:?}",
        blocked[0].verdict
    );
    assert!(!findings(&blocked).is_empty());
    assert_eq!(
        findings(&plan(&cached(&notready, &opts.keys), &opts, late)),
        findings(&blocked)
    );
}
