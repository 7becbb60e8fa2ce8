//! The simulated world: one StatefulSet as the API server stores it, its pods, its ControllerRevisions,
//! a PodDisruptionBudget, and the StatefulSet controller that reconciles them on a virtual clock.
//!
//! Time is whole virtual seconds `t` (an `i64`) since [`BASE_SECOND`]. Each rule of the controller names
//! the upstream function it models (`pkg/controller/statefulset/stateful_set_control.go` and
//! `stateful_set_utils.go` of kubernetes/kubernetes); the code is written from their behaviour, not copied.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde_json::{Value, json};
use sts_safe_rollout::decision::{self, Row};
use sts_safe_rollout::statefulset as sts;

use crate::pods::REVISION_LABEL;

/// Unix second of virtual time 0 (2026-01-01T00:00:00Z).
pub const BASE_SECOND: i64 = 1_767_225_600;

/// The wall-clock [`Timestamp`] of virtual second `t`.
pub fn timestamp(t: i64) -> Timestamp {
    Timestamp::from_second(BASE_SECOND + t).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Seconds a pod stays bound to an unreachable node before it is evicted (Kubernetes
/// `DefaultTolerationSeconds`: `node.kubernetes.io/unreachable` tolerated for 300 s).
pub const EVICTION_SECONDS: i64 = 300;

/// How pods behave in time. All durations are virtual seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// From creation to phase `Running` (scheduling, image pull).
    pub pending_seconds: i64,
    /// From `Running` to condition `Ready` (readiness probe passing).
    pub ready_seconds: i64,
    /// From deletion to the pod being gone (graceful termination).
    pub terminate_seconds: i64,
    /// Extra start delay drawn uniformly from `0..=jitter_seconds` per pod, from the seed.
    pub jitter_seconds: i64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            pending_seconds: 2,
            ready_seconds: 5,
            terminate_seconds: 2,
            jitter_seconds: 0,
        }
    }
}

/// A pod of the simulated set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimPod {
    /// Ordinal (the `N` of `<set>-N`, Kubernetes `getOrdinal`).
    pub ordinal: u32,
    /// Unique id (new for each incarnation of an ordinal).
    pub uid: String,
    /// The ControllerRevision name it was created from (label `controller-revision-hash`, read back
    /// by Kubernetes `getPodRevision`).
    pub revision: String,
    /// Second it was created.
    pub created: i64,
    /// Second it reaches phase `Running`.
    pub running_at: i64,
    /// Second its readiness probe first passes; `None` for a bad revision (never Ready).
    pub ready_at: Option<i64>,
    /// Second it was deleted (it is terminating from then on).
    pub deleted_at: Option<i64>,
    /// `[from, until)`: its node is down (pod NotReady; a deletion cannot complete before `until`).
    pub node_down: Option<(i64, i64)>,
    /// Second the Ready condition last turned true, while it is true (`lastTransitionTime`).
    pub ready_since: Option<i64>,
}

impl SimPod {
    /// True while the pod's node is down at `t`.
    pub fn node_is_down(&self, t: i64) -> bool {
        self.node_down.is_some_and(|(a, b)| a <= t && t < b)
    }

    /// True once deleted (`metadata.deletionTimestamp` set; Kubernetes `isTerminating`).
    pub fn terminating(&self) -> bool {
        self.deleted_at.is_some()
    }

    /// Phase `Running` at `t` (else `Pending`).
    pub fn running(&self, t: i64) -> bool {
        t >= self.running_at
    }

    /// Condition Ready true at `t`: Running, probe passing, node up, not terminating.
    fn ready_now(&self, t: i64) -> bool {
        self.running(t)
            && self.ready_at.is_some_and(|r| t >= r)
            && !self.node_is_down(t)
            && !self.terminating()
    }

    /// Kubernetes `isRunningAndReady`: phase Running and condition Ready true.
    pub fn running_and_ready(&self) -> bool {
        self.ready_since.is_some()
    }

    /// Kubernetes `isRunningAndAvailable`: Running and Ready for at least `min_ready` seconds at `t`.
    pub fn available(&self, min_ready: i64, t: i64) -> bool {
        self.ready_since.is_some_and(|s| t - s >= min_ready)
    }

    /// Kubernetes `isUnavailable` (used by `updateStatefulSet`): terminating or not available.
    pub fn unavailable(&self, min_ready: i64, t: i64) -> bool {
        self.terminating() || !self.available(min_ready, t)
    }

