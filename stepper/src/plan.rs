//! The plan: from one snapshot of the cluster to the writes and Events of one pass, as plain data.
//!
//! [`plan`] is pure: it takes the snapshot (LIST StatefulSets, LIST Pods, LIST PDBs) and `now`, runs
//! [`crate::gates::decide`] for every StatefulSet, and returns per set the figures to report, the
//! decision, and the JSON Patches to send. All rollout state is read from annotations on the
//! StatefulSet and written back there, so a pass in a CronJob and a pass in `watch` plan the same.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};
use json_patch::jsonptr::PointerBuf;
use json_patch::{
    AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use sts_safe_rollout::annotations;
use sts_safe_rollout::statefulset as sts;

use crate::gates::{
    self, Blocked, Decision, FleetView, GateOptions, Idle, Need, PdbView, Probes, Reason,
};

/// Annotation (stepper only) `<prefix>/blocked-reason`: the [`Reason`] last announced in a `Blocked`
/// Event, so the Event is sent when the reason changes and not once per pass. Removed by a step and when
/// the set is idle.
pub const BLOCKED_REASON: &str = "blocked-reason";
/// Annotation (stepper only) `<prefix>/completed-revision`: the `updateRevision` whose completion was
/// announced in a `RolloutComplete` Event (sent once per revision).
pub const COMPLETED_REVISION: &str = "completed-revision";

/// Everything one pass reads: the result of one LIST of each kind (no per-pod or per-set GET).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// StatefulSets in scope (`--namespace`, `--selector`).
    pub statefulsets: Vec<StatefulSet>,
    /// Pods of the same namespaces; empty when no StatefulSet needs its pods judged.
    pub pods: Vec<Pod>,
    /// PodDisruptionBudgets of the same namespaces; empty when no StatefulSet needs them.
    pub pdbs: Vec<PodDisruptionBudget>,
}

/// True when some StatefulSet of `sets` has a staged update and a partition > 0: only then do the
/// gates need pods and PDBs, so a pass over a cluster with nothing staged costs one LIST.
pub fn needs_pods(sets: &[StatefulSet], prefix: &str) -> bool {
    sets.iter().any(|s| {
        sts::is_guarded(s, prefix)
            && sts::has_staged_update(s)
            && sts::partition(s).unwrap_or(0) > 0
    })
}

/// The figures reported per StatefulSet (log line, `status` table, metrics). Counts are pods.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Figures {
    /// `spec.replicas` (default 1).
    pub replicas: i32,
    /// `status.currentReplicas`: pods on `currentRevision`.
    pub current_replicas: i32,
    /// `status.updatedReplicas`: pods on `updateRevision`.
    pub updated_replicas: i32,
    /// `status.readyReplicas`.
    pub ready_replicas: i32,
    /// `spec.updateStrategy.rollingUpdate.partition`, `None` when absent (0 to the controller).
    pub partition: Option<i32>,
    /// `<prefix>/last-partition-update`, when present and readable.
    pub last_partition_update: Option<Timestamp>,
    /// `status.currentRevision`.
    pub current_revision: Option<String>,
    /// `status.updateRevision`.
    pub update_revision: Option<String>,
}

impl Figures {
    /// Reads the figures of `set`.
    pub fn of(set: &StatefulSet, prefix: &str) -> Self {
        let status = set.status.as_ref();
        Figures {
            replicas: sts::replicas(set),
            current_replicas: status.and_then(|s| s.current_replicas).unwrap_or(0),
            updated_replicas: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready_replicas: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            partition: sts::partition(set),
            last_partition_update: gates::last_partition_update(set, prefix).ok().flatten(),
            current_revision: status.and_then(|s| s.current_revision.clone()),
            update_revision: status.and_then(|s| s.update_revision.clone()),
        }
    }
}

/// Severity of an Event (Kubernetes `Normal` / `Warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Progress, or an expected wait.
    Normal,
    /// Something a person may need to look at.
    Warning,
}

/// One Kubernetes Event to publish on a StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventNote {
    /// Severity.
    pub kind: EventKind,
    /// PascalCase reason: `Stepped`, `Blocked`, `RolloutPaused`, `RolloutComplete`, `ForcedStep`.
    pub reason: String,
    /// PascalCase action: `Step`, `Gate`, `Complete`.
    pub action: String,
    /// Human text (`partition 3→2`, `PodNotReady web-1: ContainersNotReady`); at most 1 kB.
    pub note: String,
}

