//! The I/O gates' reads of one pass ([`gather_probes`]): each round asks the planner which reads
//! ([`Need`]) the sets past every gate before an I/O gate still want, and runs them **concurrently,
//! bounded** ([`ProbeOptions::concurrency`], `--check-concurrency`) under one **whole-pass deadline**
//! ([`ProbeOptions::deadline`], `--check-deadline`): a pass over 100 sets whose checks all hang lasts
//! about one timeout, not 100. A read the deadline cut is an error of its check ("no answer within
//! the pass's --check-deadline"), never a failure. The results are keyed by set index, so the plan — and the writes, in set order — are as
//! when the reads ran one after another: the fleet throttle and rollout groups keep their meaning.
//!
//! The runner is generic over [`Need`]: one job per read (an owner GET; each PromQL query of a check;
//! an HTTP check's GET; an approval webhook's POST), so a new kind of check adds a `Need` variant and a
//! job, and shares the bound and the deadline. The webhook's POST asks the application to act (drain,
//! switch over): it is made only by a pass that may write ([`ProbeOptions::call_webhooks`]), and, from
//! `watch`'s caches, only once a fresh GET of the set shows the same step ([`unchanged`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::{StreamExt, stream};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use tracing::{debug, warn};

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::cluster::http_check::HttpGet;
use crate::cluster::prometheus::PromQuery;
use crate::cluster::webhook::{WebhookCall, WebhookPost};
use crate::cluster::{AllProbes, Cluster, ClusterError, Probe};
use crate::gates::approval::webhook::answer::WebhookAnswer;
use crate::gates::check::http::HttpAnswer;
use crate::gates::check::prometheus::QueryOutcome;
use crate::gates::{Need, OwnerProbe};
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

/// One read: for the set at index `set`, its owner, or query `query` of its check.
enum Job {
    Owner {
        set: usize,
        owner: OwnerReference,
    },
    Query {
        set: usize,
        query: usize,
        expr: String,
    },
    Http {
        set: usize,
        name: String,
    },
    Webhook {
        set: usize,
        name: String,
        body: serde_json::Value,
    },
}

/// What one [`Job`] read.
enum Read {
    Owner {
        set: usize,
        result: Result<Option<serde_json::Value>, ClusterError>,
    },
    Query {
        set: usize,
        query: usize,
        outcome: QueryOutcome,
    },
    Http {
        set: usize,
        answer: HttpAnswer,
    },
    /// A webhook call not made: the set changed since the cached read (`watch`), so the request would
    /// be about a step the set no longer has; decided again next pass.
    Skipped {
        set: usize,
    },
    Webhook {
        set: usize,
        answer: WebhookAnswer,
    },
}

/// The reads of the I/O gates for `snap` ([`Planner::needs`], `planner` built on `snap`): the
/// controller owner of each set that reached `OwnerNotHealthy`, the queries of each set whose
/// Prometheus check is due, run as `opts` says. Only sets that pass every gate before come this far,
/// so a cluster with nothing ready to step costs no read. Returns the reads by set index, and the API
/// errors of failed owner reads by set index.
pub async fn gather_probes<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    planner: &Planner<'_>,
    snap: &Snapshot,
    opts: &ProbeOptions,
    now: Timestamp,
) -> (ProbeMap, HashMap<usize, ClusterError>) {
    let deadline = opts.deadline.map(|d| tokio::time::Instant::now() + d);
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
        let mut counts: HashMap<usize, usize> = HashMap::new();
        let mut http_sets = Vec::new();
        let mut webhook_sets = Vec::new();
        for (set, need) in needs {
            match need {
                Need::Owner(owner) => jobs.push(Job::Owner { set, owner }),
                Need::Http(name) => {
                    http_sets.push(set);
                    jobs.push(Job::Http { set, name });
                }
                Need::Webhook { .. } if !opts.call_webhooks => {}
                Need::Webhook { name, body } => {
                    webhook_sets.push(set);
                    jobs.push(Job::Webhook { set, name, body });
                }
                Need::Queries(queries) => {
                    counts.insert(set, queries.len());
                    jobs.extend(
                        queries
                            .into_iter()
                            .enumerate()
                            .map(|(query, q)| Job::Query {
                                set,
                                query,
                                expr: q.expr,
                            }),
                    );
                }
            }
        }
        if jobs.is_empty() {
            break; // only webhook calls this pass does not make: the next round would be the same
        }
        let reads = run(cluster, checks, snap, jobs, opts.concurrency, deadline).await;
        let mut outcomes: HashMap<usize, Vec<Option<QueryOutcome>>> = counts
            .iter()
            .map(|(&set, &n)| (set, vec![None; n]))
            .collect();
        for read in reads {
            match read {
                Read::Owner { set, result } => {
                    probes.entry(set).or_default().owner = Some(match result {
                        Ok(Some(object)) => OwnerProbe::Found(object),
                        Ok(None) => OwnerProbe::NotFound,
                        Err(e) => {
                            let cause = e.to_string();
                            errors.insert(set, e);
                            OwnerProbe::Failed(cause)
                        }
                    });
                }
                Read::Query {
                    set,
                    query,
                    outcome,
                } => {
                    if let Some(slot) = outcomes.get_mut(&set).and_then(|o| o.get_mut(query)) {
                        *slot = Some(outcome);
                    }
                }
                Read::Http { set, answer } => {
                    if let HttpAnswer::Error(cause) = &answer {
                        unanswered.push(cause.clone());
                    }
                    probes.entry(set).or_default().http = Some(answer);
                }
                Read::Skipped { set } => {
                    skipped.insert(set);
                }
                Read::Webhook { set, answer } => {
                    if let WebhookAnswer::Error(cause) = &answer {
                        unanswered.push(cause.clone());
                    }
                    probes.entry(set).or_default().webhook = Some(answer);
                }
            }
        }
        let cut = || {
            QueryOutcome::Error(format!(
                "no answer within the pass's --check-deadline of {:?}",
                opts.deadline.unwrap_or_default()
            ))
        };
        for set in http_sets {
            let slot = &mut probes.entry(set).or_default().http;
            if slot.is_none() {
                // The deadline cut the GET: an error of the check, never a failure.
                let QueryOutcome::Error(cause) = cut() else {
                    continue;
                };
                unanswered.push(cause.clone());
                *slot = Some(HttpAnswer::Error(cause));
            }
        }
        for set in webhook_sets.into_iter().filter(|s| !skipped.contains(s)) {
            let slot = &mut probes.entry(set).or_default().webhook;
            if slot.is_none() {
                // The deadline cut the POST: an error of the webhook, never a decision.
                let QueryOutcome::Error(cause) = cut() else {
                    continue;
                };
                unanswered.push(cause.clone());
                *slot = Some(WebhookAnswer::Error(cause));
            }
        }
        for (set, got) in outcomes {
            let got: Vec<QueryOutcome> = got.into_iter().map(|o| o.unwrap_or_else(cut)).collect();
            for o in &got {
                if let QueryOutcome::Error(cause) = o {
                    unanswered.push(cause.clone());
                }
            }
            probes.entry(set).or_default().prometheus = Some(got);
        }
    }
    if let Some(first) = unanswered.first() {
        // One line per pass, not one per query (each set's gate says the rest when it changes).
        warn!(reads = unanswered.len(), cause = %first, "checks got no answer to {} reads", unanswered.len());
    }
    (probes, errors)
}

