//! The subcommands: thin I/O around [`crate::pass`], [`crate::plan`] and [`crate::gates`].

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures::{Stream, StreamExt, stream};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Client, Config};
use tokio::sync::{Notify, watch};
use tracing::{debug, error, info, warn};

use crate::cli::{Cli, Command, GlobalArgs, StatusArgs, StepArgs, Target, WaitArgs, WatchArgs};
use crate::cluster::{Cluster, NoPrometheus, Prometheus};
use crate::gates::{self, Decision, GateOptions, Idle, PdbView};
use crate::kube_cluster::{KubeCluster, Scope};
use crate::metrics::Metrics;
use crate::pass::{self, Outcome, PassOptions, PassReport, SetReport};
use crate::plan::{self, EventKind, EventNote};
use crate::prometheus_client::{Auth, PrometheusClient, PrometheusConfig};
use crate::server;
use sts_safe_rollout::statefulset as sts;

/// Process exit status of a subcommand that ran to its end (errors exit 1 through `main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success.
    Ok,
    /// The subcommand's own failure (a set errored, a wait timed out).
    Failed,
}

/// Runs the parsed command line.
///
/// # Errors
/// Configuration, connection or API errors, one line each through `main`.
pub async fn run(cli: Cli) -> Result<Exit> {
    let g = &cli.global;
    match &cli.command {
        Command::Once => once(&cluster(g, None).await?, g).await,
        Command::Watch(args) => watch_loop(cluster(g, None).await?, g, args).await,
        Command::Status(args) => status(g, args).await,
        Command::Step(args) => step(g, args).await,
        Command::Wait(args) => wait(g, args).await,
        Command::Simulate(args) => simulate(args),
    }
}

/// `simulate`: plays the scenario file and prints its timeline on stdout.
fn simulate(args: &crate::cli::SimulateArgs) -> Result<Exit> {
    let text = std::fs::read_to_string(&args.scenario)
        .with_context(|| format!("read scenario {}", args.scenario.display()))?;
    let out = crate::sim::scenario::simulate(&text, args.native, args.seed)
        .map_err(|e| anyhow::anyhow!("scenario {}: {e}", args.scenario.display()))?;
    print!("{out}");
    Ok(Exit::Ok)
}

async fn client(g: &GlobalArgs) -> Result<Client> {
    let options = KubeConfigOptions {
        context: g.context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = match (&g.kubeconfig, &g.context) {
        (Some(path), _) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &options)
                .await
                .with_context(|| format!("loading kubeconfig {}", path.display()))?
        }
        (None, Some(_)) => Config::from_kubeconfig(&options)
            .await
            .context("loading kubeconfig")?,
        (None, None) => Config::infer()
            .await
            .context("no Kubernetes configuration (kubeconfig or in-cluster service account)")?,
    };
    Client::try_from(config).context("creating the Kubernetes client")
}

/// How a single-set subcommand lists: `wait` needs only the set (a field selector); `step` and
/// `status` list the set's namespace, because `GroupBusy` judges the set against its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listing {
    OnlyTarget,
    TargetNamespace,
}

async fn cluster(g: &GlobalArgs, target: Option<(&Target, Listing)>) -> Result<KubeCluster> {
    let scope = match target {
        Some((t, listing)) => Scope {
            namespaces: vec![t.namespace.clone()],
            label_selector: None,
            field_selector: (listing == Listing::OnlyTarget)
                .then(|| format!("metadata.name={}", t.name)),
        },
        None => Scope {
            namespaces: g.namespaces.clone(),
            label_selector: g.selector.clone(),
            field_selector: None,
        },
    };
    let instance = std::env::var("POD_NAME").ok().filter(|s| !s.is_empty());
    Ok(KubeCluster::new(client(g).await?, scope, instance))
}

