//! "A step is decided on fresh pods" (docs/design.md): a step whose pod read is old, or came from caches, is
//! decided again on a fresh read of its set and pods before it is written.

use jiff::Timestamp;

use crate::cluster::{Cluster, ClusterError};
use crate::gates::Verdict;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set::step_changed;
use crate::pass::options::PassOptions;
use crate::pass::probes::unchanged;
use crate::pass::reads;
use crate::plan::set_write::SetWrite;
use crate::plan::{Planner, ProbeMap, SetPlan, Snapshot};

/// What [`decide_fresh`] concludes.
#[derive(Debug)]
pub struct Fresh {
    /// The plan to carry out.
    pub plan: SetPlan,
    /// The age in seconds of the pod read the plan stands on (for a step; measured right before the
    /// write).
    pub age: Option<f64>,
    /// A failed re-read (the set is then blocked `ApiError`).
    pub error: Option<ClusterError>,
    /// The set the pass decided on and the one read again differ in what the step and the I/O gates'
    /// reads are about (`model::set::step_changed`): nothing is written, the set is decided again next
    /// pass (the message says what changed; reported as a lost race, `Conflict`).
    pub changed: Option<String>,
}

/// The plan `p` for the set at index `i` (a plan that writes), decided again on a fresh read of the set
/// and its pods ([`reads::reread_set`]) when it is a step or returns a pod ([`SetPlan::deletes_a_pod`])
/// and the pod read of `snap` is older than `opts.max_decision_age` or came from `watch`'s caches
/// (docs/design.md, "A step is decided on fresh pods": nothing in the step's JSON Patch pins a pod's
/// readiness, nor the DELETE's preconditions another pod's). From the caches, a plan with requests on
/// the pods is carried out only while a fresh GET shows the set at the same step. The I/O gates' reads
/// of the pass (`probes`: a check's result, the webhook's answer) are reused only for the same step of
/// the same revision: a set that `changed` is not written this pass ([`Fresh::changed`]).
pub async fn decide_fresh<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    i: usize,
    mut p: SetPlan,
    probes: &ProbeMap,
    opts: &PassOptions,
    now: Timestamp,
) -> Fresh {
    let done = |plan, age, error| Fresh {
        plan,
        age,
        error,
        changed: None,
    };
    if opts.dry_run {
        return done(p, None, None);
    }
    // A step, or a return (a DELETE whose preconditions pin only the pod itself), stands on the pods.
    let on_pods = matches!(p.verdict, Verdict::Step { .. }) || p.deletes_a_pod();
    let (true, Some(read_at)) = (on_pods, snap.pods_read_at) else {
        // From the caches, a request on the pods is written only while the set is the step it was
        // read at (the pods' own changes fail their pinned `resourceVersion`).
        if cluster.cached()
            && !p.pod_writes.is_empty()
            && let Err(why) = unchanged(cluster, &snap.statefulsets[i]).await
        {
            return Fresh {
                plan: p,
                age: None,
                error: None,
                changed: Some(why),
            };
        }
        return done(p, None, None);
    };
    if !cluster.cached() && read_at.elapsed() <= opts.max_decision_age {
        return done(p, Some(read_at.elapsed().as_secs_f64()), None);
    }
    match reads::reread_set(cluster, &snap.statefulsets[i], opts.gates.pdb_gate).await {
        Ok(fresh) => {
            let age = fresh.pods_read_at.map(|t| t.elapsed().as_secs_f64());
            if let Some(why) = step_changed(&snap.statefulsets[i], &fresh.statefulsets[0]) {
                return Fresh {
                    plan: p,
                    age,
                    error: None,
                    changed: Some(why),
                };
            }
            let probes: ProbeMap = probes
                .get(&i)
                .map(|pr| (0, pr.clone()))
                .into_iter()
                .collect();
            match Planner::new(&fresh, &opts.gates).plan(now, &probes).pop() {
                Some(fresh_plan) => done(fresh_plan, age, None),
                None => done(p, age, None),
            }
        }
        Err(e) => {
            p.verdict = Verdict::Blocked(Blocked::new(Reason::ApiError, e.to_string()));
            if p.write.is_step() {
                // The step carried the status annotations: nothing is written.
                p.write = SetWrite::default();
            }
            done(p, None, Some(e))
        }
    }
}
