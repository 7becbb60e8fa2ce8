//! The fixture moments in more states than were recorded: annotations on the set, the partition and
//! `minReadySeconds` moved ([`full`]), and the approval handshake's states on the pods ([`handshake`]).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use sts_stepper::plan::Snapshot;

use super::{REV_NEW, REV_OLD, fixture_list};

/// The fixture `moment` with `annotations` added to its set, `spec.minReadySeconds` set and, with
/// `partition`, the partition moved (to 1: web-1, NotReady at moment 3 on the old revision, is stuck).
pub fn full(
    moment: &str,
    annotations: &Value,
    min_ready_seconds: i32,
    partition: Option<i32>,
) -> Snapshot {
    let mut snap = super::moment(moment);
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

/// The approval handshake's states on the pods of `moment` (the step's pod is its highest ordinal on
/// the old revision): `state` on that pod, `role=primary` on pod `primary`, and an annotation and a
/// label of the application's own on every pod.
pub fn handshake(moment: &str, state: &str, primary: Option<u32>) -> Snapshot {
    let set_notes = json!({"safe-rollout.dev/initialized": "true",
                           "safe-rollout.dev/pre-update-approval": "true",
                           "safe-rollout.dev/approval-timeout-seconds": "300",
                           "safe-rollout.dev/primary-selector": "role=primary"});
    let mut snap = full(moment, &set_notes, 0, None);
    let asked = if moment == "1-staged" {
        "web-4"
    } else {
        "web-3"
    };
    let key = |k: &str| format!("safe-rollout.dev/{k}");
    snap.pods = snap
        .pods
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let name = p.metadata.name.clone().unwrap_or_default();
            let notes = p.metadata.annotations.get_or_insert_with(Default::default);
            notes.insert("example.com/owned-by-app".into(), "keep-me".into());
            p.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert("example.com/tier".into(), "db".into());
            if primary.is_some_and(|o| name == format!("web-{o}")) {
                p.metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .insert("role".into(), "primary".into());
            }
            let request = |notes: &mut std::collections::BTreeMap<String, String>, rev: &str| {
                notes.insert(key("update-requested"), rev.into());
                notes.insert(key("update-requested-at"), "2026-11-23T01:15:00Z".into());
                notes.insert(key("update-request-phase"), "Update".into());
            };
            if name == asked {
                match state {
                    "asked" => request(notes, REV_NEW),
                    "approved" => {
                        request(notes, REV_NEW);
                        notes.insert(key("update-approved"), REV_NEW.into());
                    }
                    "denied" => {
                        request(notes, REV_NEW);
                        notes.insert(key("update-denied"), "replica lagging".into());
                    }
                    "stale" => request(notes, REV_OLD),
                    _ => {}
                }
            } else if state == "stale" {
                request(notes, REV_OLD); // a request no step makes: withdrawn
            }
            p
        })
        .collect();
    snap
}

