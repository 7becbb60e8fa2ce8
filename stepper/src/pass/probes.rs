//! The I/O gates' reads of one pass ([`gather_probes`]): each round asks the planner which reads
//! ([`Need`]) the sets past every gate before an I/O gate still want, and runs them **concurrently,
//! bounded** ([`ProbeOptions::concurrency`], `--check-concurrency`) under one **whole-pass deadline**
//! ([`ProbeOptions::deadline`], `--check-deadline`): a pass over 100 sets whose checks all hang lasts
//! about one timeout, not 100. A read the deadline cut is an error of its check ("no answer within
//! the pass's --check-deadline"), never a failure. The results are keyed by set index, so the plan —
//! and the writes, in set order — are as when the reads ran one after another: the fleet throttle and
//! rollout groups keep their meaning.
//!
//! A job is a set's [`Need`] as the gates asked it (an owner GET, a check kind's read, an approval
//! webhook's POST), a check's read in its parts ([`crate::gates::CheckRead::parts`]: a Prometheus
//! check's queries one job each) so each holds one of the `--check-concurrency` slots; its answer
//! fills its field of [`crate::gates::Probes`]. The owner is read from the [`Cluster`], every other read
//! through the checks' clients ([`AllProbes`]). The pass runs every check kind's read alike: a new kind
//! shares the bound and the deadline without a line here. The webhook's POST asks the application to act
//! (drain, switch over): it is made only by a pass that may write ([`ProbeOptions::call_webhooks`]),
//! and, from `watch`'s caches, only once a fresh GET of the set shows the same step ([`unchanged`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::{StreamExt, stream};
use jiff::Timestamp;
use tracing::{debug, warn};

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::cluster::webhook::WebhookCall;
use crate::cluster::{AllProbes, Cluster, ClusterError};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::{CheckAnswer, Need, OwnerProbe};
use crate::model::set::step_changed;
use crate::plan::{Planner, ProbeMap, Snapshot};

/// The default of `--check-concurrency`: reads of one pass in flight at once.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// How a pass runs its I/O gates' reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Reads in flight at once (≥ 1; `--check-concurrency`, default [`DEFAULT_CONCURRENCY`]).
    pub concurrency: usize,
    /// The whole pass's time for its reads (`--check-deadline`; the commands default it to twice the
    /// longest timeout of the checks configured, `commands::checks::default_deadline`); `None`: no
    /// deadline (the simulation, whose clock is virtual).
    pub deadline: Option<Duration>,
    /// POST to the approval webhooks (`once`, `watch`, `step`; not `status`, which only reads, nor
    /// `--dry-run`): without it a set waiting for its webhook shows the last answer recorded.
    pub call_webhooks: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            concurrency: DEFAULT_CONCURRENCY,
            deadline: None,
            call_webhooks: true,
        }
    }
}

/// One read: for the set at index `set`, a [`Need`] as the gates asked it — a check's read in its
/// parts, one job each ([`crate::gates::CheckRead::parts`]: a Prometheus check's queries, in order).
struct Job {
    set: usize,
    need: Need,
}

/// What one [`Job`] read: the [`crate::gates::Probes`] field its need fills, of that field's type.
enum Answer {
    /// [`crate::gates::Probes::owner`], and the API error when the owner could not be read.
    Owner(OwnerProbe, Option<ClusterError>),
    /// A check kind's answer (the job's part of it), for its field of [`crate::gates::Probes`].
    Check(CheckAnswer),
    /// [`crate::gates::Probes::webhook`].
    Webhook(WebhookAnswer),
    /// A webhook call not made: the set changed since the cached read (`watch`), so the request would
    /// be about a step the set no longer has; decided again next pass.
    Skipped,
}

impl Answer {
    /// A check's answer the deadline cut a job to (`cause` says so): an error of its check, never a
    /// failure; `None` for an owner read, left unread.
    fn cut(need: &Need, cause: &str) -> Option<Answer> {
        match need {
            Need::Owner(_) => None,
            Need::Check(read) => Some(Answer::Check(read.unanswered(cause))),
            Need::Webhook { .. } => Some(Answer::Webhook(WebhookAnswer::Error(cause.into()))),
        }
    }