impl EventNote {
    /// The `Stepped` Event for a step `from → to`.
    pub fn stepped(from: i32, to: i32, update_revision: &str) -> Self {
        EventNote {
            kind: EventKind::Normal,
            reason: "Stepped".into(),
            action: "Step".into(),
            note: format!("partition {from}→{to} (updateRevision {update_revision})"),
        }
    }

    /// The `Blocked` Event for a failing gate: `Normal` for the expected waits
    /// ([`Reason::is_expected_wait`]) and when `step_pods_only` (only the pods the last step is
    /// replacing are not ready yet), `Warning` otherwise.
    pub fn blocked(b: &Blocked, step_pods_only: bool) -> Self {
        let mut note = b.to_string();
        truncate(&mut note, 1000);
        EventNote {
            kind: if b.reason.is_expected_wait() || step_pods_only {
                EventKind::Normal
            } else {
                EventKind::Warning
            },
            reason: "Blocked".into(),
            action: "Gate".into(),
            note,
        }
    }

    /// The `RolloutPaused` Event (`Warning`): the stepper paused the rollout (`<prefix>/paused`), e.g. a
    /// Prometheus check reached its `failure-limit`; `reason` is the `<prefix>/paused-reason`.
    pub fn paused(reason: &str) -> Self {
        let mut note = reason.to_string();
        truncate(&mut note, 1000);
        EventNote {
            kind: EventKind::Warning,
            reason: "RolloutPaused".into(),
            action: "Pause".into(),
            note,
        }
    }

    /// The `RolloutComplete` Event.
    pub fn complete(update_revision: &str, replicas: i32) -> Self {
        EventNote {
            kind: EventKind::Normal,
            reason: "RolloutComplete".into(),
            action: "Complete".into(),
            note: format!("all {replicas} pods run updateRevision {update_revision} and are Ready"),
        }
    }
}

fn truncate(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// The plan for one StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub struct SetPlan {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Reference for Events (`apps/v1`, kind, namespace, name, uid, resourceVersion).
    pub reference: ObjectReference,
    /// Figures to report.
    pub figures: Figures,
    /// What the gates decided.
    pub decision: Decision,
    /// Metadata-only JSON Patch (stamp `initialized`, set or clear `blocked-reason`, record
    /// `completed-revision`), sent before the step; `None` when nothing changes.
    pub bookkeeping: Option<Patch>,
    /// Events to publish once `bookkeeping` is applied (`Blocked` on a new reason, `RolloutComplete`).
    pub bookkeeping_events: Vec<EventNote>,
    /// The step's JSON Patch (see [`step_patch`]) when the decision is [`Decision::Step`].
    pub step: Option<Patch>,
}

/// Pods grouped by their controller's uid, PDBs by namespace and rollout-group members by
/// (namespace, group): built once per pass so planning stays linear in the number of objects.
struct Index<'s> {
    pods_by_owner: HashMap<&'s str, Vec<&'s Pod>>,
    pdbs_by_namespace: HashMap<&'s str, Vec<PdbView<'s>>>,
    group_holders: HashMap<(&'s str, &'s str), &'s StatefulSet>,
}

impl<'s> Index<'s> {
    fn new(snapshot: &'s Snapshot, prefix: &str) -> Self {
        let mut pods_by_owner: HashMap<&str, Vec<&Pod>> = HashMap::new();
        for pod in &snapshot.pods {
            if let Some(uid) = gates::controller_uid(pod) {
                pods_by_owner.entry(uid).or_default().push(pod);
            }
        }
        let mut pdbs_by_namespace: HashMap<&str, Vec<PdbView<'_>>> = HashMap::new();
        for pdb in &snapshot.pdbs {
            let ns = pdb.metadata.namespace.as_deref().unwrap_or("");
            pdbs_by_namespace
                .entry(ns)
                .or_default()
                .push(PdbView::new(pdb));
        }
        let mut members: HashMap<(&str, &str), Vec<&StatefulSet>> = HashMap::new();
        for set in &snapshot.statefulsets {
            if let Ok(Some(group)) = gates::rollout_group(set, prefix)
                && sts::is_guarded(set, prefix)
            {
                let ns = set.metadata.namespace.as_deref().unwrap_or("");
                members.entry((ns, group)).or_default().push(set);
            }
        }
        let group_holders = members
            .into_iter()
            .filter_map(|(k, sets)| Some((k, gates::group_holder(sets)?)))
            .collect();
        Index {
            pods_by_owner,
            pdbs_by_namespace,
            group_holders,
        }
    }

