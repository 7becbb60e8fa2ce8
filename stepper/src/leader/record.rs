//! The leader election's decision over plain data: what a candidate writes into the Lease record it
//! read (client-go's `tryAcquireOrRenew`, k8s.io/client-go/tools/leaderelection).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

use super::config::LeaderConfig;

/// What a candidate does with the Lease record it just read.
#[derive(Clone, Debug, PartialEq)]
pub enum LeaseDecision {
    /// Another candidate holds an unexpired Lease: wait.
    HeldBy(String),
    /// Write this record (take or renew) with the `resourceVersion` just read.
    Write(LeaseSpec),
}

/// client-go's `tryAcquireOrRenew` over plain data: `current` is the record read, `unchanged_for`
/// how long this candidate has seen that same Lease (`resourceVersion`), `now` the `renewTime` to
/// write.
/// A record held by someone else (non-empty `holderIdentity`) is expired once `unchanged_for` ≥ its
/// `leaseDurationSeconds` (ours when it has none); renewing keeps `acquireTime` and
/// `leaseTransitions`, taking sets `acquireTime` and adds one transition.
pub fn decide(
    current: &LeaseSpec,
    unchanged_for: Duration,
    config: &LeaderConfig,
    now: Timestamp,
) -> LeaseDecision {
    let holder = current.holder_identity.as_deref().unwrap_or("");
    let duration = match current.lease_duration_seconds {
        Some(s) if s > 0 => Duration::from_secs(s.unsigned_abs().into()),
        _ => config.lease_duration,
    };
    let mine = holder == config.identity;
    if !holder.is_empty() && !mine && unchanged_for < duration {
        return LeaseDecision::HeldBy(holder.to_owned());
    }
    let transitions = current.lease_transitions.unwrap_or(0);
    LeaseDecision::Write(LeaseSpec {
        holder_identity: Some(config.identity.clone()),
        lease_duration_seconds: Some(lease_seconds(config)),
        acquire_time: if mine {
            current.acquire_time.clone()
        } else {
            Some(MicroTime(now))
        },
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(if mine { transitions } else { transitions + 1 }),
        ..current.clone()
    })
}

/// The record of a Lease this candidate creates: held by it, no transition yet.
pub fn first_record(config: &LeaderConfig, now: Timestamp) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(config.identity.clone()),
        lease_duration_seconds: Some(lease_seconds(config)),
        acquire_time: Some(MicroTime(now)),
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(0),
        ..LeaseSpec::default()
    }
}

fn lease_seconds(config: &LeaderConfig) -> i32 {
    i32::try_from(config.lease_duration.as_secs()).unwrap_or(i32::MAX)
}
