//! [`SimCluster`]: the stepper's [`Cluster`] interface over a simulated [`World`], with API faults.
//!
//! LISTs return the stored objects at the world's current virtual second; a PATCH applies the JSON
//! Patch to the stored object with `json_patch::patch` (a failed `test` op is HTTP 422, a
//! [`PatchOutcome::Conflict`]), then goes through [`World::write`]: defaulting and the real admission
//! policy on (new, stored), as the mutating webhook would, before it is stored.

use std::sync::{Arc, Mutex, MutexGuard};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde::Deserialize;

use super::world::World;
use crate::cluster::object::Object;
use crate::cluster::{Cluster, ClusterError, DeleteOutcome, PatchOutcome, PodPatched};
use crate::plan::events::EventNote;

/// `apiVersion` of the simulated controller owner (MOCO's MySQLCluster group/version).
pub const SIM_OWNER_API_VERSION: &str = "moco.cybozu.com/v1beta2";
/// `uid` of the simulated controller owner.
pub const SIM_OWNER_UID: &str = "00000000-0000-4000-8000-00000000a11c";

/// Which API call a fault hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Call {
    /// Every call.
    Any,
    /// LIST StatefulSets.
    ListStatefulsets,
    /// LIST Pods.
    ListPods,
    /// LIST PodDisruptionBudgets.
    ListPdbs,
    /// PATCH StatefulSet.
    Patch,
    /// POST Event.
    Event,
    /// DELETE Pod ([`SimCluster::delete_pod`]).
    DeletePod,
    /// PATCH Pod (the approval handshake's requests).
    PatchPod,
}

/// What a faulty call answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FaultKind {
    /// HTTP 409 Conflict (on a PATCH: [`PatchOutcome::Conflict`]; on other calls an error with code 409).
    Conflict,
    /// HTTP 500 Internal Server Error.
    Error,
}

/// An API fault active during `[from, until)` (virtual seconds) on `call`, hitting each matching call
/// with probability `probability` (drawn from the world's seed).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiFault {
    /// First second.
    pub from: i64,
    /// First second after.
    pub until: i64,
    /// The call it hits.
    pub call: Call,
    /// The answer.
    pub kind: FaultKind,
    /// Chance per call, 0.0–1.0.
    pub probability: f64,
}

/// Counters of what the API answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiCounters {
    /// Requests served (faulty or not).
    pub requests: u64,
    /// Answers 409/422 (injected, or a failed `test` op).
    pub conflicts: u64,
    /// Answers 500 (injected).
    pub errors: u64,
}

/// A simulated cluster: the world behind a lock, the API faults, and counters.
#[derive(Debug)]
pub struct SimCluster {
    world: Mutex<World>,
    faults: Mutex<Vec<ApiFault>>,
    pub(super) counters: Mutex<ApiCounters>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SimCluster {
    /// A cluster over `world` with no fault.
    pub fn new(world: World) -> Self {
        SimCluster {
            world: Mutex::new(world),
            faults: Mutex::new(Vec::new()),
            counters: Mutex::new(ApiCounters::default()),
        }
    }

    /// The world, locked (never hold it across a call to the [`Cluster`] methods).
    pub fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    /// Adds an API fault.
    pub fn add_fault(&self, fault: ApiFault) {
        lock(&self.faults).push(fault);
    }

    /// What the API answered so far.
    pub fn counters(&self) -> ApiCounters {
        lock(&self.counters).clone()
    }

    /// The injected fault for `call` now, if one fires.
    pub(super) fn fault(&self, call: Call) -> Option<FaultKind> {
        let mut world = self.world();
        let t = world.t;
        let faults = lock(&self.faults);
        let mut hit = None;
        for f in faults.iter() {
            if f.from <= t && t < f.until && (f.call == Call::Any || f.call == call) {
                let roll = world.random() % 1_000_000;
                if (roll as f64) < f.probability * 1_000_000.0 {
                    hit = Some(f.kind);
                    break;
                }
            }
        }
        let mut c = lock(&self.counters);
        c.requests += 1;
        match hit {
            Some(FaultKind::Conflict) => c.conflicts += 1,
            Some(FaultKind::Error) => c.errors += 1,
            None => {}
        }
        hit
    }

    pub(super) fn error(action: &str, kind: FaultKind) -> ClusterError {
        let (code, message) = match kind {
            FaultKind::Conflict => (
                409,
                "Operation cannot be fulfilled: the object has been modified (injected)",
            ),
            FaultKind::Error => (500, "Internal error (injected)"),
        };
        ClusterError::Api {
            action: action.to_string(),
            message: message.to_string(),
            code,
        }
    }

    pub(super) fn do_list_statefulsets(&self) -> Result<Vec<Arc<StatefulSet>>, ClusterError> {
        let action = "list statefulsets in all namespaces";
        if let Some(kind) = self.fault(Call::ListStatefulsets) {
            return Err(Self::error(action, kind));
        }
        let set = self
            .world()
            .typed_set()
            .map_err(|message| ClusterError::Api {
                action: action.into(),
                message,
                code: 500,
            })?;
        Ok(vec![Arc::new(set)])
    }

    pub(super) fn do_list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        if let Some(kind) = self.fault(Call::ListPods) {
            return Err(Self::error("list pods in all namespaces", kind));
        }
        Ok(self.world().typed_pods())
    }