    fn evaluate(
        &self,
        set: &'s StatefulSet,
        probes: &Probes,
        opts: &GateOptions,
        now: Timestamp,
    ) -> (BTreeMap<u32, &'s Pod>, gates::Evaluation) {
        let uid = set.metadata.uid.as_deref().unwrap_or("");
        let owned = self
            .pods_by_owner
            .get(uid)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let pods = gates::pods_by_ordinal(set, owned.iter().copied());
        let ns = set.metadata.namespace.as_deref().unwrap_or("");
        let pdbs = self
            .pdbs_by_namespace
            .get(ns)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let fleet = FleetView {
            group_holder: gates::rollout_group(set, &opts.prefix)
                .ok()
                .flatten()
                .and_then(|g| self.group_holders.get(&(ns, g)).copied()),
        };
        let ev = gates::evaluate(set, &pods, pdbs, fleet, probes, opts, now);
        (pods, ev)
    }
}

/// What the I/O gates read for each StatefulSet of a snapshot, by its index in
/// [`Snapshot::statefulsets`] (absent: nothing read).
pub type ProbeMap = HashMap<usize, Probes>;

/// The reads the pass must do before the plan is final: for each StatefulSet (by index in the
/// snapshot) that passes every gate before an I/O gate whose read is not in `probes` yet, that read
/// ([`Need`]). Empty when the plan is final.
pub fn needs(
    snapshot: &Snapshot,
    opts: &GateOptions,
    now: Timestamp,
    probes: &ProbeMap,
) -> Vec<(usize, Need)> {
    let index = Index::new(snapshot, &opts.prefix);
    let none = Probes::default();
    snapshot
        .statefulsets
        .iter()
        .enumerate()
        .filter_map(|(i, set)| {
            let (_, ev) = index.evaluate(set, probes.get(&i).unwrap_or(&none), opts, now);
            Some((i, ev.need?))
        })
        .collect()
}

/// Plans a pass with no I/O results: [`plan_with`] and an empty [`ProbeMap`].
pub fn plan(snapshot: &Snapshot, opts: &GateOptions, now: Timestamp) -> Vec<SetPlan> {
    plan_with(snapshot, opts, now, &ProbeMap::new())
}

/// Plans a pass: one [`SetPlan`] per StatefulSet of the snapshot, in the snapshot's order, given what
/// the I/O gates read (`probes`, see [`needs`]). After every set's own gates, the fleet's step budget
/// ([`throttle`]) turns the steps beyond `--max-steps-per-pass` / `--max-steps-per-minute` into
/// `Throttled` blocks.
pub fn plan_with(
    snapshot: &Snapshot,
    opts: &GateOptions,
    now: Timestamp,
    probes: &ProbeMap,
) -> Vec<SetPlan> {
    let index = Index::new(snapshot, &opts.prefix);
    let none = Probes::default();
    let mut evaluated: Vec<_> = snapshot
        .statefulsets
        .iter()
        .enumerate()
        .map(|(i, set)| index.evaluate(set, probes.get(&i).unwrap_or(&none), opts, now))
        .collect();
    let steps: Vec<(usize, &StatefulSet)> = evaluated
        .iter()
        .enumerate()
        .filter(|(_, (_, ev))| matches!(ev.decision, Decision::Step { .. }))
        .map(|(i, _)| (i, &snapshot.statefulsets[i]))
        .collect();
    let recent = steps_in_last_minute(&snapshot.statefulsets, &opts.prefix, now);
    for (i, blocked) in throttle(&steps, opts, recent) {
        evaluated[i].1.decision = Decision::Blocked(blocked);
    }
    snapshot
        .statefulsets
        .iter()
        .zip(evaluated)
        .map(|(set, (pods, ev))| {
            let mut p = plan_evaluated(set, &pods, ev, &opts.prefix, now);
            if opts.max_steps_per_minute.is_some()
                && let Some(patch) = &mut p.step
            {
                record_recent_step(set, &opts.prefix, now, patch);
            }
            p
        })
        .collect()
}

/// Annotation (stepper only, with `--max-steps-per-minute`) `<prefix>/recent-steps`: the times of the
/// set's steps in the last 60 seconds, RFC 3339, comma-separated (at most the limit's count of them), so
/// the fleet's budget counts steps, not only the sets stepped.
pub const RECENT_STEPS: &str = "recent-steps";

