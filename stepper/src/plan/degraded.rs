//! `<prefix>/degraded-reason`: the one place that decides when it is written and when removed
//! ([`next`]), over what each writer claims in a pass or a command ([`Claim`]).
//!
//! The value is a [`Record`] (`<Kind>: <detail>`, `model::degraded`); GitOps health
//! ([`crate::rollout::health`]) reads any value as Degraded. The precedence, in order:
//!
//! 1. A record that replaces whatever is there: the rollback's (`RolledBack`), a refused write's
//!    (`StepRejected`, `StatusWriteRejected`, `plan::rejected`), a failure's pause (`FailureLimit`,
//!    `ProgressDeadline`, [`crate::gates::Effect::Pause`]); `release` removes any record, `resume`
//!    the pause's (and `--retry` the rollback's).
//! 2. What the pass's verdict clears: a step clears the refusals' records, those a gate holds the
//!    step on (`CheckErrors`, `ApprovalTimeout`, `WebhookErrors`: every gate passed) and — when the
//!    step is a new revision's — the rollback's; a pass without a step clears a refused status write
//!    (it is itself a status write that succeeds), and, with nothing left to step, a refused step and
//!    the gates' records.
//! 3. The gates' own records ([`crate::gates::Effect::Degraded`]): written when nothing is recorded
//!    (the first stays until removed: one `RolloutDegraded` Event per episode), removed when of the
//!    holder's kinds and no longer called for; a record of another kind is never touched.
//! 4. Else a stuck pod's (`StuckPod`, when its pods were read; a failure's pause record stays while
//!    the set is paused).
//!
//! A value naming no kind (a person's, a newer stepper's) is left alone but by `release`.

use json_patch::{AddOperation, Patch, PatchOperation};
use serde_json::json;
use sts_safe_rollout_rules::annotations as names;

use crate::config::{Keys, SetConfig};
use crate::gates::DegradedOwner;
use crate::gates::recovery::{self, Action, Finding};
pub use crate::model::degraded::{DegradedKind, Record};
use crate::plan::events::EventNote;
use crate::plan::patch::{ptr, test};

/// What a pass knows of the set's stuck pods.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StuckPods<'a> {
    /// The set's pods were not read this pass: a recorded stuck pod is kept as it is.
    NotRead,
    /// Read: recovery's finding, if any ([`recovery::decide`]).
    Read(Option<&'a Finding>),
}

/// What one writer says of `degraded-reason` in a pass or a command.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim<'a> {
    /// The pass rolls the set back: its `RolledBack` record replaces any record.
    RolledBack(Record),
    /// A write the API server refused (`plan::rejected`): its record replaces any record.
    Refused(Record),
    /// A failure pauses the set: its record (`FailureLimit`, `ProgressDeadline`) replaces any record.
    Paused(Record),
    /// `release`: any record goes.
    Release,
    /// `resume` removes a failure's pause record; with `retry` the rollback's too.
    Resume {
        /// `resume --retry`.
        retry: bool,
    },
    /// The pass steps; `new_revision`: of a revision other than the failed and the rolled-back one
    /// (`plan::patch::ends_rollback`).
    Step {
        /// The step ends a rollback's record.
        new_revision: bool,
    },
    /// The pass does not step; `nothing_to_step`: its verdict is `Idle` or `Unguarded`.
    NoStep {
        /// Nothing is left to step.
        nothing_to_step: bool,
    },
    /// A gate holds the step on a record of its own (`wanted`), or on none any more.
    Gate {
        /// The gate's owner of records.
        owner: DegradedOwner,
        /// The record its state calls for now.
        wanted: Option<Record>,
    },
    /// What the pass knows of the set's stuck pods.
    Stuck(StuckPods<'a>),
}

/// What [`next`] decides: `change` — `None` leaves the record, `Some(None)` removes it, `Some(Some(v))`
/// writes `v` — and the Warning `RolloutDegraded` Event announcing a new record of a gate or a stuck
/// pod (the other records have Events of their own: `RolledBack`, `StepRejected`, `RolloutPaused`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// The change of the annotation.
    pub change: Option<Option<String>>,
    /// The Event, when one is due.
    pub event: Option<EventNote>,
}

impl Change {
    fn set(value: String, announce: bool) -> Self {
        Change {
            event: announce.then(|| EventNote::degraded(&value)),
            change: Some(Some(value)),
        }
    }

    fn remove() -> Self {
        Change {
            change: Some(None),
            event: None,
        }
    }

    /// The annotation change under `config`'s prefix (full key, `Some` sets, `None` removes), when
    /// there is one: what a writer folds into its patch.
    pub fn keyed(&self, config: &SetConfig) -> Option<(String, Option<String>)> {
        let value = self.change.clone()?;
        Some((config.keys.of(names::DEGRADED_REASON).to_string(), value))
    }
}

