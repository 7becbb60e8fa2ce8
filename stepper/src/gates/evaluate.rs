//! The gates for one StatefulSet: before any gate ([`before_gates`]: unguarded, idle), then
//! [`GATES`] in order, then what the gates reached ask for ([`evaluate_input`]).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::input::{FleetView, GateInput};
use super::next_step::next_step;
use super::options::GateOptions;
use super::probes::Probes;
use super::table::GATES;
use super::verdict::{Evaluation, Idle, Verdict};
use super::{approval, canary};
use crate::config::{Answerer, SetConfig};
use crate::model::pods::PdbView;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// Why a set without the policy's mark is not stepped (`Verdict::Unguarded`): a partition a person set
/// by hand (a manual canary), a set outside the policy's scope, or one staged by a policy older than
/// the mark. The stepper writes nothing on it (`plan::status_annotations`).
pub const UNMARKED: &str = "no guarded mark: the policy did not stage it";

/// The verdict before any gate: `Unguarded` (OnDelete, an unknown strategy, forced, no guarded mark),
/// `Idle` (nothing staged, or partition 0); `None` when the gates decide.
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
    if !config.marked {
        return Some(Verdict::Unguarded(UNMARKED));
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
/// [`approval::note::withdrawing`]).
pub fn withdraws_requests(config: &SetConfig) -> bool {
    matches!(config.answerer, Some(Answerer::Pods(_)))
        && (config.stamps.blocked_reason.is_some() || config.stamps.approval_pending.is_some())
}

/// The gates for one StatefulSet: [`before_gates`], then [`GATES`] in order; else a step to
/// [`GateInput::target`]; held `FailedRevision`, the return of a pod left on that revision
/// (`gates::returning`, the rerun of its row). When an I/O gate lacks its read, the evaluation is `Blocked` with
/// [`Evaluation::need`] saying what to read.
pub fn evaluate_input(input: &GateInput<'_>) -> Evaluation {
    if let Some(verdict) = before_gates(input.set, input.config) {
        let mut ev = Evaluation::of(verdict);
        if !input.config.marked {
            return ev; // not the stepper's: nothing is written on it or its pods
        }
        canary::effects(input, &mut ev); // an idle set's plan pause is lifted
        if matches!(input.config.answerer, Some(Answerer::Pods(_))) {
            ev.pod_writes = approval::withdraw_all(input.pods, &input.config.keys, input.now);
        }
        return ev;
    }
    let asked = || GATES.iter().filter(|g| g.asked(input));
    let blocked = asked().find_map(|g| (g.check)(input).err());
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
    for g in asked().filter(|g| g.reached(blocked_by)) {
        if let Some(effects) = g.effects {
            (effects.record)(input, &mut ev);
        }
    }
    // The blocking gate's rerun (`FailedRevision` with a pod a re-apply left on that revision: the pod
    // is returned under the gates of the step back it stands for — this same list, run on the view of
    // the set whose next step replaces exactly it, where no pod is left to return: one level deep).
    if let Some(rerun) = GATES
        .iter()
        .find(|g| Some(g.reason) == blocked_by)
        .and_then(|g| g.rerun)
        && let Some((set, config, pod)) = (rerun.view)(input)
    {
        let back = evaluate_input(&GateInput {
            set: &set,
            config: &config,
            ..*input
        });
        (rerun.judge)(&mut ev, pod, back);
    }
    canary::effects(input, &mut ev);
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
