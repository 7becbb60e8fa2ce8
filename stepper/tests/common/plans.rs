//! Builders for the gates that read beyond the set and for their plans: annotations under [`PREFIX`],
//! staged members of a rollout group with their pods, one pass's plans (`plan::plan_with` at
//! [`now`](super::now)), and its patches applied to the set's JSON as the API server would ([`applied`],
//! [`pass_at`]).
#![allow(dead_code)] // each test crate uses a subset

use jiff::Timestamp;
use json_patch::Patch;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use sts_stepper::config::Keys;
use sts_stepper::gates::{GateOptions, Probes, Verdict};
use sts_stepper::plan::{self, ProbeMap, SetPlan, Snapshot};

#[allow(unused_imports)] // each test crate uses a subset
pub use super::verdicts::{blocked, opts};
use super::{now, pod_from, pod_json, pods, set_from, set_json};

/// The annotation prefix.
pub const PREFIX: &str = "safe-rollout.dev";

/// The annotation keys under [`PREFIX`].
pub fn keys() -> Keys {
    Keys::new(PREFIX)
}

/// `name` under [`PREFIX`].
pub fn key(name: &str) -> String {
    format!("{PREFIX}/{name}")
}

/// `v` with the annotations `pairs` added.
pub fn annotate(mut v: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, val) in pairs {
        v["metadata"]["annotations"][*k] = json!(val);
    }
    v
}

/// The step `from` → `to`, pinned to the update revision `b` of [`member_json`] and `set_json`.
pub fn step(from: i32, to: i32) -> Verdict {
    super::verdicts::step(from, to, "b")
}

/// A patch as JSON (`null` for none).
pub fn to_json(p: &Option<Patch>) -> Value {
    serde_json::to_value(p).expect("json")
}

/// Applies `patch` to a copy of `doc`, as the API server would.
pub fn applied(doc: &Value, patch: &Patch) -> Result<Value, String> {
    let mut out = doc.clone();
    json_patch::patch(&mut out, patch).map_err(|e| e.to_string())?;
    Ok(out)
}

/// A snapshot of `sets` and `pods`, without PDBs.
pub fn snapshot(sets: Vec<Value>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        statefulsets: sets.into_iter().map(|v| set_from(v).into()).collect(),
        pods,
        ..Snapshot::default()
    }
}

/// The plan of `v` alone, with its `pods` and `probes`, at [`now`](super::now).
pub fn plan_one(v: Value, pods: Vec<Pod>, probes: Option<Probes>) -> SetPlan {
    let mut map = ProbeMap::new();
    if let Some(p) = probes {
        map.insert(0, p);
    }
    plan::plan_with(&snapshot(vec![v], pods), &opts(), now(), &map)
        .pop()
        .expect("one plan")
}

/// The plan of `ns/name`.
pub fn by_name<'a>(plans: &'a [SetPlan], ns: &str, name: &str) -> &'a SetPlan {
    plans
        .iter()
        .find(|p| p.namespace == ns && p.name == name)
        .unwrap_or_else(|| panic!("no plan for {ns}/{name}"))
}

/// A staged set `ns/name` (uid `uid-<ns>-<name>`), 3 replicas, in `<prefix>/rollout-group` `group`
/// when given; `partition` None = absent. Staged: revisions a → b with `3 − partition` pods updated.
pub fn member_json(
    ns: &str,
    name: &str,
    partition: Option<i32>,
    staged: bool,
    group: Option<&str>,
) -> Value {
    let updated = if staged {
        3 - partition.unwrap_or(1).clamp(0, 3)
    } else {
        3
    };
    let mut v = set_json(name, 3, partition, updated);
    v["metadata"]["namespace"] = json!(ns);
    v["metadata"]["uid"] = json!(format!("uid-{ns}-{name}"));
    v["metadata"]["annotations"][key("initialized")] = json!("true");
    if !staged {
        v["status"]["currentRevision"] = json!("b");
    }
    if let Some(g) = group {
        v["metadata"]["annotations"][key("rollout-group")] = json!(g);
    }
    v
}

/// Ready pods 0..3 of `ns/name` owned by uid `uid-<ns>-<name>`; ordinals ≥ `from_new` on `b`.
pub fn member_pods(ns: &str, name: &str, from_new: u32) -> Vec<Pod> {
    (0..3)
        .map(|i| {
            let mut v = pod_json(name, name, i, if i >= from_new { "b" } else { "a" });
            v["metadata"]["namespace"] = json!(ns);
            v["metadata"]["ownerReferences"][0]["uid"] = json!(format!("uid-{ns}-{name}"));
            pod_from(v)
        })
        .collect()
}

/// One pass over `web` alone at `t` with `probes`; returns the plan and the set's JSON after its
/// status_annotations and step patches, with the StatefulSet controller's part of a step (pods ≥ partition on
/// `b`, status counters) simulated.
pub fn pass_at(
    v: &Value,
    o: &GateOptions,
    t: Timestamp,
    probes: Option<Probes>,
) -> (SetPlan, Value) {
    let replicas = v["spec"]["replicas"].as_i64().expect("replicas");
    let partition = v["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .expect("partition");
    let from_new = u32::try_from(partition.min(replicas)).expect("ordinal");
    let snap = snapshot(
        vec![v.clone()],
        pods("web", u32::try_from(replicas).expect("count"), from_new),
    );
    let mut map = ProbeMap::new();
    if let Some(p) = probes {
        map.insert(0, p);
    }
    let p = plan::plan_with(&snap, o, t, &map).pop().expect("plan");
    let mut after = v.clone();
    for patch in [&p.status_patch(), &p.step_patch()].into_iter().flatten() {
        after = applied(&after, patch).expect("patch applies");
    }
    let partition = after["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .expect("partition");
    let updated = replicas - partition.min(replicas);
    after["status"]["updatedReplicas"] = json!(updated);
    after["status"]["currentReplicas"] = json!(replicas - updated);
    (p, after)
}
