//! One pass: snapshot ([`crate::pass::reads`]) → I/O gates' reads → plan → writes, through a [`Cluster`].
//!
//! The only state is on the StatefulSets: a pass reads it, decides with the pure [`crate::plan`], and
//! writes JSON Patches whose `test` ops pin what it saw. A pass killed anywhere leaves either a whole
//! patch or none; the next pass (in this process or another) starts from the objects again.

use std::collections::{BTreeMap, HashMap};
use sts_safe_rollout_rules::annotations as names;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use tracing::{info, warn};

use crate::cluster::{AllProbes, Checks, Cluster, ClusterError, PatchOutcome, PodPatched};
use crate::config::Answerer;
use crate::gates::Verdict;
use crate::model::set;
use crate::pass::fresh;
use crate::pass::options::PassOptions;
use crate::pass::outcome::{not_leading, write_failed};
pub use crate::pass::outcome::{unwritten, verdict_outcome};
pub use crate::pass::probes::gather_probes;
use crate::pass::reads;
use crate::pass::recovery;
use crate::pass::rejected::{self, refusal};
use crate::pass::report::{Outcome, PassReport, SetReport};
use crate::pass::returning;
use crate::pass::rollback::{self, RollbackWrite};
use crate::plan::approval_events::pod_write_events;
use crate::plan::events::EventNote;
use crate::plan::patch::pod_patch;
use crate::plan::rejected::{RefusedWrite, Rejection};
use crate::plan::{Planner, ProbeMap, SetPlan, Snapshot};

/// Runs one pass at time `now` (from the caller's clock) with no check configured
/// ([`Checks::default`]: every check's read is an error, so a set with a check never steps).
///
/// # Errors
/// See [`run_pass_with`].
pub async fn run_pass<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<PassReport, ClusterError> {
    run_pass_with(cluster, &Checks::default(), opts, now).await
}

/// Runs one pass at time `now`: [`decide`] (snapshot, the I/O gates' reads, the pure
/// [`crate::plan::plan_with`]), then [`write()`] (stuck-pod recovery with `gates.recover_stuck_pods`,
/// then each set's writes).
///
/// # Errors
/// A failed StatefulSet LIST: no StatefulSet is touched. Other failures do not fail the pass, they
/// stay with the sets they concern ([`PassReport::any_errored`]): a failed pod or PDB LIST blocks the
/// sets that needed it with reason `ApiError` naming the read ([`reads::snapshot_parsed`]); so does a
/// failed write; a failed owner read blocks its set `OwnerNotHealthy` and counts as errored. A write
/// not sent because the Lease was lost ([`ClusterError::NotLeader`]) is no error: that set and every
/// later one with a write are [`Outcome::NotLeader`], and nothing more is written.
pub async fn run_pass_with<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<PassReport, ClusterError> {
    let decided = decide(cluster, checks, opts, now).await?;
    Ok(write(cluster, decided, opts, now).await)
}

/// What a pass decided before it writes anything ([`decide`]); [`write()`] carries it out.
#[derive(Debug)]
pub struct Decided {
    snap: Snapshot,
    plans: Vec<SetPlan>,
    probes: ProbeMap,
    read_errors: BTreeMap<usize, ClusterError>,
    probe_errors: HashMap<usize, ClusterError>,
}

impl Decided {
    /// The plans, in set order.
    pub fn plans(&self) -> &[SetPlan] {
        &self.plans
    }
}

/// The first half of a pass: the snapshot ([`reads::snapshot_parsed`]), the I/O gates' reads
/// ([`gather_probes`]) and the plans. Nothing is written.
///
/// # Errors
/// A failed StatefulSet LIST.
pub async fn decide<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    now: Timestamp,
) -> Result<Decided, ClusterError> {
    let reads::Read {
        snap,
        configs,
        failed: read_errors,
    } = reads::snapshot_parsed(cluster, opts, now).await?;
    let planner = Planner::with_configs(&snap, &opts.gates, configs);
    let (probes, probe_errors) =
        gather_probes(cluster, checks, &planner, &snap, &opts.probes, now).await;
    let plans = planner.plan(now, &probes);
    Ok(Decided {
        snap,
        plans,
        probes,
        read_errors,
        probe_errors,
    })
}

