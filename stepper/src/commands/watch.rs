//! `watch`: passes on a timer and on changes of rolling sets, until SIGTERM or Ctrl-C.
//!
//! Passes decide from reflector caches ([`crate::cluster::caches`]): no LIST per pass; a step is confirmed on a
//! fresh read of its set and pods before it is written. Changes of rolling StatefulSets and their pods
//! (the caches' watch events) trigger a debounced early pass; `/metrics` and
//! `/healthz` are served meanwhile. With `--leader-election` only the replica holding the Lease passes
//! and writes; every replica serves `/metrics` (with `sts_safe_rollout_leader`) and `/healthz`.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use anyhow::{Context as _, Result};
use futures::{Stream, StreamExt, stream};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::watcher::Event as WatchEvent;
use tokio::sync::{Notify, watch};
use tracing::{debug, info, warn};

use super::checks::{check_options, checks};
use super::context::{Context, Exit, to_std};
use super::pass_log::timed_pass;
use crate::cli::WatchArgs;
use crate::cluster::cached::{CachedPod, CachedSet};
use crate::cluster::caches::{CacheStreams, CachedCluster, Caches, RestartHook};
use crate::cluster::kube::KubeCluster;
use crate::config::Keys;
use crate::gates::Idle;
use crate::leader::cluster::LeaderCluster;
use crate::leader::{self, Leadership};
use crate::pass::PodReads;
use crate::pass::{Outcome, PassReport};
use crate::plan;
use crate::serve::metrics::Metrics;
use crate::serve::server;

/// Passes on every interval tick and on (debounced) StatefulSet/Pod changes until SIGTERM or Ctrl-C.
///
/// # Errors
/// A bad `--prometheus-*` or `--leader-election-*` flag, or the `--metrics-addr` cannot be bound.
pub async fn run(ctx: &Context, args: &WatchArgs) -> Result<Exit> {
    let (cluster, scope) = ctx.controller_cluster(&args.scope, &args.pass)?;
    let checks = &checks(&args.checks)?;
    let metrics = ctx.metrics.clone();
    metrics.name_approval_kinds(checks.approval_kinds());
    let last_pass = Arc::new(AtomicI64::new(Timestamp::now().as_second()));
    let (stop_tx, stop_rx) = watch::channel(false);
    let health = server::Health {
        last_pass: last_pass.clone(),
        max_age_seconds: (3 * args.interval.as_secs()).max(300),
    };
    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("binding --metrics-addr {}", args.metrics_addr))?;
    info!(addr = %args.metrics_addr, interval = %args.interval, "watching; /metrics and /healthz served");
    let server = tokio::spawn(server::serve(
        listener,
        metrics.clone(),
        health,
        stopped(stop_rx.clone()),
    ));

    let changed = Arc::new(Notify::new());
    let rolling: Rolling = Arc::default();
    let restarts: RestartHook = {
        let metrics = metrics.clone();
        Arc::new(move |resource| metrics.watch_restarted(resource))
    };
    let (caches, streams) = Caches::start(cluster.client(), cluster.scope(), &ctx.keys, &restarts);
    let watchers = tokio::spawn(forward_changes(
        changes(streams, rolling.clone(), ctx.keys.clone()),
        changed.clone(),
    ));
    tokio::spawn(async move {
        shutdown_signal().await;
        info!("shutdown requested: finishing the pass in flight");
        let _ = stop_tx.send(true);
    });

    let (leadership, election) = elect(&cluster, &args.leader)?;
    let mirror = tokio::spawn(mirror_leadership(leadership.clone(), metrics.clone()));
    let mut opts = ctx.pass_options(
        PodReads::Candidates,
        &args.gates,
        Some(&args.pass),
        args.dry_run,
    );
    opts.gates.scope = scope;
    check_options(&args.checks, checks, &mut opts);
    let mut stop = stop_rx.clone();
    info!("filling the caches (one LIST per kind and namespace, then watches)");
    tokio::select! {
        _ = caches.ready() => info!("caches filled"),
        _ = stop.changed() => {}
    }
    let cached = CachedCluster {
        caches: &caches,
        api: &cluster,
    };
    loop {
        // The pass is never raced against the shutdown signal: it always finishes. Only the leader
        // passes; its writes check the Lease again right before they go.
        if leadership.is_leader() {
            let guarded = LeaderCluster {
                inner: &cached,
                leadership: &leadership,
            };
            if let Ok(report) = timed_pass(&guarded, checks, &opts, Some(&metrics)).await {
                remember_rolling(&rolling, &report);
            }
        } else {
            debug!("not the leader: no pass (another replica holds the Lease)");
        }
        last_pass.store(Timestamp::now().as_second(), Ordering::Relaxed);
        if *stop.borrow() {
            break;
        }
        tokio::select! {
            _ = stop.changed() => break,
            _ = tokio::time::sleep(to_std(args.interval)) => {}
            _ = changed.notified() => {
                tokio::select! {
                    _ = stop.changed() => break,
                    _ = tokio::time::sleep(to_std(args.debounce)) => {}
                }
            }
        }
    }
    watchers.abort();
    leadership.resign();
    if let Some(election) = election {
        let _ = election.await;
    }
    mirror.abort();
    let _ = server.await;
    info!("stopped");
    Ok(Exit::Ok)
}