    /// When a deletion completes: graceful termination, but never while the node is unreachable
    /// (the kubelet cannot confirm it; the pod stays `Terminating` until the node is back).
    fn gone_at(&self, terminate_seconds: i64) -> Option<i64> {
        let deleted = self.deleted_at?;
        let mut at = deleted + terminate_seconds;
        if let Some((from, until)) = self.node_down
            && from <= at
            && at < until
        {
            at = until;
        }
        Some(at)
    }
}

/// A ControllerRevision of the set: a snapshot of `spec.template`.
#[derive(Clone, Debug, PartialEq)]
pub struct Revision {
    /// `<set>-<hash>` (Kubernetes `ControllerRevisionName` over a hash of the revision data).
    pub name: String,
    /// `.revision`: bumped when an old revision becomes the update revision again (a rollback).
    pub number: i64,
    /// The pod template it holds.
    pub template: Value,
    /// A short letter for timelines (`A`, `B`, … in order of creation).
    pub letter: char,
}

/// A step that landed: a write lowering the partition that the policy let through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRecord {
    /// Virtual second of the write.
    pub t: i64,
    /// Partition before.
    pub from: i32,
    /// Partition after.
    pub to: i32,
    /// `spec.replicas` when it landed (a step goes to `max(0, min(from, replicas) − step)`).
    pub replicas: i32,
    /// Whether the controller had observed the stored generation when the step landed
    /// (`status.observedGeneration == metadata.generation`): false means two writes stepped on one
    /// observation.
    pub observed: bool,
    /// The first gate the simulation's own oracle saw failing at that moment, if any.
    pub failing_gate: Option<String>,
    /// Whether the application-unhealthy signal was raised at that moment.
    pub app_unhealthy: bool,
}

/// The simulated world.
#[derive(Clone, Debug)]
pub struct World {
    /// Virtual second now.
    pub t: i64,
    /// The StatefulSet as stored by the API server (raw JSON, `status` included).
    pub set: Value,
    /// Its pods by ordinal (terminating ones included until gone).
    pub pods: BTreeMap<u32, SimPod>,
    /// Its ControllerRevisions in creation order.
    pub revisions: Vec<Revision>,
    /// PDB `maxUnavailable` (pods); `None`: no PDB.
    pub pdb_max_unavailable: Option<i32>,
    /// Images whose pods never become Ready (a bad revision).
    pub bad_images: Vec<String>,
    /// The application-level health signal (for owner-condition / Prometheus gates): true = unhealthy.
    pub app_unhealthy: bool,
    /// Whether the admission policy runs on writes (false: `--native`).
    pub policy: bool,
    /// Annotation prefix of the policy.
    pub prefix: String,
    /// Pod timing.
    pub timing: Timing,
    /// Decision-table rows the policy applied, with the second and the request (`apply`, `patch`, …).
    pub admissions: Vec<(i64, String, Row)>,
    /// Steps that landed.
    pub steps: Vec<StepRecord>,
    /// Pod deletions by the controller's rolling update: (second, ordinal, pods down at that moment
    /// other than this one).
    pub restarts: Vec<(i64, u32, usize)>,
    /// Of [`World::restarts`], those that exposed a pod while another slot was already down when the
    /// decision that exposed it was taken (the last step for a guarded set, the deletion itself for a
    /// native one): (second, ordinal). The harm the stepper exists to prevent.
    pub harmful_restarts: Vec<(i64, u32)>,
    /// Second each down slot went down (see [`World::down_ordinals`]).
    pub down_since: BTreeMap<u32, i64>,
    /// Second of the last step that landed.
    pub last_step: Option<i64>,
    /// Slots whose pod was evicted from an unreachable node, until the slot is Ready again (a fault).
    pub evicted: std::collections::BTreeSet<u32>,
    /// Events published on the set: (second, reason, note).
    pub events: Vec<(i64, String, String)>,
    /// Ordinals whose slot has held a Ready pod (a slot counts as down only once it has been up).
    pub ever_ready: BTreeMap<u32, bool>,
    rng: u64,
    next_uid: u64,
}

/// Fowler–Noll–Vo 1a, 32 bit (the hash family `controller.ComputeHash`/`hashutil` use).
fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// `<set>-<hash>` like the controller's ControllerRevision names (`history.ControllerRevisionName` with
/// the hash encoded by `rand.SafeEncodeString`: decimal digits mapped onto a vowel-free alphabet).
pub fn revision_name(set_name: &str, template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let hash = fnv1a32(template.to_string().as_bytes()).to_string();
    let encoded: String = hash
        .bytes()
        .map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect();
    format!("{set_name}-{encoded}")
}