/// The second half of a pass: stuck-pod recovery ([`recovery`]), then each set's writes — a step
/// decided again on a fresh read first ([`fresh::decide_fresh`]) — and the report.
pub async fn write<C: Cluster>(
    cluster: &C,
    decided: Decided,
    opts: &PassOptions,
    now: Timestamp,
) -> PassReport {
    let Decided {
        snap,
        plans,
        probes,
        mut read_errors,
        mut probe_errors,
    } = decided;
    let findings = recovery::findings(&plans);
    let mut report = PassReport {
        recoveries: recovery::recover(cluster, &snap, &plans, findings, opts.dry_run, now).await,
        sets: Vec::with_capacity(plans.len()),
    };
    // Once a write meets `NotLeader` (the Lease was lost mid-pass), no other write is attempted.
    let mut leading = !report.recoveries.iter().any(|r| r.outcome.is_not_leader());
    for (i, p) in plans.into_iter().enumerate() {
        let webhook = p.config.answerer.as_ref().and_then(Answerer::webhook);
        let webhook_call = webhook.and_then(|w| {
            let answer = probes.get(&i)?.webhook.as_ref()?;
            Some((w.name.clone(), answer.result_label()))
        });
        let (mut set, reread_error) = if p.writes_nothing() {
            // Most sets of most passes: nothing to re-read, write or announce.
            (unwritten(p), None)
        } else if !leading {
            (not_leading(p), None)
        } else {
            let fresh = fresh::decide_fresh(cluster, &snap, i, p, &probes, opts, now).await;
            let mut set = match fresh.changed {
                // A lost race: the set moved on since the read; nothing written.
                Some(why) => SetReport {
                    outcome: Outcome::Conflict(why),
                    news: true,
                    ..unwritten(fresh.plan)
                },
                None => execute(cluster, fresh.plan, opts.dry_run).await,
            };
            set.decision_age_seconds = fresh.age;
            leading = !set.lost_leadership();
            (set, fresh.error)
        };
        if set.error.is_none() {
            set.error = reread_error
                .or_else(|| read_errors.remove(&i))
                .or_else(|| probe_errors.remove(&i));
            set.news |= set.error.is_some();
        }
        set.webhook_call = webhook_call;
        report.sets.push(set);
    }
    report
}

/// The plan for `snap` after the I/O gates' reads ([`gather_probes`], errors dropped: for `status`
/// and `step`, which show or take one decision).
pub async fn plan_pass<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    snap: &Snapshot,
    opts: &PassOptions,
    now: Timestamp,
) -> Vec<SetPlan> {
    let planner = Planner::new(snap, &opts.gates);
    let (probes, _) = gather_probes(cluster, checks, &planner, snap, &opts.probes, now).await;
    planner.plan(now, &probes)
}

