//! The subcommands, one file each, and the one [`Context`] they share.
//!
//! [`Context`] is built once per run (the flags, the kube client, the Prometheus client, the metrics), as
//! kube-rs `controller-rs` shares its `Context` with its reconciler.

mod once;
mod pause;
mod resume;
mod simulate;
mod status;
mod step;
mod wait;
mod watch;

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use jiff::{SignedDuration, Timestamp};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tracing::{debug, error, info, warn};

pub use pause::pause_set;
pub use resume::resume_set;
pub use status::{status_table, status_table_with, table};
pub use step::{Forced, step_once, step_once_with};
pub use wait::check_complete;

use crate::cli::{Cli, Command, GlobalArgs, Target};
use crate::cluster::kube::{KubeCluster, Scope};
use crate::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use crate::cluster::{Cluster, ClusterError, Prometheus};
use crate::config::Keys;
use crate::gates::{GateOptions, Idle};
use crate::pass::PodReads;
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
        Command::Once => once::run(&ctx).await,
        Command::Watch(args) => watch::run(&ctx, args).await,
        Command::Status(args) => status::run(&ctx, args).await,
        Command::Step(args) => step::run(&ctx, args).await,
        Command::Wait(args) => wait::run(&ctx, args).await,
        Command::Pause(args) => pause::run(&ctx, args).await,
        Command::Resume(args) => resume::run(&ctx, args).await,
        Command::Simulate(_) => unreachable!("handled above"),
    }
}

/// What every command against a cluster shares, built once: the flags, the kube client and the
/// Prometheus client (`None` without `--prometheus-url`).
pub struct Context {
    /// The global flags.
    pub global: GlobalArgs,
    /// The kube client (kubeconfig, `--context`, or the in-cluster service account).
    pub client: Client,
    /// The Prometheus client for the `PrometheusCheck` gate.
    pub prometheus: Option<PrometheusClient>,
    /// The pass metrics (`watch` serves them on `/metrics`).
    pub metrics: Arc<Metrics>,
    /// The annotation keys under `--annotation-prefix`: built here, once, for every layer below.
    pub keys: Arc<Keys>,
}

impl Context {
    /// Connects: the kube client, then the Prometheus client.
    ///
    /// # Errors
    /// No Kubernetes configuration, or a bad `--prometheus-*` flag.
    pub async fn new(global: &GlobalArgs) -> Result<Self> {
        Ok(Context {
            global: global.clone(),
            client: client(global).await?,
            prometheus: prometheus(global)?,
            metrics: Arc::new(Metrics::new()),
            keys: Arc::new(Keys::new(&global.annotation_prefix)),
        })
    }

    /// The cluster in the flags' scope (`--namespace`, `--selector`), or the scope of one `target`.
    fn cluster(&self, target: Option<(&Target, Listing)>) -> KubeCluster {
        let g = &self.global;
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
        KubeCluster::new(self.client.clone(), scope, instance)
    }

    /// The pass settings from the flags, reading pods as `pod_reads` says.
    fn pass_options(&self, pod_reads: PodReads) -> PassOptions {
        let g = &self.global;
        PassOptions {
            gates: GateOptions {
                keys: self.keys.clone(),
                pdb_gate: !g.no_pdb_gate,
                max_steps_per_pass: g.max_steps_per_pass,
                max_steps_per_minute: g.max_steps_per_minute,
                recover_stuck_pods: g.recover_stuck_pods,
            },
            dry_run: g.dry_run,
            pod_reads,
            max_decision_age: to_std(g.max_decision_age),
        }
    }
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
    /// Only the target (a field selector on its name).
    OnlyTarget,
    /// The target's namespace.
    TargetNamespace,
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

/// One pass at the clock's now, logged per set and summed up, observed in `metrics` when given.
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
            for s in &report.sets {
                log_set(s);
            }
            for r in &report.recoveries {
                match r.outcome {
                    RecoveryOutcome::Failed(_) => {
                        error!(namespace = %r.namespace, statefulset = %r.statefulset, pod = %r.pod.name, "{r}")
                    }
                    _ => {
                        warn!(namespace = %r.namespace, statefulset = %r.statefulset, pod = %r.pod.name, "{r}")
                    }
                }
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

fn to_std(d: SignedDuration) -> std::time::Duration {
    d.unsigned_abs()
}