/// The times of the set's steps later than `since`: from `<prefix>/recent-steps` when the set carries
/// it (unreadable entries skipped), else its `<prefix>/last-partition-update` alone.
pub fn recent_steps(set: &StatefulSet, prefix: &str, since: Timestamp) -> Vec<Timestamp> {
    let mut times: Vec<Timestamp> =
        match annotation_value(set, &annotations::key(prefix, RECENT_STEPS)) {
            Some(list) => list
                .split(',')
                .filter_map(|t| t.trim().parse::<Timestamp>().ok())
                .collect(),
            None => gates::last_partition_update(set, prefix)
                .ok()
                .flatten()
                .into_iter()
                .collect(),
        };
    times.retain(|t| *t > since);
    times
}

/// How many steps the StatefulSets of `sets` took in the last 60 seconds before `now` (later than
/// `now − 60 s`), by [`recent_steps`]. A count.
pub fn steps_in_last_minute(sets: &[StatefulSet], prefix: &str, now: Timestamp) -> u32 {
    let since = now - SignedDuration::from_secs(60);
    let n: usize = sets
        .iter()
        .map(|s| recent_steps(s, prefix, since).len())
        .sum();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Adds to a step patch the op recording this step in `<prefix>/recent-steps` (the pruned list plus
/// the step's [`stamp`]); used with `--max-steps-per-minute`.
pub fn record_recent_step(set: &StatefulSet, prefix: &str, now: Timestamp, patch: &mut Patch) {
    let since = now - SignedDuration::from_secs(60);
    let mut list: Vec<String> = recent_steps(set, prefix, since)
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    list.push(stamp(set, prefix, now));
    patch.0.extend(annotation_ops(
        &with_annotations(set),
        &[(annotations::key(prefix, RECENT_STEPS), Some(list.join(",")))],
    ));
}

/// `set` with an (empty) annotations map when it has none: the step patch has already added the map,
/// so later ops add keys to it.
fn with_annotations(set: &StatefulSet) -> StatefulSet {
    let mut s = set.clone();
    s.metadata.annotations.get_or_insert_with(Default::default);
    s
}

/// The fleet's step budget (gate `Throttled`, moco#572: an operator upgrade must not restart every
/// database at once). `steps` are the sets whose own gates all passed, with their snapshot index;
/// `recent` the steps already taken in the last minute ([`steps_in_last_minute`]). The budget is
/// `min(max_steps_per_pass, max_steps_per_minute − recent)` (unset = unlimited); it goes to started
/// rollouts first (finish what is half done), then by namespace and name. Returns the sets beyond it,
/// each with its `Throttled` block.
pub fn throttle(
    steps: &[(usize, &StatefulSet)],
    opts: &GateOptions,
    recent: u32,
) -> Vec<(usize, Blocked)> {
    let per_pass = opts.max_steps_per_pass.map_or(usize::MAX, |n| n as usize);
    let per_minute = opts
        .max_steps_per_minute
        .map_or(usize::MAX, |n| n.saturating_sub(recent) as usize);
    let budget = per_pass.min(per_minute);
    let mut order: Vec<&(usize, &StatefulSet)> = steps.iter().collect();
    order.sort_by_key(|(_, s)| {
        (
            !gates::rollout_started(s),
            s.metadata.namespace.as_deref(),
            s.metadata.name.as_deref(),
        )
    });
    let detail = if per_pass <= per_minute {
        format!(
            "--max-steps-per-pass {}: {per_pass} sets step first in this pass",
            opts.max_steps_per_pass.unwrap_or_default()
        )
    } else {
        format!(
            "--max-steps-per-minute {}: {recent} steps in the last 60s, {budget} more in this pass",
            opts.max_steps_per_minute.unwrap_or_default()
        )
    };
    order
        .into_iter()
        .skip(budget)
        .map(|(i, _)| (*i, Blocked::new(Reason::Throttled, detail.clone())))
        .collect()
}

/// Plans one StatefulSet given its pods by ordinal and its namespace's PDBs, with no fleet context and
/// no I/O results ([`gates::decide`]).
pub fn plan_set(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> SetPlan {
    let ev = gates::evaluate_alone(set, pods, pdbs, opts, now);
    plan_evaluated(set, pods, ev, &opts.prefix, now)
}

/// The writes and Events for one evaluated StatefulSet.
pub fn plan_evaluated(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    ev: gates::Evaluation,
    prefix: &str,
    now: Timestamp,
) -> SetPlan {
    let decision = ev.decision;
    let figures = Figures::of(set, prefix);
    let guarded = !matches!(decision, Decision::Unguarded(_));
    let blocked_key = annotations::key(prefix, BLOCKED_REASON);
    let announced = annotation_value(set, &blocked_key);

    let mut changes: Vec<(String, Option<String>)> = Vec::new();
    let mut events = Vec::new();
    // 0 replicas is "fully Ready" with no pod ever Ready: not initialized (DESIGN.md: a set none of
    // whose pods ever became Ready must stay fixable by a plain re-apply).
    if guarded
        && sts::replicas(set) >= 1
        && sts::is_fully_ready(set)
        && !sts::is_annotation_true(set, prefix, annotations::INITIALIZED)
    {
        changes.push((
            annotations::key(prefix, annotations::INITIALIZED),
            Some(annotations::TRUE.into()),
        ));
    }
    match &decision {
        Decision::Blocked(b) => {
            if announced != Some(b.reason.as_str()) {
                changes.push((blocked_key, Some(b.reason.as_str().into())));
                let step_pods_only = b.reason == Reason::PodNotReady
                    && gates::pods_below_partition_ready(set, pods, now);
                events.push(EventNote::blocked(b, step_pods_only || ev.expected_wait));
            }
        }
        Decision::Step { .. } => {} // the step patch clears it
        Decision::Idle(_) | Decision::Unguarded(_) => {
            if announced.is_some() {
                changes.push((blocked_key, None));
            }
        }
    }
    // The gates' own state (the Prometheus check's counts, a pause): a step starts the counts over
    // (the step patch removes them), so it is written only when no step follows.
    let check_key = annotations::key(prefix, crate::prometheus::PROMETHEUS_CHECK);
    let mut guard = None;
    if !matches!(decision, Decision::Step { .. }) && !ev.changes.is_empty() {
        if ev.changes.iter().any(|(k, _)| *k == check_key) {
            // Two steppers must not both count one period's check: pin what was read.
            guard = Some(match annotation_value(set, &check_key) {
                Some(old) => test(ptr(&["metadata", "annotations", &check_key]), json!(old)),
                None => test(
                    ptr(&["metadata", "resourceVersion"]),
                    json!(set.metadata.resource_version.clone().unwrap_or_default()),
                ),
            });
        }
        let paused_key = annotations::key(prefix, annotations::PAUSED);
        let reason_key = annotations::key(prefix, crate::prometheus::PAUSED_REASON);
        if ev
            .changes
            .iter()
            .any(|(k, v)| *k == paused_key && v.is_some())
        {
            let reason = ev
                .changes
                .iter()
                .find(|(k, _)| *k == reason_key)
                .and_then(|(_, v)| v.clone())
                .unwrap_or_default();
            events.push(EventNote::paused(&reason));
        }
        changes.extend(ev.changes);
    }
    if decision == Decision::Idle(Idle::UpToDate)
        && sts::partition(set).unwrap_or(0) == 0
        && sts::is_fully_ready(set)
        && figures.last_partition_update.is_some()
        && let Some(revision) = figures.update_revision.as_deref()
    {
        let key = annotations::key(prefix, COMPLETED_REVISION);
        if annotation_value(set, &key) != Some(revision) {
            changes.push((key, Some(revision.to_string())));
            events.push(EventNote::complete(revision, figures.replicas));
        }
    }
    let bookkeeping = annotation_patch(set, &changes).map(|mut patch| {
        if let Some(g) = guard {
            patch.0.insert(0, g);
        }
        patch
    });
    let step = match &decision {
        Decision::Step {
            from,
            to,
            update_revision,
        } => Some(step_patch(set, prefix, *from, *to, update_revision, now)),
        _ => None,
    };
    SetPlan {
        namespace: set.metadata.namespace.clone().unwrap_or_default(),
        name: set.metadata.name.clone().unwrap_or_default(),
        reference: reference(set),
        figures,
        decision,
        bookkeeping,
        bookkeeping_events: events,
        step,
    }
}

/// The ObjectReference Events point at.
pub fn reference(set: &StatefulSet) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("StatefulSet".into()),
        namespace: set.metadata.namespace.clone(),
        name: set.metadata.name.clone(),
        uid: set.metadata.uid.clone(),
        resource_version: set.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

fn annotation_value<'a>(set: &'a StatefulSet, key: &str) -> Option<&'a str> {
    set.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

fn ptr(tokens: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(tokens.iter().copied())
}

fn test(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Test(TestOperation { path, value })
}

/// Ops that apply annotation `changes` (`Some(value)` sets, `None` removes) to `set`'s observed
/// annotations. When `metadata.annotations` is absent the whole map is added, guarded by a `test` op on
/// `metadata.resourceVersion` so that a concurrent writer's annotations are never replaced. Removing a
/// key that is absent is skipped.
fn annotation_ops(set: &StatefulSet, changes: &[(String, Option<String>)]) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    match &set.metadata.annotations {
        None => {
            let map: serde_json::Map<String, Value> = changes
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), Value::String(v.clone()?))))
                .collect();
            if map.is_empty() {
                return ops;
            }
            if let Some(rv) = &set.metadata.resource_version {
                ops.push(test(ptr(&["metadata", "resourceVersion"]), json!(rv)));
            }
            ops.push(PatchOperation::Add(AddOperation {
                path: ptr(&["metadata", "annotations"]),
                value: Value::Object(map),
            }));
        }
        Some(existing) => {
            for (key, value) in changes {
                let path = ptr(&["metadata", "annotations", key]);
                match value {
                    Some(v) => ops.push(PatchOperation::Add(AddOperation {
                        path,
                        value: json!(v),
                    })),
                    None if existing.contains_key(key) => {
                        ops.push(PatchOperation::Remove(RemoveOperation { path }))
                    }
                    None => {}
                }
            }
        }
    }
    ops
}

