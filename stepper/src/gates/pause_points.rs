//! The canary plan's decision (pure): where a rollout stands against its pause points
//! (`<prefix>/pause-at`), how far the next step may go, and when the stepper pauses or resumes a set.
//!
//! docs/design.md, "Canary plan (pause points)". A rollout's position is the number of pods at or above the
//! partition, `replicas − min(partition, replicas)` (Kubernetes StatefulSet controller: pods with
//! ordinal index ≥ partition get `updateRevision`). The rules:
//! - a step never jumps a point: its target is clamped so the position after it does not pass the next
//!   point not passed yet ([`Position::clamp`]; a 25 % step stops at a point of 1 pod);
//! - the step that reaches a point pauses the set in its own patch — `paused`, a `paused-reason` naming
//!   the point ([`reason`]), the record [`PassedPoints`] — so the pause is there the moment the step
//!   lands ([`step_effect`]);
//! - a rollout found at or past a point it has not passed, without a step (a scale-up through the
//!   `scale` subresource, a plan added mid-rollout, a forced step, a partition raised by hand), is
//!   paused at once ([`pause_now`]);
//! - the record counts only for the `updateRevision` it names and while the position is not below it:
//!   a new template or a rollback (the policy restages the partition to `spec.replicas`) starts over;
//! - with a bake time, once that many seconds have passed since the pause the `Paused` gate lets the
//!   set through and the other gates decide; the step that follows removes the pause in its own patch
//!   ([`PlanEffect::WithStep`]). Only the plan's own pause is lifted so ([`Position::plan_pause`]):
//!   `paused-reason` must still be the exact text the plan wrote for the record, which a person's
//!   `pause --reason` replaces. A person's `resume` (or removing `paused`) goes on to the next point;
//! - the plan's own pause made for an earlier rollout, or on a set with nothing left to roll out, is
//!   lifted ([`PlanEffect::Lift`]).

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::{PassedPoints, PausePlan, PausePoint, SetConfig};
use crate::model::set;

/// A point of a plan, numbered among the points that hold ([`PausePlan::holding`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberedPoint {
    /// 1-based number among the holding points.
    pub number: usize,
    /// How many points hold.
    pub of: usize,
    /// The point.
    pub point: PausePoint,
}

/// Where one rollout stands against its plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position<'a> {
    /// The plan, resolved against `spec.replicas`.
    pub plan: &'a PausePlan,
    /// `spec.replicas`.
    pub replicas: i32,
    /// Pods at or above the partition now: `replicas − min(partition, replicas)`.
    pub released: i32,
    /// Pods covered by the points passed for this `updateRevision` ([`PassedPoints::pods`]); 0 when
    /// there is no record, it names another revision, or the rollout was restaged below it.
    pub passed: i32,
    /// `status.updateRevision`.
    pub update_revision: &'a str,
}

impl<'a> Position<'a> {
    /// The position of a rollout at `partition` on `update_revision`, given the stored `record`.
    pub fn new(
        plan: &'a PausePlan,
        partition: i32,
        update_revision: &'a str,
        record: Option<&PassedPoints>,
    ) -> Self {
        let replicas = plan.replicas.max(0);
        let released = replicas - partition.clamp(0, replicas);
        let passed = record
            .filter(|r| r.update_revision == update_revision && r.pods <= released)
            .map_or(0, |r| r.pods);
        Position {
            plan,
            replicas,
            released,
            passed,
            update_revision,
        }
    }

    /// The holding points, numbered.
    pub fn numbered(&self) -> Vec<NumberedPoint> {
        let holding = self.plan.holding();
        let of = holding.len();
        holding
            .into_iter()
            .enumerate()
            .map(|(i, p)| NumberedPoint {
                number: i + 1,
                of,
                point: p.clone(),
            })
            .collect()
    }

    /// The next point ahead: the first holding point with more pods than both the position and the
    /// points passed; `None` when every point is behind.
    pub fn next(&self) -> Option<NumberedPoint> {
        let beyond = self.passed.max(self.released);
        self.numbered().into_iter().find(|n| n.point.pods > beyond)
    }

    /// The last point the rollout stands at or past without having passed it (pods in
    /// `(passed, released]`), if any: the set must pause there before it moves on.
    pub fn reached_unpassed(&self) -> Option<NumberedPoint> {
        self.numbered()
            .into_iter()
            .rfind(|n| n.point.pods > self.passed && n.point.pods <= self.released)
    }

