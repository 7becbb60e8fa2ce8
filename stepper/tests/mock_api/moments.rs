//! The recorded fixture moments as the mocked API server answers them: their LIST bodies
//! ([`list_body`], [`list_with`]), the set as stored after a write ([`stored`]), the LISTs that start a
//! pass over `demo/web` ([`lists_of`], [`lists_then`]), and the patches a pass sends ([`step_body`],
//! [`initialized_patch`]).
#![allow(dead_code)] // each test crate uses a subset

use serde_json::{Value, json};

use super::{Expect, STS_ALL, get, namespace_pdbs, set_pods};
use crate::common::{REV_NEW, fixture_body};

/// The body of the `kind` LIST (`statefulsets`, `pods`, `pdbs`) of fixture `moment`.
pub fn list_body(moment: &str, kind: &str) -> Vec<u8> {
    fixture_body(&format!("{moment}-{kind}.json"))
}

/// The StatefulSet of a moment as the API server would store it after `f`.
pub fn stored(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let list: Value = serde_json::from_slice(&list_body(moment, "statefulsets")).expect("json");
    let mut set = list["items"][0].clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    f(&mut set);
    serde_json::to_vec(&set).expect("json")
}

/// A StatefulSetList body of `moment` with `f` applied to the set.
pub fn list_with(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut list: Value = serde_json::from_slice(&list_body(moment, "statefulsets")).expect("json");
    f(&mut list["items"][0]);
    serde_json::to_vec(&list).expect("json")
}

/// The three LISTs of a pass over a fixture `moment` where `demo/web` is the one candidate
/// (StatefulSets with `f` applied to the set; then its own pods and its namespace's PDBs): the start of
/// every script that judges pods.
pub fn lists_of(moment: &str, f: impl FnOnce(&mut Value)) -> Vec<Expect> {
    vec![
        get(STS_ALL, list_with(moment, f)),
        set_pods("demo", "app=web", list_body(moment, "pods")),
        namespace_pdbs("demo", list_body(moment, "pdbs")),
    ]
}

/// [`lists_of`], then the requests of `rest`.
pub fn lists_then(moment: &str, f: impl FnOnce(&mut Value), rest: Vec<Expect>) -> Vec<Expect> {
    let mut script = lists_of(moment, f);
    script.extend(rest);
    script
}

/// Stamps `initialized: "true"` on a set (a set that was once fully Ready).
pub fn initialized(s: &mut Value) {
    s["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
}

/// The patch stamping `initialized: "true"`.
pub fn initialized_patch() -> Value {
    json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1initialized", "value": "true"}])
}

/// The step patch `from` → `to` (pinned to the partition and `updateRevision`, stamped at `now()`).
pub fn step_body(from: i32, to: i32) -> Value {
    json!([
        {"op": "test", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": from},
        {"op": "test", "path": "/status/updateRevision", "value": REV_NEW},
        {"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": to},
        {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1last-partition-update",
         "value": "2026-11-23T01:20:00Z"}
    ])
}

/// Sets the partition to `p`.
pub fn set_partition(p: i32) -> impl FnOnce(&mut Value) {
    move |s| s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p)
}
