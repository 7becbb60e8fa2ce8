//! The gates: pure checks over one StatefulSet, its pods and the PodDisruptionBudgets of its namespace.
//!
//! Each gate either passes or yields a [`Blocked`]: a stable [`Reason`] (also the `reason` label of the
//! `sts_safe_rollout_blocked` metric and the start of the `Blocked` Event) and a human detail naming the
//! pod, annotation or PDB at fault. [`decide`] runs them in DESIGN.md's order ("The stepper: one pass")
//! and returns the [`Decision`] for the next step. Nothing here reads a clock or talks to the API
//! server: time comes in as `now`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::{Selector, SelectorExt};
use sts_safe_rollout::annotations;
use sts_safe_rollout::statefulset as sts;

use crate::prometheus;

/// The pod label the StatefulSet controller sets to the revision a pod was created from
/// (Kubernetes `apps/v1` `ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// Why the next step is not taken. The names are stable: they are metric label values, Event reasons'
/// details and what people grep for in logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Annotation `<prefix>/paused: "true"`: a person or a canary hold stopped the rollout.
    Paused,
    /// A stepper annotation (`step`, `initial-delay-seconds`, `last-partition-update`) has a value the
    /// stepper cannot read; the detail names it and the expected form.
    InvalidAnnotation,
    /// The StatefulSet controller has not observed the current spec yet
    /// (`status.observedGeneration < metadata.generation`, or no `status.updateRevision`).
    NotObserved,
    /// A pod with ordinal in `[0, spec.replicas)` is missing, terminating, not Running, not Ready, or
    /// Ready for less than `spec.minReadySeconds`.
    PodNotReady,
    /// A pod with ordinal ≥ partition does not run `status.updateRevision` yet: the last step is still
    /// being carried out by the StatefulSet controller.
    StepInProgress,
    /// Fewer than `<prefix>/initial-delay-seconds` seconds have passed since `<prefix>/last-partition-update`.
    Settling,
    /// A PodDisruptionBudget selecting the set's pods has `status.disruptionsAllowed < 1`.
    PdbBlocked,
    /// Another StatefulSet of the same `<prefix>/rollout-group` in the namespace rolls out first (one
    /// set of a group at a time, in name order; a started rollout finishes first).
    GroupBusy,
    /// `<prefix>/owner-condition` names a condition of the set's controller owner (e.g. `Healthy` of a
    /// MOCO MySQLCluster) that is not `True` for the owner's current generation, or the owner cannot
    /// be read.
    OwnerNotHealthy,
    /// The Prometheus check (`<prefix>/prometheus-query*`) has not passed `success-threshold` times in a
    /// row yet, a query returned an empty result, or Prometheus gave no answer.
    PrometheusCheck,
    /// The fleet's step budget is spent: `--max-steps-per-pass` steps in this pass, or
    /// `--max-steps-per-minute` steps (by `<prefix>/last-partition-update`) in the last 60 seconds.
    Throttled,
    /// The API server refused or failed a request for this StatefulSet (fail closed).
    ApiError,
}

impl Reason {
    /// Every reason, in gate order (the order [`decide`] checks them), `ApiError` last.
    pub const ALL: [Reason; 12] = [
        Reason::Paused,
        Reason::InvalidAnnotation,
        Reason::NotObserved,
        Reason::PodNotReady,
        Reason::StepInProgress,
        Reason::Settling,
        Reason::PdbBlocked,
        Reason::GroupBusy,
        Reason::OwnerNotHealthy,
        Reason::PrometheusCheck,
        Reason::Throttled,
        Reason::ApiError,
    ];