    /// A step target `to` clamped so the step does not pass the next point: at least
    /// `replicas − next.pods`.
    pub fn clamp(&self, to: i32) -> i32 {
        self.next()
            .map_or(to, |n| to.max(self.replicas - n.point.pods))
    }

    /// The point a step to partition `to` (already [`Position::clamp`]ed) reaches, if any.
    pub fn reached_by(&self, to: i32) -> Option<NumberedPoint> {
        let after = self.replicas - to.clamp(0, self.replicas);
        self.next().filter(|n| n.point.pods <= after)
    }

    /// The pause to write at `point` with `pods` at or above the partition, at `now`.
    pub fn pause_at(&self, point: NumberedPoint, pods: i32, now: Timestamp) -> PointPause {
        PointPause {
            reason: reason(&point, pods, self.replicas, self.update_revision),
            record: PassedPoints {
                update_revision: self.update_revision.to_string(),
                pods,
                paused_at: now,
            },
            point,
            under_another_pause: false,
        }
    }

    /// The plan's own pause of the set, if it is one: `paused: "true"`, a readable record, and
    /// `paused-reason` exactly as the plan wrote it for that record. `None` for any other pause (a
    /// person's `pause --reason`, a Prometheus check's failure limit, a plan edited since).
    pub fn plan_pause(&self, config: &SetConfig) -> Option<PlanPause> {
        if !config.paused {
            return None;
        }
        let record = config.stamps.pause_points_passed.as_ref()?;
        let point = self
            .numbered()
            .into_iter()
            .rfind(|n| n.point.pods <= record.pods)?;
        let reason = reason(&point, record.pods, self.replicas, &record.update_revision);
        if config.paused_reason.as_deref() != Some(reason.as_str()) {
            return None;
        }
        let pause = OwnPause {
            point,
            paused_at: record.paused_at,
            reason,
        };
        if record.update_revision != self.update_revision || record.pods > self.released {
            Some(PlanPause::Stale(pause))
        } else if record.pods == self.released {
            Some(PlanPause::Current(pause))
        } else {
            None // moved past it (a forced step): a person's `resume` ends it
        }
    }

    /// The plan's own pause at this position ([`PlanPause::Current`]).
    pub fn own_pause(&self, config: &SetConfig) -> Option<OwnPause> {
        match self.plan_pause(config)? {
            PlanPause::Current(p) => Some(p),
            PlanPause::Stale(_) => None,
        }
    }
}

/// The plan's own pause of a set ([`Position::plan_pause`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanPause {
    /// At this rollout's position: held until `resume`, or the bake time.
    Current(OwnPause),
    /// Written for an earlier rollout (its record names another `updateRevision`, or the rollout was
    /// restaged below it): a new template or a rollback starts the plan over, so the stepper lifts it.
    Stale(OwnPause),
}

/// The set's [`Position`]; `None` without a readable plan or without `status.updateRevision`.
pub fn position<'a>(set: &'a StatefulSet, config: &'a SetConfig) -> Option<Position<'a>> {
    let plan = config.pause_at.as_ref()?;
    let revision = set.status.as_ref()?.update_revision.as_deref()?;
    Some(Position::new(
        plan,
        set::partition(set).unwrap_or(0),
        revision,
        config.stamps.pause_points_passed.as_ref(),
    ))
}

/// The `paused-reason` of a pause at `point` with `pods` of `replicas` at or above the partition, e.g.
/// `pause point 1 of 2: 1 of 5 pods on web-7d9f; `resume` to go on`. GitOps tools show it (a paused set
/// is Suspended with this message); [`Position::plan_pause`] recognises the plan's pause by it.
pub fn reason(point: &NumberedPoint, pods: i32, replicas: i32, update_revision: &str) -> String {
    let how = match point.point.bake_seconds {
        None => "`resume` to go on".to_string(),
        Some(b) => format!(
            "goes on by itself {b} s after the pause if every gate passes, or `resume` to go on"
        ),
    };
    format!(
        "pause point {} of {}: {pods} of {replicas} pods on {update_revision}; {how}",
        point.number, point.of
    )
}

