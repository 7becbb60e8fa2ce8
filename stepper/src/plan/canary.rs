//! The canary plan's writes: the annotation changes, `test` pins and Events of a pause at a point and
//! of the end of the plan's own pause ([`PlanEffect`], decided by [`crate::gates::pause_points`]).
//!
//! A pause reached by a step rides in the step's own JSON Patch (one write: the pause is there the
//! moment the step lands, and no pass can see the step without its pause); a pause without a step is
//! a metadata-only patch of its own.

use json_patch::PatchOperation;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::annotations::TRUE;

use crate::config::SetConfig;
use crate::gates::pause_points::{LiftCause, PlanEffect};
use crate::plan::events::EventNote;
use crate::plan::patch::{ptr, test};

/// What the plan adds to a patch, and the Events to publish once it is applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CanaryWrites {
    /// Annotation changes by full key (`Some` sets, `None` removes).
    pub changes: Vec<(String, Option<String>)>,
    /// `test` ops that must hold for the patch to apply.
    pub pins: Vec<PatchOperation>,
    /// Events, in order: `RolloutResumed` (bake time over), then `RolloutPaused` (a point reached).
    pub events: Vec<EventNote>,
}

/// The writes of `effect` on `set` (`config`: its annotations as read):
/// - a pause (now, or after the step): `paused: "true"`, `paused-reason` naming the point,
///   `pause-points-passed` = the record, and a `RolloutPaused` Event (`Normal`). A pause now is pinned
///   to the record read (or, with none, to `metadata.resourceVersion`), so two steppers never write it
///   twice; a pause after a step is pinned by the step's own `test` ops. A forced step past another
///   pause (a person's) writes the record only: that pause and its reason stay;
/// - the end of the plan's own pause (its bake time over, with the step; or made for an earlier
///   rollout, at once): `test` that `paused` is `"true"` and `paused-reason` is still the plan's text
///   (a person's pause written meanwhile makes the write fail with HTTP 422 instead of being lifted),
///   remove both (unless the same step pauses at the next point), and a `RolloutResumed` Event.
pub fn writes(set: &StatefulSet, config: &SetConfig, effect: &PlanEffect) -> CanaryWrites {
    let keys = &config.keys;
    let mut w = CanaryWrites::default();
    let annotation = |key: &str| ptr(&["metadata", "annotations", key]);
    let (resume, pause) = match effect {
        PlanEffect::PauseNow(p) => {
            w.pins.push(match &config.stamps.pause_points_passed_raw {
                Some(old) => test(annotation(keys.of(names::PAUSE_POINTS_PASSED)), json!(old)),
                None => test(
                    ptr(&["metadata", "resourceVersion"]),
                    json!(set.metadata.resource_version.clone().unwrap_or_default()),
                ),
            });
            (None, Some(p))
        }
        PlanEffect::Lift(lift) => (Some(lift), None),
        PlanEffect::WithStep { resume, pause } => (resume.as_ref(), pause.as_ref()),
    };
    if let Some(lift) = resume {
        let was = &lift.pause.reason;
        w.pins
            .push(test(annotation(keys.of(names::PAUSED)), json!(TRUE)));
        w.pins
            .push(test(annotation(keys.of(names::PAUSED_REASON)), json!(was)));
        w.events.push(match &lift.cause {
            LiftCause::BakeOver => {
                EventNote::baked(lift.pause.point.point.bake_seconds.unwrap_or(0), was)
            }
            LiftCause::StartedOver { update_revision } => {
                EventNote::plan_started_over(update_revision, was)
            }
            LiftCause::Idle => EventNote::plan_done(was),
        });
        if pause.is_none() {
            w.changes.push((keys.of(names::PAUSED).to_string(), None));
            w.changes
                .push((keys.of(names::PAUSED_REASON).to_string(), None));
        }
    }
    if let Some(p) = pause {
        if !p.under_another_pause {
            w.changes
                .push((keys.of(names::PAUSED).to_string(), Some(TRUE.into())));
            w.changes.push((
                keys.of(names::PAUSED_REASON).to_string(),
                Some(p.reason.clone()),
            ));
            w.events.push(EventNote::pause_point(&p.reason));
        }
        w.changes.push((
            keys.of(names::PAUSE_POINTS_PASSED).to_string(),
            Some(p.record.to_annotation()),
        ));
    }
    w
}
