//! Whole rollouts through the `Cluster` interface against a small simulated StatefulSet controller
//! with a virtual clock: the JSON Patches are applied with real JSON Patch semantics (`test` ops
//! included), so these tests show the safety properties end to end — one step per healthy
//! observation, none while a pod is down, and never two steps for one observation.
mod common;

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use sts_stepper::cluster::{Cluster, ClusterError, PatchOutcome};
use sts_stepper::events::EventNote;
use sts_stepper::pass::{Outcome, PassOptions, run_pass};
use sts_stepper::reasons::Reason;

#[derive(Clone, Debug)]
struct SimPod {
    revision: String,
    ready: bool,
    terminating: bool,
}

#[derive(Debug)]
struct World {
    sts: Value,
    pods: Vec<SimPod>,
    /// Ordinals whose pods never become Ready again once replaced (a broken node, a bad image).
    broken: Vec<usize>,
    events: Vec<(String, EventNote)>,
    /// When set, LIST StatefulSets answers with this older copy (a stepper with a stale view).
    stale: Option<Value>,
}

struct Sim(Mutex<World>);

fn lock(sim: &Sim) -> std::sync::MutexGuard<'_, World> {
    sim.0.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sim {
    /// `web` with `replicas` pods on revision `a`, an update to `b` staged at partition = replicas.
    fn new(replicas: usize, annotations: Value) -> Sim {
        let sts = json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "uid-web", "resourceVersion": "1",
                         "generation": 2, "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "serviceName": "web",
                     "template": {"metadata": {"labels": {"app": "web"}}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": replicas}}},
            "status": {"observedGeneration": 2, "currentRevision": "a", "updateRevision": "b"}
        });
        let pods = (0..replicas)
            .map(|_| SimPod {
                revision: "a".into(),
                ready: true,
                terminating: false,
            })
            .collect();
        let sim = Sim(Mutex::new(World {
            sts,
            pods,
            broken: vec![],
            events: vec![],
            stale: None,
        }));
        lock(&sim).refresh_status();
        sim
    }
}

impl World {
    fn partition(&self) -> i64 {
        self.sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .unwrap_or(0)
    }

    fn refresh_status(&mut self) {
        let update = "b";
        let updated = self.pods.iter().filter(|p| p.revision == update).count();
        let ready = self
            .pods
            .iter()
            .filter(|p| p.ready && !p.terminating)
            .count();
        let n = self.pods.len();
        let s = &mut self.sts["status"];
        s["replicas"] = json!(n);
        s["updatedReplicas"] = json!(updated);
        s["currentReplicas"] = json!(n - updated);
        s["readyReplicas"] = json!(ready);
        s["availableReplicas"] = json!(ready);
        if updated == n {
            s["currentRevision"] = json!(update);
            s["currentReplicas"] = json!(n);
        }
    }

    /// One sync of the StatefulSet controller (OrderedReady-like rolling update over ordinals ≥
    /// partition, highest first, one pod at a time).
    fn controller_tick(&mut self) {
        let generation = self.sts["metadata"]["generation"].clone();
        self.sts["status"]["observedGeneration"] = generation;
        for (i, p) in self.pods.iter_mut().enumerate() {
            if p.terminating {
                *p = SimPod {
                    revision: "b".into(),
                    ready: false,
                    terminating: false,
                };
            } else if !p.ready && !self.broken.contains(&i) {
                p.ready = true;
            }
        }
        let settled = self.pods.iter().all(|p| p.ready && !p.terminating);
        let partition = usize::try_from(self.partition()).unwrap_or(0);
        if settled
            && let Some(i) = (partition..self.pods.len())
                .rev()
                .find(|&i| self.pods[i].revision != "b")
        {
            self.pods[i].terminating = true;
        }
        self.refresh_status();
    }

    fn pod_json(&self, i: usize) -> Value {
        let p = &self.pods[i];
        let mut v = json!({
            "metadata": {"name": format!("web-{i}"), "namespace": "ns",
                         "labels": {"app": "web", "controller-revision-hash": p.revision},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                              "name": "web", "uid": "uid-web", "controller": true}]},
            "spec": {"containers": []},
            "status": {"phase": "Running", "conditions": [{"type": "Ready",
                "status": if p.ready { "True" } else { "False" },
                "reason": if p.ready { Value::Null } else { json!("ContainersNotReady") },
                "lastTransitionTime": "2026-11-23T00:00:00Z"}]}
        });
        if p.terminating {
            v["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
        }
        v
    }
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ClusterError> {
    serde_json::from_value(v).map_err(|e| ClusterError::Transport {
        action: "decode".into(),
        message: e.to_string(),
    })
}

impl Cluster for Sim {
    async fn list_statefulsets(&self) -> Result<Vec<StatefulSet>, ClusterError> {
        let w = lock(self);
        Ok(vec![decode(
            w.stale.clone().unwrap_or_else(|| w.sts.clone()),
        )?])
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        let w = lock(self);
        (0..w.pods.len()).map(|i| decode(w.pod_json(i))).collect()
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        Ok(vec![])
    }

