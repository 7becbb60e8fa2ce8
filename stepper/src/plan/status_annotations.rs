//! The status annotations a pass writes besides the step, and the Events they announce.
//!
//! They are `initialized`, `blocked-reason`, `approval-pending`, `completed-revision`, the gates' own state, and
//! `degraded-reason`: a stuck pod's record ([`crate::plan::degraded`]) and the removal of one that
//! records a refused write ([`crate::plan::rejected`]).

use std::collections::BTreeMap;
use sts_safe_rollout_rules::annotations as names;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use sts_safe_rollout_rules::annotations::TRUE;

use crate::config::SetConfig;
use crate::gates::{self, Evaluation, Idle, Verdict};
use crate::model::reasons::Reason;
use crate::model::set;
use crate::plan::degraded::{self, StuckPods};
use crate::plan::effects;
use crate::plan::events::EventNote;

/// The status annotations of one evaluated set, as plain changes: the set's write alone, or carried by
/// the step or the rollback (one write, issue 12 item 5: `plan::set_write::SetWrite`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusChanges<'a> {
    /// Annotation changes by full key (`Some` sets, `None` removes).
    pub changes: Vec<(String, Option<String>)>,
    /// `test` ops that must hold for the changes to apply (the Prometheus check's state; the canary
    /// plan's pins, [`crate::plan::canary::CanaryWrites::pins`]).
    pub guards: Vec<json_patch::PatchOperation>,
    /// The Events to publish once the changes are written.
    pub events: Vec<EventNote>,
    /// The rollback the gates ask for ([`effects::Rollback`]): a write of its own.
    pub rollback: Option<effects::Rollback>,
    /// What the pass claims of `degraded-reason` ([`degraded::next`] decides it, with what the step
    /// or the rollback adds).
    pub degraded: Vec<degraded::Claim<'a>>,
}

impl StatusChanges<'_> {
    /// Decides `degraded-reason` ([`degraded::next`]) over the pass's claims and `also` (the step's,
    /// the rollback's), adding its change and its Event: the one write of that annotation.
    pub fn settle_degraded(&mut self, config: &SetConfig, also: Vec<degraded::Claim<'_>>) {
        // `also` first: `degraded::next` takes the first record it meets. Without it (most sets, every
        // pass) the pass's claims are read where they are, not copied.
        let decided = if also.is_empty() {
            degraded::next(config, &self.degraded)
        } else {
            let mut claims: Vec<degraded::Claim<'_>> = also;
            claims.extend(self.degraded.iter().cloned());
            degraded::next(config, &claims)
        };
        self.changes.extend(decided.keyed(config));
        self.events.extend(decided.event);
    }
}

/// The status annotations for one evaluated set and the Events to publish once they are written
/// (`Blocked` on a new reason, `RolloutPaused`, `RolloutComplete`); none for a set without the
/// policy's mark (`guarded`), which is not the stepper's.
///
/// - `initialized: "true"` once a guarded set with ≥ 1 replica is fully Ready (0 replicas is "fully
///   Ready" with no pod ever Ready: docs/design.md keeps such a set fixable by a plain re-apply);
/// - `blocked-reason`: set when the reason changes (one `Blocked` Event per change, not per pass),
///   removed when idle or unguarded (a step's own patch removes it);
/// - the gates' writes ([`Evaluation::effects`], [`effects::gate_writes`]: their state, a pause,
///   `approval-pending`) unless a step follows (a step starts the check's counts over and removes the
///   approval line), pinned by a `test` op so two steppers never both count one period's check;
/// - `completed-revision` with its `RolloutComplete` Event, once per revision;
/// - what the pass claims of `degraded-reason` ([`degraded::Claim`]: `stuck`, what the pass knows of
///   the set's stuck pods; the gates' records; a refused write this pass clears,
///   [`crate::plan::rejected::cleared_without_step`]), decided with the step's and the rollback's
///   claims by [`degraded::next`] in [`StatusChanges::settle_degraded`].
pub fn status_changes<'a>(
    set: &StatefulSet,
    config: &SetConfig,
    pods: &BTreeMap<u32, &Pod>,
    ev: &Evaluation,
    stuck: StuckPods<'a>,
    now: Timestamp,
) -> StatusChanges<'a> {
    if !config.marked {
        // Not the stepper's (no guarded mark: a manual canary, a set the policy does not cover):
        // nothing is written on it (`gates::evaluate::UNMARKED`).
        return StatusChanges::default();
    }
    let keys = &config.keys;
    let verdict = &ev.verdict;
    let announced = config.stamps.blocked;
    let recorded = config.stamps.blocked_reason.is_some();
    let mut changes: Vec<(String, Option<String>)> = Vec::new();
    let mut events = Vec::new();
    if !matches!(verdict, Verdict::Unguarded(_))
        && set::replicas(set) >= 1
        && set::is_fully_ready(set)
        && !config.initialized
    {
        changes.push((keys.of(names::INITIALIZED).to_string(), Some(TRUE.into())));
    }
    match verdict {
        Verdict::Blocked(b) => {
            if announced != Some(b.reason) {
                changes.push((
                    keys.of(names::BLOCKED_REASON).to_string(),
                    Some(b.reason.as_str().into()),
                ));
                let step_pods_only = b.reason == Reason::PodNotReady
                    && gates::pods_below_partition_ready(set, pods, now);
                events.push(EventNote::blocked(b, step_pods_only || ev.expected_wait));
            }
        }
        Verdict::Step { .. } => {} // the step patch clears it
        Verdict::Idle(_) | Verdict::Unguarded(_) => {
            if recorded {
                changes.push((keys.of(names::BLOCKED_REASON).to_string(), None));
            }
        }
    }
    let mut guards = Vec::new();
    let mut rollback = None;
    // Room for the claims most sets make (`Stuck`, `NoStep`): one allocation, not a regrowth.
    let mut claims = Vec::with_capacity(2);
    claims.push(degraded::Claim::Stuck(stuck));
    if !matches!(verdict, Verdict::Step { .. }) {
        let gate = effects::gate_writes(set, config, ev);
        changes.extend(gate.changes);
        guards = gate.guards;
        events.extend(gate.events);
        rollback = gate.rollback;
        claims.push(degraded::Claim::NoStep {
            nothing_to_step: matches!(verdict, Verdict::Idle(_) | Verdict::Unguarded(_)),
        });
        claims.extend(gate.degraded);
    }
    if *verdict == Verdict::Idle(Idle::UpToDate)
        && set::partition(set).unwrap_or(0) == 0
        && set::is_fully_ready(set)
        && config.stamps.last_partition_update.is_some()
        && let Some(revision) = set
            .status
            .as_ref()
            .and_then(|s| s.update_revision.as_deref())
        && config.stamps.completed_revision.as_deref() != Some(revision)
    {
        changes.push((
            keys.of(names::COMPLETED_REVISION).to_string(),
            Some(revision.to_string()),
        ));
        events.push(EventNote::complete(revision, set::replicas(set)));
    }
    StatusChanges {
        changes,
        guards,
        events,
        rollback,
        degraded: claims,
    }
}
