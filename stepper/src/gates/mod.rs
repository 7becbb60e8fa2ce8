//! The gates: pure checks over one StatefulSet, in docs/design.md's order, from one list ([`GATES`]).
//!
//! Each gate is a `fn(&GateInput) -> Result<(), Blocked>` named after the [`Reason`] it returns. One
//! [`GateInput`] carries everything a gate may read: the set, its [`SetConfig`], its pods, the PDBs of
//! its namespace, the fleet's view of it, what the pass read for the I/O gates ([`Probes`]) and `now`.
//! [`evaluate_input`] skips unguarded and idle sets, runs [`GATES`] in order and returns the
//! [`Verdict`]. Nothing here reads a clock or talks to the API server. The fleet's step budget
//! (`Throttled`) is applied over all sets by [`throttle`]; the Prometheus check's counting is in
//! [`prometheus`], stuck-pod recovery's decision in [`recovery`].
//!
//! Layer `gates` (pure): may import `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod approval;
pub mod approval_note;
pub mod check;
mod check_effects;
pub mod http_check;
mod next_step;
mod on_approval;
mod on_fleet;
mod on_http_check;
mod on_pods;
mod on_prometheus;
mod on_set;
mod on_webhook;
mod options;
pub mod pause_points;
mod probes;
pub mod prometheus;
pub mod recovery;
pub mod throttle;
pub mod webhook;
pub mod webhook_answer;
pub mod webhook_request;

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

pub use next_step::{NextStep, StepError, next_step, step_target};
pub use on_approval::{approval_pending, primary_not_moved};
pub use on_fleet::{check_group, check_owner, group_busy, group_holder, owner_not_healthy};
pub use on_http_check::http_check;
pub use on_http_check::unknown_check;
pub use on_pods::{
    POD_STATE, check_pdbs, check_pods_ready, check_step_done, pdb_blocked, pod_not_ready,
    pods_below_partition_ready, replaced_while_down, step_in_progress,
};
pub use on_prometheus::prometheus_check;
pub use on_set::{check_observed, invalid_annotation, not_observed, paused, settling};
pub use on_webhook::unknown_webhook;
pub use options::GateOptions;
pub use probes::{Need, OwnerProbe, Probes, may_need_reads};

use crate::config::SetConfig;
use crate::model::fields::{Field, Reader};
use crate::model::pods::PdbView;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// Why a guarded StatefulSet needs no step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// No staged update: `status.updateRevision == status.currentRevision` and every replica updated.
    UpToDate,
    /// An update is staged but the partition is already 0 (or absent): the StatefulSet controller rolls
    /// the remaining pods by itself; nothing is left for the stepper.
    PartitionZero,
}

/// What the gates conclude for one StatefulSet in this pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not guarded (`updateStrategy.type: OnDelete`, or `<prefix>/force-rolling-update: "true"`): the
    /// stepper leaves it alone. The string says which.
    Unguarded(&'static str),
    /// Guarded, nothing to step.
    Idle(Idle),
    /// A gate failed; the partition stays.
    Blocked(Blocked),
    /// Lower the partition from `from` (the value observed, pinned by the patch's `test` op) to `to`.
    Step {
        /// The partition the gates saw (`spec.updateStrategy.rollingUpdate.partition`).
        from: i32,
        /// The new partition: `max(0, min(from, spec.replicas) − step)`.
        to: i32,
        /// `status.updateRevision` the gates saw (pinned by the patch's `test` op).
        update_revision: String,
    },
}

/// What the rest of the fleet means for one set: the StatefulSet that holds its rollout group
/// ([`group_holder`]), `None` when the set has no group or nothing in the group is staged.
#[derive(Clone, Copy, Debug, Default)]
pub struct FleetView<'a> {
    /// The group's holder.
    pub group_holder: Option<&'a StatefulSet>,
}

