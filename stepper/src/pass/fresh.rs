//! "A step is decided on fresh pods" (docs/design.md): a step whose pod read is old, or came from caches, is
//! decided again on a fresh read of its set and pods before it is written.

use jiff::Timestamp;

use crate::cluster::{Cluster, ClusterError};
use crate::gates::Verdict;
use crate::model::reasons::{Blocked, Reason};
use crate::pass::options::PassOptions;
use crate::pass::reads;
use crate::plan::{Planner, ProbeMap, SetPlan, Snapshot};

/// The plan `p` for the set at index `i`, decided again on a fresh read of the set and its pods
/// ([`reads::reread_set`]) when it is a step and the pod read of `snap` is older than
/// `opts.max_decision_age` or came from caches (docs/design.md, "A step is decided on fresh pods": nothing
/// in the step's JSON Patch pins a pod's readiness). Returns the plan to carry
/// out, the age in seconds of the pod read it stands on (for a step; measured now, right before the
/// write), and the error of a failed re-read (the set is then blocked `ApiError`).
pub async fn decide_fresh<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    i: usize,
    mut p: SetPlan,
    probes: &ProbeMap,
    opts: &PassOptions,
    now: Timestamp,
) -> (SetPlan, Option<f64>, Option<ClusterError>) {
    let (Verdict::Step { .. }, false, Some(read_at)) =
        (&p.verdict, opts.dry_run, snap.pods_read_at)
    else {
        return (p, None, None);
    };
    if !cluster.cached() && read_at.elapsed() <= opts.max_decision_age {
        return (p, Some(read_at.elapsed().as_secs_f64()), None);
    }
    match reads::reread_set(cluster, &snap.statefulsets[i], opts.gates.pdb_gate).await {
        Ok(fresh) => {
            let probes: ProbeMap = probes
                .get(&i)
                .map(|pr| (0, pr.clone()))
                .into_iter()
                .collect();
            let age = fresh.pods_read_at.map(|t| t.elapsed().as_secs_f64());
            match Planner::new(&fresh, &opts.gates).plan(now, &probes).pop() {
                Some(fresh_plan) => (fresh_plan, age, None),
                None => (p, age, None),
            }
        }
        Err(e) => {
            p.verdict = Verdict::Blocked(Blocked::new(Reason::ApiError, e.to_string()));
            p.step = None;
            (p, None, Some(e))
        }
    }
}