    /// The PascalCase name, e.g. `"PodNotReady"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Paused => "Paused",
            Reason::InvalidAnnotation => "InvalidAnnotation",
            Reason::NotObserved => "NotObserved",
            Reason::PodNotReady => "PodNotReady",
            Reason::StepInProgress => "StepInProgress",
            Reason::Settling => "Settling",
            Reason::PdbBlocked => "PdbBlocked",
            Reason::GroupBusy => "GroupBusy",
            Reason::OwnerNotHealthy => "OwnerNotHealthy",
            Reason::PrometheusCheck => "PrometheusCheck",
            Reason::Throttled => "Throttled",
            Reason::ApiError => "ApiError",
        }
    }

    /// Parses a name produced by [`Reason::as_str`] (used to read back `<prefix>/blocked-reason`).
    pub fn parse(name: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// True for reasons that are part of a healthy rollout's rhythm (a person's hold, the controller
    /// catching up, the settle delay, the group's or the fleet's turn): their Events are `Normal`; the
    /// others are `Warning`.
    pub fn is_expected_wait(self) -> bool {
        matches!(
            self,
            Reason::Paused
                | Reason::NotObserved
                | Reason::StepInProgress
                | Reason::Settling
                | Reason::GroupBusy
                | Reason::Throttled
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failing gate: its reason and a one-line human detail (`web-1: ContainersNotReady`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The stable reason name.
    pub reason: Reason,
    /// What exactly failed, naming the pod, annotation or PDB.
    pub detail: String,
}

impl Blocked {
    /// A failing gate with `reason` and `detail`.
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Blocked {
            reason,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.reason, self.detail)
    }
}

/// Why a guarded StatefulSet needs no step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// No staged update: `status.updateRevision == status.currentRevision` and every replica updated.
    UpToDate,
    /// An update is staged but the partition is already 0 (or absent): the StatefulSet controller rolls
    /// the remaining pods by itself; nothing is left for the stepper.
    PartitionZero,
}

/// What the stepper should do with one StatefulSet in this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not guarded (`updateStrategy.type: OnDelete`, or `<prefix>/force-rolling-update: "true"`): the
    /// stepper leaves it alone. The string says which.
    Unguarded(&'static str),
    /// Guarded, nothing to step.
    Idle(Idle),
    /// A gate failed; the partition stays.
    Blocked(Blocked),
    /// Lower the partition from `from` (the value observed, pinned by the patch's `test` op) to `to`.
    Step {
        /// The partition the decision saw (`spec.updateStrategy.rollingUpdate.partition`).
        from: i32,
        /// The new partition: `max(0, min(from, spec.replicas) − step)`.
        to: i32,
        /// `status.updateRevision` the decision saw (pinned by the patch's `test` op).
        update_revision: String,
    },
}

/// Stepper settings that change what the gates do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateOptions {
    /// Annotation prefix (default `safe-rollout.dev`), already validated.
    pub prefix: String,
    /// Whether the `PdbBlocked` gate runs (default true; `--no-pdb-gate` turns it off).
    pub pdb_gate: bool,
    /// `--max-steps-per-pass`: steps one pass takes over all sets in scope (`None`: unlimited).
    pub max_steps_per_pass: Option<u32>,
    /// `--max-steps-per-minute`: steps over all sets in scope in any 60 seconds, counted from their
    /// `<prefix>/last-partition-update` stamps (`None`: unlimited).
    pub max_steps_per_minute: Option<u32>,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            prefix: annotations::DEFAULT_PREFIX.to_string(),
            pdb_gate: true,
            max_steps_per_pass: None,
            max_steps_per_minute: None,
        }
    }
}

/// A PodDisruptionBudget with its label selector parsed once per pass.
#[derive(Clone, Debug)]
pub struct PdbView<'a> {
    /// The PDB as listed.
    pub pdb: &'a PodDisruptionBudget,
    /// Its selector; `None` when `spec.selector` is absent (policy/v1: a null selector selects no pod)
    /// or cannot be parsed. An empty selector (`{}`) selects every pod of the namespace (policy/v1).
    pub selector: Option<Selector>,
}

impl<'a> PdbView<'a> {
    /// Parses the PDB's selector.
    pub fn new(pdb: &'a PodDisruptionBudget) -> Self {
        let selector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .and_then(|s| Selector::try_from(s).ok());
        PdbView { pdb, selector }
    }

    fn selects(&self, pod: &Pod) -> bool {
        let Some(selector) = &self.selector else {
            return false;
        };
        match &pod.metadata.labels {
            Some(labels) => selector.matches(labels),
            None => selector.selects_all(),
        }
    }
}

/// The pod ordinal encoded in its name `<set-name>-<ordinal>` (Kubernetes StatefulSet controller,
/// `getOrdinal`), as a number so `web-10` sorts after `web-9`. `None` for any other name: `web-x-1`,
/// `web-01` (never produced by the controller), `web-`.
pub fn ordinal(set_name: &str, pod_name: &str) -> Option<u32> {
    let digits = pod_name.strip_prefix(set_name)?.strip_prefix('-')?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

/// True when the pod's controller ownerReference is the StatefulSet with this `uid`.
pub fn owned_by(pod: &Pod, uid: &str) -> bool {
    pod.metadata.owner_references.as_ref().is_some_and(|refs| {
        refs.iter()
            .any(|r| r.controller == Some(true) && r.kind == "StatefulSet" && r.uid == uid)
    })
}

/// The uid of the StatefulSet controlling this pod, if any (the key pods are grouped by).
pub fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true) && r.kind == "StatefulSet")
        .map(|r| r.uid.as_str())
}

/// The set's pods by ordinal: pods owned by the set's uid whose name is `<set-name>-<ordinal>`.
/// Pods of another StatefulSet with a similar name (`web-x-1`, or `web-1` of another `web`) never count.
pub fn pods_by_ordinal<'a>(
    set: &StatefulSet,
    pods: impl IntoIterator<Item = &'a Pod>,
) -> BTreeMap<u32, &'a Pod> {
    let (Some(name), Some(uid)) = (set.metadata.name.as_deref(), set.metadata.uid.as_deref())
    else {
        return BTreeMap::new();
    };
    pods.into_iter()
        .filter(|p| p.metadata.namespace == set.metadata.namespace && owned_by(p, uid))
        .filter_map(|p| Some((ordinal(name, p.metadata.name.as_deref()?)?, p)))
        .collect()
}

