//! The border for the canary plan: `<prefix>/pause-at` into a [`PausePlan`], and the stepper's own
//! record of the points passed (`<prefix>/pause-points-passed`) into a [`PassedPoints`].
//!
//! A point is a number of pods at or above the partition — the pods the partition lets run
//! `updateRevision` (Kubernetes StatefulSet controller: pods with ordinal index ≥ partition get
//! `updateRevision`) — written as a count (`"1"`) or a percentage of `spec.replicas` rounded up
//! (`"50%"`), optionally with a bake time in seconds (`"50%:600"`). The decision over these values is
//! [`crate::gates::pause_points`].

use std::fmt;
use sts_safe_rollout_rules::annotations as names;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::error::{ConfigError, PausePlanError};
use super::keys::Keys;

/// Where a pause point stands, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointAt {
    /// A count of pods (`"3"`), ≥ 1.
    Pods(u32),
    /// A percentage of `spec.replicas` (`"50%"`), 1 to 100, rounded up to whole pods (at least 1).
    Percent(u32),
}

impl fmt::Display for PointAt {
    /// As written: `3`, `50%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointAt::Pods(n) => write!(f, "{n}"),
            PointAt::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// One pause point of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PausePoint {
    /// As written.
    pub at: PointAt,
    /// Pods at or above the partition at this point, resolved against `spec.replicas`: the count, or
    /// ⌈P × replicas / 100⌉ and at least 1.
    pub pods: i32,
    /// Seconds after the pause after which the stepper resumes by itself, if every gate passes;
    /// `None`: only a person's `resume` goes on.
    pub bake_seconds: Option<u32>,
}

/// A set's canary plan, read from `<prefix>/pause-at` and resolved against its `spec.replicas`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PausePlan {
    /// Every point as written, in order. The points that resolve below `spec.replicas` have strictly
    /// increasing [`PausePoint::pods`] (checked).
    pub points: Vec<PausePoint>,
    /// `spec.replicas` the points were resolved against.
    pub replicas: i32,
}

impl PausePlan {
    /// The points that can hold a rollout: those with fewer pods than `spec.replicas`, in order. A
    /// point at or past `spec.replicas` is reached only by the step to partition 0, which completes the
    /// rollout: nothing is left to hold, so it never pauses.
    pub fn holding(&self) -> Vec<&PausePoint> {
        self.points
            .iter()
            .filter(|p| p.pods < self.replicas)
            .collect()
    }
}

/// The stepper's record of the pause points passed, stored as JSON in `<prefix>/pause-points-passed`,
/// e.g. `{"updateRevision":"web-7d9f","pods":1,"pausedAt":"2026-11-23T01:20:00Z"}`. It counts only for
/// the `updateRevision` it names and while the rollout has not been restaged below it (a new template
/// or a rollback starts the plan over).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PassedPoints {
    /// `status.updateRevision` the points were passed for.
    pub update_revision: String,
    /// Pods at or above the partition when the last point was passed: every point with at most this
    /// many pods is passed.
    pub pods: i32,
    /// When the stepper paused at that point (the bake time counts from here).
    pub paused_at: Timestamp,
}

