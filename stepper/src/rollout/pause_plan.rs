//! Where a rollout stands against its canary plan, in words: what `status` (and `kubectl safe-rollout
//! status`) prints for a set with `<prefix>/pause-at`.

use std::fmt::Write as _;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::{PausePlan, PausePoint, SetConfig};
use crate::gates::pause_points::{self, NumberedPoint, PlanPause};
use crate::model::set;

/// The plan as written, normalised: `1,60%:30`.
pub fn written(plan: &PausePlan) -> String {
    plan.points
        .iter()
        .map(|p| match p.bake_seconds {
            Some(b) => format!("{}:{b}", p.at),
            None => p.at.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `60% (3 pods)`, `1 (1 pod)`.
fn point_text(p: &PausePoint) -> String {
    let noun = if p.pods == 1 { "pod" } else { "pods" };
    format!("{} ({} {noun})", p.at, p.pods)
}

/// `, point 2 of 2, bake 30 s`.
fn numbered(n: &NumberedPoint) -> String {
    let mut s = format!(", point {} of {}", n.number, n.of);
    if let Some(b) = n.point.bake_seconds {
        let _ = write!(s, ", bake {b} s");
    }
    s
}

/// Where `set` stands against its plan at `now`, e.g. `next pause at 60% (3 pods), point 2 of 2, bake
/// 30 s`, `paused at point 1 of 2 (1 of 5 pods); `resume` to go on`, `paused at point 2 of 2 (3 of 5
/// pods), 540 s of bake left`; `None` without a readable plan.
pub fn describe(set: &StatefulSet, config: &SetConfig, now: Timestamp) -> Option<String> {
    let plan = config.pause_at.as_ref()?;
    let Some(position) = pause_points::position(set, config) else {
        return Some("waiting for status.updateRevision".into());
    };
    if !set::has_staged_update(set) || set::partition(set).unwrap_or(0) <= 0 {
        let first = plan.holding().first().map(|p| point_text(p));
        return Some(first.map_or_else(
            || format!("no pause point below {} replicas", plan.replicas),
            |p| format!("nothing staged; the next rollout pauses first at {p}"),
        ));
    }
    let at = |pods: i32| format!("{pods} of {} pods", position.replicas);
    if let Some(own) = position.own_pause(config) {
        let n = &own.point;
        let head = format!(
            "paused at point {} of {} ({})",
            n.number,
            n.of,
            at(position.released)
        );
        return Some(match own.bake_left(now) {
            None => format!("{head}; `resume` to go on"),
            Some(0) => format!("{head}, bake time over: goes on once every gate passes"),
            Some(left) => format!("{head}, {left} s of bake left"),
        });
    }
    let mut out = String::new();
    match position.plan_pause(config) {
        Some(PlanPause::Stale(_)) => {
            out.push_str(
                "the plan's pause for an earlier rollout is lifted by the next pass; then ",
            );
        }
        _ if config.paused => out.push_str("paused (not by the plan: `resume` to go on); then "),
        _ => {}
    }
    if let Some(n) = position.reached_unpassed() {
        let _ = write!(
            out,
            "at point {} of {} ({}), not passed yet: the next pass pauses it",
            n.number,
            n.of,
            at(position.released)
        );
    } else if let Some(n) = position.next() {
        let _ = write!(
            out,
            "next pause at {}{}",
            point_text(&n.point),
            numbered(&n)
        );
    } else if plan.holding().is_empty() {
        let _ = write!(out, "no pause point below {} replicas", plan.replicas);
    } else {
        out.push_str("every pause point passed");
    }
    Some(out)
}