/// Why one pod is not ready-and-available at `now`, or `None` when it is: Running, condition `Ready`
/// `True`, no `deletionTimestamp`, and Ready since at least `min_ready_seconds` (Kubernetes
/// `podutil.IsPodAvailable`: Ready `lastTransitionTime + minReadySeconds <= now`).
pub fn pod_unready_cause(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> Option<String> {
    if pod.metadata.deletion_timestamp.is_some() {
        return Some("terminating".into());
    }
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown");
    if phase != "Running" {
        return Some(format!("phase {phase}"));
    }
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    let Some(ready) = ready else {
        return Some("no Ready condition".into());
    };
    if ready.status != "True" {
        return Some(ready.reason.clone().unwrap_or_else(|| "NotReady".into()));
    }
    if min_ready_seconds > 0 {
        let Some(since) = ready.last_transition_time.as_ref() else {
            return Some("Ready without lastTransitionTime, cannot judge minReadySeconds".into());
        };
        let ready_for = now.duration_since(since.0);
        if ready_for < SignedDuration::from_secs(i64::from(min_ready_seconds)) {
            return Some(format!(
                "not available yet: Ready for {}s of minReadySeconds {min_ready_seconds}",
                ready_for.as_secs().max(0)
            ));
        }
    }
    None
}

/// `spec.ordinals.start`, 0 when absent (Kubernetes StatefulSetStartOrdinal, GA in 1.31): the set's
/// pods are `<name>-<start>` … `<name>-<start + replicas − 1>`, and the partition counts from `start`
/// (the controller compares it with the pod's index `ordinal − start`).
pub fn start_ordinal(set: &StatefulSet) -> u32 {
    set.spec
        .as_ref()
        .and_then(|s| s.ordinals.as_ref())
        .and_then(|o| o.start)
        .and_then(|s| u32::try_from(s).ok())
        .unwrap_or(0)
}

fn pod_revision(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels
        .as_ref()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}

fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or("<unnamed>")
}

/// Step size from `<prefix>/step`: absent → 1; `"N"` → N (N ≥ 1); `"P%"` (1 ≤ P ≤ 100) → ⌈P × replicas
/// / 100⌉, at least 1. A count of pods.
///
/// # Errors
/// A detail naming the annotation, its value and the expected form (reason `InvalidAnnotation`).
pub fn step_size(value: Option<&str>, replicas: i32, prefix: &str) -> Result<i32, String> {
    let Some(value) = value else {
        return Ok(1);
    };
    let bad = || {
        format!(
            "{}: {value:?} is not a step size; expected a positive integer count of pods (\"2\") \
             or a percentage of spec.replicas from 1% to 100% (\"25%\")",
            annotations::key(prefix, annotations::STEP)
        )
    };
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(percent) = value.strip_suffix('%') {
        if !digits_only(percent) {
            return Err(bad());
        }
        let p: i64 = percent.parse().map_err(|_| bad())?;
        if !(1..=100).contains(&p) {
            return Err(bad());
        }
        let replicas = i64::from(replicas.max(0));
        let n = (p * replicas + 99) / 100;
        Ok(i32::try_from(n.max(1)).unwrap_or(i32::MAX))
    } else {
        if !digits_only(value) {
            return Err(bad());
        }
        match value.parse::<i32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(bad()),
        }
    }
}

/// Seconds from `<prefix>/initial-delay-seconds`: absent → 0.
///
/// # Errors
/// A detail naming the annotation and the expected form (reason `InvalidAnnotation`).
pub fn initial_delay_seconds(value: Option<&str>, prefix: &str) -> Result<i64, String> {
    let Some(value) = value else {
        return Ok(0);
    };
    match value.parse::<u32>() {
        Ok(n) if value.bytes().all(|b| b.is_ascii_digit()) => Ok(i64::from(n)),
        _ => Err(format!(
            "{}: {value:?} is not a delay; expected a whole number of seconds (\"60\")",
            annotations::key(prefix, annotations::INITIAL_DELAY_SECONDS)
        )),
    }
}

/// Gate `Paused`: annotation `<prefix>/paused: "true"`; the detail carries `<prefix>/paused-reason`
/// when set (the stepper sets it when a Prometheus check reaches its `failure-limit`).
pub fn gate_paused(set: &StatefulSet, prefix: &str) -> Result<(), Blocked> {
    if sts::is_annotation_true(set, prefix, annotations::PAUSED) {
        let why = sts::annotation(set, prefix, prometheus::PAUSED_REASON)
            .map_or(String::new(), |r| format!(": {r}"));
        return Err(Blocked::new(
            Reason::Paused,
            format!(
                "{}: {} is \"true\"{why}",
                set_name(set),
                annotations::key(prefix, annotations::PAUSED)
            ),
        ));
    }
    Ok(())
}

/// Gate `InvalidAnnotation`: `<prefix>/step`, `<prefix>/initial-delay-seconds` and, when a delay is set,
/// `<prefix>/last-partition-update` (RFC 3339) must parse. Returns the step size (pods) on success.
pub fn gate_annotations(set: &StatefulSet, prefix: &str) -> Result<i32, Blocked> {
    let invalid = |d: String| Blocked::new(Reason::InvalidAnnotation, d);
    let step = step_size(
        sts::annotation(set, prefix, annotations::STEP),
        sts::replicas(set),
        prefix,
    )
    .map_err(invalid)?;
    let delay = initial_delay_seconds(
        sts::annotation(set, prefix, annotations::INITIAL_DELAY_SECONDS),
        prefix,
    )
    .map_err(invalid)?;
    if delay > 0 {
        last_partition_update(set, prefix).map_err(invalid)?;
    }
    Ok(step)
}

/// `<prefix>/last-partition-update` as a timestamp; `Ok(None)` when absent.
///
/// # Errors
/// A detail naming the annotation when the value is not RFC 3339.
pub fn last_partition_update(set: &StatefulSet, prefix: &str) -> Result<Option<Timestamp>, String> {
    let Some(value) = sts::annotation(set, prefix, annotations::LAST_PARTITION_UPDATE) else {
        return Ok(None);
    };
    value.parse::<Timestamp>().map(Some).map_err(|_| {
        format!(
            "{}: {value:?} is not a time; expected RFC 3339 UTC (\"2026-11-23T01:10:42Z\")",
            annotations::key(prefix, annotations::LAST_PARTITION_UPDATE)
        )
    })
}

