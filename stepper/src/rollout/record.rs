//! What the in-cluster stepper recorded on a set, and whether that record can be trusted now: the verdict
//! `status` shows first (`kubectl argo rollouts get` shows what the controller recorded, not a local
//! re-evaluation).
//!
//! The record is the annotations the stepper writes (`blocked-reason`, `approval-pending`,
//! `degraded-reason`, `paused` / `paused-reason`, `last-partition-update`; docs/annotations.md) and the
//! time of its last write, from the set's `metadata.managedFields` entry of its field manager. The
//! stepper writes only when its verdict changes, never once per pass, so the record's age says nothing of
//! its truth; the stepper's liveness does: while it passes, a changed verdict is written within a pass.
//! [`freshness`] judges that from a [`Heartbeat`]: its HA Lease's `renewTime` or its CronJob's
//! `lastSuccessfulTime`. Pure: the objects and `now` in.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::SetConfig;
use crate::model::set;

/// The default bound past which a record is stale, in seconds (6 minutes): the shipped CronJob starts a
/// pass every minute and its Jobs are killed after `activeDeadlineSeconds: 300`, so while it works a
/// successful pass ends at least every 5 + 1 minutes; the HA Deployment's leader renews its Lease every
/// 2 s (`--leader-election-retry-period`), far inside it.
pub const DEFAULT_STALE_AFTER_SECONDS: i64 = 360;

/// What the stepper recorded on one set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// `<prefix>/blocked-reason`: the gate that held the step when the stepper last announced one.
    pub blocked_reason: Option<String>,
    /// `<prefix>/approval-pending`: what the approval gates wait for, in one line.
    pub approval_pending: Option<String>,
    /// `<prefix>/degraded-reason`: `<Kind>: <detail>`, the rollout needs a person.
    pub degraded_reason: Option<String>,
    /// `<prefix>/missing-rbac`: an RBAC rule the stepper lacks for this set, and the Component to add
    /// (`plan::rbac`).
    pub missing_rbac: Option<String>,
    /// `<prefix>/paused: "true"`, with `<prefix>/paused-reason`.
    pub paused: Option<String>,
    /// `<prefix>/last-partition-update`: the last step.
    pub last_step: Option<Timestamp>,
    /// The stepper's last write to the set: the `time` of its field manager's `managedFields` entry.
    pub written_at: Option<Timestamp>,
    /// The set has an update staged and a partition above 0 (steps remain).
    pub staged: bool,
    /// The set carries the policy's mark (`<prefix>/guarded`): the stepper's to step.
    pub marked: bool,
}

/// The record on `set` (annotations read into `config`; `manager`: the stepper's field manager, as its
/// patches send it).
pub fn record(set: &StatefulSet, config: &SetConfig, manager: &str) -> Record {
    let s = &config.stamps;
    let written_at = set
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| m.manager.as_deref() == Some(manager))
        .filter_map(|m| m.time.as_ref())
        .map(|t| t.0)
        .max();
    Record {
        blocked_reason: s.blocked_reason.clone(),
        approval_pending: s.approval_pending.clone(),
        degraded_reason: s.degraded_reason.clone(),
        missing_rbac: s.missing_rbac.clone(),
        paused: config.paused.then(|| {
            config
                .paused_reason
                .clone()
                .unwrap_or_else(|| "paused".into())
        }),
        last_step: s.last_partition_update,
        written_at,
        staged: set::has_staged_update(set) && set::partition(set).unwrap_or(0) > 0,
        marked: config.marked,
    }
}

impl Record {
    /// The record in one line, most urgent first: `Degraded StepRejected: …`, `Paused: INC-1234 (paused
    /// by alice)`, `Blocked ApprovalPending: approval of web-4 …`, `Blocked PodNotReady`, `Stepping: last
    /// step 2m ago`, `Staged: no step yet`, `Staged by hand: not stepped (no guarded mark)`, `Idle`; then
    /// when the stepper last wrote on the set.
    pub fn summary(&self, now: Timestamp) -> String {
        let what = match (
            &self.degraded_reason,
            &self.paused,
            &self.blocked_reason,
            &self.approval_pending,
        ) {
            (Some(d), _, _, _) => format!("Degraded {d}"),
            (None, Some(p), _, _) => format!("Paused: {p}"),
            (None, None, Some(b), Some(a)) => format!("Blocked {b}: {a}"),
            (None, None, Some(b), None) => format!("Blocked {b}"),
            (None, None, None, _) if self.staged && !self.marked => {
                "Staged by hand: not stepped (no guarded mark)".into()
            }
            (None, None, None, _) if self.staged => match self.last_step {
                Some(t) => format!("Stepping: last step {} ago", ago(now, t)),
                None => "Staged: no step yet".into(),
            },
            (None, None, None, _) => "Idle".into(),
        };
        match self.written_at {
            Some(t) => format!("{what} (written {} ago)", ago(now, t)),
            None => what,
        }
    }
}

/// A sign of life of the in-cluster stepper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    /// When.
    pub at: Timestamp,
    /// What says so, for people: `Lease sts-safe-rollout/sts-stepper renewed`, `CronJob
    /// sts-safe-rollout/sts-stepper last succeeded`.
    pub source: String,
}

/// Whether the stepper's records can be trusted now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The stepper showed life within the bound: every record is its verdict as of its last pass.
    Current(Heartbeat),
    /// No sign of life within the bound: a record may describe a state long gone.
    Stale(Heartbeat),
    /// No heartbeat could be read (why: no Lease or CronJob there, or no right to read them).
    Unknown(String),
}

impl Freshness {
    /// `Some(true)` when stale, `Some(false)` when current, `None` when unknown.
    pub fn stale(&self) -> Option<bool> {
        match self {
            Freshness::Current(_) => Some(false),
            Freshness::Stale(_) => Some(true),
            Freshness::Unknown(_) => None,
        }
    }

    /// One line for people, e.g. `current: Lease sts-safe-rollout/sts-stepper renewed 3s ago`,
    /// `STALE: CronJob sts-safe-rollout/sts-stepper last succeeded 2h ago (over --stale-after 6m)`.
    pub fn describe(&self, now: Timestamp, bound: SignedDuration) -> String {
        match self {
            Freshness::Current(h) => format!("current: {} {} ago", h.source, ago(now, h.at)),
            Freshness::Stale(h) => format!(
                "STALE: {} {} ago (over --stale-after {}); the stepper may not be running, each record \
                 may describe a state long gone",
                h.source,
                ago(now, h.at),
                seconds_words(bound.as_secs())
            ),
            Freshness::Unknown(why) => format!("unknown: {why}"),
        }
    }
}

/// The freshness of the stepper's records at `now`: the newest of `heartbeats`, against `bound`;
/// `unknown` says why there is none.
pub fn freshness(
    heartbeats: &[Heartbeat],
    unknown: &str,
    now: Timestamp,
    bound: SignedDuration,
) -> Freshness {
    match heartbeats.iter().max_by_key(|h| h.at) {
        None => Freshness::Unknown(unknown.to_string()),
        Some(h) if now.duration_since(h.at) > bound => Freshness::Stale(h.clone()),
        Some(h) => Freshness::Current(h.clone()),
    }
}

/// How long before `now` `then` was, in the largest whole unit: `45s`, `3m`, `2h`, `4d` (a time in the
/// future, a clock skew, is `0s`).
pub fn ago(now: Timestamp, then: Timestamp) -> String {
    seconds_words(now.duration_since(then).as_secs().max(0))
}

fn seconds_words(s: i64) -> String {
    match s {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}
