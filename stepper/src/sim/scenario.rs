//! Scenarios as data (YAML under `scenarios/`), the loop that plays one on a [`SimCluster`] with the
//! real stepper pass, the timeline a person reads, and the summary the tests assert on.
//!
//! Each virtual second: the scenario's events due at that second (a `kubectl apply`, a node failure,
//! …), then the pods progress and the StatefulSet controller syncs once ([`World::tick`]), then — every
//! `stepper.intervalSeconds`, guarded runs only — one stepper pass ([`crate::pass::run_pass`], or its
//! parts [`crate::pass::snapshot`], [`crate::plan::plan`], [`crate::pass::execute`] when a stepper is
//! killed between its read and its write or two steppers race).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::json;

use super::cluster::{ApiFault, Call, FaultKind, SimCluster};
use super::model::{SetShape, StepRecord, Timing, World, template, template_image, timestamp};
use crate::gates::GateOptions;
use crate::pass::{self, Outcome, PassOptions};
use crate::reads::{self, PodReads};

use sts_safe_rollout::annotations;

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

/// Pod timing in a scenario (virtual seconds); see [`Timing`].
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
}

fn yes() -> bool {
    true
}

impl Default for StepperSpec {
    fn default() -> Self {
        StepperSpec {
            interval_seconds: 5,
            pdb_gate: true,
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
    /// For `seconds`, every pass is two steppers racing: both read, then both write.
    ConcurrentSteppers {
        /// How long.
        seconds: i64,
    },
    /// A person deletes the pod at this ordinal (`kubectl delete pod`).
    DeletePod(u32),
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
        serde_yaml::from_str(text).map_err(|e| e.to_string())
    }
}

/// One pod in a timeline frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodView {
    /// Ordinal.
    pub ordinal: u32,
    /// Revision letter (`A`, `B`, …).
    pub letter: char,
    /// State symbol: `+` available, `~` Ready for less than minReadySeconds, `.` starting, `!`
    /// NotReady (node down, bad revision), `x` terminating, `_` missing.
    pub state: char,
}

/// One line of the timeline: the state after a virtual second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Virtual second.
    pub t: i64,
    /// Partition stored.
    pub partition: i32,
    /// Pods of `[0, max(replicas, highest ordinal + 1))`.
    pub pods: Vec<PodView>,
    /// Slots down (see [`World::down`]).
    pub down: usize,
    /// Of which down because of a fault.
    pub fault_down: usize,
    /// What happened this second (scenario events, policy rows, stepper outcome).
    pub notes: Vec<String>,
}

/// Totals over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Second of the first template change.
    pub rollout_started: Option<i64>,
    /// Second the rollout was complete after the last template change (or scale).
    pub rollout_completed: Option<i64>,
    /// Maximum slots down at once.
    pub max_down: usize,
    /// Maximum over seconds of (slots down − slots down by faults).
    pub max_down_beyond_faults: usize,
    /// Pods the controller restarted for the update while another slot was down.
    pub restarts_while_down: usize,
    /// Of those, restarts decided while the other pod was already down (see
    /// [`World::harmful_restarts`]): what the stepper must keep at 0.
    pub harmful_restarts: usize,
    /// Pods the controller restarted for the update.
    pub restarts: usize,
    /// Steps that landed.
    pub steps: usize,
    /// Steps that landed while the simulation's gate oracle saw a gate failing.
    pub steps_while_gate_failed: usize,
    /// Steps that landed on a generation the controller had not observed (a double step).
    pub steps_unobserved: usize,
    /// Steps that landed while the application-unhealthy signal was raised.
    pub steps_while_app_unhealthy: usize,
    /// Conflicts (409/422) the API answered.
    pub conflicts: u64,
    /// Errors (500) the API answered.
    pub api_errors: u64,
    /// Last second simulated.
    pub ended: i64,
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// Scenario name.
    pub name: String,
    /// Native (no policy, no stepper) or guarded.
    pub native: bool,
    /// Every second's frame.
    pub frames: Vec<Frame>,
    /// Totals.
    pub summary: Summary,
    /// The world at the end.
    pub world: World,
    /// Steps that landed.
    pub steps: Vec<StepRecord>,
}

