//! The subcommands, one file each, and the one [`Context`] they share.
//!
//! [`Context`] is built once per run (the flags, the kube client, the Prometheus client, the metrics), as
//! kube-rs `controller-rs` shares its `Context` with its reconciler.

pub mod alloc;
mod checks;
mod connect;
mod heartbeat;
mod once;
mod pause;
mod preview;
mod release;
mod resume;
mod simulate;
mod status;
mod status_view;
mod step;
mod wait;
mod watch;

pub use checks::{check_options, checks, probe_options, prometheus};

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, anyhow};
use jiff::{SignedDuration, Timestamp};
use kube::Client;
use tracing::{debug, error, info, warn};

pub use connect::{SERVICE_ACCOUNT_NAMESPACE, load};
pub use heartbeat::heartbeats;
pub use pause::pause_set;
pub use preview::preview_text;
pub use release::{How, ReleaseReport, release_sets};
pub use resume::resume_set;
pub use status::{status_items, status_items_with, status_table, status_table_with, table};
pub use status_view::{View, render as status_view};
pub use step::{Forced, step_once, step_once_with};
pub use wait::check_complete;

use crate::cli::{Cli, Command, GateArgs, GlobalArgs, PassArgs, Target, TargetRef};
use crate::cluster::kube::{KubeCluster, Scope};
use crate::cluster::{Cluster, ClusterError, Prometheus};
use crate::config::Keys;
use crate::gates::GateOptions;
use crate::pass::PodReads;
use crate::pass::probes::ProbeOptions;
use crate::pass::recovery::RecoveryOutcome;
use crate::pass::{self, Outcome, PassOptions, PassReport, SetReport};
use crate::serve::metrics::Metrics;

/// The pod reads of a command about `target`: that set's own ([`PodReads::Set`]); with no target,
/// every pod in scope ([`PodReads::Scope`]).
fn pod_reads_of(target: Option<&Target>) -> PodReads {
    target.map_or(PodReads::Scope, |t| PodReads::Set {
        namespace: t.namespace.clone(),
        name: t.name.clone(),
    })
}

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
    if let Command::Simulate(args) = &cli.command {
        return simulate::run(args);
    }
    let ctx = Context::new(&cli.global).await?;
    match &cli.command {
        Command::Once(args) => once::run(&ctx, args).await,
        Command::Watch(args) => watch::run(&ctx, args).await,
        Command::Status(args) => status::run(&ctx, args).await,
        Command::Step(args) => step::run(&ctx, args).await,
        Command::Wait(args) => wait::run(&ctx, args).await,
        Command::Pause(args) => pause::run(&ctx, args).await,
        Command::Resume(args) => resume::run(&ctx, args).await,
        Command::Preview(args) => preview::run(&ctx, args).await,
        Command::Release(args) => release::run(&ctx, args).await,
        Command::Simulate(_) => unreachable!("handled above"),
    }
}

/// What every command against a cluster shares, built once: the global flags, the kube client, the
/// current namespace, the metrics and the annotation keys.
pub struct Context {
    /// The global flags.
    pub global: GlobalArgs,
    /// The kube client (kubeconfig, `--context`, or the in-cluster service account).
    pub client: Client,
    /// The current namespace as kubectl has it without `-n`: the kubeconfig context's, else
    /// `default`; in a pod its own ([`crate::cli::NamespaceSource::current_namespace`]).
    pub namespace: String,
    /// The pass metrics (`watch` serves them on `/metrics`).
    pub metrics: Arc<Metrics>,
    /// The annotation keys under `--annotation-prefix`: built here, once, for every layer below.
    pub keys: Arc<Keys>,
}

impl Context {
    /// Connects ([`connect::client`]).
    ///
    /// # Errors
    /// No Kubernetes configuration, or one that cannot be read.
    pub async fn new(global: &GlobalArgs) -> Result<Self> {
        let (client, namespace) = connect::client(global).await?;
        Ok(Context {
            global: global.clone(),
            client,
            namespace,
            metrics: Arc::new(Metrics::new()),
            keys: Arc::new(Keys::new(&global.annotation_prefix)),
        })
    }