/// Runs `jobs`, at most `concurrency` at once, until they are done or `deadline` passes (the reads not
/// done by then are left out).
async fn run<C: Cluster, P: AllProbes>(
    cluster: &C,
    checks: &P,
    snap: &Snapshot,
    jobs: Vec<Job>,
    concurrency: usize,
    deadline: Option<tokio::time::Instant>,
) -> Vec<Read> {
    let mut reads = stream::iter(jobs)
        .map(|job| async move {
            match job {
                Job::Owner { set, owner } => {
                    let ns = snap.statefulsets[set]
                        .metadata
                        .namespace
                        .as_deref()
                        .unwrap_or("");
                    let result = cluster.get_owner(ns, &owner).await;
                    Read::Owner { set, result }
                }
                Job::Query { set, query, expr } => {
                    let outcome = Probe::<PromQuery>::answer(checks, &expr).await;
                    if let QueryOutcome::Error(cause) = &outcome {
                        let s = &snap.statefulsets[set].metadata;
                        debug!(
                            namespace = s.namespace.as_deref().unwrap_or(""),
                            statefulset = s.name.as_deref().unwrap_or(""),
                            query,
                            cause = %cause,
                            "Prometheus gave no answer"
                        );
                    }
                    Read::Query {
                        set,
                        query,
                        outcome,
                    }
                }
                Job::Http { set, name } => {
                    let answer = Probe::<HttpGet>::answer(checks, &name).await;
                    if let HttpAnswer::Error(cause) = &answer {
                        let s = &snap.statefulsets[set].metadata;
                        debug!(
                            namespace = s.namespace.as_deref().unwrap_or(""),
                            statefulset = s.name.as_deref().unwrap_or(""),
                            check = %name,
                            cause = %cause,
                            "HTTP check gave no answer"
                        );
                    }
                    Read::Http { set, answer }
                }
                Job::Webhook { set, name, body } => {
                    if cluster.cached()
                        && unchanged(cluster, &snap.statefulsets[set]).await.is_err()
                    {
                        return Read::Skipped { set };
                    }
                    let answer = Probe::<WebhookPost>::answer(
                        checks,
                        &WebhookCall {
                            name: name.clone(),
                            body,
                        },
                    )
                    .await;
                    if let WebhookAnswer::Error(cause) = &answer {
                        let s = &snap.statefulsets[set].metadata;
                        debug!(
                            namespace = s.namespace.as_deref().unwrap_or(""),
                            statefulset = s.name.as_deref().unwrap_or(""),
                            webhook = %name,
                            cause = %cause,
                            "approval webhook gave no decision"
                        );
                    }
                    Read::Webhook { set, answer }
                }
            }
        })
        .buffer_unordered(concurrency.max(1));
    let mut done = Vec::new();
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, reads.next()).await {
                Ok(next) => next,
                Err(_) => break, // the deadline: what is still in flight is dropped
            },
            None => reads.next().await,
        };
        match next {
            Some(read) => done.push(read),
            None => break,
        }
    }
    done
}

/// `Ok` when `set` (as read from `watch`'s caches) is the step it is on the API server now (a
/// consistent GET; `model::set::step_changed`): the application is asked about that step only, as a
/// step is written only after a fresh read confirms it. `Err`: what changed (a set gone or a failed
/// GET is not the same step either).
pub async fn unchanged<C: Cluster>(cluster: &C, set: &StatefulSet) -> Result<(), String> {
    let (ns, name) = (
        set.metadata.namespace.as_deref().unwrap_or(""),
        set.metadata.name.as_deref().unwrap_or(""),
    );
    match cluster.get_statefulset(ns, name).await {
        Ok(Some(fresh)) => step_changed(set, &fresh).map_or(Ok(()), Err),
        Ok(None) => Err(format!("{ns}/{name} is gone")),
        Err(e) => Err(format!("{ns}/{name} could not be read again: {e}")),
    }
}