/// Everything a gate may read about one StatefulSet.
#[derive(Clone, Copy, Debug)]
pub struct GateInput<'a> {
    /// The set as listed.
    pub set: &'a StatefulSet,
    /// Its annotations, read once ([`SetConfig::parse`]).
    pub config: &'a SetConfig,
    /// Its pods by ordinal ([`crate::model::pods::pods_by_ordinal`]); empty when not listed.
    pub pods: &'a BTreeMap<u32, &'a Pod>,
    /// The PDBs of its namespace (others are ignored).
    pub pdbs: &'a [PdbView<'a>],
    /// The holder of its rollout group.
    pub fleet: FleetView<'a>,
    /// What the pass read for the I/O gates so far.
    pub probes: &'a Probes,
    /// The flags.
    pub opts: &'a GateOptions,
    /// When the snapshot was taken.
    pub now: Timestamp,
}

impl GateInput<'_> {
    /// `spec.updateStrategy.rollingUpdate.partition`, 0 when absent.
    pub fn partition(&self) -> i32 {
        set::partition(self.set).unwrap_or(0)
    }

    /// The partition the next step lowers to: [`step_target`] with the set's step size, clamped so it
    /// does not pass the next pause point of the canary plan ([`pause_points::Position::clamp`]).
    pub fn target(&self) -> i32 {
        next_step::target(self.set, self.config)
    }

    /// The ordinals the next step replaces when all of them are already down
    /// ([`replaced_while_down`]); they count for neither `PodNotReady` nor `PdbBlocked`.
    pub fn down(&self) -> BTreeSet<u32> {
        replaced_while_down(
            self.set,
            self.pods,
            self.partition(),
            self.target(),
            self.now,
        )
    }
}

/// One gate: passes, or returns the [`Blocked`] with its reason.
pub type Gate = fn(&GateInput<'_>) -> Result<(), Blocked>;

/// What a gate reads beyond the StatefulSet list: this decides which sets get pod reads
/// ([`list_gate_block`]) and which wait for a per-set read ([`Need`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The StatefulSet list alone (its spec, status and annotations, the fleet's rollout groups).
    List,
    /// The set's pods or the PDBs of its namespace.
    Pods,
    /// A read the pass does per set once the gates before pass (the owner, Prometheus).
    Probe,
}

/// One entry of [`GATES`].
#[derive(Clone, Copy, Debug)]
pub struct GateEntry {
    /// The reason the gate returns.
    pub reason: Reason,
    /// What the gate reads.
    pub reads: Reads,
    /// The check.
    pub check: Gate,
    /// The fields of the set, its pods and PDBs the check reads beside the set's annotations
    /// ([`crate::config::READS`]) and the objects' identity and ownership ([`crate::model::fields::IDENTITY`],
    /// [`crate::model::fields::OWNERSHIP`]); declared beside the gate, kept by `watch`'s caches.
    pub fields: &'static [&'static [Field]],
    /// What blocks, in `sts-stepper --help`'s words: lines of at most 78 characters, `\n` between
    /// them ([`help`]).
    pub help: &'static str,
}

const fn gate(
    reason: Reason,
    reads: Reads,
    check: Gate,
    fields: &'static [&'static [Field]],
    help: &'static str,
) -> GateEntry {
    GateEntry {
        reason,
        reads,
        check,
        fields,
        help,
    }
}

