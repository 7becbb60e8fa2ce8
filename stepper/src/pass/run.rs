//! One pass: snapshot ([`crate::pass::reads`]) → I/O gates' reads → plan → writes, through a [`Cluster`].
//!
//! The only state is on the StatefulSets: a pass reads it, decides with the pure [`crate::plan`], and
//! writes JSON Patches whose `test` ops pin what it saw. A pass killed anywhere leaves either a whole
//! patch or none; the next pass (in this process or another) starts from the objects again.

use std::collections::HashMap;

use jiff::Timestamp;
use tracing::warn;

use crate::cluster::{Cluster, ClusterError, NoPrometheus, PatchOutcome, Prometheus};
use crate::gates::prometheus::QueryOutcome;
use crate::gates::{Idle, Need, OwnerProbe, Verdict};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;
use crate::pass::fresh;
use crate::pass::options::PassOptions;
use crate::pass::reads;
use crate::pass::recovery::{self, RecoveryOutcome, RecoveryReport};
use crate::plan::events::EventNote;
use crate::plan::{Figures, Planner, ProbeMap, SetPlan, Snapshot};

/// What a pass did with one StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The partition was lowered `from → to`.
    Stepped {
        /// Partition before.
        from: i32,
        /// Partition after.
        to: i32,
    },
    /// `--dry-run`: the partition would have been lowered `from → to`.
    WouldStep {
        /// Partition now.
        from: i32,
        /// Partition it would get.
        to: i32,
    },
    /// A gate blocks the next step (or the API server failed: reason `ApiError`).
    Blocked(Blocked),
    /// Nothing to step.
    Idle(Idle),
    /// Not guarded; left alone.
    Unguarded(&'static str),
    /// A write's `test` op failed: the set changed since the snapshot; re-read next pass.
    Conflict(String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Stepped { from, to } => write!(f, "Stepped {from}→{to}"),
            Outcome::WouldStep { from, to } => write!(f, "WouldStep {from}→{to} (dry run)"),
            Outcome::Blocked(b) => write!(f, "Blocked {b}"),
            Outcome::Idle(Idle::UpToDate) => f.write_str("Idle (up to date)"),
            Outcome::Idle(Idle::PartitionZero) => {
                f.write_str("Idle (partition 0: the controller finishes the rollout)")
            }
            Outcome::Unguarded(why) => write!(f, "Unguarded ({why})"),
            Outcome::Conflict(msg) => write!(f, "Conflict (re-read next pass): {msg}"),
        }
    }
}

/// The result of one pass for one StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub struct SetReport {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Figures as observed in the snapshot (the partition after a step is in the outcome), except
    /// `last_partition_update`: after a step, the stamp the step wrote.
    pub figures: Figures,
    /// What happened.
    pub outcome: Outcome,
    /// The API error that blocked this set, if any (the pass exits non-zero).
    pub error: Option<ClusterError>,
    /// Events that could not be published (the writes they describe did happen).
    pub event_errors: Vec<ClusterError>,
    /// For a step about to be written: the age of the pod read it was decided on, in seconds
    /// (`sts_safe_rollout_step_decision_age_seconds`); `None` when no step was about to be written.
    pub decision_age_seconds: Option<f64>,
}

impl SetReport {
    /// The partition after this pass: `to` when stepped, else as observed.
    pub fn partition_after(&self) -> Option<i32> {
        match self.outcome {
            Outcome::Stepped { to, .. } => Some(to),
            _ => self.figures.partition,
        }
    }

    /// The blocking reason, if any.
    pub fn blocked_reason(&self) -> Option<Reason> {
        match &self.outcome {
            Outcome::Blocked(b) => Some(b.reason),
            _ => None,
        }
    }
}

/// The result of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassReport {
    /// One report per StatefulSet in scope, in LIST order.
    pub sets: Vec<SetReport>,
    /// The stuck pods recovery deleted (or would have, or failed to), at most one per set.
    pub recoveries: Vec<RecoveryReport>,
}

impl PassReport {
    /// True when some StatefulSet was blocked by an API error, or a recovery DELETE failed.
    pub fn any_errored(&self) -> bool {
        self.sets.iter().any(|s| s.error.is_some())
            || self
                .recoveries
                .iter()
                .any(|r| matches!(r.outcome, RecoveryOutcome::Failed(_)))
    }
}

