//! Gates over the set alone: `Paused`, `InvalidAnnotation`, `NotObserved`, `Settling`.

use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::StatefulSet;

use super::GateInput;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// Gate `Paused`: annotation `<prefix>/paused: "true"`; the detail carries `<prefix>/paused-reason`
/// when set (the stepper sets it when a Prometheus check reaches its `failure-limit`).
pub fn paused(input: &GateInput<'_>) -> Result<(), Blocked> {
    let config = input.config;
    if !config.paused {
        return Ok(());
    }
    let why = config
        .paused_reason
        .as_deref()
        .map_or(String::new(), |r| format!(": {r}"));
    Err(Blocked::new(
        Reason::Paused,
        format!(
            "{}: {} is \"true\"{why}",
            set::name(input.set),
            config.keys.paused
        ),
    ))
}

/// Gate `InvalidAnnotation`: every stepper annotation could be read ([`crate::config::SetConfig::invalid`]:
/// `step`, `initial-delay-seconds`, with a delay `last-partition-update`, `rollout-group`,
/// `owner-condition`, the Prometheus check).
pub fn invalid_annotation(input: &GateInput<'_>) -> Result<(), Blocked> {
    match &input.config.invalid {
        Some(detail) => Err(Blocked::new(Reason::InvalidAnnotation, detail.clone())),
        None => Ok(()),
    }
}

/// Gate `NotObserved` (see [`check_observed`]).
pub fn not_observed(input: &GateInput<'_>) -> Result<(), Blocked> {
    check_observed(input.set)
}

/// The StatefulSet controller has seen this generation (`status.observedGeneration >=
/// metadata.generation`) and reported `status.updateRevision`; else `NotObserved`.
pub fn check_observed(set: &StatefulSet) -> Result<(), Blocked> {
    let status = set.status.as_ref();
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    let generation = set.metadata.generation.unwrap_or(0);
    if status.is_none() || observed < generation {
        return Err(Blocked::new(
            Reason::NotObserved,
            format!(
                "{}: observedGeneration {observed} < generation {generation}",
                set::name(set)
            ),
        ));
    }
    if status.and_then(|s| s.update_revision.as_deref()).is_none() {
        return Err(Blocked::new(
            Reason::NotObserved,
            format!("{}: no status.updateRevision reported yet", set::name(set)),
        ));
    }
    Ok(())
}

/// Gate `Settling`: `now ≥ <prefix>/last-partition-update + <prefix>/initial-delay-seconds`. No delay, or
/// no previous step: passes.
pub fn settling(input: &GateInput<'_>) -> Result<(), Blocked> {
    let config = input.config;
    if config.initial_delay_seconds == 0 {
        return Ok(());
    }
    let Some(last) = config.stamps.last_partition_update else {
        return Ok(());
    };
    let waited = input.now.duration_since(last);
    let delay = SignedDuration::from_secs(config.initial_delay_seconds);
    if waited < delay {
        let left = (delay - waited).as_secs();
        return Err(Blocked::new(
            Reason::Settling,
            format!(
                "{}: {left}s of initial-delay-seconds {} left since the last step at {last}",
                set::name(input.set),
                delay.as_secs()
            ),
        ));
    }
    Ok(())
}