/// The gates in docs/design.md's order ("The stepper: one pass"), after the set is found guarded and staged
/// with partition > 0. The first that fails decides. The application is asked last (`PrimaryNotMoved`,
/// `ApprovalPending`): only once every Kubernetes fact and check passes, so no request is written for a
/// step another gate would refuse.
pub const GATES: &[GateEntry] = &[
    gate(
        Reason::Paused,
        Reads::List,
        paused,
        &[on_set::READS],
        "annotation <prefix>/paused: \"true\" (a person, a Prometheus failure-limit,\nor a pause point of <prefix>/pause-at)",
    ),
    gate(
        Reason::InvalidAnnotation,
        Reads::List,
        invalid_annotation,
        &[on_set::READS],
        "a stepper annotation that cannot be read (<prefix>/step, ...)",
    ),
    gate(
        Reason::NotObserved,
        Reads::List,
        not_observed,
        &[on_set::READS],
        "status.observedGeneration < metadata.generation",
    ),
    gate(
        Reason::PodNotReady,
        Reads::Pods,
        pod_not_ready,
        POD_GATE,
        "a pod in [0, replicas) missing, terminating, not Running and Ready,\nor Ready for less than spec.minReadySeconds",
    ),
    gate(
        Reason::StepInProgress,
        Reads::Pods,
        step_in_progress,
        POD_GATE,
        "a pod with ordinal >= partition not yet on status.updateRevision",
    ),
    gate(
        Reason::Settling,
        Reads::List,
        settling,
        &[on_set::READS],
        "<prefix>/initial-delay-seconds not yet passed since the last step",
    ),
    gate(
        Reason::PdbBlocked,
        Reads::Pods,
        pdb_blocked,
        PDB_GATE,
        "a PodDisruptionBudget selecting the pods allows no disruption",
    ),
    gate(
        Reason::GroupBusy,
        Reads::List,
        group_busy,
        &[on_fleet::GROUP_READS],
        "another set of the same <prefix>/rollout-group rolls out first",
    ),
    gate(
        Reason::OwnerNotHealthy,
        Reads::Probe,
        owner_not_healthy,
        &[on_fleet::OWNER_READS],
        "the controller owner's condition <prefix>/owner-condition is not True",
    ),
    gate(
        Reason::PrometheusCheck,
        Reads::Probe,
        prometheus_check,
        &[on_prometheus::READS],
        "<prefix>/prometheus-query* not yet non-empty success-threshold times in a\nrow; failure-limit failures pause the rollout",
    ),
    gate(
        Reason::HttpCheck,
        Reads::Probe,
        http_check,
        &[on_http_check::READS],
        "the value at <prefix>/http-check-jsonpath of the --http-check endpoint that\n<prefix>/http-check names not yet <prefix>/http-check-expect\nsuccess-threshold times in a row",
    ),
    gate(
        Reason::PrimaryNotMoved,
        Reads::Pods,
        primary_not_moved,
        APPROVAL_GATE,
        "a pod <prefix>/primary-selector selects would be replaced: the role moves\nfirst (the application is asked to switch over, with an answerer)",
    ),
    gate(
        Reason::ApprovalPending,
        Reads::Pods,
        approval_pending,
        APPROVAL_GATE,
        "a pod of the step has not approved status.updateRevision\n(<prefix>/pre-update-approval), or the <prefix>/pre-update-webhook\nwebhook has not answered Approve",
    ),
];

/// The pod gates' fields: the pods' state and what the next step covers.
const POD_GATE: &[&[Field]] = &[on_pods::READS, on_pods::POD_STATE];
/// `PdbBlocked`'s: the pods' labels and state, the PDBs.
const PDB_GATE: &[&[Field]] = &[on_pods::READS, on_pods::POD_STATE, on_pods::PDB_READS];
/// The application's gates': the step's pods, their revisions, labels and handshake.
const APPROVAL_GATE: &[&[Field]] = &[on_approval::READS, on_pods::POD_STATE];

/// Every field a gate or the gates' helpers (recovery, the next step) read ([`GateEntry::fields`],
/// [`recovery::READS`]), by reader: with [`crate::config::READS`], what `watch`'s caches keep.
pub fn readers() -> Vec<Reader> {
    let mut readers: Vec<Reader> = GATES
        .iter()
        .flat_map(|g| {
            g.fields.iter().map(move |fields| Reader {
                name: g.reason.as_str(),
                fields,
            })
        })
        .collect();
    readers.push(Reader {
        name: "gates::recovery",
        fields: recovery::READS,
    });
    readers.push(Reader {
        name: "gates::recovery (pod state)",
        fields: on_pods::POD_STATE,
    });
    readers
}

