//! The scenario file format (YAML under `scenarios/`).
//!
//! The StatefulSet, pod timing, the stepper, and the events played at virtual seconds.

use std::collections::BTreeMap;

use serde::Deserialize;

use sts_safe_rollout_rules::annotations;

use crate::sim::application::Protocol;
use crate::sim::cluster::{Call, FaultKind};
use crate::sim::webhook::WebhookFailure;

/// A scenario file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Short name.
    pub name: String,
    /// What it shows, one paragraph.
    #[serde(default)]
    pub description: String,
    /// The StatefulSet.
    pub set: SetSpec,
    /// Pod timing.
    #[serde(default)]
    pub timing: TimingSpec,
    /// The stepper.
    #[serde(default)]
    pub stepper: StepperSpec,
    /// Virtual seconds to run (the run also stops early once everything is quiet and complete).
    pub duration: i64,
    /// Events in time order.
    #[serde(default)]
    pub events: Vec<Event>,
}

/// The StatefulSet of a scenario.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetSpec {
    /// `metadata.name` (default `web`).
    #[serde(default = "default_name")]
    pub name: String,
    /// `metadata.namespace` (default `demo`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// `spec.replicas`.
    pub replicas: i32,
    /// `OrderedReady` (default) or `Parallel`.
    #[serde(default = "default_policy")]
    pub pod_management_policy: String,
    /// `spec.minReadySeconds` (default 0).
    #[serde(default)]
    pub min_ready_seconds: i32,
    /// Image tag of the initial template (default `v1`).
    #[serde(default = "default_image")]
    pub image: String,
    /// A PodDisruptionBudget with this `maxUnavailable` (default 1); `null`: none.
    #[serde(default = "default_pdb")]
    pub pdb_max_unavailable: Option<i32>,
    /// Image tags whose pods never become Ready (bad revisions).
    #[serde(default)]
    pub bad_images: Vec<String>,
    /// Stepper annotations set on the set at creation, by short name (`step`, `initial-delay-seconds`,
    /// `prometheus-query`, `owner-condition`, …).
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// The kind of a controller owner to give the set (e.g. `MySQLCluster`, API version
    /// `moco.cybozu.com/v1beta2`), whose conditions `Healthy` and `Ready` follow the scenario's
    /// application-health signal (`appUnhealthy`). Default: none.
    #[serde(default)]
    pub owner: Option<String>,
    /// The application behind the pods, answering the approval handshake or its approval webhook
    /// ([`crate::sim::application`], [`crate::sim::webhook`]); default: none (no request is ever
    /// answered).
    #[serde(default)]
    pub application: Option<ApplicationSpec>,
}

/// The application of a scenario's set: its primary and its answerer, on the pods or through its
/// webhook.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationSpec {
    /// The ordinal holding the primary role at the start (label `role=primary`; the others
    /// `role=replica`); default: no roles.
    #[serde(default)]
    pub primary: Option<u32>,
    /// Seconds from a request to its answer (default 5).
    #[serde(default = "five")]
    pub answer_seconds: i64,
    /// Seconds a switchover takes (default 10).
    #[serde(default = "ten")]
    pub switchover_seconds: i64,
    /// How it answers: `handshake` (default; on the pods, for a set with `pre-update-approval: "true"`)
    /// or `webhook` (through its approval webhook, for a set with `pre-update-webhook:
    /// <webhookName>`; the simulated stepper is configured with `--webhook <webhookName>=…`).
    #[serde(default)]
    pub protocol: Protocol,
    /// The webhook's name on the stepper (`--webhook NAME=URL`), with `protocol: webhook` (default
    /// `app`).
    #[serde(default = "default_webhook_name")]
    pub webhook_name: String,
}

fn default_webhook_name() -> String {
    "app".into()
}

fn ten() -> i64 {
    10
}

fn default_name() -> String {
    "web".into()
}
fn default_namespace() -> String {
    "demo".into()
}
fn default_policy() -> String {
    "OrderedReady".into()
}
fn default_image() -> String {
    "v1".into()
}
#[allow(clippy::unnecessary_wraps)] // serde default for an Option field
fn default_pdb() -> Option<i32> {
    Some(1)
}

/// Pod timing in a scenario (virtual seconds); see [`crate::sim::kubelet::Timing`].
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimingSpec {
    /// Creation → Running (default 2).
    #[serde(default = "two")]
    pub pending_seconds: i64,
    /// Running → Ready (default 5).
    #[serde(default = "five")]
    pub ready_seconds: i64,
    /// Deletion → gone (default 2).
    #[serde(default = "two")]
    pub terminate_seconds: i64,
    /// Random extra start delay per pod, 0..=N (default 0), from `--seed`.
    #[serde(default)]
    pub jitter_seconds: i64,
}

fn two() -> i64 {
    2
}
fn five() -> i64 {
    5
}

impl Default for TimingSpec {
    fn default() -> Self {
        TimingSpec {
            pending_seconds: 2,
            ready_seconds: 5,
            terminate_seconds: 2,
            jitter_seconds: 0,
        }
    }
}

