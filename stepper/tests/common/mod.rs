//! Test helpers: the real API fixtures and small builders for edge cases.
#![allow(dead_code)] // each test crate uses a subset

pub mod owner;
pub mod plans;
pub mod prometheus_check;
pub mod states;
pub mod verdicts;
pub mod webhook_gate;

use std::path::PathBuf;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::core::ObjectList;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sts_stepper::plan::Snapshot;

/// The four moments of the recorded rollout (see fixtures/api/README.md).
pub const MOMENTS: [&str; 4] = ["1-staged", "2-stepped-4", "3-web1-notready", "4-complete"];
/// uid of StatefulSet demo/web in the fixtures.
pub const WEB_UID: &str = "05b7f641-e294-47a1-935b-9e069434facc";
/// Revisions in the fixtures.
pub const REV_OLD: &str = "web-696dc66855";
pub const REV_NEW: &str = "web-7d7598bf9d";

pub fn fixture_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/api")
        .join(file)
}

/// The body of a fixture file (what the API server sent), a StatefulSet list's sets marked as the
/// policy marks every set it stages (`safe-rollout.dev/guarded: "true"`, docs/design.md, "The guarded
/// mark"): the capture (Kubernetes v1.28.7, fixtures/api/README.md) predates the mark, and the stepper
/// steps only marked sets. [`raw_fixture_body`] is the file as captured.
pub fn fixture_body(file: &str) -> Vec<u8> {
    let raw = raw_fixture_body(file);
    if !file.ends_with("statefulsets.json") {
        return raw;
    }
    let mut list: Value =
        serde_json::from_slice(&raw).unwrap_or_else(|e| panic!("parse fixture {file}: {e}"));
    for set in list["items"].as_array_mut().into_iter().flatten() {
        let meta = set["metadata"].as_object_mut().expect("metadata");
        let notes = meta.entry("annotations").or_insert_with(|| json!({}));
        notes["safe-rollout.dev/guarded"] = json!("true");
    }
    serde_json::to_vec(&list).expect("json")
}

/// The raw body of a fixture file, exactly as captured.
pub fn raw_fixture_body(file: &str) -> Vec<u8> {
    std::fs::read(fixture_path(file)).unwrap_or_else(|e| panic!("read fixture {file}: {e}"))
}

pub fn fixture_list<T: DeserializeOwned + Clone>(file: &str) -> Vec<T> {
    let list: ObjectList<T> =
        serde_json::from_slice(&fixture_body(file)).unwrap_or_else(|e| panic!("parse {file}: {e}"));
    list.items
}

/// The snapshot of one moment: its StatefulSets, Pods and PDBs.
/// The "1-staged" moment's set and pods with `annotations` added to the set and `pod_annotations` /
/// `labels` on pods by ordinal (annotation names short: `safe-rollout.dev/` is prefixed).
pub fn staged_with(
    annotations: &[(&str, &str)],
    pod_annotations: &[(u32, &str, &str)],
    labels: &[(u32, &str, &str)],
) -> (StatefulSet, Vec<Pod>) {
    let key = |name: &str| format!("safe-rollout.dev/{name}");
    let snap = moment("1-staged");
    let mut set = (*snap.statefulsets[0]).clone();
    let map = set
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    for (k, v) in annotations {
        map.insert(key(k), (*v).to_string());
    }
    let mut pods = snap.pods.clone();
    for pod in &mut pods {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let o = sts_stepper::model::pods::ordinal("web", name).expect("a web pod");
        for (_, k, v) in pod_annotations.iter().filter(|(n, ..)| *n == o) {
            let a = pod
                .metadata
                .annotations
                .get_or_insert_with(Default::default);
            a.insert(key(k), (*v).to_string());
        }
        for (_, k, v) in labels.iter().filter(|(n, ..)| *n == o) {
            let l = pod.metadata.labels.get_or_insert_with(Default::default);
            l.insert((*k).to_string(), (*v).to_string());
        }
    }
    (set, pods)
}

pub fn moment(name: &str) -> Snapshot {
    Snapshot {
        statefulsets: fixture_list::<StatefulSet>(&format!("{name}-statefulsets.json"))
            .into_iter()
            .map(Arc::new)
            .collect(),
        pods: fixture_list(&format!("{name}-pods.json")),
        pdbs: fixture_list(&format!("{name}-pdbs.json")),
        ..Snapshot::default()
    }
}

/// A time well after every fixture moment (pods Ready since 01:10–01:11).
pub fn now() -> Timestamp {
    "2026-11-23T01:20:00Z".parse().expect("valid time")
}

pub fn at(s: &str) -> Timestamp {
    s.parse().expect("valid time")
}

/// A StatefulSet `ns/name` (uid `uid-<name>`), observed, with a staged update from `a` to `b`.
pub fn set_json(name: &str, replicas: i32, partition: Option<i32>, updated: i32) -> Value {
    let mut strategy = json!({"type": "RollingUpdate"});
    if let Some(p) = partition {
        strategy["rollingUpdate"] = json!({"partition": p});
    }
    json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                     "resourceVersion": "100", "generation": 2,
                     "annotations": {"team": "db", "safe-rollout.dev/guarded": "true"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "serviceName": name, "template": {"metadata": {"labels": {"app": name}}},
                 "updateStrategy": strategy},
        "status": {"replicas": replicas, "observedGeneration": 2, "readyReplicas": replicas,
                   "availableReplicas": replicas, "currentReplicas": replicas - updated,
                   "updatedReplicas": updated, "currentRevision": "a", "updateRevision": "b"}
    })
}

pub fn set_from(v: Value) -> StatefulSet {
    serde_json::from_value(v).expect("valid StatefulSet")
}

pub fn set(name: &str, replicas: i32, partition: Option<i32>, updated: i32) -> StatefulSet {
    set_from(set_json(name, replicas, partition, updated))
}

/// A Running, Ready pod `<set>-<ordinal>` of set `set` (owner uid `uid-<owner>`) on `revision`,
/// Ready since 01:00.
pub fn pod_json(set: &str, owner: &str, ordinal: u32, revision: &str) -> Value {
    json!({
        "metadata": {"name": format!("{set}-{ordinal}"), "namespace": "ns",
                     "labels": {"app": set, "controller-revision-hash": revision},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                          "name": set, "uid": format!("uid-{owner}"),
                                          "controller": true}]},
        "spec": {"containers": []},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-23T01:00:00Z"}]}
    })
}

pub fn pod_from(v: Value) -> Pod {
    serde_json::from_value(v).expect("valid Pod")
}

/// Pods 0..n of set `name` (owned by it); ordinals ≥ `from_new` on revision `b`, the rest on `a`.
pub fn pods(name: &str, n: u32, from_new: u32) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            pod_from(pod_json(
                name,
                name,
                i,
                if i >= from_new { "b" } else { "a" },
            ))
        })
        .collect()
}

pub fn pdb(name: &str, selector: Value, allowed: i32) -> PodDisruptionBudget {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"selector": selector, "maxUnavailable": 1},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": 3, "desiredHealthy": 3,
                   "expectedPods": 3, "observedGeneration": 1}
    }))
    .expect("valid PDB")
}