/// The gates as `sts-stepper --help` lists them, in order: every row of [`GATES`] with its
/// [`GateEntry::help`], then the fleet's budget (`Throttled`, [`throttle::HELP`]), judged over all
/// sets after them.
pub fn help() -> Vec<(Reason, &'static str)> {
    GATES
        .iter()
        .map(|g| (g.reason, g.help))
        .chain([(Reason::Throttled, throttle::HELP)])
        .collect()
}

/// The first gate judged from the StatefulSet list alone ([`Reads::List`]: `Paused`,
/// `InvalidAnnotation`, `NotObserved`, `Settling`, `GroupBusy`) that blocks `input`; `None` when the set
/// may step as far as the list can tell. `input.pods` and `input.probes` are not read.
pub fn list_gate_block(input: &GateInput<'_>) -> Option<Blocked> {
    GATES
        .iter()
        .filter(|g| g.reads == Reads::List)
        .find_map(|g| (g.check)(input).err())
}

/// True when `reason` is the reason of a gate judged from the StatefulSet list alone ([`Reads::List`],
/// the gates [`list_gate_block`] runs).
pub fn reads_list(reason: Reason) -> bool {
    GATES
        .iter()
        .any(|g| g.reason == reason && g.reads == Reads::List)
}

/// The full result of the gates for one set.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The verdict (with `need` set, a `Blocked` saying what is not read yet).
    pub verdict: Verdict,
    /// A read that would let the verdict go further.
    pub need: Option<Need>,
    /// Annotation changes the gates ask for (`Some` sets, `None` removes), by full key: the Prometheus
    /// check's state, or the pause after `failure-limit` failures.
    pub changes: Vec<(String, Option<String>)>,
    /// The block is part of the rollout's normal rhythm even though its reason may not be
    /// ([`Reason::is_expected_wait`]): a Prometheus check counting up its successes.
    pub expected_wait: bool,
    /// What the canary plan writes ([`pause_points`]): a pause now (with a `Paused` block), or with a
    /// step its bake-time resume and the pause at the point it reaches.
    pub canary: Option<Box<pause_points::PlanEffect>>,
    /// The writes on the set's pods the approval handshake asks for ([`approval::pod_writes`]).
    pub pod_writes: Vec<approval::PodWrite>,
    /// While the next step waits for the application: (seconds waited, `approval-timeout-seconds`).
    pub approval_wait: Option<(i64, i64)>,
    /// What the approval gates wait for, in one stable line ([`approval_note`]): the value of
    /// `<prefix>/approval-pending` while they hold the step.
    pub approval_note: Option<String>,
    /// A pod's denial (name, reason) that answers no request of this pass (the pod denied before it
    /// was asked): announced `ApprovalDenied` when [`Evaluation::approval_note`] becomes it. A denial
    /// answering a request is announced with the request's withdrawal instead.
    pub unasked_denial: Option<(String, String)>,
}

impl Evaluation {
    fn of(verdict: Verdict) -> Self {
        Evaluation {
            verdict,
            need: None,
            changes: Vec::new(),
            expected_wait: false,
            canary: None,
            pod_writes: Vec::new(),
            approval_wait: None,
            approval_note: None,
            unasked_denial: None,
        }
    }
}

/// The verdict before any gate: `Unguarded` (OnDelete, an unknown strategy, forced), `Idle` (nothing
/// staged, or partition 0); `None` when the gates decide.
pub fn before_gates(set: &StatefulSet, config: &SetConfig) -> Option<Verdict> {
    if set::is_on_delete(set) {
        return Some(Verdict::Unguarded("updateStrategy OnDelete"));
    }
    if !set::is_rolling_update(set) {
        return Some(Verdict::Unguarded("unknown updateStrategy type"));
    }
    if config.forced {
        return Some(Verdict::Unguarded("force-rolling-update"));
    }
    if !set::has_staged_update(set) {
        return Some(Verdict::Idle(Idle::UpToDate));
    }
    if set::partition(set).unwrap_or(0) <= 0 {
        return Some(Verdict::Idle(Idle::PartitionZero));
    }
    None
}

