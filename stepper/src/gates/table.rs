//! The gates in one list ([`GATES`]): each row's reason, what it reads, its check, the fields it reads
//! and its `--help` line; and what the list answers (the fields every reader reads, the help, the
//! first gate of the list that blocks).

use k8s_openapi::api::apps::v1::StatefulSet;

use super::approval;
use super::check::http::{self, Http};
use super::check::kind::{effects as check_effects, gate as check_gate};
use super::check::prometheus::{self, Prometheus};
use super::failure;
use super::fleet::{self, group_busy, owner_not_healthy};
use super::input::{Gate, GateInput};
use super::pods::{self, pdb_blocked, pod_not_ready, step_in_progress};
use super::recovery;
use super::returning::{self, ReturnPod};
use super::rollback;
use super::scope;
use super::set::{self, invalid_annotation, not_observed, paused, settling};
use super::throttle;
use super::verdict::Evaluation;
use crate::config::SetConfig;
use crate::model::fields::{Field, Reader};
use crate::model::reasons::{Blocked, Reason};

/// What a gate reads beyond the StatefulSet list: this decides which sets get pod reads
/// ([`list_gate_block`]) and which wait for a per-set read (`Need`).
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
    /// What the gate asks the pass to read and write once reached, if anything.
    pub effects: Option<Effects>,
    /// Not asked while the set steps back after a rollback ([`rollback::stepping_back`]): the
    /// application checks, one of which failed the revision the set leaves; the Kubernetes gates and
    /// the approvals are asked.
    pub skipped_stepping_back: bool,
    /// While the gate blocks, the gates are run again on a view of the set, if any (`Rerun`).
    pub rerun: Option<Rerun>,
}

/// A gate that, while it blocks, has the gates run again on a view of the set and folds what they say
/// into the set's evaluation (`FailedRevision`: the return of a pod a re-apply left on the failed
/// revision, judged as the step back it stands for, `gates::returning`). One level deep: the view has
/// nothing left to run again.
#[derive(Clone, Copy, Debug)]
pub struct Rerun {
    /// The view, when there is something to judge: the set and its annotations as the step back reads
    /// them, and the pod it returns.
    pub view: fn(&GateInput<'_>) -> Option<(StatefulSet, SetConfig, ReturnPod)>,
    /// Folds the gates' evaluation of the view into the set's.
    pub judge: fn(&mut Evaluation, ReturnPod, Evaluation),
}

/// What a gate asks the pass for beside its verdict: the read that lets it decide ([`Evaluation::need`])
/// and its writes ([`Evaluation::effects`], [`Evaluation::pod_writes`]).
#[derive(Clone, Copy, Debug)]
pub struct Effects {
    /// Records the gate's read and writes in the evaluation (its verdict already in it).
    pub record: fn(&GateInput<'_>, &mut Evaluation),
    /// The gate is reached when no gate blocked or the first to block is its own; for a family, also
    /// when it is one of these (the family's later gates, one answerer behind them).
    pub also_at: &'static [Reason],
}

impl GateEntry {
    /// True when the gate is asked of `input` (not skipped while it steps back).
    pub fn asked(&self, input: &GateInput<'_>) -> bool {
        !(self.skipped_stepping_back && rollback::stepping_back(input))
    }

    /// True when the gate was reached in an evaluation whose first block is `blocked_by` (`None`: every
    /// gate passed): its effects are then recorded.
    pub fn reached(&self, blocked_by: Option<Reason>) -> bool {
        let also_at = self.effects.map_or(&[][..], |e| e.also_at);
        blocked_by.is_none_or(|r| r == self.reason || also_at.contains(&r))
    }