fn pod_views(world: &World) -> Vec<PodView> {
    let replicas = u32::try_from(world.replicas()).unwrap_or(0);
    let top = world
        .pods
        .keys()
        .next_back()
        .map_or(replicas, |o| replicas.max(o + 1));
    let min_ready = world.min_ready();
    (0..top)
        .map(|o| match world.pods.get(&o) {
            None => PodView {
                ordinal: o,
                letter: ' ',
                state: '_',
            },
            Some(p) => {
                let state = if p.terminating() {
                    'x'
                } else if p.available(min_ready, world.t) {
                    '+'
                } else if p.running_and_ready() {
                    '~'
                } else if p.node_is_down(world.t) || (p.running(world.t) && p.ready_at.is_none()) {
                    '!'
                } else {
                    '.'
                };
                PodView {
                    ordinal: o,
                    letter: world.letter(&p.revision),
                    state,
                }
            }
        })
        .collect()
}

fn key(short: &str) -> String {
    annotations::key(annotations::DEFAULT_PREFIX, short)
}

/// Plays `scenario` (`native`: no policy, no stepper) with `seed` and returns the run.
///
/// # Errors
/// The initial CREATE was refused by the policy (a scenario error).
pub fn run(scenario: &Scenario, native: bool, seed: u64) -> Result<Run, String> {
    let shape = SetShape {
        name: scenario.set.name.clone(),
        namespace: scenario.set.namespace.clone(),
        replicas: scenario.set.replicas,
        pod_management_policy: scenario.set.pod_management_policy.clone(),
        min_ready_seconds: scenario.set.min_ready_seconds,
        image: scenario.set.image.clone(),
    };
    let timing = Timing {
        pending_seconds: scenario.timing.pending_seconds,
        ready_seconds: scenario.timing.ready_seconds,
        terminate_seconds: scenario.timing.terminate_seconds,
        jitter_seconds: scenario.timing.jitter_seconds,
    };
    let mut world = World::new(&shape, timing, !native, annotations::DEFAULT_PREFIX, seed)?;
    world.pdb_max_unavailable = scenario.set.pdb_max_unavailable;
    world.bad_images = scenario.set.bad_images.clone();
    for (k, v) in &scenario.set.annotations {
        world.set["metadata"]["annotations"][key(k)] = json!(v);
    }
    if let Some(kind) = &scenario.set.owner {
        world.set["metadata"]["ownerReferences"] = json!([{
            "apiVersion": crate::sim::cluster::SIM_OWNER_API_VERSION,
            "kind": kind,
            "name": scenario.set.name,
            "uid": crate::sim::cluster::SIM_OWNER_UID,
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
    }
    let cluster = SimCluster::new(world);
    let opts = PassOptions {
        gates: GateOptions {
            prefix: annotations::DEFAULT_PREFIX.to_string(),
            pdb_gate: scenario.stepper.pdb_gate,
            ..GateOptions::default()
        },
        dry_run: false,
        pod_reads: PodReads::Candidates,
        ..PassOptions::default()
    };
    let interval = scenario.stepper.interval_seconds.max(1);
    let mut events = scenario.events.clone();
    events.sort_by_key(|e| e.at);
    let last_event = events
        .iter()
        .map(|e| match &e.action {
            Action::NodeFailure { seconds, .. }
            | Action::ApiFault { seconds, .. }
            | Action::ConcurrentSteppers { seconds } => e.at + seconds,
            _ => e.at,
        })
        .max()
        .unwrap_or(0);
    let mut frames = Vec::new();
    let mut summary = Summary::default();
    let mut kill_next = false;
    let mut concurrent_until = i64::MIN;
    let mut fault_deleted: BTreeSet<u32> = BTreeSet::new();
    let mut last_change: Option<i64> = None;
    let mut next = 0;
    for t in 0..=scenario.duration {
        let mut notes = Vec::new();
        {
            let mut world = cluster.world();
            world.t = t;
        }
        while next < events.len() && events[next].at <= t {
            let ev = events[next].clone();
            next += 1;
            let note = play(
                &cluster,
                &ev.action,
                t,
                &mut kill_next,
                &mut concurrent_until,
                &mut fault_deleted,
            );
            if matches!(
                ev.action,
                Action::Apply(_) | Action::Undo {} | Action::Scale(_)
            ) {
                summary.rollout_started.get_or_insert(t);
                last_change = Some(t);
            }
            notes.push(note);
        }
        cluster.world().tick(t);
        if !native && t % interval == 0 {
            let outcome = stepper_pass(&cluster, &opts, t, &mut kill_next, concurrent_until);
            notes.extend(outcome);
        }
        let world = cluster.world();
        for o in fault_deleted.clone() {
            if world.pods.get(&o).is_some_and(|p| p.running_and_ready()) {
                fault_deleted.remove(&o);
            }
        }
        let deleted: Vec<u32> = fault_deleted.iter().copied().collect();
        let (down, fault_down) = world.down(&deleted);
        summary.max_down = summary.max_down.max(down);
        summary.max_down_beyond_faults = summary
            .max_down_beyond_faults
            .max(down.saturating_sub(fault_down));
        if let Some(change) = last_change
            && summary.rollout_completed.is_none_or(|done| done < change)
            && world.rollout_complete()
        {
            summary.rollout_completed = Some(t);
        }
        frames.push(Frame {
            t,
            partition: world.partition(),
            pods: pod_views(&world),
            down,
            fault_down,
            notes,
        });
        summary.ended = t;
        let quiet = t > last_event && next >= events.len();
        let settled = summary
            .rollout_completed
            .is_some_and(|done| last_change.is_some_and(|c| done >= c) && t > done + 2 * interval);
        if quiet && settled {
            break;
        }
    }
    let counters = cluster.counters();
    let world = cluster.world().clone();
    summary.restarts = world.restarts.len();
    summary.restarts_while_down = world.restarts.iter().filter(|r| r.2 > 0).count();
    summary.harmful_restarts = world.harmful_restarts.len();
    summary.steps = world.steps.len();
    summary.steps_while_gate_failed = world
        .steps
        .iter()
        .filter(|s| s.failing_gate.is_some())
        .count();
    summary.steps_unobserved = world.steps.iter().filter(|s| !s.observed).count();
    summary.steps_while_app_unhealthy = world.steps.iter().filter(|s| s.app_unhealthy).count();
    summary.conflicts = counters.conflicts;
    summary.api_errors = counters.errors;
    let steps = world.steps.clone();
    Ok(Run {
        name: scenario.name.clone(),
        native,
        frames,
        summary,
        world,
        steps,
    })
}

/// Carries out one scenario action at second `t`; returns the timeline note.
fn play(
    cluster: &SimCluster,
    action: &Action,
    t: i64,
    kill_next: &mut bool,
    concurrent_until: &mut i64,
    fault_deleted: &mut BTreeSet<u32>,
) -> String {
    let mut world = cluster.world();
    let name = world.name();
    let admitted = |world: &World, what: String, before: usize| -> String {
        match world.admissions.get(before..).and_then(|a| a.last()) {
            Some((_, _, row)) => {
                format!("{what} → policy {row:?}, p={}", world.partition())
            }
            None => what,
        }
    };
    match action {
        Action::Apply(spec) => {
            let mut new = world.set.clone();
            let mut what = vec![];
            if let Some(image) = &spec.image {
                new["spec"]["template"] = template(&name, image);
                what.push(format!("image {image}"));
            }
            if let Some(r) = spec.replicas {
                new["spec"]["replicas"] = json!(r);
                what.push(format!("replicas {r}"));
            }
            if let Some(p) = spec.partition {
                new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p);
                what.push(format!("partition {p}"));
            }
            for (k, v) in &spec.annotations {
                new["metadata"]["annotations"][key(k)] = json!(v);
                what.push(format!("{k}={v}"));
            }
            let before = world.admissions.len();
            let what = format!("apply {}", what.join(", "));
            match world.write(new, "apply") {
                Ok(()) => admitted(&world, what, before),
                Err(e) => format!("{what} refused: {e}"),
            }
        }
        Action::Undo {} => {
            let Some(tpl) = world.previous_template() else {
                return "kubectl rollout undo: no previous revision".into();
            };
            let image = template_image(&tpl).unwrap_or("?").to_string();
            let mut new = world.set.clone();
            new["spec"]["template"] = tpl;
            let before = world.admissions.len();
            let what = format!("rollout undo (to image {image})");
            match world.write(new, "undo") {
                Ok(()) => admitted(&world, what, before),
                Err(e) => format!("{what} refused: {e}"),
            }
        }
        Action::Scale(r) => {
            world.scale_subresource(*r);
            format!("scale --replicas {r} (subresource: no policy)")
        }
        Action::NodeFailure { pod, seconds } => match world.pods.get_mut(pod) {
            Some(p) => {
                p.node_down = Some((t, t + seconds));
                format!("node of {name}-{pod} down for {seconds}s")
            }
            None => format!("node failure: no pod {name}-{pod}"),
        },
        Action::BadImage(image) => {
            world.bad_images.push(image.clone());
            format!("image {image} is bad: its pods never become Ready")
        }
        Action::AppUnhealthy(v) => {
            world.app_unhealthy = *v;
            format!(
                "application signal: {}",
                if *v { "unhealthy" } else { "healthy" }
            )
        }
        Action::ApiFault {
            call,
            kind,
            seconds,
            probability,
        } => {
            drop(world);
            cluster.add_fault(ApiFault {
                from: t,
                until: t + seconds,
                call: *call,
                kind: *kind,
                probability: *probability,
            });
            format!("API faults: {kind:?} on {call:?} for {seconds}s (p={probability})")
        }
        Action::KillStepper {} => {
            *kill_next = true;
            "the next stepper pass will be killed between its read and its write".into()
        }
        Action::ConcurrentSteppers { seconds } => {
            *concurrent_until = t + seconds;
            format!("two steppers race for {seconds}s")
        }
        Action::DeleteBadPods {} => {
            let bad: Vec<u32> = world
                .pods
                .values()
                .filter(|p| {
                    world
                        .revision(&p.revision)
                        .and_then(|r| template_image(&r.template))
                        .is_some_and(|img| world.bad_images.iter().any(|b| b == img))
                })
                .map(|p| p.ordinal)
                .collect();
            let mut deleted = Vec::new();
            for o in bad {
                if world.delete_pod(o) {
                    fault_deleted.insert(o);
                    deleted.push(format!("{name}-{o}"));
                }
            }
            format!(
                "kubectl delete pod (bad revision): [{}]",
                deleted.join(", ")
            )
        }
        Action::DeletePod(o) => {
            if world.delete_pod(*o) {
                fault_deleted.insert(*o);
                format!("kubectl delete pod {name}-{o}")
            } else {
                format!("kubectl delete pod {name}-{o}: not found")
            }
        }
    }
}

fn outcome_note(outcome: &Outcome) -> String {
    outcome.to_string()
}

/// One stepper pass at `t` (or a killed one, or two racing); returns the timeline notes.
fn stepper_pass(
    cluster: &SimCluster,
    opts: &PassOptions,
    t: i64,
    kill_next: &mut bool,
    concurrent_until: i64,
) -> Vec<String> {
    let now = timestamp(t);
    if *kill_next {
        *kill_next = false;
        let planned =
            futures::executor::block_on(reads::snapshot(cluster, opts, now)).map(|snap| {
                futures::executor::block_on(pass::plan_pass(cluster, cluster, &snap, opts, now))
            });
        return vec![match planned {
            Ok(plans) => format!(
                "killed: the stepper died after its read; its decision ({}) was never written",
                plans
                    .iter()
                    .map(|p| pass::verdict_outcome(&p.verdict, false).to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => format!("killed: the stepper died; its read had failed: {e}"),
        }];
    }
    if t < concurrent_until {
        let a = futures::executor::block_on(reads::snapshot(cluster, opts, now));
        let b = futures::executor::block_on(reads::snapshot(cluster, opts, now));
        let mut notes = Vec::new();
        for (who, snap) in [("stepper A", a), ("stepper B", b)] {
            match snap {
                Ok(snap) => {
                    let plans = futures::executor::block_on(pass::plan_pass(
                        cluster, cluster, &snap, opts, now,
                    ));
                    for p in plans {
                        let r = futures::executor::block_on(pass::execute(cluster, p, false));
                        notes.push(format!("{who}: {}", outcome_note(&r.outcome)));
                    }
                }
                Err(e) => notes.push(format!("{who}: pass failed: {e}")),
            }
        }
        return notes;
    }
    match futures::executor::block_on(pass::run_pass_with(cluster, cluster, opts, now)) {
        Ok(report) => report
            .sets
            .iter()
            .map(|s| format!("stepper: {}", outcome_note(&s.outcome)))
            .collect(),
        Err(e) => vec![format!("stepper: pass failed: {e}")],
    }
}

/// Renders the timeline: a header, then one line per second whose state or notes differ from the last
/// line printed (pods as `<revision letter><state>`, see [`PodView`]), then the summary.
pub fn render(run: &Run, scenario: &Scenario) -> String {
    let mut out = String::new();
    let mode = if run.native {
        "native rolling update (no policy, no stepper)"
    } else {
        "guarded (sts-safe-rollout policy + stepper)"
    };
    let _ = writeln!(
        out,
        "{} — {mode}\n{} replicas, {}, minReadySeconds {}",
        scenario.name,
        scenario.set.replicas,
        scenario.set.pod_management_policy,
        scenario.set.min_ready_seconds
    );
    let revs: Vec<String> = run
        .world
        .revisions
        .iter()
        .map(|r| {
            format!(
                "{}={} ({})",
                r.letter,
                r.name,
                template_image(&r.template).unwrap_or("?")
            )
        })
        .collect();
    let _ = writeln!(out, "revisions: {}", revs.join(", "));
    let _ = writeln!(
        out,
        "pods: <revision><state>  + available  ~ Ready<minReadySeconds  . starting  ! NotReady  x terminating  _ missing"
    );
    let mut last: Option<(i32, Vec<PodView>, usize)> = None;
    let mut last_routine: Vec<&str> = Vec::new();
    for f in &run.frames {
        let state = (f.partition, f.pods.clone(), f.down);
        let routine: Vec<&str> = f
            .notes
            .iter()
            .map(String::as_str)
            .filter(|n| is_routine(n))
            .collect();
        let news = f.notes.iter().any(|n| !is_routine(n))
            || (!routine.is_empty() && routine != last_routine);
        if last.as_ref() == Some(&state) && !news {
            continue;
        }
        let show_routine = routine != last_routine;
        if !routine.is_empty() {
            last_routine = routine;
        }
        let pods: Vec<String> = f
            .pods
            .iter()
            .map(|p| format!("{}{}", p.letter, p.state))
            .collect();
        let head = format!(
            "{:>5}s  p={:<2} [{}] down {}",
            f.t,
            f.partition,
            pods.join(" "),
            f.down
        );
        // One note per line: the first beside the state, the others below it, aligned.
        let mut notes = f.notes.iter().filter(|n| show_routine || !is_routine(n));
        let _ = writeln!(out, "{head}  {}", notes.next().map_or("", String::as_str));
        for n in notes {
            let _ = writeln!(out, "{:width$}  {n}", "", width = head.chars().count());
        }
        last = Some(state);
    }
    out.push_str(&render_summary(&run.summary));
    out
}

/// A stepper note that repeats every pass while nothing changes.
fn is_routine(note: &str) -> bool {
    note.starts_with("stepper") && (note.contains(": Blocked") || note.contains(": Idle"))
}

/// The summary block.
pub fn render_summary(s: &Summary) -> String {
    let duration = match (s.rollout_started, s.rollout_completed) {
        (Some(a), Some(b)) => format!("{}s (t={a}s → t={b}s)", b - a),
        (Some(a), None) => format!("NOT complete by t={}s (started t={a}s)", s.ended),
        _ => "no rollout".into(),
    };
    format!(
        "summary:\n  rollout duration                     {duration}\n  max pods unavailable at once         {}\n  pods restarted while another was down {}\n  steps taken (while a gate failed)    {} ({})\n  steps while the app was unhealthy    {}\n  API conflicts / errors answered      {} / {}\n",
        s.max_down,
        s.restarts_while_down,
        s.steps,
        s.steps_while_gate_failed,
        s.steps_while_app_unhealthy,
        s.conflicts,
        s.api_errors
    )
}

/// Runs `text` (a scenario file) and renders it (the `simulate` subcommand).
///
/// # Errors
/// The scenario does not parse, or its initial CREATE is refused.
pub fn simulate(text: &str, native: bool, seed: u64) -> Result<String, String> {
    let scenario = Scenario::from_yaml(text)?;
    let run = run(&scenario, native, seed)?;
    Ok(render(&run, &scenario))
}