/// The pod template for `image` (labels `app=<set>`, one container `app`).
pub fn template(set_name: &str, image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": set_name}},
        "spec": {"containers": [{"name": "app", "image": format!("example.com/{set_name}:{image}")}]}
    })
}

/// The image tag of a template made by [`template`].
pub fn template_image(template: &Value) -> Option<&str> {
    template
        .pointer("/spec/containers/0/image")?
        .as_str()?
        .rsplit(':')
        .next()
}

/// API server defaulting (Kubernetes `SetDefaults_StatefulSet`): `updateStrategy.type` RollingUpdate
/// with `rollingUpdate.partition` 0 when absent. Runs on every request before admission and on read.
pub fn apply_defaults(set: &mut Value) {
    let Some(spec) = set.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let strategy = spec
        .entry("updateStrategy")
        .or_insert_with(|| json!({"type": "RollingUpdate"}));
    if strategy.get("type").is_none() {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy.get("type") == Some(&json!("RollingUpdate")) {
        if strategy.get("rollingUpdate").is_none_or(Value::is_null) {
            strategy["rollingUpdate"] = json!({});
        }
        if strategy["rollingUpdate"].get("partition").is_none() {
            strategy["rollingUpdate"]["partition"] = json!(0);
        }
    }
}

/// The shape of a new simulated StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetShape {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `spec.replicas`.
    pub replicas: i32,
    /// `spec.podManagementPolicy`: `OrderedReady` or `Parallel`.
    pub pod_management_policy: String,
    /// `spec.minReadySeconds`.
    pub min_ready_seconds: i32,
    /// The image tag of the initial template.
    pub image: String,
}