    /// The causes of the checks' answers that are no answer (a query's, an HTTP check's, a
    /// webhook's error); an owner read's error is the set's, reported with it.
    fn unanswered(&self) -> Vec<&str> {
        match self {
            Answer::Check(answer) => answer.errors(),
            Answer::Webhook(WebhookAnswer::Error(cause)) => vec![cause],
            _ => Vec::new(),
        }
    }
}

/// The reads of the I/O gates for `snap` ([`Planner::needs`], `planner` built on `snap`): the
/// controller owner of each set that reached `OwnerNotHealthy`, the queries of each set whose
/// Prometheus check is due, the HTTP check's GET and the approval webhook's POST, run as `opts` says
/// (the owner from `cluster`, the rest through `checks`). Only sets that pass every gate before come
/// this far, so a cluster with nothing ready to step costs no read. Returns the reads by set index,
/// and the API errors of failed owner reads by set index.
pub async fn gather_probes<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    planner: &Planner<'_>,
    snap: &Snapshot,
    opts: &ProbeOptions,
    now: Timestamp,
) -> (ProbeMap, HashMap<usize, ClusterError>) {
    let deadline = opts.deadline.map(|d| tokio::time::Instant::now() + d);
    let cut = format!(
        "no answer within the pass's --check-deadline of {:?}",
        opts.deadline.unwrap_or_default()
    );
    let mut probes = ProbeMap::new();
    let mut errors = HashMap::new();
    let mut unanswered: Vec<String> = Vec::new();
    let mut skipped: HashSet<usize> = HashSet::new();
    // Each round answers one read per set; a set has at most four I/O gates.
    for _ in 0..5 {
        let mut needs = planner.needs(now, &probes);
        needs.retain(|(set, _)| !skipped.contains(set));
        if needs.is_empty() {
            break;
        }
        let mut jobs = Vec::new();
        // Each set's check answer this round, its parts joined in the read's order.
        let mut checked: HashMap<usize, CheckAnswer> = HashMap::new();
        for (set, need) in needs {
            match need {
                Need::Webhook { .. } if !opts.call_webhooks => {}
                Need::Check(read) => jobs.extend(read.parts().into_iter().map(|part| Job {
                    set,
                    need: Need::Check(part),
                })),
                need => jobs.push(Job { set, need }),
            }
        }
        if jobs.is_empty() {
            break; // only webhook calls this pass does not make: the next round would be the same
        }
        let answers = run(cluster, checks, snap, &jobs, opts.concurrency, deadline).await;
        for (Job { set, need }, answer) in jobs.into_iter().zip(answers) {
            let Some(answer) = answer.or_else(|| Answer::cut(&need, &cut)) else {
                continue; // an owner read the deadline cut: left unread
            };
            unanswered.extend(answer.unanswered().into_iter().map(str::to_string));
            match answer {
                Answer::Owner(owner, error) => {
                    if let Some(e) = error {
                        errors.insert(set, e);
                    }
                    probes.entry(set).or_default().owner = Some(owner);
                }
                Answer::Check(part) => match checked.get_mut(&set) {
                    Some(answer) => answer.join(part),
                    None => {
                        checked.insert(set, part);
                    }
                },
                Answer::Webhook(answer) => probes.entry(set).or_default().webhook = Some(answer),
                Answer::Skipped => {
                    skipped.insert(set);
                }
            }
        }
        for (set, answer) in checked {
            probes.entry(set).or_default().record(answer);
        }
    }
    if let Some(first) = unanswered.first() {
        // One line per pass, not one per query (each set's gate says the rest when it changes).
        warn!(reads = unanswered.len(), cause = %first, "checks got no answer to {} reads", unanswered.len());
    }
    (probes, errors)
}

