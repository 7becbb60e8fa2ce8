//! The recovery phase of a pass (I/O): the stuck pods [`crate::gates::recovery::decide`] says to delete,
//! deleted through a [`Cluster`] with uid and resourceVersion preconditions, each with its Event.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use tracing::warn;

use crate::cluster::{Cluster, ClusterError, DeleteOutcome};
use crate::gates::recovery::{self, Action, Finding, StuckPod};
use crate::model::pods::{controller_uid, pods_by_ordinal};
use crate::pass::reads;
use crate::plan::events::EventNote;
use crate::plan::{SetPlan, Snapshot};

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
    /// Not sent: this replica lost the Lease mid-pass ([`ClusterError::NotLeader`]); not an error.
    /// The string is the DELETE not sent.
    NotLeader(String),
}

impl RecoveryOutcome {
    /// True for [`RecoveryOutcome::NotLeader`].
    pub fn is_not_leader(&self) -> bool {
        matches!(self, RecoveryOutcome::NotLeader(_))
    }
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
            RecoveryOutcome::NotLeader(action) => {
                format!("not deleted (lost the Lease mid-pass: {action} not sent)")
            }
        };
        let kind = if p.failed_revision {
            "pod on the rolled-back revision"
        } else {
            "stuck pod"
        };
        write!(
            f,
            "{}/{}: {kind} {} (not Ready for {}s on revision {}, its ordinal runs {}): {what}",
            self.namespace,
            self.statefulset,
            p.name,
            p.not_ready_seconds,
            p.revision,
            p.expected_revision
        )
    }
}

/// Every set's recovery finding, by set index (`plans[i]` is the plan of the snapshot's set `i`; the
/// planner decided each with [`recovery::decide`] on the set's pods read in the pass).
pub fn findings(plans: &[SetPlan]) -> Vec<(usize, Finding)> {
    plans
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, Finding::clone(p.recovery.as_deref()?))))
        .collect()
}

/// Deletes the stuck pods `findings` decided to delete (at most one per set), each with its
/// `RecoveredStuckPod` Event; with `dry_run` deletes nothing and reports [`RecoveryOutcome::WouldDelete`].
/// Once a DELETE is not sent because the Lease was lost, the others are not attempted
/// ([`RecoveryOutcome::NotLeader`]).
/// `snap` is the snapshot the findings were made on (`plans[i]` and `findings` index its sets); when
/// its reads came from `watch`'s caches ([`Cluster::cached`]), each delete is first confirmed on a fresh
/// consistent read (`confirm_on_fresh_read`).
pub async fn recover<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    plans: &[SetPlan],
    findings: Vec<(usize, Finding)>,
    dry_run: bool,
    now: Timestamp,
) -> Vec<RecoveryReport> {
    let mut reports: Vec<RecoveryReport> = Vec::new();
    for (i, finding) in findings {
        if finding.action != Action::Delete {
            continue;
        }
        let plan = &plans[i];
        let pod = finding.pod;
        let mut event_error = None;
        if reports.iter().any(|r| r.outcome.is_not_leader()) {
            // The Lease was lost: no other DELETE is sent.
            reports.push(RecoveryReport {
                namespace: plan.namespace.clone(),
                statefulset: plan.name.clone(),
                outcome: RecoveryOutcome::NotLeader(format!(
                    "delete pod {}/{}",
                    plan.namespace, pod.name
                )),
                pod,
                event_error,
            });
            continue;
        }
        let confirmed = if cluster.cached() && !dry_run {
            confirm_on_fresh_read(cluster, &snap.statefulsets[i], plan, &pod, now).await
        } else {
            Ok(None)
        };
        let outcome = if dry_run {
            RecoveryOutcome::WouldDelete
        } else if let Err(e) = confirmed {
            RecoveryOutcome::Failed(e)
        } else if let Ok(Some(changed)) = confirmed {
            RecoveryOutcome::Conflict(changed)
        } else {
            match cluster
                .delete_pod(&plan.namespace, &pod.name, &pod.uid, &pod.resource_version)
                .await
            {
                Ok(DeleteOutcome::Deleted) => {
                    let note = if pod.failed_revision {
                        // A pod of the revision just rolled back: the rollback's return, at once.
                        EventNote::returned_not_ready(
                            &pod.name,
                            &pod.revision,
                            &pod.expected_revision,
                        )
                    } else {
                        EventNote::recovered(
                            &pod.name,
                            &pod.revision,
                            &pod.expected_revision,
                            pod.not_ready_seconds,
                        )
                    };
                    if let Err(e) = cluster.publish_event(&plan.reference(), &note).await {
                        warn!(namespace = %plan.namespace, statefulset = %plan.name, error = %e,
                              "RecoveredStuckPod event not published");
                        event_error = Some(e);
                    }
                    RecoveryOutcome::Deleted
                }
                Ok(DeleteOutcome::Conflict(msg)) => RecoveryOutcome::Conflict(msg),
                Err(ClusterError::NotLeader { action }) => RecoveryOutcome::NotLeader(action),
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

/// Decides again, on a fresh consistent read of `set` and its pods ([`reads::reread_set`]), whether
/// `pod` is still the one to delete: a cache can lag behind a second pod going down, and the DELETE's
/// preconditions pin only the stuck pod itself (docs/design.md: no stale cache decides a write). `Ok(None)`:
/// confirmed; `Ok(Some(why))`: the fresh read decided otherwise (nothing is deleted; next pass looks
/// again).
///
/// # Errors
/// The fresh read failed.
async fn confirm_on_fresh_read<C: Cluster>(
    cluster: &C,
    set: &StatefulSet,
    plan: &SetPlan,
    pod: &StuckPod,
    now: Timestamp,
) -> Result<Option<String>, ClusterError> {
    let fresh = reads::reread_set(cluster, set, false).await?;
    let fresh_set = &fresh.statefulsets[0];
    let owned = fresh.pods.iter().filter(|p| {
        fresh_set
            .metadata
            .uid
            .as_deref()
            .is_some_and(|uid| controller_uid(p) == Some(uid))
    });
    let pods: BTreeMap<u32, &Pod> = pods_by_ordinal(fresh_set, owned);
    let again = recovery::decide(fresh_set, &plan.config, &pods, true, now);
    Ok(match again {
        Some(f) if f.action == Action::Delete && f.pod.uid == pod.uid => None,
        Some(f) => Some(format!(
            "the fresh read of {}/{} decided otherwise: {} {}",
            plan.namespace, plan.name, f.pod.name, f.action
        )),
        None => Some(format!(
            "the fresh read of {}/{} shows no stuck pod",
            plan.namespace, plan.name
        )),
    })
}