    async fn patch_statefulset(
        &self,
        _namespace: &str,
        _name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        let mut w = lock(self);
        let mut next = w.sts.clone();
        if let Err(e) = json_patch::patch(&mut next, patch) {
            return Ok(PatchOutcome::Conflict(e.to_string()));
        }
        let spec_changed = next["spec"] != w.sts["spec"];
        let rv = w.sts["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        next["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
        if spec_changed {
            let g = next["metadata"]["generation"].as_i64().unwrap_or(0);
            next["metadata"]["generation"] = json!(g + 1);
        }
        next["status"] = w.sts["status"].clone(); // status is not writable through the main resource
        w.sts = next;
        Ok(PatchOutcome::Applied(Box::new(decode(w.sts.clone())?)))
    }

    async fn get_owner(
        &self,
        _namespace: &str,
        _owner: &k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
    ) -> Result<Option<Value>, ClusterError> {
        Ok(None)
    }

    async fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> Result<(), ClusterError> {
        lock(self)
            .events
            .push((object.name.clone().unwrap_or_default(), event.clone()));
        Ok(())
    }
}

fn t(minutes: i64) -> Timestamp {
    common::at("2026-11-23T02:00:00Z") + SignedDuration::from_mins(minutes)
}

#[tokio::test]
async fn a_whole_rollout_steps_once_per_healthy_observation() {
    let sim = Sim::new(5, json!({"safe-rollout.dev/initialized": "true"}));
    let opts = PassOptions::default();
    let mut partitions = vec![lock(&sim).partition()];
    for minute in 0..40 {
        let before = lock(&sim).partition();
        let all_ready = lock(&sim).pods.iter().all(|p| p.ready && !p.terminating);
        let report = run_pass(&sim, &opts, t(minute)).await.expect("pass");
        let after = lock(&sim).partition();
        if after != before {
            assert_eq!(before - after, 1, "one step per pass");
            assert!(all_ready, "stepped at minute {minute} while a pod was down");
            assert!(matches!(report.sets[0].outcome, Outcome::Stepped { .. }));
            partitions.push(after);
        }
        lock(&sim).controller_tick();
    }
    assert_eq!(partitions, [5, 4, 3, 2, 1, 0]);
    let w = lock(&sim);
    assert!(w.pods.iter().all(|p| p.revision == "b" && p.ready));
    let reasons: Vec<&str> = w.events.iter().map(|(_, e)| e.reason.as_str()).collect();
    assert_eq!(reasons.iter().filter(|r| **r == "Stepped").count(), 5);
    assert_eq!(
        reasons.iter().filter(|r| **r == "RolloutComplete").count(),
        1,
        "{reasons:?}"
    );
    assert_eq!(
        w.sts["metadata"]["annotations"]["safe-rollout.dev/completed-revision"],
        "b"
    );
    assert!(
        w.sts["metadata"]["annotations"]
            .get("safe-rollout.dev/blocked-reason")
            .is_none()
    );
}

#[tokio::test]
async fn a_pod_that_never_recovers_stops_the_rollout_and_says_so_once() {
    let sim = Sim::new(5, json!({"safe-rollout.dev/initialized": "true"}));
    lock(&sim).broken = vec![3]; // web-3 comes back on the new revision but never Ready
    let opts = PassOptions::default();
    let mut last = None;
    for minute in 0..40 {
        last = Some(run_pass(&sim, &opts, t(minute)).await.expect("pass"));
        lock(&sim).controller_tick();
    }
    let w = lock(&sim);
    assert_eq!(
        w.partition(),
        3,
        "stopped right after the step that broke web-3"
    );
    let outcome = &last.expect("passes").sets[0].outcome;
    assert_eq!(
        outcome.to_string(),
        "Blocked PodNotReady web-3: ContainersNotReady"
    );
    let blocked: Vec<&str> = w
        .events
        .iter()
        .filter(|(_, e)| e.reason == "Blocked")
        .map(|(_, e)| e.note.as_str())
        .collect();
    assert_eq!(
        blocked
            .iter()
            .filter(|n| n.starts_with("PodNotReady web-3"))
            .count(),
        1,
        "announced once, not once per pass: {blocked:?}"
    );
    assert_eq!(
        w.sts["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"],
        Reason::PodNotReady.as_str()
    );
}

#[tokio::test]
async fn two_steppers_never_step_twice_for_one_observation() {
    let sim = Sim::new(5, json!({"safe-rollout.dev/initialized": "true"}));
    let opts = PassOptions::default();
    // Stepper B's view is frozen at the observation stepper A acts on.
    let seen_by_both = lock(&sim).sts.clone();
    let a = run_pass(&sim, &opts, t(0)).await.expect("pass A");
    assert_eq!(a.sets[0].outcome, Outcome::Stepped { from: 5, to: 4 });
    lock(&sim).stale = Some(seen_by_both);
    let b = run_pass(&sim, &opts, t(0)).await.expect("pass B");
    assert!(
        matches!(b.sets[0].outcome, Outcome::Conflict(_)),
        "{:?}",
        b.sets[0].outcome
    );
    assert!(!b.any_errored(), "a lost race is not an error");
    assert_eq!(lock(&sim).partition(), 4, "one step for one observation");
}

#[tokio::test]
async fn settling_delay_spaces_the_steps_on_the_virtual_clock() {
    let sim = Sim::new(
        3,
        json!({"safe-rollout.dev/initialized": "true",
                                  "safe-rollout.dev/initial-delay-seconds": "600"}),
    );
    let opts = PassOptions::default();
    let mut step_minutes = vec![];
    for minute in 0..60 {
        let report = run_pass(&sim, &opts, t(minute)).await.expect("pass");
        if matches!(report.sets[0].outcome, Outcome::Stepped { .. }) {
            step_minutes.push(minute);
        }
        lock(&sim).controller_tick();
    }
    assert_eq!(step_minutes, [0, 10, 20], "600 s between steps");
}