/// The stepper in a scenario.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepperSpec {
    /// Seconds between passes (default 5; a `watch` stepper passes soon after every change).
    #[serde(default = "five")]
    pub interval_seconds: i64,
    /// Whether the `PdbBlocked` gate runs (default true).
    #[serde(default = "yes")]
    pub pdb_gate: bool,
    /// `--recover-stuck-pods` (default false).
    #[serde(default)]
    pub recover_stuck_pods: bool,
    /// How the stepper reads the cluster (default `once`).
    #[serde(default)]
    pub mode: StepperMode,
    /// With `mode: watch`: seconds a change takes to reach the caches (default 0).
    #[serde(default)]
    pub watch_lag_seconds: i64,
}

/// How the simulated stepper reads the cluster: as `sts-stepper once` (the CronJob) or as
/// `sts-stepper watch` (the Deployment).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum StepperMode {
    /// One LIST of each kind per pass.
    #[default]
    Once,
    /// From `watch`'s reflector caches, fed by the world's changes ([`crate::sim::watched`]).
    Watch,
}

fn yes() -> bool {
    true
}

impl Default for StepperSpec {
    fn default() -> Self {
        StepperSpec {
            interval_seconds: 5,
            pdb_gate: true,
            recover_stuck_pods: false,
            mode: StepperMode::Once,
            watch_lag_seconds: 0,
        }
    }
}

/// One scheduled event.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Event {
    /// Virtual second.
    pub at: i64,
    /// What happens.
    #[serde(flatten)]
    pub action: Action,
}

/// What can happen at a virtual second.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// `kubectl apply` of the manifest with these changes (through the admission policy).
    Apply(ApplySpec),
    /// `kubectl rollout undo`: the template goes back to the previous revision (through the policy).
    Undo {},
    /// `kubectl scale --replicas N` (the `scale` subresource: the policy does not see it).
    Scale(i32),
    /// A node failure: the pod at this ordinal is NotReady for `seconds`, then back.
    NodeFailure {
        /// Ordinal.
        pod: u32,
        /// How long.
        seconds: i64,
    },
    /// Pods of this image tag never become Ready from now on.
    BadImage(String),
    /// The application-level health signal (for owner-condition / Prometheus gates).
    AppUnhealthy(bool),
    /// API faults for `seconds` on `call`.
    ApiFault {
        /// Which call.
        call: Call,
        /// 409 or 500.
        kind: FaultKind,
        /// How long.
        seconds: i64,
        /// Chance per call (default 1).
        #[serde(default = "one")]
        probability: f64,
    },
    /// The next stepper pass is killed between its read and its write.
    KillStepper {},
    /// Another stepper replica takes over (a leader-elected `watch` replica killed or frozen, another
    /// winning the Lease): in `watch`, its caches are its own, filled by a fresh LIST; a `once` pass
    /// keeps nothing from one pass to the next anyway.
    Takeover {},
    /// For `seconds`, every pass is two steppers racing: both read, then both write.
    ConcurrentSteppers {
        /// How long.
        seconds: i64,
    },
    /// A person deletes the pod at this ordinal (`kubectl delete pod`).
    DeletePod(u32),
    /// A person runs `kubectl safe-rollout resume` (the stepper's `resume` patch, written as a person's
    /// command: not subject to the scenario's API faults).
    Resume {},
    /// A person runs `kubectl safe-rollout pause --reason TEXT`.
    Pause(String),
    /// The application denies the update of the pod at this ordinal for `seconds` (`update-denied`).
    DenyUpdate {
        /// Ordinal.
        pod: u32,
        /// The denial's reason.
        reason: String,
        /// How long.
        seconds: i64,
    },
    /// The application's answerer stops (`true`) or resumes (`false`) answering (its webhook: every
    /// call times out).
    SilentApplication(bool),
    /// The application's webhook gives no decision for `seconds`: every call fails with `kind`
    /// (`timeout`, `refused`, `serverError`: HTTP 500, `noDecision`: HTTP 200 without a decision), or
    /// with each kind in turn when it is absent.
    WebhookErrors {
        /// How long (virtual seconds).
        seconds: i64,
        /// The failure (default: each in turn).
        #[serde(default)]
        kind: Option<WebhookFailure>,
    },
    /// A person deletes every pod running a bad image (the Kubernetes docs' remedy after reverting a
    /// bad template: "Forced rollback").
    DeleteBadPods {},
}

fn one() -> f64 {
    1.0
}

/// `apply` changes: the manifest as re-applied (fields left out keep their values).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplySpec {
    /// New image tag (a template change).
    #[serde(default)]
    pub image: Option<String>,
    /// New `spec.replicas`.
    #[serde(default)]
    pub replicas: Option<i32>,
    /// The manifest carries this partition (a GitOps re-apply of `partition: 0`).
    #[serde(default)]
    pub partition: Option<i32>,
    /// Set or change stepper annotations (short names) on the set.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

impl Scenario {
    /// Parses a scenario from YAML.
    ///
    /// # Errors
    /// The YAML error, with its location.
    pub fn from_yaml(text: &str) -> Result<Scenario, String> {
        serde_saphyr::from_str(text).map_err(|e| e.to_string())
    }
}

/// The full annotation key of a stepper annotation's short name (`step` → `safe-rollout.dev/step`).
pub(super) fn key(short: &str) -> String {
    annotations::key(annotations::DEFAULT_PREFIX, short)
}