/// True for a set with nothing left to step ([`before_gates`]) whose pods must be read to withdraw the
/// approval requests on them (a rollback, a forced set): the handshake is on and the rollout was
/// blocked when last seen (`blocked-reason` recorded; a pass that writes a request always blocks, and
/// only a step, which withdraws the others, clears it), or `approval-pending` is recorded (it stays,
/// saying so, while a withdrawal is under way: a pod write lost in one pass is retried in the next,
/// [`approval_note::withdrawing`]).
pub fn withdraws_requests(config: &SetConfig) -> bool {
    config.approval.is_some()
        && (config.stamps.blocked_reason.is_some() || config.stamps.approval_pending.is_some())
}

/// The gates for one StatefulSet: [`before_gates`], then [`GATES`] in order; else a step to
/// [`GateInput::target`]. When an I/O gate lacks its read, the evaluation is `Blocked` with
/// [`Evaluation::need`] saying what to read.
pub fn evaluate_input(input: &GateInput<'_>) -> Evaluation {
    if let Some(verdict) = before_gates(input.set, input.config) {
        let mut ev = Evaluation::of(verdict);
        pause_points::effects(input, &mut ev); // an idle set's plan pause is lifted
        if input.config.approval.is_some() {
            ev.pod_writes = approval::withdraw_all(input.pods, &input.config.keys, input.now);
        }
        return ev;
    }
    let blocked = GATES.iter().find_map(|g| (g.check)(input).err());
    let blocked_by = blocked.as_ref().map(|b| b.reason);
    // The step is pinned only for a set that takes it (a blocked one's is [`next_step`], on demand).
    let mut ev = Evaluation::of(match blocked {
        Some(b) => Verdict::Blocked(b),
        None => match next_step(input.set, input.config) {
            Ok(n) => Verdict::Step {
                from: n.from,
                to: n.to,
                update_revision: n.update_revision,
            },
            // Unreachable: `InvalidAnnotation` and `NotObserved` block first; fail closed anyway.
            Err(e) => Verdict::Blocked(Blocked::new(Reason::NotObserved, e.to_string())),
        },
    });
    let reached = |reason: Reason| blocked_by.is_none_or(|r| r == reason);
    if blocked_by == Some(Reason::OwnerNotHealthy) && input.probes.owner.is_none() {
        ev.need = set::controller_owner(input.set).cloned().map(Need::Owner);
    }
    if reached(Reason::PrometheusCheck) {
        on_prometheus::effects(input, &mut ev);
    }
    if reached(Reason::HttpCheck) {
        on_http_check::effects(input, &mut ev);
    }
    if reached(Reason::PrimaryNotMoved) || blocked_by == Some(Reason::ApprovalPending) {
        on_approval::effects(input, &mut ev);
    }
    pause_points::effects(input, &mut ev);
    ev
}

/// The gates for one StatefulSet read on its own: its annotations parsed with `opts.keys`, then
/// [`evaluate_input`]. `pods` are the set's pods by ordinal; `pdbs` the PDBs of its namespace; `fleet`
/// the holder of its rollout group; `probes` what the pass read for the I/O gates so far.
pub fn evaluate(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    fleet: FleetView<'_>,
    probes: &Probes,
    opts: &GateOptions,
    now: Timestamp,
) -> Evaluation {
    let config = SetConfig::parse(set, &opts.keys);
    evaluate_input(&GateInput {
        set,
        config: &config,
        pods,
        pdbs,
        fleet,
        probes,
        opts,
        now,
    })
}

/// The verdict for one StatefulSet with no fleet context and no I/O results: [`evaluate`] with an
/// empty [`FleetView`] and empty [`Probes`] (a set with an owner condition or a due Prometheus check
/// is then `Blocked`, saying what was not read).
pub fn decide(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> Verdict {
    let none = Probes::default();
    evaluate(set, pods, pdbs, FleetView::default(), &none, opts, now).verdict
}