/// The Prometheus client from the `--prometheus-*` flags; `None` without `--prometheus-url`.
///
/// # Errors
/// A bad URL or CA file, naming the flag.
pub fn prometheus(g: &GlobalArgs) -> Result<Option<PrometheusClient>> {
    let Some(url) = &g.prometheus_url else {
        return Ok(None);
    };
    let auth = match (
        &g.prometheus_bearer_token_file,
        &g.prometheus_username,
        &g.prometheus_password_file,
    ) {
        (Some(token), _, _) => Auth::BearerTokenFile(token.clone()),
        (None, Some(username), Some(password_file)) => Auth::Basic {
            username: username.clone(),
            password_file: password_file.clone(),
        },
        _ => Auth::None,
    };
    let config = PrometheusConfig {
        url: url.clone(),
        timeout: to_std(g.prometheus_timeout),
        auth,
        ca_file: g.prometheus_ca_file.clone(),
    };
    Ok(Some(PrometheusClient::new(&config)?))
}

fn pass_options(g: &GlobalArgs, always_list_pods: bool) -> PassOptions {
    PassOptions {
        gates: GateOptions {
            prefix: g.annotation_prefix.clone(),
            pdb_gate: !g.no_pdb_gate,
            max_steps_per_pass: g.max_steps_per_pass,
            max_steps_per_minute: g.max_steps_per_minute,
        },
        dry_run: g.dry_run,
        always_list_pods,
    }
}

fn log_set(s: &SetReport) {
    let f = &s.figures;
    let quiet = matches!(
        s.outcome,
        Outcome::Idle(Idle::UpToDate) | Outcome::Unguarded(_)
    );
    macro_rules! line {
        ($level:ident) => {
            $level!(
                namespace = %s.namespace,
                statefulset = %s.name,
                outcome = %s.outcome,
                replicas = f.replicas,
                current_replicas = f.current_replicas,
                updated_replicas = f.updated_replicas,
                ready_replicas = f.ready_replicas,
                partition = s.partition_after().unwrap_or(0),
                last_partition_update = f.last_partition_update.map(|t| t.to_string()).unwrap_or_default(),
                update_revision = f.update_revision.as_deref().unwrap_or(""),
                "{}/{}: {}", s.namespace, s.name, s.outcome
            )
        };
    }
    if s.error.is_some() {
        line!(error);
    } else if quiet {
        line!(debug);
    } else {
        line!(info);
    }
}

fn log_summary(report: &PassReport, seconds: f64) {
    let count = |f: fn(&Outcome) -> bool| report.sets.iter().filter(|s| f(&s.outcome)).count();
    info!(
        statefulsets = report.sets.len(),
        stepped = count(|o| matches!(o, Outcome::Stepped { .. } | Outcome::WouldStep { .. })),
        blocked = count(|o| matches!(o, Outcome::Blocked(_))),
        conflicts = count(|o| matches!(o, Outcome::Conflict(_))),
        errored = report.sets.iter().filter(|s| s.error.is_some()).count(),
        pass_duration_seconds = seconds,
        "pass done"
    );
}

