//! The step past the gates: from which partition to which, pinned to which revision — a function of
//! the set and its annotations alone, computed when a step is taken or forced.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::pause_points;
use crate::config::{ConfigError, SetConfig};
use crate::model::set;

/// Why no step can be pinned for a set ([`next_step`]): the gates' own causes, apart from a gate
/// that blocks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// `step` cannot be read: the set is blocked `InvalidAnnotation` with this detail.
    #[error(transparent)]
    InvalidAnnotation(ConfigError),
    /// The StatefulSet controller has not reported `status.updateRevision`, which the step patch
    /// pins (the set is `NotObserved`).
    #[error("no status.updateRevision yet; cannot pin the step")]
    NoUpdateRevision,
}

impl StepError {
    /// The stable name of the cause (PascalCase, never reworded): `InvalidAnnotation` or
    /// `NoUpdateRevision`.
    pub fn reason(&self) -> &'static str {
        match self {
            StepError::InvalidAnnotation(_) => "InvalidAnnotation",
            StepError::NoUpdateRevision => "NoUpdateRevision",
        }
    }
}

/// The step the gates would take for a staged set, whether or not a gate blocks it (`step --force`
/// takes it past the gates).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextStep {
    /// The partition observed.
    pub from: i32,
    /// The partition after the step (`target`).
    pub to: i32,
    /// `status.updateRevision` observed (pinned by the step patch).
    pub update_revision: String,
}

/// The next step of `set` (annotations `config`), for a set past [`super::evaluate::before_gates`].
///
/// # Errors
/// Why none can be pinned: [`StepError::InvalidAnnotation`] (an unreadable `step`), or
/// [`StepError::NoUpdateRevision`].
pub fn next_step(set: &StatefulSet, config: &SetConfig) -> Result<NextStep, StepError> {
    if let Err(e) = &config.step {
        return Err(StepError::InvalidAnnotation(e.clone()));
    }
    if set
        .status
        .as_ref()
        .is_none_or(|s| s.update_revision.is_none())
    {
        return Err(StepError::NoUpdateRevision);
    }
    Ok(NextStep {
        from: set::partition(set).unwrap_or(0),
        to: target(set, config),
        update_revision: set::update_revision(set).to_string(),
    })
}

/// The partition the next step lowers to: [`step_target`] from the observed partition (0 when
/// absent) with the set's step size (1 when unreadable), clamped so it does not pass the next pause
/// point of the canary plan ([`pause_points::Position::clamp`]).
pub fn target(set: &StatefulSet, config: &SetConfig) -> i32 {
    let step = *config.step.as_ref().unwrap_or(&1);
    let to = step_target(set, set::partition(set).unwrap_or(0), step);
    pause_points::position(set, config).map_or(to, |p| p.clamp(to))
}

/// The partition a step of `step` pods lowers `partition` to: `max(0, min(partition, replicas) − step)`.
pub fn step_target(set: &StatefulSet, partition: i32, step: i32) -> i32 {
    (partition.min(set::replicas(set).max(0)) - step).max(0)
}
