//! The log of a pass ([`log_pass`]: a line per set it changed something for, a line per stuck pod
//! recovered, one summary line) and one pass at the clock's now, logged and observed
//! ([`timed_pass`]).

use std::time::Instant;

use jiff::Timestamp;
use tracing::{debug, error, info, warn};

use crate::cluster::{AllProbes, Cluster, ClusterError};
use crate::pass::recovery::RecoveryOutcome;
use crate::pass::{self, Outcome, PassOptions, PassReport, SetReport};
use crate::serve::metrics::Metrics;

/// One line per set whose pass changed something ([`SetReport::news`]): ERROR for an error (its
/// `error_reason`: [`SetReport::error_reason`], the `sts_safe_rollout_errors_total` label), INFO
/// otherwise (a lost Lease, `NotLeader`, too); DEBUG for a set the pass left as it was (a wait
/// already announced, an idle set). The message says the outcome once, whole; the fields carry its
/// kind (`outcome`: [`Outcome::kind`]) and a blocking gate's `reason`, for filtering.
pub(super) fn log_set(s: &SetReport) {
    let f = &s.figures;
    macro_rules! line {
        ($level:ident) => {
            $level!(
                namespace = %s.namespace,
                statefulset = %s.name,
                outcome = s.outcome.kind(),
                reason = s.blocked_reason().map_or("", |r| r.as_str()),
                error_reason = s.error_reason().unwrap_or(""),
                replicas = f.replicas,
                current_replicas = f.current_replicas,
                updated_replicas = f.updated_replicas,
                ready_replicas = f.ready_replicas,
                partition = s.partition_after().unwrap_or(0),
                last_partition_update = f.last_partition_update.map(|t| t.to_string()).unwrap_or_default(),
                update_revision = f.revisions.update().unwrap_or(""),
                "{}/{}: {}", s.namespace, s.name, s.outcome
            )
        };
    }
    match (s.news, s.error.is_some()) {
        (true, true) => line!(error),
        (true, false) => line!(info),
        (false, _) => line!(debug),
    }
}

fn log_summary(report: &PassReport, seconds: f64) {
    let count = |f: fn(&Outcome) -> bool| report.sets.iter().filter(|s| f(&s.outcome)).count();
    info!(
        statefulsets = report.sets.len(),
        stepped = count(|o| matches!(o, Outcome::Stepped { .. } | Outcome::WouldStep { .. })),
        blocked = count(|o| matches!(o, Outcome::Blocked(_))),
        conflicts = count(|o| matches!(o, Outcome::Conflict(_))),
        not_leader = count(|o| matches!(o, Outcome::NotLeader(_))),
        errored = report.sets.iter().filter(|s| s.error.is_some()).count(),
        pass_duration_seconds = seconds,
        "pass done"
    );
}

/// The log of one pass that took `seconds`: a line per set it changed something for
/// ([`SetReport::news`]; the rest at DEBUG), a line per stuck pod recovered, then one summary line —
/// so a pass that decides nothing logs one line.
pub fn log_pass(report: &PassReport, seconds: f64) {
    for s in &report.sets {
        log_set(s);
    }
    for r in &report.recoveries {
        match r.outcome {
            RecoveryOutcome::Failed(_) => {
                error!(namespace = %r.namespace, statefulset = %r.statefulset, pod = %r.pod.name, "{r}")
            }
            RecoveryOutcome::NotLeader(_) => {
                info!(namespace = %r.namespace, statefulset = %r.statefulset, pod = %r.pod.name, "{r}")
            }
            _ => {
                warn!(namespace = %r.namespace, statefulset = %r.statefulset, pod = %r.pod.name, "{r}")
            }
        }
    }
    log_summary(report, seconds);
}

/// One pass at the clock's now, logged ([`log_pass`]), observed in `metrics` when given.
pub(super) async fn timed_pass<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    opts: &PassOptions,
    metrics: Option<&Metrics>,
) -> Result<PassReport, ClusterError> {
    let started = Instant::now();
    let result = pass::run_pass_with(cluster, checks, opts, Timestamp::now()).await;
    let seconds = started.elapsed().as_secs_f64();
    let ended = Timestamp::now().as_millisecond() as f64 / 1000.0;
    match &result {
        Ok(report) => {
            log_pass(report, seconds);
            if let Some(m) = metrics {
                m.observe(report, seconds, ended);
            }
        }
        Err(e) => {
            error!(error = %e, "pass failed: nothing was written");
            if let Some(m) = metrics {
                m.observe_failed(seconds, ended);
            }
        }
    }
    result
}