    const fn with_effects(
        self,
        record: fn(&GateInput<'_>, &mut Evaluation),
        also_at: &'static [Reason],
    ) -> Self {
        GateEntry {
            effects: Some(Effects { record, also_at }),
            ..self
        }
    }

    const fn with_rerun(
        self,
        view: fn(&GateInput<'_>) -> Option<(StatefulSet, SetConfig, ReturnPod)>,
        judge: fn(&mut Evaluation, ReturnPod, Evaluation),
    ) -> Self {
        GateEntry {
            rerun: Some(Rerun { view, judge }),
            ..self
        }
    }

    const fn skipped_stepping_back(self) -> Self {
        GateEntry {
            skipped_stepping_back: true,
            ..self
        }
    }
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
        effects: None,
        skipped_stepping_back: false,
        rerun: None,
    }
}

/// The gates in docs/design.md's order ("The stepper: one pass"), after the set is found guarded and staged
/// with partition > 0. The first that fails decides. The application is asked last (`PrimaryNotMoved`,
/// `ApprovalPending`): only once every Kubernetes fact and check passes, so no request is written for a
/// step another gate would refuse.
pub const GATES: &[GateEntry] = &[
    gate(
        Reason::OutOfScope,
        Reads::List,
        scope::out_of_scope,
        &[scope::READS],
        "a set the policy marked guarded is outside the stepper's scope: its labels\nno longer match --selector (the opt-in label removed), or its namespace is\none every scope excludes",
    ),
    gate(
        Reason::Paused,
        Reads::List,
        paused,
        &[set::READS],
        "annotation <prefix>/paused: \"true\" (a person, a Prometheus failure-limit,\nor a pause point of <prefix>/pause-at)",
    ),
    gate(
        Reason::InvalidAnnotation,
        Reads::List,
        invalid_annotation,
        &[set::READS],
        "a stepper annotation that cannot be read (<prefix>/step, ...)",
    ),
    gate(
        Reason::FailedRevision,
        Reads::List,
        rollback::failed_revision,
        &[rollback::READS],
        "status.updateRevision is the revision <prefix>/failed-revision records: the\nstepper rolled it back (<prefix>/on-failure: rollback); held until the\ntemplate changes or resume --retry",
    )
    .with_rerun(returning::rerun_view, returning::judge),
    gate(
        Reason::NotObserved,
        Reads::List,
        not_observed,
        &[set::READS],
        "status.observedGeneration < metadata.generation",
    ),
    gate(
        Reason::PodNotReady,
        Reads::Pods,
        pod_not_ready,
        POD_GATE,
        "a pod in [0, replicas) missing, terminating, not Running and Ready,\nor Ready for less than spec.minReadySeconds",
    )
    .with_effects(failure::progress_deadline, &[]),
    gate(
        Reason::StepInProgress,
        Reads::Pods,
        step_in_progress,
        POD_GATE,
        "a pod with ordinal >= partition not yet on status.updateRevision",
    )
    .with_effects(failure::progress_deadline, &[]),
    gate(
        Reason::Settling,
        Reads::List,
        settling,
        &[set::READS],
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
        &[fleet::GROUP_READS],
        "another set of the same <prefix>/rollout-group rolls out first",
    ),
    gate(
        Reason::OwnerNotHealthy,
        Reads::Probe,
        owner_not_healthy,
        &[fleet::OWNER_READS],
        "the controller owner's condition <prefix>/owner-condition is not True",
    )
    .with_effects(fleet::owner_need, &[]),
    gate(
        Reason::PrometheusCheck,
        Reads::Probe,
        check_gate::<Prometheus>,
        &[prometheus::READS],
        "<prefix>/prometheus-query* not yet non-empty success-threshold times in a\nrow; failure-limit failures pause the rollout",
    )
    .with_effects(check_effects::<Prometheus>, &[])
    .skipped_stepping_back(),
    gate(
        Reason::HttpCheck,
        Reads::Probe,
        check_gate::<Http>,
        &[http::READS],
        "the value at <prefix>/http-check-jsonpath of the --http-check endpoint that\n<prefix>/http-check names not yet <prefix>/http-check-expect\nsuccess-threshold times in a row",
    )
    .with_effects(check_effects::<Http>, &[])
    .skipped_stepping_back(),
    gate(
        Reason::PrimaryNotMoved,
        Reads::Pods,
        approval::primary_not_moved,
        APPROVAL_GATE,
        "a pod <prefix>/primary-selector selects would be replaced: the role moves\nfirst (the application is asked to switch over, with an answerer)",
    )
    .with_effects(approval::effects, &[Reason::ApprovalPending]),
    gate(
        Reason::ApprovalPending,
        Reads::Pods,
        approval::approval_pending,
        APPROVAL_GATE,
        "a pod of the step has not approved status.updateRevision\n(<prefix>/pre-update-approval), or the <prefix>/pre-update-webhook\nwebhook has not answered Approve",
    ),
];

/// The pod gates' fields: the pods' state and what the next step covers.
const POD_GATE: &[&[Field]] = &[pods::READS, pods::POD_STATE, failure::READS];
/// `PdbBlocked`'s: the pods' labels and state, the PDBs.
const PDB_GATE: &[&[Field]] = &[pods::READS, pods::POD_STATE, pods::PDB_READS];
/// The application's gates': the step's pods, their revisions, labels and handshake.
const APPROVAL_GATE: &[&[Field]] = &[approval::READS, pods::POD_STATE];

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
        fields: pods::POD_STATE,
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
        .filter(|g| g.reads == Reads::List && g.asked(input))
        .find_map(|g| (g.check)(input).err())
}

/// True when `reason` is the reason of a gate judged from the StatefulSet list alone ([`Reads::List`],
/// the gates [`list_gate_block`] runs).
pub fn reads_list(reason: Reason) -> bool {
    GATES
        .iter()
        .any(|g| g.reason == reason && g.reads == Reads::List)
}
