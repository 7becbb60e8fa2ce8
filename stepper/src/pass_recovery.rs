//! The recovery phase of a pass (I/O): the stuck pods [`crate::recovery::decide`] says to delete,
//! deleted through a [`Cluster`] with uid and resourceVersion preconditions, each with its Event.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use tracing::warn;

use crate::cluster::{Cluster, ClusterError, DeleteOutcome};
use crate::events::EventNote;
use crate::plan::{SetPlan, Snapshot};
use crate::pods::{controller_uid, pods_by_ordinal};
use crate::recovery::{self, Decision, Finding, StuckPod};

/// What recovery did with one set's stuck pod.
#[derive(Clone, Debug, PartialEq)]
pub enum RecoveryOutcome {
    /// Deleted; the StatefulSet controller recreates it from the right revision.
    Deleted,
    /// `--dry-run`: it would have been deleted.
    WouldDelete,
    /// A precondition failed or the pod was gone (HTTP 409/404): nothing deleted; re-read next pass.
    Conflict(String),
    /// The DELETE failed (a 403 names the missing RBAC rule).
    Failed(ClusterError),
}

/// One recovery of a pass.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveryReport {
    /// The set's `metadata.namespace`.
    pub namespace: String,
    /// The set's `metadata.name`.
    pub statefulset: String,
    /// The pod and why it counted as stuck.
    pub pod: StuckPod,
    /// What became of it.
    pub outcome: RecoveryOutcome,
    /// The `RecoveredStuckPod` Event, when it could not be published (the pod was deleted).
    pub event_error: Option<ClusterError>,
}

impl std::fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.pod;
        let what = match &self.outcome {
            RecoveryOutcome::Deleted => "deleted".to_string(),
            RecoveryOutcome::WouldDelete => "would delete (dry run)".to_string(),
            RecoveryOutcome::Conflict(m) => {
                format!("not deleted (changed, re-read next pass): {m}")
            }
            RecoveryOutcome::Failed(e) => format!("not deleted: {e}"),
        };
        write!(
            f,
            "{}/{}: stuck pod {} (not Ready for {}s on revision {}, its ordinal runs {}): {what}",
            self.namespace,
            self.statefulset,
            p.name,
            p.not_ready_seconds,
            p.revision,
            p.expected_revision
        )
    }
}

/// Every set's recovery finding for `snap` (`plans[i]` is the plan of `snap.statefulsets[i]`, its
/// annotations read once), by set index; `enabled`: `--recover-stuck-pods`.
pub fn findings(
    snap: &Snapshot,
    plans: &[SetPlan],
    enabled: bool,
    now: Timestamp,
) -> Vec<(usize, Finding)> {
    let mut by_owner: HashMap<&str, Vec<&Pod>> = HashMap::new();
    for pod in &snap.pods {
        if let Some(uid) = controller_uid(pod) {
            by_owner.entry(uid).or_default().push(pod);
        }
    }
    snap.statefulsets
        .iter()
        .zip(plans)
        .enumerate()
        .filter_map(|(i, (set, plan))| {
            let uid = set.metadata.uid.as_deref()?;
            let owned = by_owner.get(uid)?;
            let pods: BTreeMap<u32, &Pod> = pods_by_ordinal(set, owned.iter().copied());
            Some((i, recovery::decide(set, &plan.config, &pods, enabled, now)?))
        })
        .collect()
}

/// Deletes the stuck pods `findings` decided to delete (at most one per set), each with its
/// `RecoveredStuckPod` Event; with `dry_run` deletes nothing and reports [`RecoveryOutcome::WouldDelete`].
pub async fn recover<C: Cluster>(
    cluster: &C,
    plans: &[SetPlan],
    findings: Vec<(usize, Finding)>,
    dry_run: bool,
) -> Vec<RecoveryReport> {
    let mut reports = Vec::new();
    for (i, finding) in findings {
        if finding.decision != Decision::Delete {
            continue;
        }
        let plan = &plans[i];
        let pod = finding.pod;
        let mut event_error = None;
        let outcome = if dry_run {
            RecoveryOutcome::WouldDelete
        } else {
            match cluster
                .delete_pod(&plan.namespace, &pod.name, &pod.uid, &pod.resource_version)
                .await
            {
                Ok(DeleteOutcome::Deleted) => {
                    let note = EventNote::recovered(
                        &pod.name,
                        &pod.revision,
                        &pod.expected_revision,
                        pod.not_ready_seconds,
                    );
                    if let Err(e) = cluster.publish_event(&plan.reference, &note).await {
                        warn!(namespace = %plan.namespace, statefulset = %plan.name, error = %e,
                              "RecoveredStuckPod event not published");
                        event_error = Some(e);
                    }
                    RecoveryOutcome::Deleted
                }
                Ok(DeleteOutcome::Conflict(msg)) => RecoveryOutcome::Conflict(msg),
                Err(e) => RecoveryOutcome::Failed(e),
            }
        };
        reports.push(RecoveryReport {
            namespace: plan.namespace.clone(),
            statefulset: plan.name.clone(),
            pod,
            outcome,
            event_error,
        });
    }
    reports
}