/// Gate `NotObserved`: the StatefulSet controller has seen this generation
/// (`status.observedGeneration >= metadata.generation`) and reported `status.updateRevision`.
pub fn gate_observed(set: &StatefulSet) -> Result<(), Blocked> {
    let status = set.status.as_ref();
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    let generation = set.metadata.generation.unwrap_or(0);
    if status.is_none() || observed < generation {
        return Err(Blocked::new(
            Reason::NotObserved,
            format!(
                "{}: observedGeneration {observed} < generation {generation}",
                set_name(set)
            ),
        ));
    }
    if status.and_then(|s| s.update_revision.as_deref()).is_none() {
        return Err(Blocked::new(
            Reason::NotObserved,
            format!("{}: no status.updateRevision reported yet", set_name(set)),
        ));
    }
    Ok(())
}

/// Gate `PodNotReady`: every ordinal in `[start, start + spec.replicas)` ([`start_ordinal`]) has a pod (matched by owner uid and name)
/// that is ready and available at `now` (see [`pod_unready_cause`]). The detail names the lowest failing
/// ordinal (`web-1: ContainersNotReady`) and how many others fail.
pub fn gate_pods_ready(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
) -> Result<(), Blocked> {
    gate_pods_ready_except(set, pods, now, &BTreeSet::new())
}

/// [`gate_pods_ready`], not counting the ordinals in `exempt` (see [`replaced_while_down`]).
pub fn gate_pods_ready_except(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
    exempt: &BTreeSet<u32>,
) -> Result<(), Blocked> {
    let name = set_name(set);
    let min_ready = sts::min_ready_seconds(set);
    let start = start_ordinal(set);
    let end = start.saturating_add(u32::try_from(sts::replicas(set)).unwrap_or(0));
    let mut failures = (start..end)
        .filter(|o| !exempt.contains(o))
        .filter_map(|ordinal| {
            let cause = match pods.get(&ordinal) {
                None => Some("missing".to_string()),
                Some(pod) => pod_unready_cause(pod, min_ready, now),
            };
            cause.map(|c| format!("{name}-{ordinal}: {c}"))
        });
    let Some(first) = failures.next() else {
        return Ok(());
    };
    let more = failures.count();
    let detail = if more == 0 {
        first
    } else {
        format!("{first} (and {more} more)")
    };
    Err(Blocked::new(Reason::PodNotReady, detail))
}

/// True when every pod with index below the partition (`[start, start + min(partition, replicas))`,
/// the pods no step has touched yet) exists and is ready and available at `now`: a `PodNotReady` then
/// concerns only pods the last step is replacing, which is the normal course of a step (its Event is
/// `Normal`, not `Warning`).
pub fn pods_below_partition_ready(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    now: Timestamp,
) -> bool {
    let replicas = u32::try_from(sts::replicas(set)).unwrap_or(0);
    let partition = u32::try_from(sts::partition(set).unwrap_or(0)).unwrap_or(0);
    let start = start_ordinal(set);
    let min_ready = sts::min_ready_seconds(set);
    (start..start.saturating_add(partition.min(replicas))).all(|o| {
        pods.get(&o)
            .is_some_and(|p| pod_unready_cause(p, min_ready, now).is_none())
    })
}

/// Gate `StepInProgress`: every pod with index (`ordinal − start`) in `[min(partition, replicas),
/// replicas)` carries label
/// `controller-revision-hash == status.updateRevision` (Kubernetes StatefulSet controller: pods with
/// ordinal ≥ partition get `updateRevision`). Missing pods are left to `PodNotReady`.
pub fn gate_step_done(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    partition: i32,
) -> Result<(), Blocked> {
    let name = set_name(set);
    let replicas = u32::try_from(sts::replicas(set)).unwrap_or(0);
    let start = start_ordinal(set);
    let from = start.saturating_add(u32::try_from(partition).unwrap_or(0).min(replicas));
    let end = start.saturating_add(replicas);
    let update_revision = set
        .status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref())
        .unwrap_or("");
    // Highest ordinal first: the controller replaces pods from the top down.
    for ordinal in (from..end).rev() {
        let Some(pod) = pods.get(&ordinal) else {
            continue;
        };
        let revision = pod_revision(pod);
        if revision != Some(update_revision) {
            return Err(Blocked::new(
                Reason::StepInProgress,
                format!(
                    "{name}-{ordinal}: on revision {}, want updateRevision {update_revision}",
                    revision.unwrap_or("<none>")
                ),
            ));
        }
    }
    Ok(())
}