/// The states the gates are judged in: the recorded moments with annotations that reach every gate,
/// a second set of the same rollout group, and the approval handshake's states.
pub fn states() -> Vec<(String, Snapshot)> {
    let base = json!({"safe-rollout.dev/initialized": "true"});
    let mut notes: Vec<Value> = vec![
        json!({}),
        base.clone(),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/step": "2",
               "safe-rollout.dev/initial-delay-seconds": "3600",
               "safe-rollout.dev/last-partition-update": "2026-11-23T01:15:00Z",
               "safe-rollout.dev/recover-after-seconds": "60"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/paused": "true"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/pause-at": "1,60%"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/step": "x"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/owner-condition": "Healthy"}),
        json!({"safe-rollout.dev/initialized": "true",
               "safe-rollout.dev/prometheus-query": "up == 1",
               "safe-rollout.dev/success-threshold": "1"}),
        json!({"safe-rollout.dev/initialized": "true", "safe-rollout.dev/http-check": "app",
               "safe-rollout.dev/http-check-jsonpath": "$.status",
               "safe-rollout.dev/http-check-expect": "ok"}),
    ];
    notes.push(json!({"safe-rollout.dev/initialized": "true",
                      "safe-rollout.dev/rollout-group": "db"}));
    // A revision rolled back (`FailedRevision`: the new one, re-applied; the old one, stepping back).
    for failed in [REV_NEW, REV_OLD] {
        notes.push(json!({"safe-rollout.dev/initialized": "true",
                          "safe-rollout.dev/on-failure": "rollback",
                          "safe-rollout.dev/failed-revision": format!("{failed}: FailureLimit: x")}));
    }
    let mut out = Vec::new();
    for moment in super::MOMENTS {
        for (n, a) in notes.iter().enumerate() {
            for (mrs, partition) in [(0, None), (30, Some(1))] {
                let mut snap = full(moment, a, mrs, partition);
                if a.get("safe-rollout.dev/owner-condition").is_some() {
                    // Owned by MOCO's MySQLCluster `web` (`super::owner`).
                    let mut set = (*snap.statefulsets[0]).clone();
                    set.metadata.owner_references = Some(vec![super::owner::owner_ref()]);
                    snap.statefulsets[0] = Arc::new(set);
                }
                if a.get("safe-rollout.dev/rollout-group").is_some() {
                    // Another set of the group, staged and started: it holds the group.
                    let mut other = (*snap.statefulsets[0]).clone();
                    other.metadata.name = Some("db-a".into());
                    other.metadata.uid = Some("uid-db-a".into());
                    if let Some(ru) = other
                        .spec
                        .as_mut()
                        .and_then(|s| s.update_strategy.as_mut())
                        .and_then(|u| u.rolling_update.as_mut())
                    {
                        ru.partition = Some(0);
                    }
                    snap.statefulsets.insert(0, Arc::new(other));
                }
                out.push((
                    format!("{moment} notes#{n} mrs={mrs} p={partition:?}"),
                    snap,
                ));
            }
        }
    }
    // A spec the controller has not observed yet (NotObserved).
    for moment in super::MOMENTS {
        let mut snap = full(moment, &base, 0, None);
        let mut set = (*snap.statefulsets[0]).clone();
        set.metadata.generation = set.metadata.generation.map(|g| g + 1);
        snap.statefulsets[0] = Arc::new(set);
        out.push((format!("{moment} unobserved"), snap));
    }
    // Labels on the set (what `OutOfScope` judges `--selector` on) beside others of the application.
    for labels in [
        json!({"safe-rollout.dev/guard": "true", "app": "web"}),
        json!({"app": "web"}),
    ] {
        let mut snap = full("2-stepped-4", &base, 0, None);
        let mut set = (*snap.statefulsets[0]).clone();
        set.metadata.labels = serde_json::from_value(labels.clone()).expect("labels");
        snap.statefulsets[0] = Arc::new(set);
        out.push((format!("2-stepped-4 labels {labels}"), snap));
    }
    // Stepping back from a failed revision with a pod of it not Ready: returned at once (issue 43).
    let back = json!({"safe-rollout.dev/initialized": "true",
                      "safe-rollout.dev/on-failure": "rollback",
                      "safe-rollout.dev/progress-deadline-seconds": "15",
                      "safe-rollout.dev/failed-revision": format!("{REV_OLD}: ProgressDeadline: x")});
    for policy in ["OrderedReady", "Parallel"] {
        let mut snap = full("3-web1-notready", &back, 0, None);
        let mut set = (*snap.statefulsets[0]).clone();
        if let Some(spec) = set.spec.as_mut() {
            spec.pod_management_policy = Some(policy.into());
        }
        if let Some(status) = set.status.as_mut() {
            status.current_revision = Some(REV_NEW.into());
        }
        snap.statefulsets[0] = Arc::new(set);
        out.push((format!("3-web1-notready stepping back {policy}"), snap));
    }
    for moment in ["1-staged", "2-stepped-4", "3-web1-notready"] {
        for state in ["none", "asked", "approved", "denied", "stale"] {
            for primary in [None, Some(3), Some(4)] {
                out.push((
                    format!("{moment} handshake {state} primary {primary:?}"),
                    handshake(moment, state, primary),
                ));
            }
        }
    }
    out
}