/// Runs one pass at time `now` (from the caller's clock) with no Prometheus ([`NoPrometheus`]: a set
/// with a Prometheus check never steps).
///
/// # Errors
/// See [`run_pass_with`].
pub async fn run_pass<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<PassReport, ClusterError> {
    run_pass_with(cluster, &NoPrometheus, opts, now).await
}

/// Runs one pass at time `now`: snapshot, the I/O gates' reads ([`gather_probes`]), the pure
/// [`crate::plan::plan_with`], stuck-pod recovery ([`recovery`], with `gates.recover_stuck_pods`), then
/// the writes.
///
/// # Errors
/// A failed LIST: no StatefulSet is touched. Write failures do not fail the pass: they block their
/// set with reason `ApiError` ([`PassReport::any_errored`]); so does a failed owner read (its set is
/// blocked `OwnerNotHealthy` and counts as errored).
pub async fn run_pass_with<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<PassReport, ClusterError> {
    let snap = reads::snapshot(cluster, opts, now).await?;
    let planner = Planner::new(&snap, &opts.gates);
    let (probes, mut probe_errors) = gather_probes(cluster, prometheus, &planner, &snap, now).await;
    let plans = planner.plan(now, &probes);
    let findings = recovery::findings(&plans);
    let mut report = PassReport {
        recoveries: recovery::recover(cluster, &snap, &plans, findings, opts.dry_run, now).await,
        ..PassReport::default()
    };
    for (i, p) in plans.into_iter().enumerate() {
        let (p, age, reread_error) =
            fresh::decide_fresh(cluster, &snap, i, p, &probes, opts, now).await;
        let mut set = execute(cluster, p, opts.dry_run).await;
        set.decision_age_seconds = age;
        if set.error.is_none() {
            set.error = reread_error.or_else(|| probe_errors.remove(&i));
        }
        report.sets.push(set);
    }
    Ok(report)
}

/// The plan for `snap` after the I/O gates' reads ([`gather_probes`], errors dropped: for planning
/// without running, as the simulation's killed and racing steppers do).
pub async fn plan_pass<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    snap: &Snapshot,
    opts: &PassOptions,
    now: Timestamp,
) -> Vec<SetPlan> {
    let planner = Planner::new(snap, &opts.gates);
    let (probes, _) = gather_probes(cluster, prometheus, &planner, snap, now).await;
    planner.plan(now, &probes)
}

/// The reads of the I/O gates for `snap` ([`Planner::needs`], `planner` built on `snap`): the controller owner of each set that
/// reached `OwnerNotHealthy`, the queries of each set whose Prometheus check is due. Only sets that
/// pass every gate before come this far, so a cluster with nothing ready to step costs no read.
/// Returns the reads by set index, and the API errors of failed owner reads by set index.
pub async fn gather_probes<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    planner: &Planner<'_>,
    snap: &Snapshot,
    now: Timestamp,
) -> (ProbeMap, HashMap<usize, ClusterError>) {
    let mut probes = ProbeMap::new();
    let mut errors = HashMap::new();
    // Each round answers one read per set; a set has at most two I/O gates.
    for _ in 0..3 {
        let needs = planner.needs(now, &probes);
        if needs.is_empty() {
            break;
        }
        for (i, need) in needs {
            let set = &snap.statefulsets[i];
            let entry = probes.entry(i).or_default();
            match need {
                Need::Owner(owner) => {
                    let ns = set.metadata.namespace.as_deref().unwrap_or("");
                    entry.owner = Some(match cluster.get_owner(ns, &owner).await {
                        Ok(Some(object)) => OwnerProbe::Found(object),
                        Ok(None) => OwnerProbe::NotFound,
                        Err(e) => {
                            let cause = e.to_string();
                            errors.insert(i, e);
                            OwnerProbe::Failed(cause)
                        }
                    });
                }
                Need::Queries(queries) => {
                    let mut outcomes = Vec::with_capacity(queries.len());
                    for q in &queries {
                        let outcome = prometheus.query(&q.expr).await;
                        if let QueryOutcome::Failed(cause) = &outcome {
                            warn!(
                                namespace = set.metadata.namespace.as_deref().unwrap_or(""),
                                statefulset = set.metadata.name.as_deref().unwrap_or(""),
                                query = %q.annotation,
                                cause = %cause,
                                "Prometheus gave no answer"
                            );
                        }
                        outcomes.push(outcome);
                    }
                    entry.prometheus = Some(outcomes);
                }
            }
        }
    }
    (probes, errors)
}