/// Gate `Settling`: `now ≥ <prefix>/last-partition-update + <prefix>/initial-delay-seconds`. No delay, or
/// no previous step: passes.
pub fn gate_settled(set: &StatefulSet, prefix: &str, now: Timestamp) -> Result<(), Blocked> {
    let delay = initial_delay_seconds(
        sts::annotation(set, prefix, annotations::INITIAL_DELAY_SECONDS),
        prefix,
    )
    .map_err(|d| Blocked::new(Reason::InvalidAnnotation, d))?;
    if delay == 0 {
        return Ok(());
    }
    let Some(last) = last_partition_update(set, prefix)
        .map_err(|d| Blocked::new(Reason::InvalidAnnotation, d))?
    else {
        return Ok(());
    };
    let waited = now.duration_since(last);
    let delay = SignedDuration::from_secs(delay);
    if waited < delay {
        let left = (delay - waited).as_secs();
        return Err(Blocked::new(
            Reason::Settling,
            format!(
                "{}: {left}s of initial-delay-seconds {} left since the last step at {last}",
                set_name(set),
                delay.as_secs()
            ),
        ));
    }
    Ok(())
}

/// Gate `PdbBlocked`: no PodDisruptionBudget of the set's namespace that selects one of its pods has
/// `status.disruptionsAllowed < 1` (a missing status counts as 0: fail closed).
pub fn gate_pdbs(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
) -> Result<(), Blocked> {
    for view in pdbs {
        if view.pdb.metadata.namespace != set.metadata.namespace {
            continue;
        }
        if !pods.values().any(|p| view.selects(p)) {
            continue;
        }
        let status = view.pdb.status.as_ref();
        let allowed = status.and_then(|s| s.disruptions_allowed).unwrap_or(0);
        if allowed < 1 {
            return Err(Blocked::new(
                Reason::PdbBlocked,
                format!(
                    "PodDisruptionBudget {}: disruptionsAllowed {allowed} (currentHealthy {}, desiredHealthy {})",
                    view.pdb.metadata.name.as_deref().unwrap_or("<unnamed>"),
                    status.and_then(|s| s.current_healthy).unwrap_or(0),
                    status.and_then(|s| s.desired_healthy).unwrap_or(0),
                ),
            ));
        }
    }
    Ok(())
}

/// Annotation `<prefix>/owner-condition`: a condition type (e.g. `Healthy`) of the set's controller
/// owner that must be `True` before each step (gate `OwnerNotHealthy`).
pub const OWNER_CONDITION: &str = "owner-condition";
/// Annotation `<prefix>/rollout-group`: StatefulSets of one namespace with the same value roll out one
/// at a time (gate `GroupBusy`).
pub const ROLLOUT_GROUP: &str = "rollout-group";

/// What the pass read for the `OwnerNotHealthy` gate.
#[derive(Clone, Debug, PartialEq)]
pub enum OwnerProbe {
    /// The owner object as the API server returned it (any group/version/kind, as JSON).
    Found(serde_json::Value),
    /// No object of that kind and name (HTTP 404).
    NotFound,
    /// The owner could not be read: the cause in one line (RBAC, an unknown kind, a 5xx).
    Failed(String),
}

/// Results of a set's I/O gates, gathered by the pass ([`Need`]) before the final decision.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probes {
    /// The owner, when read (`None`: not read in this pass).
    pub owner: Option<OwnerProbe>,
    /// The outcomes of the Prometheus queries run in this pass, in the check's query order (`None`:
    /// not run).
    pub prometheus: Option<Vec<prometheus::QueryOutcome>>,
}

/// A read the pass must do before the set's decision is final (the I/O gates run only for sets that
/// pass every gate before them).
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// GET the controller owner (for `OwnerNotHealthy`).
    Owner(OwnerReference),
    /// Run these queries (for `PrometheusCheck`).
    Queries(Vec<prometheus::Query>),
}

/// What the rest of the fleet means for one set: the StatefulSet that holds its rollout group
/// ([`group_holder`]), `None` when the set has no group or nothing in the group is staged.
#[derive(Clone, Copy, Debug, Default)]
pub struct FleetView<'a> {
    /// The group's holder.
    pub group_holder: Option<&'a StatefulSet>,
}

/// The full result of the gates for one set.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The decision (with `need` set, a `Blocked` saying what is not read yet).
    pub decision: Decision,
    /// A read that would let the decision go further.
    pub need: Option<Need>,
    /// Annotation changes the gates ask for (`Some` sets, `None` removes): the Prometheus check's
    /// state, or the pause after `failure-limit` failures.
    pub changes: Vec<(String, Option<String>)>,
    /// The block is part of the rollout's normal rhythm even though its reason may not be
    /// ([`Reason::is_expected_wait`]): a Prometheus check counting up its successes.
    pub expected_wait: bool,
}

impl Evaluation {
    fn of(decision: Decision) -> Self {
        Evaluation {
            decision,
            need: None,
            changes: Vec::new(),
            expected_wait: false,
        }
    }
}

/// The set's controller ownerReference (`controller: true`), if any.
pub fn controller_owner(set: &StatefulSet) -> Option<&OwnerReference> {
    set.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// `<prefix>/rollout-group`, `None` when absent.
///
/// # Errors
/// An empty value (reason `InvalidAnnotation`).
pub fn rollout_group<'a>(set: &'a StatefulSet, prefix: &str) -> Result<Option<&'a str>, String> {
    match sts::annotation(set, prefix, ROLLOUT_GROUP) {
        Some(g) if g.trim().is_empty() => Err(format!(
            "{}: empty; expected a group name (\"kafka\")",
            annotations::key(prefix, ROLLOUT_GROUP)
        )),
        other => Ok(other),
    }
}