/// The `degraded-reason` change of one pass or command on a set whose annotations are `config`, given
/// every writer's `claims` (the module's precedence).
pub fn next(config: &SetConfig, claims: &[Claim<'_>]) -> Change {
    let current = config.stamps.degraded_reason.as_deref();
    let kind = current.and_then(DegradedKind::of);
    // 1. Records that replace any other, then the commands' removals.
    for c in claims {
        match c {
            Claim::RolledBack(r) | Claim::Refused(r) | Claim::Paused(r) => {
                return Change::set(r.value(), false);
            }
            _ => {}
        }
    }
    for c in claims {
        match c {
            Claim::Release if current.is_some() => return Change::remove(),
            Claim::Resume { retry }
                if kind
                    .is_some_and(|k| k.pauses() || (*retry && k == DegradedKind::RolledBack)) =>
            {
                return Change::remove();
            }
            _ => {}
        }
    }
    // 2. What the verdict clears.
    let cleared = claims.iter().any(|c| match (c, kind) {
        (Claim::Step { new_revision }, Some(k)) => k.cleared_by_step(*new_revision),
        (Claim::NoStep { nothing_to_step }, Some(k)) => k.cleared_without_step(*nothing_to_step),
        _ => false,
    });
    if cleared {
        return Change::remove();
    }
    // 3. The gates' own records, judged on the record as read.
    let mut decided: Option<Change> = None;
    for c in claims {
        if let Claim::Gate { owner, wanted } = c {
            match (wanted, kind, current) {
                (Some(r), _, None) if decided.is_none() => {
                    decided = Some(Change::set(r.value(), true));
                }
                (None, Some(k), Some(_)) if owner.kinds().contains(&k) => {
                    decided = Some(Change::remove());
                }
                _ => {}
            }
        }
    }
    if let Some(d) = decided {
        return d;
    }
    // 4. A stuck pod's record; a failure's pause record kept while paused.
    let Some(stuck) = claims.iter().find_map(|c| match c {
        Claim::Stuck(s) => Some(*s),
        _ => None,
    }) else {
        return Change::default();
    };
    if kind.is_some_and(|k| k != DegradedKind::StuckPod && !k.pauses())
        || (current.is_some() && kind.is_none())
    {
        return Change::default();
    }
    let wanted = if kind.is_some_and(DegradedKind::pauses) && config.paused {
        current.map(str::to_string)
    } else {
        match stuck {
            StuckPods::NotRead if kind == Some(DegradedKind::StuckPod) => {
                current.map(str::to_string)
            }
            StuckPods::NotRead => None,
            StuckPods::Read(finding) => finding.and_then(|f| stuck_pod(config, f)),
        }
    };
    match wanted {
        w if w.as_deref() == current => Change::default(),
        Some(v) => Change::set(v, true),
        None => Change::remove(),
    }
}

/// The `StuckPod` value for `finding` when its pod has been not Ready for at least the set's
/// `recover-after-seconds` ([`recovery::recover_after_seconds`]) and recovery does not delete it this
/// pass, e.g. `StuckPod: web-4 not Ready for more than 300s on revision web-a, its ordinal runs
/// web-b; not deleted: recovery off (--recover-stuck-pods)`. Stable from pass to pass while nothing
/// changes (no elapsed seconds in it), so it is written and announced once.
pub fn stuck_pod(config: &SetConfig, finding: &Finding) -> Option<String> {
    let after = recovery::recover_after_seconds(config);
    if finding.action == Action::Delete || finding.pod.not_ready_seconds < after {
        return None;
    }
    let p = &finding.pod;
    Some(
        Record::new(
            DegradedKind::StuckPod,
            format!(
                "{} not Ready for more than {after}s on revision {}, its ordinal runs {}; {}",
                p.name, p.revision, p.expected_revision, finding.action
            ),
        )
        .value(),
    )
}

/// What a record patch needs of the set as last known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordBase<'a> {
    /// `metadata.annotations` is present (the record adds a key; else it adds the map).
    pub annotated: bool,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<&'a str>,
    /// The `degraded-reason` on it, if any.
    pub recorded: Option<&'a str>,
}

/// The metadata-only JSON Patch that records `value` in `degraded-reason` on the set `base`
/// describes: `test` the old value and `add` the new one; with no old value, `test` the
/// `resourceVersion` (a set changed since it was read is left for the next pass) and add the key
/// (the whole annotations map when the set has none — only ever pinned to the `resourceVersion`
/// read: a set read without one is tested against `""`, which no stored object has).
pub fn record_patch(keys: &Keys, base: RecordBase<'_>, value: &str) -> Patch {
    let key = keys.of(names::DEGRADED_REASON);
    let path = ptr(&["metadata", "annotations", key]);
    let mut ops = Vec::new();
    match (base.recorded, base.resource_version) {
        (Some(old), _) => ops.push(test(path.clone(), json!(old))),
        (None, Some(rv)) => ops.push(test(ptr(&["metadata", "resourceVersion"]), json!(rv))),
        // Never a whole map unpinned (`plan::patch::annotation_ops`): `""` is no stored version.
        (None, None) if !base.annotated => {
            ops.push(test(ptr(&["metadata", "resourceVersion"]), json!("")));
        }
        (None, None) => {}
    }
    ops.push(PatchOperation::Add(if base.annotated {
        AddOperation {
            path,
            value: json!(value),
        }
    } else {
        AddOperation {
            path: ptr(&["metadata", "annotations"]),
            value: json!({ key: value }),
        }
    }));
    Patch(ops)
}
