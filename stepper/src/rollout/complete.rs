//! When a rollout is really complete: what `sts-stepper wait` waits for.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::gates::{self, GateOptions, Verdict, check_observed, check_pods_ready, check_step_done};
use crate::model::pods::PdbView;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// Whether the rollout is really complete — what `sts-stepper wait` waits for: the controller observed
/// the spec, no update is staged (by the status counters, and the partition is 0 when one was), and
/// every pod in `[0, replicas)` runs `status.updateRevision` and is ready and available at `now`.
///
/// # Errors
/// The first condition that does not hold, as a [`Blocked`]: the gate blocking the next step while the
/// partition is above 0; else `PodNotReady` / `StepInProgress` for the pods; else `StepInProgress`
/// naming the partition or the status counters.
pub fn rollout_complete(
    set: &StatefulSet,
    pods: &BTreeMap<u32, &Pod>,
    pdbs: &[PdbView<'_>],
    opts: &GateOptions,
    now: Timestamp,
) -> Result<(), Blocked> {
    check_observed(set)?;
    let partition = set::partition(set).unwrap_or(0);
    let staged = set::has_staged_update(set);
    if staged && partition > 0 {
        if let Verdict::Blocked(b) = gates::decide(set, pods, pdbs, opts, now) {
            return Err(b);
        }
        return Err(Blocked::new(
            Reason::StepInProgress,
            format!(
                "{}: partition {partition} > 0, next step due",
                set::name(set)
            ),
        ));
    }
    check_pods_ready(set, pods, now)?;
    check_step_done(set, pods, 0)?;
    if staged {
        let s = set.status.as_ref();
        return Err(Blocked::new(
            Reason::StepInProgress,
            format!(
                "{}: status reports updatedReplicas {} of {}, currentRevision {}",
                set::name(set),
                s.and_then(|s| s.updated_replicas).unwrap_or(0),
                set::replicas(set),
                s.and_then(|s| s.current_revision.as_deref())
                    .unwrap_or("<none>")
            ),
        ));
    }
    Ok(())
}