impl PassedPoints {
    /// The annotation value (compact JSON).
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the annotation value; `None` when unreadable (a stepper-owned annotation: without it the
    /// plan counts from the rollout's position, which can only pause sooner, never skip a point).
    pub fn parse(value: &str) -> Option<PassedPoints> {
        serde_json::from_str(value).ok()
    }
}

/// Reads `pause-at` against `replicas`: `Ok(None)` when absent.
///
/// # Errors
/// [`ConfigError::PausePlan`], whose [`PausePlanError`] says what is wrong (an empty or unknown
/// point, a percentage over 100 %, a bad bake time, a point listed twice or resolving to as many pods
/// as another, points out of order); gate `InvalidAnnotation`.
pub fn pause_at(
    value: Option<&str>,
    replicas: i32,
    keys: &Keys,
) -> Result<Option<PausePlan>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let bad = |problem: PausePlanError| ConfigError::PausePlan {
        key: keys.of(names::PAUSE_AT).to_string(),
        value: value.to_string(),
        problem: Box::new(problem),
    };
    let mut points: Vec<PausePoint> = Vec::new();
    for item in value.split(',').map(str::trim) {
        let point = point(item, replicas).map_err(&bad)?;
        if let Some(twice) = points.iter().find(|p| p.at == point.at) {
            return Err(bad(PausePlanError::ListedTwice {
                at: twice.at.to_string(),
            }));
        }
        let same_kind = points.iter().rev().find(|p| {
            matches!(
                (p.at, point.at),
                (PointAt::Pods(_), PointAt::Pods(_)) | (PointAt::Percent(_), PointAt::Percent(_))
            )
        });
        if let Some(before) = same_kind
            && before.at_value() > point.at_value()
        {
            return Err(bad(PausePlanError::OutOfOrder {
                point: point.at.to_string(),
                before: before.at.to_string(),
            }));
        }
        if point.pods < replicas
            && let Some(before) = points.iter().rev().find(|p| p.pods < replicas)
            && before.pods >= point.pods
        {
            return Err(bad(if before.pods == point.pods {
                PausePlanError::SamePods {
                    before: before.at.to_string(),
                    point: point.at.to_string(),
                    pods: point.pods,
                    replicas,
                }
            } else {
                PausePlanError::FewerPods {
                    point: point.at.to_string(),
                    pods: point.pods,
                    replicas,
                    before: before.at.to_string(),
                    before_pods: before.pods,
                }
            }));
        }
        points.push(point);
    }
    Ok(Some(PausePlan { points, replicas }))
}

impl PausePoint {
    /// The number as written (a count or a percentage), to order points of one kind.
    fn at_value(&self) -> u32 {
        match self.at {
            PointAt::Pods(n) | PointAt::Percent(n) => n,
        }
    }
}

/// One point (`"3"`, `"50%"`, `"50%:600"`), resolved against `replicas`; the error says what is wrong.
fn point(item: &str, replicas: i32) -> Result<PausePoint, PausePlanError> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if item.is_empty() {
        return Err(PausePlanError::EmptyPoint);
    }
    let (at, bake) = match item.split_once(':') {
        Some((at, bake)) => (at.trim(), Some(bake.trim())),
        None => (item, None),
    };
    let bake_seconds = match bake {
        None => None,
        Some(b) => match b.parse::<u32>() {
            Ok(n) if n >= 1 && digits(b) => Some(n),
            _ => {
                return Err(PausePlanError::BakeTime {
                    item: item.to_string(),
                    bake: b.to_string(),
                });
            }
        },
    };
    let item_owned = || item.to_string();
    let unknown = || PausePlanError::NotAPoint { item: item_owned() };
    let at = if let Some(percent) = at.strip_suffix('%') {
        if !digits(percent) {
            return Err(unknown());
        }
        match percent.parse::<u32>() {
            Ok(p) if (1..=100).contains(&p) => PointAt::Percent(p),
            _ => return Err(PausePlanError::Percent { item: item_owned() }),
        }
    } else {
        if !digits(at) {
            return Err(unknown());
        }
        match at.parse::<u32>() {
            Ok(n) if n >= 1 && i32::try_from(n).is_ok() => PointAt::Pods(n),
            _ => return Err(PausePlanError::Count { item: item_owned() }),
        }
    };
    let pods = match at {
        PointAt::Pods(n) => i32::try_from(n).unwrap_or(i32::MAX),
        PointAt::Percent(p) => {
            let n = (i64::from(p) * i64::from(replicas.max(0)) + 99) / 100;
            i32::try_from(n.max(1)).unwrap_or(i32::MAX)
        }
    };
    Ok(PausePoint {
        at,
        pods,
        bake_seconds,
    })
}