/// Carries out one set's plan: the status-annotations patch and its Events, or the step patch (which
/// carries the status annotations: one write) with those Events and its `Stepped` Event. A write the
/// API server refuses is recorded on the set and announced ([`rejected::announce`]). With `dry_run`
/// nothing is written.
pub async fn execute<C: Cluster>(cluster: &C, p: SetPlan, dry_run: bool) -> SetReport {
    let mut event_errors = Vec::new();
    let mut stamp = None;
    let mut refused: Option<(Rejection, Option<Box<StatefulSet>>)> = None;
    let mut wrote = dry_run && !p.writes_nothing();
    let (outcome, error) = 'outcome: {
        if dry_run {
            if let Some(rb) = p.write.rollback() {
                break 'outcome (Outcome::WouldRollBack(rollback::label(rb)), None);
            }
            if let Some(r) = p.returning.as_ref().filter(|r| r.deletes()) {
                break 'outcome (Outcome::WouldReturn(returning::label(&r.pod)), None);
            }
            break 'outcome (verdict_outcome(&p.verdict, true), None);
        }
        // The approval handshake's pod writes first: a request stands whatever becomes of the set's
        // own write; a step among them was decided with every approval in.
        if !p.pod_writes.is_empty() {
            let mut written = Vec::new();
            for w in &p.pod_writes {
                match cluster
                    .patch_pod(&p.namespace, &w.name, &pod_patch(w))
                    .await
                {
                    Ok(PodPatched::Applied) => written.push(w),
                    Ok(PodPatched::Conflict(_)) => {} // the pod changed: re-read next pass
                    Err(e) => break 'outcome write_failed(e),
                }
            }
            wrote |= !written.is_empty();
            // A return's requests ask for the revision the pod returns to.
            let revision = match &p.returning {
                Some(r) => r.pod.to.as_str(),
                None => p.figures.revisions.update().unwrap_or(""),
            };
            for ev in pod_write_events(&written, revision) {
                publish(cluster, &p, &ev, &mut event_errors).await;
            }
        }
        // A step or a rollback carries the status annotations in its own write (below).
        if let Some(patch) = p.status_patch() {
            match cluster
                .patch_statefulset(&p.namespace, &p.name, &patch)
                .await
            {
                Ok(PatchOutcome::Applied(_)) => {
                    wrote = true;
                    for ev in p.events() {
                        publish(cluster, &p, ev, &mut event_errors).await;
                    }
                }
                Ok(PatchOutcome::Conflict(msg)) => break 'outcome (Outcome::Conflict(msg), None),
                Err(e) => {
                    refused = refusal(RefusedWrite::StatusAnnotations, &e);
                    break 'outcome write_failed(e);
                }
            }
        }
        if let Some(rb) = p.write.rollback() {
            break 'outcome match rollback::roll_back(cluster, &p, rb).await {
                Ok(RollbackWrite::Written(errors)) => {
                    wrote = true;
                    event_errors.extend(errors);
                    (Outcome::RolledBack(rollback::label(rb)), None)
                }
                Ok(RollbackWrite::Conflict(msg)) => (Outcome::Conflict(msg), None),
                Err(e) => write_failed(e),
            };
        }
        if let Some(r) = p.returning.as_ref().filter(|r| r.deletes()) {
            break 'outcome match returning::return_pod(cluster, &p, &r.pod).await {
                Ok((outcome, event_error)) => {
                    wrote |= matches!(outcome, Outcome::Returned(_));
                    event_errors.extend(event_error);
                    (outcome, None)
                }
                Err(e) => write_failed(e),
            };
        }
        let (Some(patch), Verdict::Step { from, to, .. }) = (p.step_patch(), &p.verdict) else {
            break 'outcome (verdict_outcome(&p.verdict, false), None);
        };
        match cluster
            .patch_statefulset(&p.namespace, &p.name, &patch)
            .await
        {
            Ok(PatchOutcome::Applied(stored)) => {
                wrote = true;
                let now_partition = set::partition(&stored);
                if now_partition != Some(*to) {
                    // Accepted, but an admission webhook kept the partition: not a step.
                    let e = ClusterError::Unexpected {
                        action: format!("patch statefulset {}/{}", p.namespace, p.name),
                        message: format!(
                            "the API server accepted partition {to} but stored {}: an admission \
                             webhook changed it back",
                            now_partition.map_or("none".into(), |v| v.to_string())
                        ),
                    };
                    let rejection = Rejection::new(RefusedWrite::Step, e.message());
                    refused = Some((rejection, Some(stored)));
                    break 'outcome write_failed(e);
                }
                let update_revision = p.figures.revisions.update().unwrap_or("");
                let ev = EventNote::stepped(*from, *to, update_revision);
                publish(cluster, &p, &ev, &mut event_errors).await;
                // The Events of what rode in the step's patch (a bake-time resume, a pause point).
                for ev in p.events() {
                    publish(cluster, &p, ev, &mut event_errors).await;
                }
                // Report the stamp this step wrote, not the one it replaced.
                stamp = stored_stamp(&stored, p.config.keys.of(names::LAST_PARTITION_UPDATE));
                (
                    Outcome::Stepped {
                        from: *from,
                        to: *to,
                    },
                    None,
                )
            }
            Ok(PatchOutcome::Conflict(msg)) => (Outcome::Conflict(msg), None),
            Err(e) => {
                refused = refusal(RefusedWrite::Step, &e);
                write_failed(e)
            }
        }
    };
    let mut rejection = None;
    if let Some((r, stored)) = refused {
        let (report, event_error) = rejected::announce(cluster, &p, r, stored.as_deref()).await;
        event_errors.extend(event_error);
        rejection = Some(Box::new(report));
    }
    // Worth a log line at INFO: something was (or, dry, would be) written, a race was lost, or an
    // error that is not a refusal already on record (DEBUG otherwise: one line per change).
    let news = match (&error, &rejection) {
        (Some(_), Some(r)) => r.announced || !r.recorded,
        (Some(_), None) => true,
        (None, _) => wrote || matches!(outcome, Outcome::Conflict(_) | Outcome::NotLeader(_)),
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
        rejection,
        news,
        webhook_call: None,
    }
}

/// `<prefix>/last-partition-update` (`key`) on the stored `set`, when readable.
fn stored_stamp(set: &StatefulSet, key: &str) -> Option<Timestamp> {
    set.metadata.annotations.as_ref()?.get(key)?.parse().ok()
}

async fn publish<C: Cluster>(
    cluster: &C,
    p: &SetPlan,
    ev: &EventNote,
    errors: &mut Vec<ClusterError>,
) {
    if let Err(e) = cluster.publish_event(&p.reference(), ev).await {
        if e.is_not_leader() {
            info!(namespace = %p.namespace, statefulset = %p.name, error = %e, "event not published");
        } else {
            warn!(namespace = %p.namespace, statefulset = %p.name, error = %e, "event not published");
        }
        errors.push(e);
    }
}