/// Runs `jobs`, at most `concurrency` at once, until they are done or `deadline` passes. Returns each
/// job's answer at the job's index: `None` for a read not done by the deadline.
async fn run<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    snap: &Snapshot,
    jobs: &[Job],
    concurrency: usize,
    deadline: Option<tokio::time::Instant>,
) -> Vec<Option<Answer>> {
    let mut reads = stream::iter(jobs.iter().enumerate())
        .map(|(i, job)| async move { (i, read(cluster, checks, snap, job).await) })
        .buffer_unordered(concurrency.max(1));
    let mut answers: Vec<Option<Answer>> = jobs.iter().map(|_| None).collect();
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, reads.next()).await {
                Ok(next) => next,
                Err(_) => break, // the deadline: what is still in flight is dropped
            },
            None => reads.next().await,
        };
        match next {
            Some((i, answer)) => answers[i] = Some(answer),
            None => break,
        }
    }
    answers
}

/// Reads one job: the owner from `cluster`, a query, an HTTP check or a webhook through `checks`; a
/// check's answer that is no answer is logged at DEBUG with its set.
async fn read<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    snap: &Snapshot,
    Job { set, need }: &Job,
) -> Answer {
    let meta = &snap.statefulsets[*set].metadata;
    let (namespace, name) = (
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or(""),
    );
    match need {
        Need::Owner(owner) => match cluster.get_owner(namespace, owner).await {
            Ok(Some(object)) => Answer::Owner(OwnerProbe::Found(object), None),
            Ok(None) => Answer::Owner(OwnerProbe::NotFound, None),
            Err(e) => Answer::Owner(OwnerProbe::Failed(e.to_string()), Some(e)),
        },
        Need::Check(read) => {
            let answer = checks.check(read).await;
            for cause in answer.errors() {
                debug!(namespace, statefulset = name, read = %read.label(), cause = %cause, "check gave no answer");
            }
            Answer::Check(answer)
        }
        Need::Webhook {
            name: webhook,
            body,
            record,
        } => {
            if cluster.cached()
                && unchanged_with(cluster, &snap.statefulsets[*set], Some(record))
                    .await
                    .is_err()
            {
                return Answer::Skipped;
            }
            // The call owns its request: one copy of the body per POST.
            let call = WebhookCall {
                name: webhook.clone(),
                body: body.clone(),
            };
            let answer = checks.webhook(&call).await;
            if let WebhookAnswer::Error(cause) = &answer {
                debug!(namespace, statefulset = name, webhook = %webhook, cause = %cause, "approval webhook gave no decision");
            }
            Answer::Webhook(answer)
        }
    }
}

/// `Ok` when `set` (as read from `watch`'s caches) is the step it is on the API server now (a
/// consistent GET; `model::set::step_changed`): the application is asked about that step only, as a
/// step is written only after a fresh read confirms it. `Err`: what changed (a set gone or a failed
/// GET is not the same step either).
pub async fn unchanged<C: Cluster>(cluster: &C, set: &StatefulSet) -> Result<(), String> {
    unchanged_with(cluster, set, None).await
}

/// [`unchanged`], and with `record` = (an annotation's full key, its value as read), that annotation
/// holds the same value on the API server now: the webhook's request is built on its record
/// (`webhook-state`, the `requestId`), so a record another pass wrote since the cached read means
/// another id; the call waits for the caches.
pub async fn unchanged_with<C: Cluster>(
    cluster: &C,
    set: &StatefulSet,
    record: Option<&(String, Option<String>)>,
) -> Result<(), String> {
    let (ns, name) = (
        set.metadata.namespace.as_deref().unwrap_or(""),
        set.metadata.name.as_deref().unwrap_or(""),
    );
    let annotation = |s: &StatefulSet, key: &str| {
        s.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key).cloned())
    };
    match cluster.get_statefulset(ns, name).await {
        Ok(Some(fresh)) => match step_changed(set, &fresh) {
            Some(why) => Err(why),
            None => match record {
                Some((key, read)) if annotation(&fresh, key) != *read => Err(format!(
                    "{ns}/{name}: {key} changed since it was read: decided again next pass"
                )),
                _ => Ok(()),
            },
        },
        Ok(None) => Err(format!("{ns}/{name} is gone")),
        Err(e) => Err(format!("{ns}/{name} could not be read again: {e}")),
    }
}
