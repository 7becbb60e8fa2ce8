//! Several simulated StatefulSets behind one [`Cluster`]: the fleet's gates (`GroupBusy`,
//! `Throttled`) played on the simulated controller with the real policy and the real pass.
//!
//! Each member is a [`SimCluster`] (one StatefulSet and its pods, its own controller); the [`Fleet`]
//! concatenates their LISTs and routes each PATCH to the member it names, as one API server would.
//! [`run_fleet`] creates the sets, applies one template change to all of them at once (an operator
//! upgrade), runs the stepper every `interval` seconds and records, every second, which sets have a
//! pod down and when each rollout completed.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::json;
use sts_safe_rollout_rules::annotations;

use super::cluster::SimCluster;
use super::history::template;
use super::kubelet::Timing;
use super::probe::health;
use super::world::{SetShape, World, timestamp};
use crate::cluster::object::Object;
use crate::cluster::webhook::WebhookCall;
use crate::cluster::{AllProbes, Checks, Cluster, ClusterError, DeleteOutcome, PatchOutcome};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::{CheckAnswer, CheckRead, GateOptions};
use crate::pass::PodReads;
use crate::pass::{self, PassOptions};
use crate::plan::events::EventNote;

/// The members, each one StatefulSet with its own simulated controller.
#[derive(Debug)]
pub struct Fleet {
    /// The members, in creation order.
    pub members: Vec<SimCluster>,
}

impl Fleet {
    /// What `list` gives for each member, in member order; the first error ends it.
    fn gather<T>(
        &self,
        list: impl Fn(&SimCluster) -> Result<Vec<T>, ClusterError>,
    ) -> Result<Vec<T>, ClusterError> {
        let mut all = Vec::new();
        for m in &self.members {
            all.extend(list(m)?);
        }
        Ok(all)
    }

    fn member(&self, namespace: &str, name: &str) -> Option<&SimCluster> {
        self.members.iter().find(|m| {
            let w = m.world();
            w.name() == name && w.namespace() == namespace
        })
    }
}

impl Cluster for Fleet {
    async fn list_statefulsets(&self) -> Result<Vec<Arc<StatefulSet>>, ClusterError> {
        self.gather(SimCluster::do_list_statefulsets)
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        self.gather(SimCluster::do_list_pods)
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.gather(SimCluster::do_list_pdbs)
    }

    async fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        match self.member(namespace, name) {
            Some(m) => m.patch_statefulset(namespace, name, patch).await,
            None => Ok(PatchOutcome::Conflict(format!(
                "statefulsets.apps \"{name}\" not found"
            ))),
        }
    }

    async fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> Result<Option<serde_json::Value>, ClusterError> {
        for m in &self.members {
            if let Some(found) = m.get_owner(namespace, owner).await? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// From the member whose world stores it, as one API server would find it; `None` when none does
    /// (HTTP 404).
    async fn get<K: Object>(&self, namespace: &str, name: &str) -> Result<Option<K>, ClusterError> {
        let stored = |m: &&SimCluster| {
            !m.world()
                .find::<K>(Some(namespace), Some(name), None)
                .is_empty()
        };
        match self.members.iter().find(stored) {
            Some(m) => m.get(namespace, name).await,
            None => Ok(None),
        }
    }

    /// Every member's, in member order.
    async fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<K>, ClusterError> {
        let mut all = Vec::new();
        for m in &self.members {
            all.extend(m.list(namespace, labels).await?);
        }
        Ok(all)
    }

    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> Result<DeleteOutcome, ClusterError> {
        let set = name.rsplit_once('-').map_or("", |(set, _)| set);
        match self.member(namespace, set) {
            Some(m) => Cluster::delete_pod(m, namespace, name, uid, resource_version).await,
            None => Ok(DeleteOutcome::Conflict(format!(
                "pods \"{name}\" not found"
            ))),
        }
    }

    async fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> Result<(), ClusterError> {
        let (ns, name) = (
            object.namespace.as_deref().unwrap_or(""),
            object.name.as_deref().unwrap_or(""),
        );
        match self.member(ns, name) {
            Some(m) => m.publish_event(object, event).await,
            None => Ok(()),
        }
    }
}

/// The application of every member is healthy unless its world raises the unhealthy signal: a query
/// fails (empty) when any member's application is unhealthy (`super::probe::health`). A fleet
/// configures no other check and no approval webhook: those answer as a stepper without their flags
/// ([`Checks::default`]).
impl AllProbes for Fleet {
    async fn check(&self, read: &CheckRead) -> CheckAnswer {
        match read {
            CheckRead::Queries(queries) => {
                let unhealthy = self.members.iter().any(|m| m.world().app_unhealthy);
                health(queries.len(), unhealthy)
            }
            other => Checks::default().check(other).await,
        }
    }

    async fn webhook(&self, call: &WebhookCall) -> WebhookAnswer {
        Checks::default().webhook(call).await
    }
}

/// A fleet run: what every member went through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FleetRun {
    /// Per second, the names of the members with a pod down (not available) at that second.
    pub down: Vec<(i64, Vec<String>)>,
    /// Per member, the second its rollout completed (`None`: not within the run).
    pub completed: Vec<(String, Option<i64>)>,
    /// Every step that landed: (second, member, from, to).
    pub steps: Vec<(i64, String, i32, i32)>,
    /// The stepper's outcome notes that name a fleet gate (`GroupBusy`, `Throttled`): (second, member,
    /// outcome).
    pub fleet_blocks: Vec<(i64, String, String)>,
}

