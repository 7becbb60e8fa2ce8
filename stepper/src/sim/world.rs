//! The simulated world: what the API server stores for one StatefulSet, on a virtual clock.
//!
//! Time is whole virtual seconds `t` (an `i64`) since [`BASE_SECOND`]. The parts that act on the world
//! live beside it: [`super::apiserver`] (writes, admission, DELETE), [`super::objects`] (what a GET or
//! LIST returns), [`super::history`] (ControllerRevisions), [`super::controller`] (the StatefulSet
//! controller), [`super::kubelet`] (pod timing) and [`super::oracle`] (the harm oracle).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde_json::{Value, json};
use sts_safe_rollout_rules::decision::Row;

use super::apiserver::{admit, apply_defaults};
use super::application::Application;
use super::history::{Revision, template};
use super::kubelet::{SimPod, Timing};
use super::oracle::StepRecord;

/// Unix second of virtual time 0 (2026-01-01T00:00:00Z).
pub const BASE_SECOND: i64 = 1_767_225_600;

/// The wall-clock [`Timestamp`] of virtual second `t`.
pub fn timestamp(t: i64) -> Timestamp {
    Timestamp::from_second(BASE_SECOND + t).unwrap_or(Timestamp::UNIX_EPOCH)
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
    /// The slots the last step exposed when every one of them was already down (the stepper's
    /// "replaced while down" rule, `gates::replaced_while_down`); empty otherwise. Restarting one of
    /// them while another of them is down makes nothing worse: not a harmful restart.
    pub last_step_down: BTreeSet<u32>,
    /// Slots whose pod was evicted from an unreachable node, until the slot is Ready again (a fault).
    pub evicted: BTreeSet<u32>,
    /// Events published on the set: (second, reason, note).
    pub events: Vec<(i64, String, String)>,
    /// Ordinals whose slot has held a Ready pod (a slot counts as down only once it has been up).
    pub ever_ready: BTreeMap<u32, bool>,
    /// The application behind the pods, answering the approval handshake; `None`: none answers.
    pub application: Option<Application>,
    /// Pods a step exposed to replacement without their approval of the update revision, while denying
    /// it, or while holding the primary role (see `World::note_replacement`): (second, ordinal, why).
    pub unapproved_replacements: Vec<(i64, u32, String)>,
    /// The oracle's account of the questions asked of each pod and their answers.
    pub questions: super::questions::Questions,
    /// Every write of the stepper's API (a StatefulSet PATCH, a pod PATCH, a pod DELETE) the API
    /// server applied, in order: (second, `PATCH statefulsets demo/web [ops…]`): what `once` and
    /// `watch` must write alike.
    pub writes: Vec<(i64, String)>,
    rng: u64,
    next_uid: u64,
    next_pod_version: u64,
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
            last_step_down: BTreeSet::new(),
            evicted: BTreeSet::new(),
            events: Vec::new(),
            ever_ready: BTreeMap::new(),
            application: None,
            unapproved_replacements: Vec::new(),
            questions: Default::default(),
            writes: Vec::new(),
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
            next_uid: 0,
            next_pod_version: 0,
        };
        if policy {
            let row = admit(&mut set, None, prefix)?;
            world.admissions.push((0, "create".into(), row));
        }
        world.set = set;
        let rev = world.update_revision_for_template();
        world.set["status"] = json!({
            "observedGeneration": 1, "currentRevision": rev, "updateRevision": rev,
            "replicas": 0, "readyReplicas": 0, "availableReplicas": 0,
            "currentReplicas": 0, "updatedReplicas": 0,
        });
        for ordinal in 0..u32::try_from(shape.replicas).unwrap_or(0) {
            world.insert_settled_pod(ordinal, &rev);
            world.ever_ready.insert(ordinal, true);
        }
        world.sync();
        Ok(world)
    }

    /// Advances the clock to `t`: pods progress (Pending → Running → Ready, node failures, terminations
    /// completing), the application answers the stepper's requests on the pods
    /// ([`World::answer_requests`]), then the StatefulSet controller syncs once.
    pub fn tick(&mut self, t: i64) {
        self.t = t;
        self.refresh_pods();
        self.answer_requests();
        self.sync();
    }

    /// Pods at `self.t`: the kubelet's and the node lifecycle controller's part
    /// (`World::kubelet_refresh`), then what the harm oracle watches (`World::observe_slots`).
    pub fn refresh_pods(&mut self) {
        self.kubelet_refresh();
        self.observe_slots();
    }

    /// A new pod uid (`pod-uid-N`, new for each incarnation of an ordinal).
    pub(super) fn uid(&mut self) -> String {
        self.next_uid += 1;
        format!("pod-uid-{}", self.next_uid)
    }

    /// The next pod `metadata.resourceVersion` (a counter; clients only compare it for equality).
    pub(super) fn next_pod_version(&mut self) -> u64 {
        self.next_pod_version += 1;
        self.next_pod_version
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

    /// The ordinal of the pod named `name` (`<set>-<ordinal>`, Kubernetes `getParentNameAndOrdinal`),
    /// if it names a pod of this set.
    pub fn ordinal_of(&self, name: &str) -> Option<u32> {
        name.strip_prefix(&self.name())?
            .strip_prefix('-')?
            .parse()
            .ok()
    }
}