/// This replica's election: [`Leadership::sole`] without `--leader-election`, else the election on
/// the Lease in the stepper's own namespace ([`leader::spawn`]) and its task.
///
/// # Errors
/// The flags' ([`crate::cli::leader::LeaderElectionArgs::config`]).
fn elect(
    cluster: &KubeCluster,
    args: &crate::cli::leader::LeaderElectionArgs,
) -> Result<(Leadership, Option<tokio::task::JoinHandle<()>>)> {
    let Some((namespace, config)) = args.config().map_err(anyhow::Error::msg)? else {
        return Ok((Leadership::sole(), None));
    };
    info!(lease = %config.lease_name, %namespace, identity = %config.identity, "leader election on");
    let leases: Api<Lease> = Api::namespaced(cluster.client().clone(), &namespace);
    let (leadership, task) = leader::spawn(leases, config).map_err(anyhow::Error::msg)?;
    Ok((leadership, Some(task)))
}

/// Keeps `sts_safe_rollout_leader` equal to the election's flag (the election logs its changes).
async fn mirror_leadership(leadership: Leadership, metrics: Arc<Metrics>) {
    let mut flag = leadership.subscribe();
    loop {
        let leads = *flag.borrow_and_update();
        metrics.set_leader(leads);
        if flag.changed().await.is_err() {
            return;
        }
    }
}

async fn stopped(mut rx: watch::Receiver<bool>) {
    while !*rx.borrow() {
        if rx.changed().await.is_err() {
            return;
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                warn!(error = %e, "cannot listen for SIGTERM; Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `namespace/name` of the StatefulSets the last pass found rolling (blocked, stepped, in conflict, or
/// at partition 0 with pods still to update). Only their changes — and StatefulSets that start a
/// rollout — trigger an early pass: the rest of the cluster's pod churn does not cost a LIST of every
/// pod. This only times passes; it decides nothing (all rollout state stays on the StatefulSets).
type Rolling = Arc<std::sync::RwLock<HashSet<String>>>;

fn remember_rolling(rolling: &Rolling, report: &PassReport) {
    let now: HashSet<String> = report
        .sets
        .iter()
        .filter(|s| {
            !matches!(
                s.outcome,
                Outcome::Idle(Idle::UpToDate) | Outcome::Unguarded(_)
            )
        })
        .map(|s| format!("{}/{}", s.namespace, s.name))
        .collect();
    *rolling.write().unwrap_or_else(|e| e.into_inner()) = now;
}

fn is_rolling(rolling: &Rolling, namespace: Option<&str>, name: &str) -> bool {
    let key = format!("{}/{name}", namespace.unwrap_or(""));
    rolling
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&key)
}

/// A stream that yields `()` whenever a StatefulSet that is rolling (see [`Rolling`]) or has just had
/// an update staged changes, or a pod controlled by a rolling StatefulSet changes: the caches' own
/// watch events ([`CacheStreams`]), so an early pass costs no extra watch.
fn changes(
    streams: CacheStreams,
    rolling: Rolling,
    keys: Arc<Keys>,
) -> impl Stream<Item = ()> + Send {
    let r1 = rolling.clone();
    let sets = streams.sets.filter_map(move |ev| {
        let keep = |cached: &CachedSet| {
            let set = cached.set();
            plan::needs_pods(std::slice::from_ref(set), &keys)
                || is_rolling(
                    &r1,
                    set.metadata.namespace.as_deref(),
                    set.metadata.name.as_deref().unwrap_or(""),
                )
        };
        std::future::ready(relevant(ev, keep))
    });
    let pods = streams.pods.filter_map(move |ev| {
        let keep = |cached: &CachedPod| {
            let p = Pod::from(cached);
            p.metadata.owner_references.as_ref().is_some_and(|refs| {
                refs.iter().any(|o| {
                    o.kind == "StatefulSet"
                        && is_rolling(&rolling, p.metadata.namespace.as_deref(), &o.name)
                })
            })
        };
        std::future::ready(relevant(ev, keep))
    });
    let pdbs = streams.pdbs.filter_map(|_| std::future::ready(None));
    stream::select(stream::select(sets, pods), pdbs)
}

fn relevant<K>(ev: WatchEvent<K>, keep: impl Fn(&K) -> bool) -> Option<()> {
    match ev {
        WatchEvent::Apply(o) | WatchEvent::Delete(o) if keep(&o) => Some(()),
        _ => None,
    }
}

async fn forward_changes(changes: impl Stream<Item = ()>, notify: Arc<Notify>) {
    futures::pin_mut!(changes);
    while changes.next().await.is_some() {
        notify.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reasons::{Blocked, Reason};
    use crate::pass::SetReport;
    use crate::plan::Figures;

    fn report(name: &str, outcome: Outcome) -> SetReport {
        SetReport {
            namespace: "demo".into(),
            name: name.into(),
            figures: Figures::default(),
            outcome,
            error: None,
            event_errors: vec![],
            decision_age_seconds: None,
            rejection: None,
            news: true,
            webhook_call: None,
        }
    }

    #[test]
    fn only_rolling_sets_trigger_early_passes() {
        let rolling: Rolling = Arc::default();
        let pass = PassReport {
            sets: vec![
                report("idle", Outcome::Idle(Idle::UpToDate)),
                report("forced", Outcome::Unguarded("force-rolling-update")),
                report(
                    "blocked",
                    Outcome::Blocked(Blocked::new(Reason::PodNotReady, "x")),
                ),
                report("stepped", Outcome::Stepped { from: 2, to: 1 }),
                report("finishing", Outcome::Idle(Idle::PartitionZero)),
            ],
            ..PassReport::default()
        };
        remember_rolling(&rolling, &pass);
        for (name, want) in [
            ("idle", false),
            ("forced", false),
            ("blocked", true),
            ("stepped", true),
            ("finishing", true),
        ] {
            assert_eq!(is_rolling(&rolling, Some("demo"), name), want, "{name}");
        }
        assert!(!is_rolling(&rolling, Some("other"), "blocked"));
        remember_rolling(&rolling, &PassReport::default());
        assert!(
            !is_rolling(&rolling, Some("demo"), "blocked"),
            "forgotten next pass"
        );
    }
}