    /// The named StatefulSet in its namespace: typed, else `-n`, else the current one.
    ///
    /// # Errors
    /// `-n` twice, or a typed namespace that differs from `-n`.
    fn target(&self, target: &TargetRef) -> Result<Target> {
        target
            .resolve(&self.global.namespaces, &self.namespace)
            .map_err(|e| anyhow!(e))
    }

    /// The cluster over `namespaces` (empty: all) and the label `selector`.
    fn cluster_over(&self, namespaces: Vec<String>, selector: Option<String>) -> KubeCluster {
        self.kube_cluster(Scope {
            namespaces,
            label_selector: selector,
            field_selector: None,
        })
    }

    /// The cluster of one `target`, listing as `listing` says.
    fn cluster_of(&self, target: &Target, listing: Listing) -> KubeCluster {
        self.kube_cluster(Scope {
            namespaces: vec![target.namespace.clone()],
            label_selector: None,
            field_selector: (listing == Listing::OnlyTarget)
                .then(|| format!("metadata.name={}", target.name)),
        })
    }

    fn kube_cluster(&self, scope: Scope) -> KubeCluster {
        let instance = std::env::var("POD_NAME").ok().filter(|s| !s.is_empty());
        KubeCluster::new(self.client.clone(), scope, instance)
    }

    /// The pass settings from the flags, reading pods as `pod_reads` says; without `pass` (the
    /// subcommands other than `once` and `watch`) its defaults: no recovery, no step budget.
    fn pass_options(
        &self,
        pod_reads: PodReads,
        gates: &GateArgs,
        pass: Option<&PassArgs>,
        dry_run: bool,
    ) -> PassOptions {
        let defaults = PassArgs::default();
        let pass = pass.unwrap_or(&defaults);
        PassOptions {
            gates: GateOptions {
                keys: self.keys.clone(),
                pdb_gate: !gates.no_pdb_gate,
                max_steps_per_pass: pass.max_steps_per_pass,
                max_steps_per_minute: pass.max_steps_per_minute,
                recover_stuck_pods: pass.recover_stuck_pods,
                http_checks: None,
                webhooks: None,
            },
            dry_run,
            pod_reads,
            max_decision_age: to_std(pass.max_decision_age),
            probes: ProbeOptions::default(),
        }
    }
}

/// How a single-set subcommand lists: `wait` needs only the set (a field selector); `step` and
/// `status` list the set's namespace, because `GroupBusy` judges the set against its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listing {
    /// Only the target (a field selector on its name).
    OnlyTarget,
    /// The target's namespace.
    TargetNamespace,
}

/// One line per set whose pass changed something ([`SetReport::news`]): ERROR for an error (its
/// `error_reason`: [`SetReport::error_reason`], the `sts_safe_rollout_errors_total` label), INFO
/// otherwise (a lost Lease, `NotLeader`, too); DEBUG for a set the pass left as it was (a wait
/// already announced, an idle set).
fn log_set(s: &SetReport) {
    let f = &s.figures;
    macro_rules! line {
        ($level:ident) => {
            $level!(
                namespace = %s.namespace,
                statefulset = %s.name,
                outcome = %s.outcome,
                error_reason = s.error_reason().unwrap_or(""),
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
async fn timed_pass<C: Cluster, P: Prometheus>(
    cluster: &C,
    prometheus: &P,
    opts: &PassOptions,
    metrics: Option<&Metrics>,
) -> Result<PassReport, ClusterError> {
    let started = Instant::now();
    let result = pass::run_pass_with(cluster, prometheus, opts, Timestamp::now()).await;
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

fn to_std(d: SignedDuration) -> std::time::Duration {
    d.unsigned_abs()
}