/// `<prefix>/owner-condition`, `None` when absent.
///
/// # Errors
/// A value that is not a condition type (empty, or with whitespace or `/`).
pub fn owner_condition<'a>(set: &'a StatefulSet, prefix: &str) -> Result<Option<&'a str>, String> {
    match sts::annotation(set, prefix, OWNER_CONDITION) {
        Some(c) if c.is_empty() || c.contains(char::is_whitespace) || c.contains('/') => {
            Err(format!(
                "{}: {c:?} is not a condition type; expected a name such as \"Healthy\" or \"Ready\"",
                annotations::key(prefix, OWNER_CONDITION)
            ))
        }
        other => Ok(other),
    }
}

/// True when the set's staged rollout has started: the partition (absent = 0) is below
/// `spec.replicas`, so some pod is already meant to run `updateRevision`.
pub fn rollout_started(set: &StatefulSet) -> bool {
    sts::partition(set).unwrap_or(0) < sts::replicas(set)
}

/// The holder of a rollout group: among `members` (the guarded StatefulSets of one namespace with
/// one `<prefix>/rollout-group` value) those with a staged update, the first by (started rollout
/// first, then name). Grafana rollout-operator's pattern: one set of a group at a time, a started one
/// is finished before the next starts, the rest go in name order. `None` when no member is staged.
pub fn group_holder<'a>(
    members: impl IntoIterator<Item = &'a StatefulSet>,
) -> Option<&'a StatefulSet> {
    members
        .into_iter()
        .filter(|s| sts::has_staged_update(s))
        .min_by(|a, b| {
            (!rollout_started(a), a.metadata.name.as_deref())
                .cmp(&(!rollout_started(b), b.metadata.name.as_deref()))
        })
}

/// Gate `GroupBusy`: passes when the set has no group, nothing holds it, or the set is the holder.
pub fn gate_group(
    set: &StatefulSet,
    group: &str,
    holder: Option<&StatefulSet>,
) -> Result<(), Blocked> {
    let Some(holder) = holder else {
        return Ok(());
    };
    if holder.metadata.uid == set.metadata.uid && holder.metadata.name == set.metadata.name {
        return Ok(());
    }
    let status = holder.status.as_ref();
    Err(Blocked::new(
        Reason::GroupBusy,
        format!(
            "rollout-group {group}: {} rolls out first (updated {}/{}, partition {})",
            set_name(holder),
            status.and_then(|s| s.updated_replicas).unwrap_or(0),
            sts::replicas(holder),
            sts::partition(holder).unwrap_or(0)
        ),
    ))
}

/// Gate `OwnerNotHealthy`: the controller owner `owner` read by the pass has condition `condition`
/// with `status: "True"`, for its current generation: the condition's `observedGeneration`, else
/// `status.observedGeneration`, else MOCO's `status.reconcileInfo.generation`, when present, equals
/// `metadata.generation` (a condition about an older spec says nothing). The object read must be the
/// one referenced (same uid, when the object reports one).
pub fn gate_owner(
    set: &StatefulSet,
    condition: &str,
    owner_ref: &OwnerReference,
    owner: &OwnerProbe,
) -> Result<(), Blocked> {
    let who = format!("{} {}", owner_ref.kind, owner_ref.name);
    let blocked = |detail: String| Err(Blocked::new(Reason::OwnerNotHealthy, detail));
    let object = match owner {
        OwnerProbe::Found(o) => o,
        OwnerProbe::NotFound => return blocked(format!("{who}: not found")),
        OwnerProbe::Failed(cause) => return blocked(format!("{who}: cannot read: {cause}")),
    };
    let uid = object.pointer("/metadata/uid").and_then(|v| v.as_str());
    if uid.is_some_and(|u| u != owner_ref.uid) {
        return blocked(format!(
            "{who}: uid {} is not the owner {} that {} references (replaced?)",
            uid.unwrap_or(""),
            owner_ref.uid,
            set_name(set)
        ));
    }
    let generation = object
        .pointer("/metadata/generation")
        .and_then(|v| v.as_i64());
    let found = object
        .pointer("/status/conditions")
        .and_then(|v| v.as_array())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(|t| t.as_str()) == Some(condition))
        });
    let Some(c) = found else {
        return blocked(format!(
            "{who}: no condition {condition} in status.conditions"
        ));
    };
    let status = c
        .get("status")
        .and_then(|v| v.as_str())
        .unwrap_or("Unknown");
    if status != "True" {
        let why = [c.get("reason"), c.get("message")]
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .filter(|v| !v.is_empty())
            .collect::<Vec<_>>()
            .join(": ");
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        };
        return blocked(format!("{who}: condition {condition} is {status}{why}"));
    }
    // The condition's own `observedGeneration` (metav1.Condition), else the status' (the common
    // convention), else MOCO's `status.reconcileInfo.generation` (the generation MOCO last reconciled).
    let observed = c
        .get("observedGeneration")
        .or_else(|| object.pointer("/status/observedGeneration"))
        .or_else(|| object.pointer("/status/reconcileInfo/generation"))
        .and_then(|v| v.as_i64());
    if let (Some(observed), Some(generation)) = (observed, generation)
        && observed != generation
    {
        return blocked(format!(
            "{who}: condition {condition} is True for generation {observed}, but the owner is at generation {generation}"
        ));
    }
    Ok(())
}

