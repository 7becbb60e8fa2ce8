//! The canary plan's test helpers: a 5-replica set `web` at a partition with annotations, planned at
//! a time; its verdict and Events.
#![allow(dead_code)] // each test crate uses a subset

use serde_json::{Value, json};
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::model::reasons::Reason;
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, SetPlan, Snapshot};

use crate::common::*;

pub const REASON_1: &str = "pause point 1 of 2: 1 of 5 pods on b; `resume` to go on";
pub const REASON_2: &str = "pause point 2 of 2: 3 of 5 pods on b; goes on by itself 30 s after \
                            the pause if every gate passes, or `resume` to go on";

/// The JSON Pointer of annotation `safe-rollout.dev/<key>`.
pub fn a(key: &str) -> String {
    format!("/metadata/annotations/safe-rollout.dev~1{key}")
}

/// Set `web` (5 replicas) at `partition`, the pods at or above it on `b`, all Ready, initialized,
/// with `annotations` (short names) added.
pub fn canary(partition: i32, annotations: &[(&str, &str)]) -> Value {
    let mut v = set_json("web", 5, Some(partition), 5 - partition);
    v["metadata"]["annotations"]["safe-rollout.dev/initialized"] = json!("true");
    for (k, val) in annotations {
        v["metadata"]["annotations"][format!("safe-rollout.dev/{k}")] = json!(val);
    }
    v
}

/// A `pause-points-passed` record for revision `b`.
pub fn record(pods: i32, paused_at: &str) -> String {
    format!(r#"{{"updateRevision":"b","pods":{pods},"pausedAt":"{paused_at}"}}"#)
}

/// The plan of set `v` at time `t`, its pods all Ready but `unhealthy` (no Ready condition).
pub fn plan_at(v: Value, unhealthy: Option<u32>, t: &str) -> SetPlan {
    let partition = v["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .expect("partition") as u32;
    let mut pods = pods("web", 5, partition);
    if let Some(o) = unhealthy {
        pods[o as usize].status.as_mut().expect("status").conditions = None;
    }
    let snap = Snapshot {
        statefulsets: vec![set_from(v).into()],
        pods,
        ..Snapshot::default()
    };
    plan::plan(&snap, &GateOptions::default(), at(t))
        .pop()
        .expect("one plan")
}

/// The block of a plan (panics on another verdict).
pub fn blocked(p: &SetPlan) -> (Reason, String) {
    match &p.verdict {
        Verdict::Blocked(b) => (b.reason, b.detail.clone()),
        other => panic!("want a block, got {other:?}"),
    }
}

/// The plan's Events: reason, type, note.
pub fn events(p: &SetPlan) -> Vec<(String, EventType, String)> {
    (p.events().iter())
        .map(|e| (e.reason.clone(), e.type_, e.note.clone()))
        .collect()
}