async fn timed_pass<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    metrics: Option<&Metrics>,
) -> Result<PassReport, crate::cluster::ClusterError> {
    let started = Instant::now();
    let result = pass::run_pass_with(cluster, prometheus, opts, Timestamp::now()).await;
    let seconds = started.elapsed().as_secs_f64();
    let ended = Timestamp::now().as_millisecond() as f64 / 1000.0;
    match &result {
        Ok(report) => {
            for s in &report.sets {
                log_set(s);
            }
            log_summary(report, seconds);
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

async fn once<C: Cluster>(cluster: &C, g: &GlobalArgs) -> Result<Exit> {
    let prometheus = prometheus(g)?;
    let report = timed_pass(cluster, &prometheus, &pass_options(g, false), None).await?;
    Ok(if report.any_errored() {
        Exit::Failed
    } else {
        Exit::Ok
    })
}

fn to_std(d: SignedDuration) -> std::time::Duration {
    d.unsigned_abs()
}

/// Passes on every interval tick and on (debounced) StatefulSet/Pod changes until SIGTERM or Ctrl-C.
async fn watch_loop(cluster: KubeCluster, g: &GlobalArgs, args: &WatchArgs) -> Result<Exit> {
    let prometheus = prometheus(g)?;
    let metrics = Arc::new(Metrics::new());
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
    let watchers = tokio::spawn(forward_changes(
        changes(
            cluster.client(),
            cluster.scope(),
            rolling.clone(),
            g.annotation_prefix.clone(),
        ),
        changed.clone(),
    ));
    tokio::spawn(async move {
        shutdown_signal().await;
        info!("shutdown requested: finishing the pass in flight");
        let _ = stop_tx.send(true);
    });

    let opts = pass_options(g, false);
    let mut stop = stop_rx.clone();
    loop {
        // The pass is never raced against the shutdown signal: it always finishes.
        if let Ok(report) = timed_pass(&cluster, &prometheus, &opts, Some(&metrics)).await {
            remember_rolling(&rolling, &report);
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
    let _ = server.await;
    info!("stopped");
    Ok(Exit::Ok)
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
/// an update staged changes, or a pod controlled by a rolling StatefulSet changes. Pods are watched as
/// metadata only (`Api<PartialObjectMeta<Pod>>`: metadata-only requests), which still sees every update.
fn changes(
    client: &Client,
    scope: &Scope,
    rolling: Rolling,
    prefix: String,
) -> impl Stream<Item = ()> + Send + use<> {
    let mut streams: Vec<std::pin::Pin<Box<dyn Stream<Item = ()> + Send>>> = Vec::new();
    let mut sts_config = watcher::Config::default();
    if let Some(l) = &scope.label_selector {
        sts_config = sts_config.labels(l);
    }
    let namespaces: Vec<Option<String>> = if scope.namespaces.is_empty() {
        vec![None]
    } else {
        scope.namespaces.iter().cloned().map(Some).collect()
    };
    for ns in namespaces {
        let (sets, pods): (Api<StatefulSet>, Api<PartialObjectMeta<Pod>>) = match &ns {
            None => (Api::all(client.clone()), Api::all(client.clone())),
            Some(ns) => (
                Api::namespaced(client.clone(), ns),
                Api::namespaced(client.clone(), ns),
            ),
        };
        let (r1, r2, prefix) = (rolling.clone(), rolling.clone(), prefix.clone());
        streams.push(Box::pin(
            watcher::watcher(sets, sts_config.clone())
                .default_backoff()
                .filter_map(move |ev| {
                    let keep = |set: &StatefulSet| {
                        plan::needs_pods(std::slice::from_ref(set), &prefix)
                            || is_rolling(
                                &r1,
                                set.metadata.namespace.as_deref(),
                                set.metadata.name.as_deref().unwrap_or(""),
                            )
                    };
                    std::future::ready(relevant(ev, keep))
                }),
        ));
        streams.push(Box::pin(
            watcher::watcher(pods, watcher::Config::default())
                .default_backoff()
                .filter_map(move |ev| {
                    let keep = |p: &PartialObjectMeta<Pod>| {
                        p.metadata.owner_references.as_ref().is_some_and(|refs| {
                            refs.iter().any(|o| {
                                o.kind == "StatefulSet"
                                    && is_rolling(&r2, p.metadata.namespace.as_deref(), &o.name)
                            })
                        })
                    };
                    std::future::ready(relevant(ev, keep))
                }),
        ));
    }
    stream::select_all(streams)
}

fn relevant<K>(ev: Result<WatchEvent<K>, watcher::Error>, keep: impl Fn(&K) -> bool) -> Option<()> {
    match ev {
        Ok(WatchEvent::Apply(o) | WatchEvent::Delete(o)) if keep(&o) => Some(()),
        Ok(_) => None,
        Err(e) => {
            warn!(error = %e, "watch interrupted; retrying with backoff (interval passes go on)");
            None
        }
    }
}

async fn forward_changes(changes: impl Stream<Item = ()>, notify: Arc<Notify>) {
    futures::pin_mut!(changes);
    while changes.next().await.is_some() {
        notify.notify_one();
    }
}

/// One row of the `status` table.
fn next_action(decision: &Decision) -> String {
    match decision {
        Decision::Step { from, to, .. } => format!("Step {from}→{to} due"),
        Decision::Blocked(b) => format!("Blocked {b}"),
        Decision::Idle(Idle::UpToDate) => "Idle: up to date".into(),
        Decision::Idle(Idle::PartitionZero) => {
            "Rolling: partition 0, the controller finishes".into()
        }
        Decision::Unguarded(why) => format!("Unguarded ({why})"),
    }
}

async fn status(g: &GlobalArgs, args: &StatusArgs) -> Result<Exit> {
    let cluster = cluster(
        g,
        args.target.as_ref().map(|t| (t, Listing::TargetNamespace)),
    )
    .await?;
    let prometheus = prometheus(g)?;
    let opts = pass_options(g, true);
    print!(
        "{}",
        status_table_with(
            &cluster,
            &prometheus,
            &opts,
            args.target.as_ref(),
            Timestamp::now()
        )
        .await?
    );
    Ok(Exit::Ok)
}

/// The `status` table for the StatefulSets `cluster` lists (guarded ones only, unless `target` names
/// one): partition, updated/ready/replicas, revisions, and the next step or the first blocking gate.
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    status_table_with(cluster, &NoPrometheus, opts, target, now).await
}

/// [`status_table`] with the Prometheus the `PrometheusCheck` gate queries (the check runs when due;
/// `status` records nothing).
///
/// # Errors
/// A failed LIST, or `target` not found.
pub async fn status_table_with<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    target: Option<&Target>,
    now: Timestamp,
) -> Result<String> {
    let snap = pass::snapshot(cluster, opts).await?;
    let is_target = |namespace: &str, name: &str| {
        target.is_none_or(|t| t.namespace == namespace && t.name == name)
    };
    if let Some(t) = target
        && !snap
            .statefulsets
            .iter()
            .any(|s| s.metadata.name.as_deref() == Some(t.name.as_str()))
    {
        bail!("statefulset {t} not found");
    }
    let plans = pass::plan_pass(cluster, prometheus, &snap, opts, now).await;
    let mut rows = vec![[
        "NAMESPACE".to_string(),
        "STATEFULSET".into(),
        "PARTITION".into(),
        "UPDATED/READY/REPLICAS".into(),
        "CURRENT-REVISION".into(),
        "UPDATE-REVISION".into(),
        "NEXT".into(),
    ]];
    for p in plans.iter().filter(|p| {
        is_target(&p.namespace, &p.name)
            && (target.is_some() || !matches!(p.decision, Decision::Unguarded(_)))
    }) {
        let f = &p.figures;
        rows.push([
            p.namespace.clone(),
            p.name.clone(),
            f.partition.map_or("-".into(), |v| v.to_string()),
            format!("{}/{}/{}", f.updated_replicas, f.ready_replicas, f.replicas),
            f.current_revision.clone().unwrap_or_else(|| "-".into()),
            f.update_revision.clone().unwrap_or_else(|| "-".into()),
            next_action(&p.decision),
        ]);
    }
    Ok(table(&rows))
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

async fn whoami(client: &Client) -> String {
    let local = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    match api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
    {
        Ok(r) => match r.status.and_then(|s| s.user_info).and_then(|u| u.username) {
            Some(user) => format!("{user} (local user {local})"),
            None => format!("local user {local}"),
        },
        Err(e) => {
            debug!(error = %e, "SelfSubjectReview failed; naming the local user");
            format!("local user {local}")
        }
    }
}

async fn step(g: &GlobalArgs, args: &StepArgs) -> Result<Exit> {
    let cluster = cluster(g, Some((&args.target, Listing::TargetNamespace))).await?;
    let prometheus = prometheus(g)?;
    let opts = pass_options(g, true);
    let force = match (args.force, &args.reason) {
        (true, Some(reason)) => Some(Forced {
            who: whoami(cluster.client()).await,
            reason: reason.clone(),
        }),
        (true, None) => bail!("--force needs --reason TEXT"),
        (false, _) => None,
    };
    let report = step_once_with(
        &cluster,
        &prometheus,
        &opts,
        &args.target,
        force.as_ref(),
        Timestamp::now(),
    )
    .await?;
    log_set(&report);
    println!("{}: {}", args.target, report.outcome);
    Ok(match report.outcome {
        Outcome::Stepped { .. } | Outcome::WouldStep { .. } => Exit::Ok,
        _ => Exit::Failed,
    })
}

/// Who forces a step, and why (`step --force --reason`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forced {
    /// The requester: the API server's SelfSubjectReview username and the local user.
    pub who: String,
    /// `--reason`.
    pub reason: String,
}

/// `step`: plans `target` (the only set `cluster` lists) and takes one step now with the stepper's
/// own patch shape. Without `force` the gates apply; with it a blocked step is taken anyway and a
/// `ForcedStep` Event records who and why. Honours `opts.dry_run`.
///
/// # Errors
/// A failed LIST; the set not found, not guarded, with nothing staged, at partition 0, blocked
/// (without `force`), or with an unreadable `<prefix>/step`.
pub async fn step_once<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: &Target,
    force: Option<&Forced>,
    now: Timestamp,
) -> Result<SetReport> {
    step_once_with(cluster, &NoPrometheus, opts, target, force, now).await
}

/// [`step_once`] with the Prometheus the `PrometheusCheck` gate queries. The fleet's step budget
/// (`Throttled`) does not apply to a person's step.
///
/// # Errors
/// As [`step_once`].
pub async fn step_once_with<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    target: &Target,
    force: Option<&Forced>,
    now: Timestamp,
) -> Result<SetReport> {
    let snap = pass::snapshot(cluster, opts).await?;
    let Some(index) = snap.statefulsets.iter().position(|s| {
        s.metadata.namespace.as_deref() == Some(target.namespace.as_str())
            && s.metadata.name.as_deref() == Some(target.name.as_str())
    }) else {
        bail!("statefulset {target} not found");
    };
    let set = &snap.statefulsets[index];
    let mut unthrottled = opts.clone();
    unthrottled.gates.max_steps_per_pass = None;
    unthrottled.gates.max_steps_per_minute = None;
    let mut p = pass::plan_pass(cluster, prometheus, &snap, &unthrottled, now)
        .await
        .into_iter()
        .nth(index)
        .context("no plan for the statefulset")?;
    let mut forced_note = None;
    match (&p.decision, force) {
        (Decision::Step { .. }, _) => {}
        (Decision::Unguarded(why), _) => bail!("{target} is not guarded ({why}): nothing to step"),
        (Decision::Idle(Idle::UpToDate), _) => bail!("{target}: no staged update, nothing to step"),
        (Decision::Idle(Idle::PartitionZero), _) => {
            bail!("{target}: partition is already 0, the controller finishes the rollout")
        }
        (Decision::Blocked(b), None) => bail!(
            "{target} not stepped: {b} (wait for the gate, or step anyway with --force --reason TEXT)"
        ),
        (Decision::Blocked(b), Some(forced)) => {
            let prefix = opts.gates.prefix.as_str();
            let from = sts::partition(set).unwrap_or(0);
            let step = gates::step_size(
                sts::annotation(set, prefix, sts_safe_rollout::annotations::STEP),
                sts::replicas(set),
                prefix,
            )
            .map_err(anyhow::Error::msg)?;
            let Some(update_revision) = set.status.as_ref().and_then(|s| s.update_revision.clone())
            else {
                bail!("{target}: no status.updateRevision yet; cannot pin the step");
            };
            let to = (from.min(sts::replicas(set).max(0)) - step).max(0);
            let mut note = format!(
                "partition {from}→{to} forced past {b} by {}: {}",
                forced.who, forced.reason
            );
            note.truncate(note.floor_char_boundary(1000));
            forced_note = Some(EventNote {
                kind: EventKind::Warning,
                reason: "ForcedStep".into(),
                action: "Step".into(),
                note,
            });
            p.step = Some(plan::step_patch(
                set,
                prefix,
                from,
                to,
                &update_revision,
                now,
            ));
            p.decision = Decision::Step {
                from,
                to,
                update_revision,
            };
            p.bookkeeping = None;
            p.bookkeeping_events.clear();
        }
    }
    let reference = p.reference.clone();
    let report = pass::execute(cluster, p, opts.dry_run).await;
    if let (Outcome::Stepped { .. }, Some(note)) = (&report.outcome, &forced_note)
        && let Err(e) = cluster.publish_event(&reference, note).await
    {
        warn!(error = %e, "ForcedStep event not published");
    }
    Ok(report)
}

/// `wait`'s check: `Ok(Ok(summary))` when the rollout of `target` is complete
/// ([`gates::rollout_complete`]), `Ok(Err(blocked))` with what it still waits for.
///
/// # Errors
/// A failed LIST, or the set not found.
pub async fn check_complete<C: Cluster>(
    cluster: &C,
    opts: &PassOptions,
    target: &Target,
    now: Timestamp,
) -> Result<Result<String, gates::Blocked>> {
    let snap = pass::snapshot(cluster, opts).await?;
    let Some(set) = snap.statefulsets.first() else {
        bail!("statefulset {target} not found");
    };
    let by_ordinal = gates::pods_by_ordinal(set, snap.pods.iter());
    let views: Vec<PdbView<'_>> = snap.pdbs.iter().map(PdbView::new).collect();
    Ok(
        gates::rollout_complete(set, &by_ordinal, &views, &opts.gates, now).map(|()| {
            format!(
                "rollout complete: {} pods on {}, all Ready",
                sts::replicas(set),
                set.status
                    .as_ref()
                    .and_then(|s| s.update_revision.as_deref())
                    .unwrap_or("-")
            )
        }),
    )
}

async fn wait(g: &GlobalArgs, args: &WaitArgs) -> Result<Exit> {
    let cluster = cluster(g, Some((&args.target, Listing::OnlyTarget))).await?;
    let opts = pass_options(g, true);
    let started = Instant::now();
    let mut last_reason = String::new();
    loop {
        match check_complete(&cluster, &opts, &args.target, Timestamp::now()).await? {
            Ok(summary) => {
                println!("{}: {summary}", args.target);
                return Ok(Exit::Ok);
            }
            Err(b) => {
                let text = b.to_string();
                if text != last_reason {
                    info!(statefulset = %args.target, waiting_for = %text, "not complete yet");
                    last_reason = text;
                }
                if started.elapsed() >= to_std(args.timeout) {
                    println!(
                        "{}: timed out after {}: {b}",
                        args.target,
                        jiff::fmt::friendly::SpanPrinter::new().duration_to_string(&args.timeout)
                    );
                    return Ok(Exit::Failed);
                }
            }
        }
        tokio::time::sleep(to_std(args.poll)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::Blocked;
    use crate::plan::Figures;

    fn report(name: &str, outcome: Outcome) -> SetReport {
        SetReport {
            namespace: "demo".into(),
            name: name.into(),
            figures: Figures::default(),
            outcome,
            error: None,
            event_errors: vec![],
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
                    Outcome::Blocked(Blocked::new(gates::Reason::PodNotReady, "x")),
                ),
                report("stepped", Outcome::Stepped { from: 2, to: 1 }),
                report("finishing", Outcome::Idle(Idle::PartitionZero)),
            ],
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
