//! Gates over the set alone: `Paused`, `InvalidAnnotation`, `NotObserved`, `Settling`.

use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use super::input::GateInput;
use super::pause_points;
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `Paused`, `InvalidAnnotation`, `NotObserved` and `Settling` read of the set beside its
/// annotations ([`crate::config::READS`]): the generation the controller observed, the replicas and
/// partition (the canary plan's position, the step's size), the revisions.
pub const READS: &[Field] = &[
    of_set("metadata.generation"),
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("status.observedGeneration"),
    of_set("status.updateRevision"),
];

/// Gate `Paused`: annotation `<prefix>/paused: "true"`; the detail carries `<prefix>/paused-reason`
/// when set (the stepper sets it at a pause point, or when a Prometheus check reaches its
/// `failure-limit`). Two cases of the canary plan ([`pause_points`]): the plan's own pause whose bake
/// time is over, or that was made for an earlier rollout, passes ([`pause_points::liftable`]: the
/// other gates decide; the stepper lifts it), with the bake seconds left in the detail until then; and
/// a set not paused that stands at or past a pause point it has not passed is
/// blocked here, and paused by this pass ([`pause_points::pause_now`]).
pub fn paused(input: &GateInput<'_>) -> Result<(), Blocked> {
    let config = input.config;
    let name = set::name(input.set);
    if !config.paused {
        return match pause_points::pause_now(input.set, config, input.now) {
            Some(p) => Err(Blocked::new(
                Reason::Paused,
                format!(
                    "{name}: at pause point {} of {}, not passed yet: pausing ({})",
                    p.point.number, p.point.of, p.reason
                ),
            )),
            None => Ok(()),
        };
    }
    if pause_points::liftable(input.set, config, input.now).is_some() {
        return Ok(());
    }
    let own = pause_points::position(input.set, config).and_then(|p| p.own_pause(config));
    let bake_left = own.as_ref().and_then(|o| o.bake_left(input.now));
    // `<name>: <prefix>/paused is "true"[: <paused-reason>][ (<n> s of bake left)]`, built by hand:
    // every paused set of a fleet gets this detail each pass, and `format!` costs several times more.
    let why = config.paused_reason.as_deref();
    let mut detail = String::with_capacity(
        name.len() + config.keys.of(names::PAUSED).len() + why.map_or(0, str::len) + 40,
    );
    for part in [name, ": ", config.keys.of(names::PAUSED), " is \"true\""] {
        detail.push_str(part);
    }
    if let Some(why) = why {
        detail.push_str(": ");
        detail.push_str(why);
    }
    if let Some(s) = bake_left {
        detail.push_str(&format!(" ({s} s of bake left)"));
    }
    Err(Blocked::new(Reason::Paused, detail))
}

/// Gate `InvalidAnnotation`: every stepper annotation could be read ([`crate::config::SetConfig::invalid`]:
/// `step`, `initial-delay-seconds`, with a delay `last-partition-update`, `rollout-group`,
/// `owner-condition`, the Prometheus check, …), and every endpoint they name is configured on the stepper
/// (`http-check`, `pre-update-webhook`: [`crate::config::Served::unknown`]) and serves this set (its
/// `serves`: [`crate::config::Served::refused`]; docs/answerers.md, "Which sets an entry serves").
pub fn invalid_annotation(input: &GateInput<'_>) -> Result<(), Blocked> {
    match &input.config.invalid {
        Some(detail) => Err(Blocked::new(Reason::InvalidAnnotation, detail.to_string())),
        None => match input.config.named_endpoints().find_map(|named| {
            let served = &input.opts.served;
            served.unknown(&named).or_else(|| {
                let namespace = input.set.metadata.namespace.as_deref().unwrap_or_default();
                served.refused(&named, namespace, set::name(input.set))
            })
        }) {
            Some(detail) => Err(Blocked::new(Reason::InvalidAnnotation, detail)),
            None => Ok(()),
        },
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
