//! What the canary plan ([`pause_points`]) asks for once the gates decided ([`effects`]): with a step,
//! the end of its own pause and the pause at the point the step reaches; without one, a pause now or
//! the lift of a pause no longer its own rollout's.

use super::input::GateInput;
use super::pause_points::{
    Lift, LiftCause, PlanEffect, PlanPause, liftable, pause_now, position, step_effect,
};
use super::verdict::{Evaluation, Verdict};
use crate::model::reasons::Reason;

/// Records in `ev` what the canary plan writes: with a step, its effect ([`step_effect`]); with a
/// `Paused` block of a set not paused, the pause now; for an idle set, the lift of the plan's own
/// pause (nothing is left to hold); with another block, the lift of a pause made for an earlier rollout, or — for the plan's own pause past its bake time — a word in the detail that
/// the set stays paused until every gate passes.
pub(super) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    let (set, config, now) = (input.set, input.config, input.now);
    match &mut ev.verdict {
        Verdict::Idle(_) => {
            let position = position(set, config);
            let pause = position.and_then(|p| p.plan_pause(config));
            ev.canary = pause.map(|(PlanPause::Current(pause) | PlanPause::Stale(pause))| {
                Box::new(PlanEffect::Lift(Lift {
                    pause,
                    cause: LiftCause::Idle,
                }))
            });
        }
        Verdict::Step { to, .. } => ev.canary = step_effect(set, config, *to, now).map(Box::new),
        Verdict::Blocked(b) if b.reason == Reason::Paused && !config.paused => {
            ev.canary = pause_now(set, config, now).map(|p| Box::new(PlanEffect::PauseNow(p)));
        }
        Verdict::Blocked(b) if config.paused && b.reason != Reason::Paused => {
            match liftable(set, config, now) {
                Some(lift) if lift.cause == LiftCause::BakeOver => {
                    b.detail.push_str(&format!(
                        "; still paused at pause point {} of {}: bake time over, goes on once every \
                         gate passes",
                        lift.pause.point.number, lift.pause.point.of
                    ));
                }
                Some(lift) => ev.canary = Some(Box::new(PlanEffect::Lift(lift))),
                None => {}
            }
        }
        _ => {}
    }
}
