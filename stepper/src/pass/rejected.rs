//! A write the API server refused, made visible on the set: its record in `<prefix>/degraded-reason`
//! (a metadata-only patch of its own, pinned by `test` ops) and the Warning Event (`StepRejected`,
//! `StatusWriteRejected`) when the refusal is new or its message changed ([`crate::plan::rejected`]).
//!
//! When the record itself cannot be written (the same policy refuses it, RBAC lacks `patch`, the
//! API server fails), the Event goes out anyway, saying so: it is then the only place the set's
//! owner can learn why the rollout does not move, and it repeats at most once per pass (in `watch`,
//! kube-rs's recorder folds the repeats into one Event's series). When the record's `test` op fails
//! (another writer changed the set since it was read), neither record nor Event: the next pass
//! decides again on the new object.

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;
use tracing::warn;

use crate::cluster::{Cluster, ClusterError, PatchOutcome};
use crate::plan::SetPlan;
use crate::plan::degraded::{self, Claim, RecordBase, record_patch};
use crate::plan::events::EventNote;
use crate::plan::rejected::{RefusedWrite, Rejection};

/// What became of one refused write's announcement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectionReport {
    /// The refused write and the API server's message.
    pub rejection: Rejection,
    /// The record ([`Rejection::record`]) is on the set: written this pass, or already there.
    pub recorded: bool,
    /// The Warning Event was published this pass.
    pub announced: bool,
    /// Why the record could not be written, if it could not (the Event then repeats every pass; no
    /// Event when the cause is [`ClusterError::NotLeader`]).
    pub record_error: Option<ClusterError>,
}

/// Records `rejection` on the set of plan `p` and announces it once: `stored` is the set as the API
/// server stored it when the refused write was a step it accepted with another partition (the
/// record is pinned on that object), else the set as read. Returns the report and the errors of
/// Events that could not be published.
pub async fn announce<C: Cluster>(
    cluster: &C,
    p: &SetPlan,
    rejection: Rejection,
    stored: Option<&StatefulSet>,
) -> (RejectionReport, Option<ClusterError>) {
    let keys = &p.config.keys;
    // The record `plan::degraded` decides for the refusal (it replaces any other).
    let value = degraded::next(&p.config, &[Claim::Refused(rejection.degraded())])
        .change
        .flatten()
        .unwrap_or_else(|| rejection.record());
    let news = rejection.is_news(p.config.stamps.degraded_reason.as_deref());
    let base = match stored {
        Some(s) => RecordBase {
            annotated: s.metadata.annotations.is_some(),
            resource_version: s.metadata.resource_version.as_deref(),
            recorded: s
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(keys.of(names::DEGRADED_REASON)))
                .map(String::as_str),
        },
        None => RecordBase {
            annotated: p.annotated,
            resource_version: p.set.metadata.resource_version.as_deref(),
            recorded: p.config.stamps.degraded_reason.as_deref(),
        },
    };
    let (recorded, record_error, raced) = if base.recorded == Some(value.as_str()) {
        (true, None, false)
    } else {
        let patch = record_patch(keys, base, &value);
        match cluster
            .patch_statefulset(&p.namespace, &p.name, &patch)
            .await
        {
            Ok(PatchOutcome::Applied(_)) => (true, None, false),
            Ok(PatchOutcome::Conflict(_)) => (false, None, true),
            // The Lease was lost: nothing more is written, not even the Event.
            Err(e) if e.is_not_leader() => (false, Some(e), true),
            Err(e) => {
                warn!(namespace = %p.namespace, statefulset = %p.name, error = %e,
                      "the refused write could not be recorded on the set: its Event repeats every pass");
                (false, Some(e), false)
            }
        }
    };
    let mut event_error = None;
    let announce = !raced && (news || record_error.is_some());
    if announce {
        let unrecorded = record_error.as_ref().map(ClusterError::message);
        let ev = EventNote::rejected(rejection.write.reason(), &rejection.message, unrecorded);
        if let Err(e) = cluster.publish_event(&p.reference(), &ev).await {
            warn!(namespace = %p.namespace, statefulset = %p.name, error = %e, "event not published");
            event_error = Some(e);
        }
    }
    let report = RejectionReport {
        rejection,
        recorded,
        announced: announce && event_error.is_none(),
        record_error,
    };
    (report, event_error)
}

/// The refusal of `write` when `e` is one ([`ClusterError::is_refused`]), with no stored object; a
/// transient error (5xx, transport) is not a refusal.
pub fn refusal(
    write: RefusedWrite,
    e: &ClusterError,
) -> Option<(Rejection, Option<Box<StatefulSet>>)> {
    e.is_refused()
        .then(|| (Rejection::new(write, e.message()), None))
}