fn api_error(e: ClusterError) -> (Outcome, Option<ClusterError>) {
    (
        Outcome::Blocked(Blocked::new(Reason::ApiError, e.to_string())),
        Some(e),
    )
}

/// Carries out one set's plan: the status-annotations patch and its Events, or the step patch (which
/// carries the status annotations: one write) with those Events and its `Stepped` Event. With
/// `dry_run` nothing is written.
pub async fn execute<C: Cluster>(cluster: &C, p: SetPlan, dry_run: bool) -> SetReport {
    let mut event_errors = Vec::new();
    let mut stamp = None;
    let (outcome, error) = 'outcome: {
        if dry_run {
            break 'outcome (verdict_outcome(&p.verdict, true), None);
        }
        if let Some(patch) = &p.status_annotations {
            match cluster
                .patch_statefulset(&p.namespace, &p.name, patch)
                .await
            {
                Ok(PatchOutcome::Applied(_)) => {
                    for ev in &p.status_events {
                        publish(cluster, &p, ev, &mut event_errors).await;
                    }
                }
                Ok(PatchOutcome::Conflict(msg)) => break 'outcome (Outcome::Conflict(msg), None),
                Err(e) => break 'outcome api_error(e),
            }
        }
        let (Some(patch), Verdict::Step { from, to, .. }) = (&p.step, &p.verdict) else {
            break 'outcome (verdict_outcome(&p.verdict, false), None);
        };
        match cluster
            .patch_statefulset(&p.namespace, &p.name, patch)
            .await
        {
            Ok(PatchOutcome::Applied(stored)) => {
                let now_partition = set::partition(&stored);
                if now_partition != Some(*to) {
                    // Accepted, but an admission webhook kept the partition: not a step.
                    break 'outcome api_error(ClusterError::Unexpected {
                        action: format!("patch statefulset {}/{}", p.namespace, p.name),
                        message: format!(
                            "the API server accepted partition {to} but stored {}: an admission \
                             webhook changed it back",
                            now_partition.map_or("none".into(), |v| v.to_string())
                        ),
                    });
                }
                let update_revision = p.figures.update_revision.as_deref().unwrap_or("");
                let ev = EventNote::stepped(*from, *to, update_revision);
                publish(cluster, &p, &ev, &mut event_errors).await;
                // The Events of what rode in the step's patch (a bake-time resume, a pause point).
                if p.status_annotations.is_none() {
                    for ev in &p.status_events {
                        publish(cluster, &p, ev, &mut event_errors).await;
                    }
                }
                // Report the stamp this step wrote, not the one it replaced.
                stamp = stored_stamp(&stored, &p.config.keys.last_partition_update);
                (
                    Outcome::Stepped {
                        from: *from,
                        to: *to,
                    },
                    None,
                )
            }
            Ok(PatchOutcome::Conflict(msg)) => (Outcome::Conflict(msg), None),
            Err(e) => api_error(e),
        }
    };
    let mut figures = p.figures;
    if stamp.is_some() {
        figures.last_partition_update = stamp;
    }
    SetReport {
        namespace: p.namespace,
        name: p.name,
        figures,
        outcome,
        error,
        event_errors,
        decision_age_seconds: None,
    }
}

/// `<prefix>/last-partition-update` (`key`) on the stored `set`, when readable.
fn stored_stamp(set: &k8s_openapi::api::apps::v1::StatefulSet, key: &str) -> Option<Timestamp> {
    set.metadata.annotations.as_ref()?.get(key)?.parse().ok()
}

async fn publish<C: Cluster>(
    cluster: &C,
    p: &SetPlan,
    ev: &EventNote,
    errors: &mut Vec<ClusterError>,
) {
    if let Err(e) = cluster.publish_event(&p.reference, ev).await {
        warn!(namespace = %p.namespace, statefulset = %p.name, error = %e, "event not published");
        errors.push(e);
    }
}

/// The outcome a verdict stands for when no write changes it.
pub fn verdict_outcome(verdict: &Verdict, dry_run: bool) -> Outcome {
    match verdict {
        Verdict::Unguarded(why) => Outcome::Unguarded(why),
        Verdict::Idle(i) => Outcome::Idle(*i),
        Verdict::Blocked(b) => Outcome::Blocked(b.clone()),
        Verdict::Step { from, to, .. } if dry_run => Outcome::WouldStep {
            from: *from,
            to: *to,
        },
        Verdict::Step { from, to, .. } => Outcome::Stepped {
            from: *from,
            to: *to,
        },
    }
}