/// A metadata-only JSON Patch applying annotation `changes`, or `None` when it would be empty.
pub fn annotation_patch(set: &StatefulSet, changes: &[(String, Option<String>)]) -> Option<Patch> {
    let ops = annotation_ops(set, changes);
    (!ops.is_empty()).then_some(Patch(ops))
}

/// `<prefix>/last-partition-update` value for a step at `now`: RFC 3339 UTC to the second
/// (`2026-11-23T01:10:42Z`). If that equals the value already on the set (two steps within one second),
/// the full sub-second precision is used, because the admission policy lets a lowered partition through
/// only when the same request changes this annotation.
pub fn stamp(set: &StatefulSet, prefix: &str, now: Timestamp) -> String {
    let seconds = Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string();
    if sts::annotation(set, prefix, annotations::LAST_PARTITION_UPDATE) == Some(seconds.as_str()) {
        now.to_string()
    } else {
        seconds
    }
}

/// The step: ONE JSON Patch on the StatefulSet (Kubernetes `application/json-patch+json`):
///
/// 1. `test /spec/updateStrategy/rollingUpdate/partition == from` and `test /status/updateRevision ==
///    update_revision` — the observation the decision was made on; if either changed (another stepper
///    stepped, a new revision was staged) the API server answers 422 and nothing is written;
/// 2. `replace` the partition with `to`;
/// 3. `add /metadata/annotations/<prefix>~1last-partition-update` = [`stamp`] (the whole annotations map
///    when absent, pinned by a `test` on `resourceVersion`), which the admission policy requires of any
///    request lowering the partition;
/// 4. `remove` `<prefix>/blocked-reason` and `<prefix>/prometheus-check` if the set carries them (the
///    rollout moved on; the next step's Prometheus check counts from zero).
pub fn step_patch(
    set: &StatefulSet,
    prefix: &str,
    from: i32,
    to: i32,
    update_revision: &str,
    now: Timestamp,
) -> Patch {
    let partition = ptr(&["spec", "updateStrategy", "rollingUpdate", "partition"]);
    let mut ops = vec![
        test(partition.clone(), json!(from)),
        test(ptr(&["status", "updateRevision"]), json!(update_revision)),
        PatchOperation::Replace(ReplaceOperation {
            path: partition,
            value: json!(to),
        }),
    ];
    ops.extend(annotation_ops(
        set,
        &[
            (
                annotations::key(prefix, annotations::LAST_PARTITION_UPDATE),
                Some(stamp(set, prefix, now)),
            ),
            (annotations::key(prefix, BLOCKED_REASON), None),
            (
                annotations::key(prefix, crate::prometheus::PROMETHEUS_CHECK),
                None,
            ),
        ],
    ));
    Patch(ops)
}

/// The reason recorded in `<prefix>/blocked-reason`, if any and readable.
pub fn announced_reason(set: &StatefulSet, prefix: &str) -> Option<Reason> {
    annotation_value(set, &annotations::key(prefix, BLOCKED_REASON)).and_then(Reason::parse)
}