    pub(super) fn do_list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        if let Some(kind) = self.fault(Call::ListPdbs) {
            return Err(Self::error(
                "list poddisruptionbudgets in all namespaces",
                kind,
            ));
        }
        Ok(self.world().typed_pdbs())
    }

    fn do_patch(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        let action = format!("patch statefulset {namespace}/{name}");
        match self.fault(Call::Patch) {
            Some(FaultKind::Conflict) => {
                return Ok(PatchOutcome::Conflict(
                    "Operation cannot be fulfilled: the object has been modified (injected 409)"
                        .into(),
                ));
            }
            Some(kind) => return Err(Self::error(&action, kind)),
            None => {}
        }
        if let Some(key) = twice_written(patch) {
            return Err(ClusterError::Api {
                action,
                message: format!(
                    "the patch writes annotation {key} twice: a write decides each key once"
                ),
                code: 400,
            });
        }
        let mut world = self.world();
        if world.name() != name || world.namespace() != namespace {
            return Ok(PatchOutcome::Conflict(format!(
                "statefulsets.apps \"{name}\" not found"
            )));
        }
        let mut object = world.set.clone();
        if let Err(e) = json_patch::patch(&mut object, patch) {
            lock(&self.counters).conflicts += 1;
            return Ok(PatchOutcome::Conflict(format!(
                "422 Unprocessable Entity: {e}"
            )));
        }
        world
            .write(object, "patch")
            .map_err(|message| ClusterError::Api {
                action: action.clone(),
                message,
                code: 400,
            })?;
        let line = format!("PATCH statefulsets {namespace}/{name} {}", json_text(patch));
        let t = world.t;
        world.writes.push((t, line));
        let stored = world.typed_set().map_err(|message| ClusterError::Api {
            action,
            message,
            code: 500,
        })?;
        Ok(PatchOutcome::Applied(Box::new(stored)))
    }

    /// The owner a GET returns ([`World::owner`]), or an injected fault.
    fn do_get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> Result<Option<serde_json::Value>, ClusterError> {
        if let Some(kind) = self.fault(Call::Any) {
            return Err(Self::error(
                &format!("get {} {namespace}/{}", owner.kind, owner.name),
                kind,
            ));
        }
        Ok(self.world().owner(namespace, owner))
    }

    fn do_publish(&self, event: &EventNote) -> Result<(), ClusterError> {
        if let Some(kind) = self.fault(Call::Event) {
            return Err(Self::error("create event", kind));
        }
        let mut world = self.world();
        let t = world.t;
        world
            .events
            .push((t, event.reason.clone(), event.note.clone()));
        Ok(())
    }
}

impl Cluster for SimCluster {
    fn list_statefulsets(
        &self,
    ) -> impl Future<Output = Result<Vec<Arc<StatefulSet>>, ClusterError>> + Send {
        let r = self.do_list_statefulsets();
        async move { r }
    }

    fn list_pods(&self) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        let r = self.do_list_pods();
        async move { r }
    }

    fn list_pdbs(
        &self,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        let r = self.do_list_pdbs();
        async move { r }
    }

    fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PatchOutcome, ClusterError>> + Send {
        let r = self.do_patch(namespace, name, patch);
        async move { r }
    }

    fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, ClusterError>> + Send {
        let r = self.do_get_owner(namespace, owner);
        async move { r }
    }

    fn get<K: Object>(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<K>, ClusterError>> + Send {
        std::future::ready(self.do_get(namespace, name))
    }

    fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> impl Future<Output = Result<Vec<K>, ClusterError>> + Send {
        std::future::ready(self.do_list(namespace, labels))
    }

    fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> impl Future<Output = Result<DeleteOutcome, ClusterError>> + Send {
        let r = match SimCluster::delete_pod(self, namespace, name, uid, resource_version) {
            Ok(()) => Ok(DeleteOutcome::Deleted),
            Err(e) if matches!(e.code(), Some(404 | 409)) => {
                Ok(DeleteOutcome::Conflict(e.to_string()))
            }
            Err(e) => Err(e),
        };
        async move { r }
    }

    fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PodPatched, ClusterError>> + Send {
        let r = self.do_patch_pod(namespace, name, patch);
        async move { r }
    }

    fn publish_event(
        &self,
        _object: &ObjectReference,
        event: &EventNote,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send {
        let r = self.do_publish(event);
        async move { r }
    }
}

/// A JSON Patch as one line of compact JSON (the write log, [`World::writes`]).
pub(super) fn json_text(patch: &json_patch::Patch) -> String {
    serde_json::to_string(patch).unwrap_or_default()
}

/// The first annotation `patch` adds, replaces or removes more than once (its `test` ops aside): a
/// stepper's write decides each key once, so the simulated API server refuses such a patch, of a set or
/// of a pod, and every test of the simulation fails on it.
pub(super) fn twice_written(patch: &json_patch::Patch) -> Option<String> {
    use json_patch::PatchOperation::{Add, Remove, Replace};
    let mut seen = std::collections::BTreeSet::new();
    patch.0.iter().find_map(|op| {
        let path = match op {
            Add(o) => &o.path,
            Replace(o) => &o.path,
            Remove(o) => &o.path,
            _ => return None,
        };
        let key = path.as_str().strip_prefix("/metadata/annotations/")?;
        (!seen.insert(key.to_string())).then(|| key.replace("~1", "/"))
    })
}