/// The decision for one StatefulSet with no fleet context and no I/O results: [`evaluate`] with an
/// empty [`FleetView`] and empty [`Probes`] (a set with an owner condition or a due Prometheus check
/// is then `Blocked`, saying what was not read).
pub fn decide(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> Decision {
    evaluate_alone(set, pods, pdbs, opts, now).decision
}

/// [`evaluate`] with an empty [`FleetView`] and empty [`Probes`]: the set judged on its own.
pub fn evaluate_alone(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> Evaluation {
    evaluate(
        set,
        pods,
        pdbs,
        FleetView::default(),
        &Probes::default(),
        opts,
        now,
    )
}

/// The gates for one StatefulSet, in DESIGN.md's order: skip unless guarded; idle unless an update is
/// staged and partition > 0; then `Paused`, `InvalidAnnotation`, `NotObserved`, `PodNotReady`,
/// `StepInProgress`, `Settling`, `PdbBlocked` (when `opts.pdb_gate`), `GroupBusy`, `OwnerNotHealthy`,
/// `PrometheusCheck`; else a step to `max(0, min(partition, replicas) − step)`. (`Throttled` is the
/// fleet's: [`crate::plan::plan`] applies it over all sets.)
///
/// `pods` are the set's pods by ordinal ([`pods_by_ordinal`]); `pdbs` the PDBs of its namespace (others
/// are ignored); `fleet` the holder of its rollout group; `probes` what the pass read for the I/O
/// gates so far; `now` the time the snapshot was taken. When an I/O gate lacks its read, the
/// evaluation is `Blocked` with [`Evaluation::need`] saying what to read.
pub fn evaluate(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    fleet: FleetView<'_>,
    probes: &Probes,
    opts: &GateOptions,
    now: Timestamp,
) -> Evaluation {
    let prefix = opts.prefix.as_str();
    if sts::is_on_delete(set) {
        return Evaluation::of(Decision::Unguarded("updateStrategy OnDelete"));
    }
    if !sts::is_rolling_update(set) {
        return Evaluation::of(Decision::Unguarded("unknown updateStrategy type"));
    }
    if sts::is_forced(set, prefix) {
        return Evaluation::of(Decision::Unguarded("force-rolling-update"));
    }
    if !sts::has_staged_update(set) {
        return Evaluation::of(Decision::Idle(Idle::UpToDate));
    }
    let partition = sts::partition(set).unwrap_or(0);
    if partition <= 0 {
        return Evaluation::of(Decision::Idle(Idle::PartitionZero));
    }
    let mut ev = Evaluation::of(Decision::Idle(Idle::UpToDate));
    ev.decision = match run_gates(
        set, pods, pdbs, fleet, probes, opts, now, partition, &mut ev,
    ) {
        Err(blocked) => Decision::Blocked(blocked),
        Ok(step) => Decision::Step {
            from: partition,
            to: step_target(set, partition, step),
            update_revision: update_revision(set).to_string(),
        },
    };
    ev
}

fn update_revision(set: &StatefulSet) -> &str {
    set.status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref())
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)] // the gates' inputs, each one plain data
fn run_gates(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    fleet: FleetView<'_>,
    probes: &Probes,
    opts: &GateOptions,
    now: Timestamp,
    partition: i32,
    ev: &mut Evaluation,
) -> Result<i32, Blocked> {
    let prefix = opts.prefix.as_str();
    gate_paused(set, prefix)?;
    let invalid = |d: String| Blocked::new(Reason::InvalidAnnotation, d);
    let step = gate_annotations(set, prefix)?;
    let group = rollout_group(set, prefix).map_err(invalid)?;
    let condition = owner_condition(set, prefix).map_err(invalid)?;
    let check = prometheus::check_config(set, prefix).map_err(invalid)?;
    gate_observed(set)?;
    let down = replaced_while_down(set, pods, partition, step_target(set, partition, step), now);
    gate_pods_ready_except(set, pods, now, &down)?;
    gate_step_done(set, pods, partition)?;
    gate_settled(set, prefix, now)?;
    // The budget of a PDB is spent by the very pods the step replaces: replacing a pod that is already
    // down disrupts no healthy one (the eviction API's `unhealthyPodEvictionPolicy: AlwaysAllow`).
    if opts.pdb_gate && down.is_empty() {
        gate_pdbs(set, pods, pdbs)?;
    }
    if let Some(group) = group {
        gate_group(set, group, fleet.group_holder)?;
    }
    if let Some(condition) = condition {
        let Some(owner_ref) = controller_owner(set) else {
            return Err(Blocked::new(
                Reason::OwnerNotHealthy,
                format!(
                    "{}: no controller ownerReference to read condition {condition} from",
                    set_name(set)
                ),
            ));
        };
        let Some(owner) = &probes.owner else {
            ev.need = Some(Need::Owner(owner_ref.clone()));
            return Err(Blocked::new(
                Reason::OwnerNotHealthy,
                format!("{} {}: not read yet", owner_ref.kind, owner_ref.name),
            ));
        };
        gate_owner(set, condition, owner_ref, owner)?;
    }
    if let Some(check) = check {
        gate_prometheus(set, prefix, &check, probes, partition, now, ev)?;
    }
    Ok(step)
}

