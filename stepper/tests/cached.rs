//! `watch`'s caches keep only what a pass reads (`cluster::cached`): on the real fixtures, a snapshot of
//! the objects as the caches decode and keep them gets exactly the decisions of the whole objects —
//! candidates, plans (verdicts, patches, Events, figures), recovery findings, the early-pass trigger — at
//! every moment of the recorded rollout, under several annotation sets, partitions, `minReadySeconds`
//! and times.
mod common;

use std::sync::Arc;

use common::*;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::cluster::cached::{CachedPod, CachedSet, trim_pdb};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::gates::GateOptions;
use sts_stepper::pass::recovery::findings;
use sts_stepper::plan::{Planner, SetPlan, Snapshot, needs_pods, plan};

/// The fixture `moment` with `annotations` added to its set, `spec.minReadySeconds` set and, with
/// `partition`, the partition moved (to 1: web-1, NotReady at moment 3 on the old revision, is stuck).
fn full(
    moment: &str,
    annotations: &Value,
    min_ready_seconds: i32,
    partition: Option<i32>,
) -> Snapshot {
    let mut snap = common::moment(moment);
    snap.statefulsets = fixture_list::<Value>(&format!("{moment}-statefulsets.json"))
        .into_iter()
        .map(|mut s| {
            if let (Some(a), Some(extra)) = (
                s["metadata"]["annotations"].as_object_mut(),
                annotations.as_object(),
            ) {
                a.extend(extra.clone());
            }
            s["spec"]["minReadySeconds"] = json!(min_ready_seconds);
            if let Some(p) = partition {
                s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p);
            }
            Arc::new(serde_json::from_value::<StatefulSet>(s).expect("set"))
        })
        .collect();
    snap
}

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
        .map(|p| Pod::from(&decode::<CachedPod>(p)))
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
    assert_eq!(a.recovery_candidates(), b.recovery_candidates());

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