impl FleetRun {
    /// The most members with a pod down at the same second.
    pub fn max_members_down_at_once(&self) -> usize {
        self.down.iter().map(|(_, d)| d.len()).max().unwrap_or(0)
    }

    /// The most steps landing within any 60-second window `(t − 60, t]`.
    pub fn max_steps_per_minute(&self) -> usize {
        self.steps
            .iter()
            .map(|(t, ..)| {
                self.steps
                    .iter()
                    .filter(|(u, ..)| *u > t - 60 && *u <= *t)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }
}

/// How a fleet run is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetSpec {
    /// Member names (namespace `demo`), created in this order.
    pub names: Vec<String>,
    /// Replicas of each member.
    pub replicas: i32,
    /// Annotations (short names: `rollout-group`, `step`, …) set on every member.
    pub annotations: Vec<(String, String)>,
    /// The stepper's gate settings (prefix, throttle).
    pub gates: GateOptions,
    /// Seconds between stepper passes.
    pub interval_seconds: i64,
    /// Virtual seconds to run at most.
    pub duration: i64,
}

/// Plays `spec`: every member starts healthy on image `v1`; at second 1 the template of every member
/// changes to `v2` through the policy (staged); the stepper passes every `interval_seconds` with
/// `spec.gates`. Stops once every member completed.
///
/// # Errors
/// A world that cannot be created (the policy refusing its CREATE).
pub fn run_fleet(spec: &FleetSpec) -> Result<FleetRun, String> {
    let prefix = spec.gates.keys.prefix().to_string();
    let mut members = Vec::new();
    for (i, name) in spec.names.iter().enumerate() {
        let shape = SetShape {
            name: name.clone(),
            namespace: "demo".into(),
            replicas: spec.replicas,
            pod_management_policy: "Parallel".into(),
            min_ready_seconds: 0,
            image: "v1".into(),
        };
        let mut world = World::new(&shape, Timing::default(), true, &prefix, i as u64 + 1)?;
        world.pdb_max_unavailable = Some(1);
        for (k, v) in &spec.annotations {
            world.set["metadata"]["annotations"][annotations::key(&prefix, k)] = json!(v);
        }
        members.push(SimCluster::new(world));
    }
    let fleet = Fleet { members };
    let opts = PassOptions {
        gates: spec.gates.clone(),
        dry_run: false,
        pod_reads: PodReads::Candidates,
        ..PassOptions::default()
    };
    let mut run = FleetRun {
        completed: spec.names.iter().map(|n| (n.clone(), None)).collect(),
        ..FleetRun::default()
    };
    let interval = spec.interval_seconds.max(1);
    for t in 0..=spec.duration {
        for m in &fleet.members {
            m.world().t = t;
        }
        if t == 1 {
            for m in &fleet.members {
                let mut w = m.world();
                let mut new = w.set.clone();
                new["spec"]["template"] = template(&w.name(), "v2");
                w.write(new, "apply")?;
            }
        }
        for m in &fleet.members {
            m.world().tick(t);
        }
        if t % interval == 0 {
            let report = futures::executor::block_on(pass::run_pass_with(
                &fleet,
                &fleet,
                &opts,
                timestamp(t),
            ))
            .map_err(|e| format!("t={t}: pass failed: {e}"))?;
            for s in report.sets {
                if let Some(reason) = s.blocked_reason()
                    && matches!(
                        reason,
                        crate::model::reasons::Reason::GroupBusy
                            | crate::model::reasons::Reason::Throttled
                    )
                {
                    run.fleet_blocks
                        .push((t, s.name.clone(), s.outcome.to_string()));
                }
                if let crate::pass::Outcome::Stepped { from, to } = s.outcome {
                    run.steps.push((t, s.name.clone(), from, to));
                }
            }
        }
        let mut down = Vec::new();
        for (m, (name, done)) in fleet.members.iter().zip(run.completed.iter_mut()) {
            let w = m.world();
            if w.down(&[]).0 > 0 {
                down.push(name.clone());
            }
            if t > 1 && done.is_none() && w.rollout_complete() {
                *done = Some(t);
            }
        }
        run.down.push((t, down));
        if run.completed.iter().all(|(_, d)| d.is_some()) {
            break;
        }
    }
    Ok(run)
}