/// Gate `PrometheusCheck` (see [`crate::prometheus::verdict`]); records in `ev` the query need, the
/// state to write, or the pause.
fn gate_prometheus(
    set: &StatefulSet,
    prefix: &str,
    check: &prometheus::CheckConfig,
    probes: &Probes,
    partition: i32,
    now: Timestamp,
    ev: &mut Evaluation,
) -> Result<(), Blocked> {
    let revision = update_revision(set);
    let state = prometheus::current_state(set, prefix, partition, revision);
    let state_key = annotations::key(prefix, prometheus::PROMETHEUS_CHECK);
    let blocked =
        |d: String| Blocked::new(Reason::PrometheusCheck, format!("{}: {d}", set_name(set)));
    match prometheus::verdict(
        check,
        state.as_ref(),
        probes.prometheus.as_deref(),
        partition,
        revision,
        now,
    ) {
        prometheus::Verdict::Pass { state: recorded } => {
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
            Ok(())
        }
        prometheus::Verdict::Due => {
            ev.need = Some(Need::Queries(check.queries.clone()));
            let n = check.queries.len();
            let noun = if n == 1 { "query" } else { "queries" };
            Err(blocked(format!("check due ({n} {noun}), not run yet")))
        }
        prometheus::Verdict::Wait {
            detail,
            state: recorded,
        } => {
            // The state this pass recorded, else the stored one the verdict waited on.
            let failing = recorded
                .as_ref()
                .or(state.as_ref())
                .is_some_and(|s| s.last_failure.is_some());
            ev.expected_wait = !failing;
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
            Err(blocked(detail))
        }
        prometheus::Verdict::Pause { reason } => {
            ev.changes.push((state_key, None));
            ev.changes.push((
                annotations::key(prefix, annotations::PAUSED),
                Some(annotations::TRUE.into()),
            ));
            ev.changes.push((
                annotations::key(prefix, prometheus::PAUSED_REASON),
                Some(format!("{reason} (at {now})")),
            ));
            Err(blocked(format!("{reason}: rollout paused")))
        }
    }
}

/// The partition a step of `step` pods lowers `partition` to: `max(0, min(partition, replicas) − step)`.
pub fn step_target(set: &StatefulSet, partition: i32, step: i32) -> i32 {
    (partition.min(sts::replicas(set).max(0)) - step).max(0)
}

/// The ordinals a step from `partition` to `to` makes the controller replace — index (`ordinal − start`)
/// in `[to, min(partition, replicas))` and not on `status.updateRevision` (Kubernetes StatefulSet
/// controller: pods ≥ partition get updateRevision) — when **every one of them is already missing or not
/// ready** at `now`; empty otherwise.
///
/// Those pods do not block the step (`PodNotReady`, `PdbBlocked`): replacing a pod that is down takes
/// nothing more down, and it is the only way forward when a pod stuck on a bad revision sits below a
/// partition restaged by a fixing re-apply or a rollback (the controller never replaces a pod below the
/// partition by itself). A Ready pod among them keeps the gates as they are: stepping would take it down
/// while another is down, which is MOCO's incident.
pub fn replaced_while_down(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    partition: i32,
    to: i32,
    now: Timestamp,
) -> BTreeSet<u32> {
    let replicas = u32::try_from(sts::replicas(set)).unwrap_or(0);
    let start = start_ordinal(set);
    let from = u32::try_from(partition).unwrap_or(0).min(replicas);
    let to = u32::try_from(to).unwrap_or(0).min(from);
    let update_revision = set
        .status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref());
    let min_ready = sts::min_ready_seconds(set);
    let replaced: BTreeSet<u32> = (start.saturating_add(to)..start.saturating_add(from))
        .filter(|o| {
            pods.get(o)
                .is_none_or(|p| pod_revision(p) != update_revision)
        })
        .collect();
    let all_down = replaced.iter().all(|o| {
        pods.get(o)
            .is_none_or(|p| pod_unready_cause(p, min_ready, now).is_some())
    });
    if all_down { replaced } else { BTreeSet::new() }
}

/// Whether the rollout is really complete — what `sts-stepper wait` waits for: the controller observed
/// the spec, no update is staged (by the status counters, and the partition is 0 when one was), and
/// every pod in `[0, replicas)` runs `status.updateRevision` and is ready and available at `now`.
///
/// # Errors
/// The first condition that does not hold, as a [`Blocked`]: the gate blocking the next step while the
/// partition is above 0; else `PodNotReady` / `StepInProgress` for the pods; else `StepInProgress`
/// naming the partition or the status counters.
pub fn rollout_complete(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> Result<(), Blocked> {
    gate_observed(set)?;
    let partition = sts::partition(set).unwrap_or(0);
    let staged = sts::has_staged_update(set);
    if staged && partition > 0 {
        if let Decision::Blocked(b) = decide(set, pods, pdbs, opts, now) {
            return Err(b);
        }
        return Err(Blocked::new(
            Reason::StepInProgress,
            format!(
                "{}: partition {partition} > 0, next step due",
                set_name(set)
            ),
        ));
    }
    gate_pods_ready(set, pods, now)?;
    gate_step_done(set, pods, 0)?;
    if staged {
        let s = set.status.as_ref();
        return Err(Blocked::new(
            Reason::StepInProgress,
            format!(
                "{}: status reports updatedReplicas {} of {}, currentRevision {}",
                set_name(set),
                s.and_then(|s| s.updated_replicas).unwrap_or(0),
                sts::replicas(set),
                s.and_then(|s| s.current_revision.as_deref())
                    .unwrap_or("<none>")
            ),
        ));
    }
    Ok(())
}