impl World {
    /// A world whose set was created (through the policy when `policy`) with `shape` and whose pods
    /// have all been Running and Ready for a long time at `t = 0`.
    ///
    /// # Errors
    /// The policy's rejection of the CREATE.
    pub fn new(
        shape: &SetShape,
        timing: Timing,
        policy: bool,
        prefix: &str,
        seed: u64,
    ) -> Result<World, String> {
        let mut set = json!({
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": shape.name,
                "namespace": shape.namespace,
                "uid": format!("uid-{}", shape.name),
                "generation": 1,
                "resourceVersion": "1",
                "labels": {"app": shape.name},
            },
            "spec": {
                "replicas": shape.replicas,
                "serviceName": shape.name,
                "selector": {"matchLabels": {"app": shape.name}},
                "podManagementPolicy": shape.pod_management_policy,
                "minReadySeconds": shape.min_ready_seconds,
                "template": template(&shape.name, &shape.image),
            },
        });
        apply_defaults(&mut set);
        let mut world = World {
            t: 0,
            set: Value::Null,
            pods: BTreeMap::new(),
            revisions: Vec::new(),
            pdb_max_unavailable: None,
            bad_images: Vec::new(),
            app_unhealthy: false,
            policy,
            prefix: prefix.to_string(),
            timing,
            admissions: Vec::new(),
            steps: Vec::new(),
            restarts: Vec::new(),
            harmful_restarts: Vec::new(),
            down_since: BTreeMap::new(),
            last_step: None,
            evicted: std::collections::BTreeSet::new(),
            events: Vec::new(),
            ever_ready: BTreeMap::new(),
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
            next_uid: 0,
        };
        if policy {
            let d = decision::decide(&set, None, prefix)?;
            decision::apply(&d.change, &mut set, prefix);
            world.admissions.push((0, "create".into(), d.row));
        }
        world.set = set;
        let rev = world.update_revision_for_template();
        world.set["status"] = json!({
            "observedGeneration": 1, "currentRevision": rev, "updateRevision": rev,
            "replicas": 0, "readyReplicas": 0, "availableReplicas": 0,
            "currentReplicas": 0, "updatedReplicas": 0,
        });
        let long_ago = -10_000;
        for ordinal in 0..u32::try_from(shape.replicas).unwrap_or(0) {
            let uid = world.uid();
            world.pods.insert(
                ordinal,
                SimPod {
                    ordinal,
                    uid,
                    revision: rev.clone(),
                    created: long_ago,
                    running_at: long_ago,
                    ready_at: Some(long_ago),
                    deleted_at: None,
                    node_down: None,
                    ready_since: Some(long_ago),
                },
            );
            world.ever_ready.insert(ordinal, true);
        }
        world.write_status();
        Ok(world)
    }

    fn uid(&mut self) -> String {
        self.next_uid += 1;
        format!("pod-uid-{}", self.next_uid)
    }

    /// A pseudo-random number (splitmix64) from the world's seed.
    pub fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `metadata.name`.
    pub fn name(&self) -> String {
        self.set["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// `metadata.namespace`.
    pub fn namespace(&self) -> String {
        self.set["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// `spec.replicas`.
    pub fn replicas(&self) -> i32 {
        self.set["spec"]["replicas"]
            .as_i64()
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(1)
    }

    /// `spec.updateStrategy.rollingUpdate.partition` (0 when absent, as the controller reads it).
    pub fn partition(&self) -> i32 {
        self.set
            .pointer("/spec/updateStrategy/rollingUpdate/partition")
            .and_then(Value::as_i64)
            .and_then(|p| i32::try_from(p).ok())
            .unwrap_or(0)
    }

    /// `spec.minReadySeconds`.
    pub fn min_ready(&self) -> i64 {
        self.set["spec"]["minReadySeconds"].as_i64().unwrap_or(0)
    }

    /// True for `podManagementPolicy: Parallel` (Kubernetes `allowsBurst`).
    pub fn allows_burst(&self) -> bool {
        self.set["spec"]["podManagementPolicy"].as_str() == Some("Parallel")
    }

    /// `status.<field>` as a string.
    pub fn status_str(&self, field: &str) -> String {
        self.set["status"][field].as_str().unwrap_or("").to_string()
    }

    /// `status.<field>` as a count.
    pub fn status_count(&self, field: &str) -> i64 {
        self.set["status"][field].as_i64().unwrap_or(0)
    }

    /// The timeline letter of revision `name` (`?` if unknown).
    pub fn letter(&self, name: &str) -> char {
        self.revisions
            .iter()
            .find(|r| r.name == name)
            .map_or('?', |r| r.letter)
    }

    /// The revision named `name`.
    pub fn revision(&self, name: &str) -> Option<&Revision> {
        self.revisions.iter().find(|r| r.name == name)
    }

    fn bump_resource_version(&mut self) {
        let rv = self.set["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        self.set["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
    }

    /// The update revision for the current template (Kubernetes `getStatefulSetRevisions`): the latest
    /// revision if equal; an older equal revision gets the next `.revision` number (a rollback reuses
    /// its name); else a new revision `<set>-<hash>`.
    fn update_revision_for_template(&mut self) -> String {
        let tpl = self.set["spec"]["template"].clone();
        let next = self.revisions.iter().map(|r| r.number).max().unwrap_or(0) + 1;
        let latest = self.revisions.iter().max_by_key(|r| r.number);
        if let Some(latest) = latest
            && latest.template == tpl
        {
            return latest.name.clone();
        }
        if let Some(old) = self.revisions.iter_mut().find(|r| r.template == tpl) {
            old.number = next;
            return old.name.clone();
        }
        let name = revision_name(&self.name(), &tpl);
        let letter = char::from(b'A' + u8::try_from(self.revisions.len() % 26).unwrap_or(0));
        self.revisions.push(Revision {
            name: name.clone(),
            number: next,
            template: tpl,
            letter,
        });
        name
    }

    /// The template of the revision before the latest (`kubectl rollout undo` with no `--to-revision`).
    pub fn previous_template(&self) -> Option<Value> {
        let mut revs: Vec<&Revision> = self.revisions.iter().collect();
        revs.sort_by_key(|r| r.number);
        revs.iter().rev().nth(1).map(|r| r.template.clone())
    }

    /// A write to the main resource (`kubectl apply`, `rollout undo`, a PATCH): defaulting, then the
    /// admission policy on (new, stored) when enabled, then storage. `status` cannot be changed this way
    /// (the main resource ignores it); `generation` is bumped when `.spec` changed; `resourceVersion`
    /// when anything changed. `source` names the request in [`World::admissions`].
    ///
    /// # Errors
    /// The policy's rejection (the object is not stored).
    pub fn write(&mut self, mut new: Value, source: &str) -> Result<(), String> {
        let old = self.set.clone();
        new["status"] = old["status"].clone();
        new["metadata"]["generation"] = old["metadata"]["generation"].clone();
        new["metadata"]["uid"] = old["metadata"]["uid"].clone();
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
        apply_defaults(&mut new);
        let mut row = None;
        if self.policy {
            let d = decision::decide(&new, Some(&old), &self.prefix)?;
            decision::apply(&d.change, &mut new, &self.prefix);
            apply_defaults(&mut new);
            self.admissions.push((self.t, source.to_string(), d.row));
            row = Some(d.row);
        }
        if new == old {
            return Ok(());
        }
        let old_partition = self.partition();
        if new["spec"] != old["spec"] {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(generation + 1);
        }
        let observed = self.status_count("observedGeneration")
            == old["metadata"]["generation"].as_i64().unwrap_or(0);
        let to = new["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0);
        let failing_gate = self.oracle_gate(to);
        self.set = new;
        self.bump_resource_version();
        let new_partition = self.partition();
        // A step: the policy's `Stepped` row (the partition lowered with a new step stamp).
        if new_partition < old_partition && row == Some(Row::Stepped) {
            self.last_step = Some(self.t);
            self.steps.push(StepRecord {
                t: self.t,
                from: old_partition,
                to: new_partition,
                replicas: self.replicas(),
                observed,
                failing_gate,
                app_unhealthy: self.app_unhealthy,
            });
        }
        Ok(())
    }

    /// A `kubectl scale` through the `scale` subresource: the policy never sees it (DESIGN.md).
    pub fn scale_subresource(&mut self, replicas: i32) {
        if self.replicas() == replicas {
            return;
        }
        self.set["spec"]["replicas"] = json!(replicas);
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        self.set["metadata"]["generation"] = json!(generation + 1);
        self.bump_resource_version();
    }

    /// The simulation's own gate oracle (independent of the stepper's code): the first failing
    /// condition among DESIGN.md's gates, or `None`. Used to count steps taken while a gate failed.
    pub fn oracle_gate(&self, to: u32) -> Option<String> {
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        if self.status_count("observedGeneration") < generation {
            return Some("NotObserved".into());
        }
        let min_ready = self.min_ready();
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let update = self.status_str("updateRevision");
        let partition = u32::try_from(self.partition()).unwrap_or(0);
        let up = |o: &u32| {
            self.pods
                .get(o)
                .is_some_and(|p| !p.unavailable(min_ready, self.t) && p.running(self.t))
        };
        // The pods the step replaces (index in [to, partition), not on updateRevision) do not count
        // when every one of them is already down: replacing them takes nothing more down
        // (`gates::replaced_while_down`).
        let replaced: Vec<u32> = (to.min(partition)..partition.min(replicas))
            .filter(|o| self.pods.get(o).is_none_or(|p| p.revision != update))
            .collect();
        let exempt = if replaced.iter().all(|o| !up(o)) {
            replaced
        } else {
            Vec::new()
        };
        for o in 0..replicas {
            if !exempt.contains(&o) && !up(&o) {
                return Some(format!("PodNotReady {o}"));
            }
        }
        for o in partition..replicas {
            if self.pods.get(&o).is_some_and(|p| p.revision != update) {
                return Some(format!("StepInProgress {o}"));
            }
        }
        if exempt.is_empty()
            && let Some(status) = self.pdb_status()
            && status.disruptions_allowed.unwrap_or(0) < 1
        {
            return Some("PdbBlocked".into());
        }
        None
    }

    /// Advances the clock to `t`: pods progress (Pending → Running → Ready, node failures, terminations
    /// completing), then the StatefulSet controller syncs once.
    pub fn tick(&mut self, t: i64) {
        self.t = t;
        self.refresh_pods();
        self.sync();
    }

    /// Pods at `self.t`: readiness transitions (`lastTransitionTime`) and deletions that completed.
    pub fn refresh_pods(&mut self) {
        let t = self.t;
        let terminate = self.timing.terminate_seconds;
        // Taint-based eviction: a pod tolerates `node.kubernetes.io/unreachable:NoExecute` for
        // `EVICTION_SECONDS` (the DefaultTolerationSeconds admission plugin's default), then the node
        // lifecycle controller deletes it; the deletion completes only once the node is back.
        for p in self.pods.values_mut() {
            if let Some((from, until)) = p.node_down
                && p.deleted_at.is_none()
                && until - from > EVICTION_SECONDS
                && t >= from + EVICTION_SECONDS
            {
                p.deleted_at = Some(from + EVICTION_SECONDS);
                self.evicted.insert(p.ordinal);
            }
        }
        self.pods
            .retain(|_, p| p.gone_at(terminate).is_none_or(|gone| t < gone));
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        for p in self.pods.values_mut() {
            let ready = p.ready_now(t);
            match (ready, p.ready_since) {
                (true, None) => p.ready_since = Some(t),
                (false, Some(_)) => p.ready_since = None,
                _ => {}
            }
            if ready && p.ordinal < replicas {
                self.ever_ready.insert(p.ordinal, true);
            }
            if ready {
                self.evicted.remove(&p.ordinal);
            }
        }
        // A slot scaled away starts afresh if it is scaled up again (a new pod is not a disruption).
        self.ever_ready.retain(|o, _| *o < replicas);
        let down = self.down_ordinals();
        self.down_since.retain(|o, _| down.contains(o));
        for o in down {
            self.down_since.entry(o).or_insert(t);
        }
    }

    /// Slots in `[0, replicas)` that have been up once and are down now (missing, terminating, or not
    /// Running and Ready), and how many of those are down because of a fault (node down, evicted from
    /// a node that was down, or a person's deletion recorded in `fault_deleted`).
    pub fn down(&self, fault_deleted: &[u32]) -> (usize, usize) {
        let down = self.down_ordinals();
        let by_fault = down
            .iter()
            .filter(|o| {
                fault_deleted.contains(o)
                    || self.evicted.contains(o)
                    || self.pods.get(o).is_some_and(|p| p.node_is_down(self.t))
            })
            .count();
        (down.len(), by_fault)
    }

    /// The ordinals of the slots in `[0, replicas)` that have been up once and are down now.
    pub fn down_ordinals(&self) -> Vec<u32> {
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        (0..replicas)
            .filter(|o| self.ever_ready.get(o).copied().unwrap_or(false))
            .filter(|o| !self.pods.get(o).is_some_and(SimPod::running_and_ready))
            .collect()
    }

    /// Creates the pod for `ordinal` (Kubernetes `newVersionedStatefulSetPod`): from the current
    /// revision when `ordinal < partition` (or, with no partition, `< currentReplicas`), else from the
    /// update revision.
    fn create_pod(&mut self, ordinal: u32, current: &str, update: &str) {
        let partition = u32::try_from(self.partition()).unwrap_or(0);
        let revision = if ordinal < partition { current } else { update };
        let bad = self
            .revision(revision)
            .and_then(|r| template_image(&r.template))
            .is_some_and(|img| self.bad_images.iter().any(|b| b == img));
        let jitter = if self.timing.jitter_seconds > 0 {
            i64::try_from(
                self.random() % u64::try_from(self.timing.jitter_seconds + 1).unwrap_or(1),
            )
            .unwrap_or(0)
        } else {
            0
        };
        let running_at = self.t + self.timing.pending_seconds + jitter;
        let uid = self.uid();
        self.pods.insert(
            ordinal,
            SimPod {
                ordinal,
                uid,
                revision: revision.to_string(),
                created: self.t,
                running_at,
                ready_at: (!bad).then_some(running_at + self.timing.ready_seconds),
                deleted_at: None,
                node_down: None,
                ready_since: None,
            },
        );
    }

    /// Deletes the pod at `ordinal` (it starts terminating). Returns true if a pod was deleted.
    pub fn delete_pod(&mut self, ordinal: u32) -> bool {
        let t = self.t;
        match self.pods.get_mut(&ordinal) {
            Some(p) if p.deleted_at.is_none() => {
                p.deleted_at = Some(t);
                p.ready_since = None;
                true
            }
            _ => false,
        }
    }

    /// One sync of the StatefulSet controller (Kubernetes `updateStatefulSet` as called from
    /// `performUpdate`, then `updateStatefulSetStatus`):
    ///
    /// 1. revisions (`getStatefulSetRevisions`): update = the template's revision, current =
    ///    `status.currentRevision` (or update when none);
    /// 2. replicas `[0, spec.replicas)` and condemned pods (higher ordinals), by numeric ordinal;
    /// 3. `processReplica` for each replica in ordinal order: create a missing pod
    ///    (`newVersionedStatefulSetPod`); with `OrderedReady` (monotonic) stop at the first pod just
    ///    created, terminating, not Running and Ready, or not available; with `Parallel` (burst) go on;
    /// 4. `processCondemned`: delete condemned pods, highest first; monotonic: one at a time, and only
    ///    when the others are healthy (or it is the first unhealthy one); burst: all at once;
    /// 5. the rolling update (`updateStatefulSet`'s last loop): from the highest ordinal down to the
    ///    partition, delete the first pod not on the update revision and not terminating, and stop;
    ///    stop as well at a pod that is unavailable (`isUnavailable`) — it waits only on pods it has
    ///    already passed, never on lower ordinals;
    /// 6. status (`computeReplicaStatus` over all pods, `completeRollingUpdate`, `observedGeneration`).
    pub fn sync(&mut self) {
        let t = self.t;
        let update = self.update_revision_for_template();
        let mut current = self.status_str("currentRevision");
        if self.revision(&current).is_none() {
            current = update.clone();
        }
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let min_ready = self.min_ready();
        let monotonic = !self.allows_burst();
        'work: {
            // 3. processReplica, in ordinal order.
            for o in 0..replicas {
                if !self.pods.contains_key(&o) {
                    self.create_pod(o, &current, &update);
                    if monotonic {
                        break 'work;
                    }
                }
                let Some(p) = self.pods.get(&o) else {
                    continue;
                };
                if monotonic && (p.terminating() || !p.available(min_ready, t)) {
                    break 'work;
                }
            }
            // 4. processCondemned.
            let condemned: Vec<u32> = self
                .pods
                .keys()
                .rev()
                .copied()
                .filter(|o| *o >= replicas)
                .collect();
            let first_unhealthy = (0..replicas)
                .chain(condemned.iter().rev().copied())
                .find(|o| self.pods.get(o).is_none_or(|p| p.unavailable(min_ready, t)));
            for o in condemned {
                let Some(p) = self.pods.get(&o) else {
                    continue;
                };
                if p.terminating() {
                    if monotonic {
                        break 'work;
                    }
                    continue;
                }
                if monotonic && !p.available(min_ready, t) && first_unhealthy != Some(o) {
                    break 'work;
                }
                self.delete_pod(o);
                if monotonic {
                    break 'work;
                }
            }
            // 5. The rolling update.
            if self
                .set
                .pointer("/spec/updateStrategy/type")
                .and_then(Value::as_str)
                == Some("OnDelete")
            {
                break 'work;
            }
            let partition = u32::try_from(self.partition()).unwrap_or(0);
            for o in (partition..replicas).rev() {
                let Some(p) = self.pods.get(&o) else {
                    break 'work;
                };
                if p.revision != update && !p.terminating() {
                    let others = self.down_ordinals().iter().filter(|d| **d != o).count();
                    self.delete_pod(o);
                    self.restarts.push((t, o, others));
                    let decided = if self.policy {
                        self.last_step.unwrap_or(t)
                    } else {
                        t
                    };
                    if self
                        .down_since
                        .iter()
                        .any(|(d, since)| *d != o && *since <= decided)
                    {
                        self.harmful_restarts.push((t, o));
                    }
                    break 'work;
                }
                if p.unavailable(min_ready, t) {
                    break 'work;
                }
            }
        }
        // 6. Status: updateStatus / computeReplicaStatus over every pod of the set (condemned
        // included): replicas = created, ready = isRunningAndReady, available = isRunningAndAvailable,
        // current/updated = not terminating and labelled with that revision.
        let generation = self.set["metadata"]["generation"].clone();
        let (mut n, mut ready, mut available, mut cur, mut upd) = (0, 0, 0, 0, 0);
        for p in self.pods.values() {
            n += 1;
            if p.running_and_ready() {
                ready += 1;
                if p.available(min_ready, t) {
                    available += 1;
                }
            }
            if !p.terminating() {
                if p.revision == current {
                    cur += 1;
                }
                if p.revision == update {
                    upd += 1;
                }
            }
        }
        // completeRollingUpdate: all updated and Ready → the update revision becomes current.
        if upd == n && ready == n {
            current = update.clone();
            cur = upd;
        }
        let status = json!({
            "observedGeneration": generation,
            "replicas": n, "readyReplicas": ready, "availableReplicas": available,
            "currentReplicas": cur, "updatedReplicas": upd,
            "currentRevision": current, "updateRevision": update,
            "collisionCount": 0,
        });
        // updateStatefulSetStatus / inconsistentStatus: the status is written (and resourceVersion
        // bumped) only when it differs from the stored one.
        if self.set["status"] != status {
            self.set["status"] = status;
            self.bump_resource_version();
        }
    }

    fn write_status(&mut self) {
        self.sync();
    }

    /// The PDB's status (Kubernetes disruption controller, `maxUnavailable`): expected = `spec.replicas`,
    /// desiredHealthy = expected − maxUnavailable, currentHealthy = pods Ready and not terminating,
    /// disruptionsAllowed = max(0, currentHealthy − desiredHealthy). `None` without a PDB.
    pub fn pdb_status(&self) -> Option<PodDisruptionBudgetStatus> {
        let max_unavailable = self.pdb_max_unavailable?;
        let expected = self.replicas();
        let desired = (expected - max_unavailable).max(0);
        let healthy = i32::try_from(
            self.pods
                .values()
                .filter(|p| p.running_and_ready() && !p.terminating())
                .count(),
        )
        .unwrap_or(i32::MAX);
        Some(PodDisruptionBudgetStatus {
            current_healthy: Some(healthy),
            desired_healthy: Some(desired),
            disruptions_allowed: Some((healthy - desired).max(0)),
            expected_pods: Some(expected),
            observed_generation: Some(1),
            ..PodDisruptionBudgetStatus::default()
        })
    }

    /// The stored StatefulSet, typed (what a GET or LIST returns).
    ///
    /// # Errors
    /// The stored object does not parse as a StatefulSet (a bug in the simulation).
    pub fn typed_set(&self) -> Result<StatefulSet, String> {
        serde_json::from_value(self.set.clone()).map_err(|e| format!("stored StatefulSet: {e}"))
    }

    /// The pods as the API server lists them.
    pub fn typed_pods(&self) -> Vec<Pod> {
        let name = self.name();
        let namespace = self.namespace();
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            name: name.clone(),
            uid: self.set["metadata"]["uid"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        self.pods
            .values()
            .map(|p| {
                let ready = p.running_and_ready();
                let reason = if ready {
                    None
                } else if p.node_is_down(self.t) {
                    Some("NodeNotReady".to_string())
                } else {
                    Some("ContainersNotReady".to_string())
                };
                let since = p.ready_since.unwrap_or(p.created);
                Pod {
                    metadata: ObjectMeta {
                        name: Some(format!("{name}-{}", p.ordinal)),
                        namespace: Some(namespace.clone()),
                        uid: Some(p.uid.clone()),
                        labels: Some(BTreeMap::from([
                            ("app".to_string(), name.clone()),
                            (REVISION_LABEL.to_string(), p.revision.clone()),
                        ])),
                        owner_references: Some(vec![owner.clone()]),
                        deletion_timestamp: p.deleted_at.map(|d| Time(timestamp(d))),
                        ..ObjectMeta::default()
                    },
                    spec: None,
                    status: Some(PodStatus {
                        phase: Some(
                            if p.running(self.t) {
                                "Running"
                            } else {
                                "Pending"
                            }
                            .into(),
                        ),
                        conditions: Some(vec![PodCondition {
                            type_: "Ready".into(),
                            status: if ready { "True" } else { "False" }.into(),
                            reason,
                            last_transition_time: Some(Time(timestamp(since))),
                            ..PodCondition::default()
                        }]),
                        ..PodStatus::default()
                    }),
                }
            })
            .collect()
    }

    /// The PDB as the API server lists it (`<set>-pdb`, selecting `app=<set>`), if any.
    pub fn typed_pdbs(&self) -> Vec<PodDisruptionBudget> {
        let Some(status) = self.pdb_status() else {
            return Vec::new();
        };
        let name = self.name();
        let pdb = json!({
            "metadata": {"name": format!("{name}-pdb"), "namespace": self.namespace()},
            "spec": {"maxUnavailable": self.pdb_max_unavailable, "selector": {"matchLabels": {"app": name}}},
        });
        match serde_json::from_value::<PodDisruptionBudget>(pdb) {
            Ok(mut pdb) => {
                pdb.status = Some(status);
                vec![pdb]
            }
            Err(_) => Vec::new(),
        }
    }

    /// True when the rollout is complete: the controller observed the spec, every pod in
    /// `[0, replicas)` runs the update revision and is available, no other pod exists, and the status
    /// reports `currentRevision == updateRevision`.
    pub fn rollout_complete(&self) -> bool {
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        let update = self.status_str("updateRevision");
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        self.status_count("observedGeneration") == generation
            && self.status_str("currentRevision") == update
            && self.pods.len() == usize::try_from(replicas).unwrap_or(0)
            && (0..replicas).all(|o| {
                self.pods.get(&o).is_some_and(|p| {
                    p.revision == update && !p.unavailable(self.min_ready(), self.t)
                })
            })
    }

    /// Whether `set` (typed) is fully Ready (shared predicate), for callers without the typed set.
    pub fn fully_ready(&self) -> bool {
        self.typed_set().is_ok_and(|s| sts::is_fully_ready(&s))
    }
}