/// A pause the plan writes: at which point, the `paused-reason`, and the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointPause {
    /// The point.
    pub point: NumberedPoint,
    /// `paused-reason` ([`reason`]).
    pub reason: String,
    /// `pause-points-passed`.
    pub record: PassedPoints,
    /// The set is already held by another pause (a person's, a Prometheus check's failure limit) that
    /// a forced step went past: only the record is written; that pause and its `paused-reason` stay.
    pub under_another_pause: bool,
}

/// The plan's own pause of a set ([`Position::plan_pause`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnPause {
    /// The point it holds at.
    pub point: NumberedPoint,
    /// When it paused.
    pub paused_at: Timestamp,
    /// Its `paused-reason`, as written (a resume pins it).
    pub reason: String,
}

impl OwnPause {
    /// Seconds of bake time left at `now` (0 once over); `None` for a point without a bake time.
    pub fn bake_left(&self, now: Timestamp) -> Option<i64> {
        let bake = SignedDuration::from_secs(i64::from(self.point.point.bake_seconds?));
        let waited = now.duration_since(self.paused_at);
        Some((bake - waited).as_secs().max(0))
    }
}

/// Why the stepper ends the plan's own pause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiftCause {
    /// The point's bake time is over and every gate passed (lifted by the step that follows).
    BakeOver,
    /// The pause was for an earlier rollout ([`PlanPause::Stale`]): the plan starts over on this
    /// `updateRevision`.
    StartedOver {
        /// `status.updateRevision` now.
        update_revision: String,
    },
    /// Nothing is left to hold: the set is idle (every pod on `updateRevision`, e.g. a rollback whose
    /// step to a point put back the last pod on the old revision).
    Idle,
}

/// The plan's own pause, ended by the stepper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lift {
    /// The pause (its `paused-reason` is pinned by the write).
    pub pause: OwnPause,
    /// Why.
    pub cause: LiftCause,
}

/// What the plan writes besides the gates' verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanEffect {
    /// No step: pause now at a point the rollout stands at or past ([`pause_now`]).
    PauseNow(PointPause),
    /// No step: lift the plan's own pause made for an earlier rollout ([`PlanPause::Stale`]), or of an
    /// idle set.
    Lift(Lift),
    /// In the step's own patch: end the plan's own pause (bake time over, or made for an earlier
    /// rollout), and pause after the step at the point it reaches.
    WithStep {
        /// The pause lifted.
        resume: Option<Lift>,
        /// The pause after the step.
        pause: Option<PointPause>,
    },
}

/// The pause due now, without a step, for a set that is not paused: the rollout stands at or past a
/// point it has not passed ([`Position::reached_unpassed`]) and the controller has observed the spec.
pub fn pause_now(set: &StatefulSet, config: &SetConfig, now: Timestamp) -> Option<PointPause> {
    if config.paused || !set::observed(set) {
        return None;
    }
    let position = position(set, config)?;
    let point = position.reached_unpassed()?;
    Some(position.pause_at(point, position.released, now))
}

/// The plan's own pause that the `Paused` gate lets through at `now`: one whose bake time is over, or
/// one made for an earlier rollout.
pub fn liftable(set: &StatefulSet, config: &SetConfig, now: Timestamp) -> Option<Lift> {
    let position = position(set, config)?;
    match position.plan_pause(config)? {
        PlanPause::Current(pause) if pause.bake_left(now) == Some(0) => Some(Lift {
            pause,
            cause: LiftCause::BakeOver,
        }),
        PlanPause::Current(_) => None,
        PlanPause::Stale(pause) => Some(Lift {
            pause,
            cause: LiftCause::StartedOver {
                update_revision: position.update_revision.to_string(),
            },
        }),
    }
}

/// What a step to partition `to` (clamped) writes for the plan: the end of the plan's own pause
/// ([`liftable`]), and the pause at the point the step reaches. `None` when neither.
pub fn step_effect(
    set: &StatefulSet,
    config: &SetConfig,
    to: i32,
    now: Timestamp,
) -> Option<PlanEffect> {
    let position = position(set, config)?;
    let resume = liftable(set, config, now);
    let after = position.replicas - to.clamp(0, position.replicas);
    let other = config.paused && position.plan_pause(config).is_none();
    let pause = position.reached_by(to).map(|point| PointPause {
        under_another_pause: other,
        ..position.pause_at(point, after, now)
    });
    (resume.is_some() || pause.is_some()).then_some(PlanEffect::WithStep { resume, pause })
}
