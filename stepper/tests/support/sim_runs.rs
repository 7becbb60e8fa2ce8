//! The shipped scenarios of `scenarios/` played on the simulated StatefulSet controller with the real
//! policy decision and the real stepper pass ([`load`], [`play`]), what a run shows ([`restarted`],
//! [`all_on`]), and the invariants every guarded run keeps ([`assert_guarded_invariants`]).
#![allow(dead_code)] // each test crate uses a subset

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use sts_stepper::sim::scenario::{self, Run, Scenario};

/// The scenario `scenarios/<name>.yaml`.
pub fn load(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.yaml"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// `s` played natively (without the policy and the stepper) or guarded, seed 1.
pub fn play(s: &Scenario, native: bool) -> Run {
    scenario::run(s, native, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

/// Ordinals the controller deleted for the update, in order.
pub fn restarted(run: &Run) -> Vec<u32> {
    run.world.restarts.iter().map(|r| r.1).collect()
}

/// Every pod in `[0, replicas)` runs the image `tag`.
pub fn all_on(run: &Run, tag: &str) -> bool {
    let update = run.world.status_str("updateRevision");
    let image = run
        .world
        .revision(&update)
        .and_then(|r| sts_stepper::sim::history::template_image(&r.template).map(str::to_string));
    image.as_deref() == Some(tag)
        && run
            .world
            .pods
            .values()
            .all(|p| p.revision == update && p.running_and_ready())
        && run.world.pods.len() == usize::try_from(run.world.replicas()).unwrap_or(0)
}

/// A guarded run never steps while a gate fails or twice for one observation, restarts no pod while
/// another is down, steps one pod at a time, and takes at most one pod down beyond the faults.
pub fn assert_guarded_invariants(run: &Run) {
    let s = &run.summary;
    assert_eq!(
        s.steps_while_gate_failed, 0,
        "{}: a step while a gate failed",
        run.name
    );
    assert_eq!(s.steps_unobserved, 0, "{}: a double step", run.name);
    assert_eq!(s.harmful_restarts, 0, "{}: restart while down", run.name);
    for w in run.steps.windows(2) {
        assert!(w[1].from >= w[0].to, "{}: steps {:?}", run.name, w);
    }
    for step in &run.steps {
        assert_eq!(
            step.from.min(step.replicas) - 1,
            step.to,
            "{}: step {step:?} is not one pod",
            run.name
        );
    }
    for f in &run.frames {
        assert!(
            f.down <= f.fault_down + 1,
            "{} t={}: {} down, {} by faults",
            run.name,
            f.t,
            f.down,
            f.fault_down
        );
    }
}

/// The requests written on the pods: (pod, `update-requested`, `update-request-phase`) → the seconds
/// each was written and its `update-requested-at`.
pub fn requests(run: &Run) -> BTreeMap<(String, String, String), Vec<(i64, String)>> {
    let mut out: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for (t, line) in &run.world.writes {
        let Some(rest) = line.strip_prefix("PATCH pods demo/") else {
            continue;
        };
        let (pod, ops) = rest.split_once(' ').expect("a pod write");
        let ops: Vec<Value> = serde_json::from_str(ops).expect("ops");
        // The request's keys, added one by one or as the pod's first annotations map.
        let mut set = BTreeMap::new();
        for op in &ops {
            let (path, value) = (op["path"].as_str().unwrap_or(""), &op["value"]);
            if op["op"] != "add" {
                continue;
            }
            if path == "/metadata/annotations" {
                for (k, v) in value.as_object().into_iter().flatten() {
                    set.insert(k.clone(), v.as_str().unwrap_or("").to_string());
                }
            } else if let Some(k) = path.strip_prefix("/metadata/annotations/") {
                set.insert(
                    k.replace("~1", "/"),
                    value.as_str().unwrap_or("").to_string(),
                );
            }
        }
        let get = |k: &str| set.get(&format!("safe-rollout.dev/{k}")).cloned();
        if let (Some(revision), Some(phase), Some(at)) = (
            get("update-requested"),
            get("update-request-phase"),
            get("update-requested-at"),
        ) {
            out.entry((pod.to_string(), revision, phase))
                .or_default()
                .push((*t, at));
        }
    }
    out
}
