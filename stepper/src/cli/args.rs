//! Command line: `sts-stepper [FLAGS] <once|watch|status|step|wait|pause|resume|preview|release|simulate>`, also run as
//! the kubectl plugin `kubectl safe-rollout` ([`crate::cli::plugin`]).

// The doc comments of the flags are their `--help` text (clap), written for a terminal: `<prefix>/…`
// and bare URLs there are text, not HTML or links.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use jiff::SignedDuration;
use sts_safe_rollout_rules::annotations;

use crate::cli::checks::CheckArgs;
use crate::cli::flags::{GateArgs, OutputFormat, PassArgs, ScopeArgs};
use crate::cli::values::{TargetRef, parse_duration, parse_prefix, parse_target};
use crate::gates;

/// `sts-stepper --help`, before the gates: what the stepper does.
const ABOUT_HEAD: &str = "\
Lowers the partition of staged StatefulSets one gated step at a time.

The sts-safe-rollout admission policy stages every template change of a guarded StatefulSet
behind spec.updateStrategy.rollingUpdate.partition (= replicas). This stepper rolls it forward:
for every StatefulSet with a staged update it lowers the partition by one step (annotation
<prefix>/step, default 1 pod), but only while every gate passes, in this order:
";

/// `sts-stepper --help`, after the gates: the canary plan, the writes, naming a set, examples.
const ABOUT_TAIL: &str = "\
A canary plan, <prefix>/pause-at: \"1,50%:600\", pauses the set after the step that brings the
pods at or above the partition to 1, then to 50% of replicas (rounded up); a step never jumps a
point. `resume` goes on to the next point; \":600\" resumes by itself 600 s after the pause once
every gate passes. A new template or a rollback starts the plan over.

Each step is one JSON Patch that pins the partition and updateRevision it saw (test ops), so
steppers racing each other never step twice. All state lives in annotations on the
StatefulSet: a stepper can be killed at any point, and `once` (CronJob) and `watch`
(Deployment) decide the same.

A StatefulSet is named as kubectl names it: web, sts/web, statefulset/web or demo/web, in the
namespace of -n, else of the kubeconfig context, else default. `status` lists the current
namespace (-A: every namespace); `once` and `watch` pass over every namespace unless -n says
otherwise: they are controllers, not queries.

Examples:
  sts-stepper status                      what the guarded StatefulSets here wait for
  sts-stepper status web -n db -o json    one set as JSON, for scripts (docs/status-output.md)
  sts-stepper once --dry-run -n demo      what one pass would do in namespace demo
  sts-stepper wait demo/web --timeout 20m CI: block until demo/web is really rolled out
  sts-stepper wait -A --timeout 2h        uninstall: until no set anywhere is staged
  sts-stepper step sts/web --force --reason \"web-1 is a known-bad node\"
  sts-stepper pause demo/web --reason \"INC-1234\"   hold it; resume with `sts-stepper resume demo/web`
  sts-stepper preview -A                  which sets the opt-in label would guard, and how
  sts-stepper release -A --dry-run        hand every set back to the native rolling update (uninstall)

Installed as a kubectl plugin (a link named kubectl-safe_rollout on PATH; `make install`), the
same commands run as `kubectl safe-rollout status|wait|step|pause|resume|preview|release`.";

/// `sts-stepper --help`: what the stepper does, its gates in order ([`gates::help`]: a new gate's
/// row in [`gates::GATES`] is listed here too), and examples.
pub fn long_about() -> String {
    let mut text = String::from(ABOUT_HEAD);
    text.push('\n');
    for (reason, help) in gates::help() {
        for (i, line) in help.lines().enumerate() {
            let name = if i == 0 { reason.as_str() } else { "" };
            text.push_str(&format!("  {name:<19}{line}\n"));
        }
    }
    text.push('\n');
    text.push_str(ABOUT_TAIL);
    text
}

/// The command line (`sts-stepper --help` prints [`long_about`]).
#[derive(Debug, Parser)]
#[command(
    name = "sts-stepper",
    version,
    about = "Lowers the partition of staged StatefulSets one gated step at a time.",
    long_about = long_about()
)]
pub struct Cli {
    /// Flags every subcommand takes (before or after it).
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand takes, before or after it: where the cluster is and which namespace is
/// meant (kubectl's flags), the annotation prefix, the log format. Shown under one heading.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The namespace: of a named StatefulSet, or the namespaces listed (repeat for several).
    /// Default: the kubeconfig context's namespace, else `default` (in a pod: its own); `once` and
    /// `watch` cover every namespace without it.
    #[arg(
        short = 'n',
        long = "namespace",
        global = true,
        value_name = "NAMESPACE"
    )]
    pub namespaces: Vec<String>,

    /// Kubeconfig file. Default: $KUBECONFIG, else ~/.kube/config, else the in-cluster service
    /// account (only when neither exists: a kubeconfig that cannot be read is an error).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use. Default: the current context.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Annotation prefix: the stepper reads `<prefix>/step`, `<prefix>/paused`, … Must match the
    /// policy's `annotationPrefix` setting (a DNS subdomain).
    #[arg(long, global = true, env = "STS_STEPPER_ANNOTATION_PREFIX",
          default_value = annotations::DEFAULT_PREFIX, value_parser = parse_prefix)]
    pub annotation_prefix: String,

    /// Log format on stderr (`json` for log collectors). Verbosity: RUST_LOG (default `info`).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// One pass over every StatefulSet in scope, then exit (the CronJob mode).
    ///
    /// Exit 0 when every StatefulSet was handled (stepped, blocked by a gate, idle), 1 when the
    /// StatefulSets could not be listed or a write or a read failed for any of them (reason ApiError;
    /// the others are decided and stepped as usual).
    Once(OnceArgs),

    /// Pass every --interval, and soon after a rolling StatefulSet or one of its pods changes (the
    /// Deployment mode). Serves /metrics (OpenMetrics) and /healthz on --metrics-addr. SIGTERM lets the pass in
    /// flight finish, then exits 0.
    Watch(WatchArgs),

    /// Print a table of the guarded StatefulSets: partition, updated/ready/replicas, revisions, health
    /// (as Argo CD and Flux report it with deploy/gitops/), and what the in-cluster stepper recorded
    /// (its blocked reason, approval wait, degraded reason, last step) and whether that record is
    /// current; with --local also the gates evaluated here (NEXT, the local view). Below it the health
    /// messages, where each canary plan stands, and stuck pods. Writes nothing. `-o json|yaml`: a
    /// versioned document (docs/status-output.md).
    Status(StatusArgs),

    /// A person's approval: one step now for the named StatefulSet, with the stepper's own patch
    /// shape (so the admission policy lets it through). The gates still apply unless --force.
    Step(StepArgs),

    /// Block until the rollout of the named StatefulSet is really complete: partition 0 (or nothing
    /// staged), every pod on updateRevision and Ready. Exit 0 then; exit 1 on timeout, printing the
    /// gate that blocks. Use it in CI instead of `kubectl rollout status`, which calls a staged
    /// update complete.
    ///
    /// Without a name: block until no StatefulSet in scope (the current namespace, -n, -A; -l) has an
    /// update staged behind its partition, printing the ones still staged and what the in-cluster
    /// stepper recorded as holding each. The uninstall's step between removing the policy and
    /// removing the stepper (docs/install.md): once it exits 0, `release` forces nothing.
    Wait(crate::cli::wait::WaitArgs),

    /// Hold the rollout of the named StatefulSet (like `kubectl rollout pause`): sets
    /// <prefix>/paused and <prefix>/paused-reason, and records who and why in a RolloutPaused Event.
    Pause(PauseArgs),

    /// Resume the rollout of the named StatefulSet (like `kubectl rollout resume`): removes
    /// <prefix>/paused, <prefix>/paused-reason and the Prometheus check's counts
    /// (<prefix>/prometheus-check), and records who in a RolloutResumed Event; with --retry, also the
    /// record of a rollback, so the failed revision may be stepped again.
    Resume(ResumeArgs),

    /// Which existing StatefulSets a scope of the policy would guard (the opt-in label by default;
    /// --namespace-selector, --cluster-wide), and what each does on its next template change: staged
    /// behind the partition, or not (not initialized, OnDelete, force-rolling-update). Writes nothing.
    Preview(crate::cli::preview::PreviewArgs),

    /// Hand StatefulSets back to the native rolling update (uninstall's last step: after the policy,
    /// `wait` and the stepper): an idle set's partition to 0, a staged one's only with --force (or,
    /// with --wait, once it is no longer staged); then remove the annotations the stepper and the
    /// policy wrote, each pinned by a test op.
    Release(crate::cli::release::ReleaseArgs),

    /// Play a scenario (YAML, see scenarios/) on a simulated StatefulSet controller with a virtual
    /// clock, with the real policy decision and the real stepper pass, and print its timeline and a
    /// summary (rollout duration, max pods unavailable at once, …). Talks to no cluster.
    Simulate(SimulateArgs),
}

impl Command {
    /// The pass flags of `once` and `watch`; `None` for the other subcommands.
    pub fn pass_args(&self) -> Option<&PassArgs> {
        match self {
            Command::Once(a) => Some(&a.pass),
            Command::Watch(a) => Some(&a.pass),
            _ => None,
        }
    }
}

/// `simulate` arguments.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The scenario file (YAML).
    #[arg(long, value_name = "FILE")]
    pub scenario: PathBuf,

    /// The native rolling update: no admission policy, no stepper.
    #[arg(long)]
    pub native: bool,

    /// Seed for the scenario's randomness (pod start jitter, probabilistic API faults).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `once` flags.
#[derive(Debug, Args, Clone, Default)]
pub struct OnceArgs {
    /// Decide and report, write nothing (no patch, no Event).
    #[arg(long)]
    pub dry_run: bool,
    /// Which sets.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// How the pass writes.
    #[command(flatten)]
    pub pass: PassArgs,
    /// What the gates consult.
    #[command(flatten)]
    pub gates: GateArgs,
    /// The checks' endpoints, timeouts and deadline.
    #[command(flatten)]
    pub checks: CheckArgs,
}

/// `watch` flags.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Time between passes when nothing changes (e.g. `30s`, `2m`).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub interval: SignedDuration,

    /// After a StatefulSet or pod change, wait this long for more changes before the pass.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub debounce: SignedDuration,

    /// Address for /metrics and /healthz.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,

    /// Decide and report, write nothing (no patch, no Event).
    #[arg(long)]
    pub dry_run: bool,

    /// Which sets.
    #[command(flatten)]
    pub scope: ScopeArgs,

    /// How the passes write.
    #[command(flatten)]
    pub pass: PassArgs,

    /// What the gates consult.
    #[command(flatten)]
    pub gates: GateArgs,

    /// The checks' endpoints, timeouts and deadline.
    #[command(flatten)]
    pub checks: CheckArgs,

    /// Leader election among replicas.
    #[command(flatten)]
    pub leader: crate::cli::leader::LeaderElectionArgs,
}

/// `status` arguments.
#[derive(Debug, Args, Default)]
pub struct StatusArgs {
    /// One StatefulSet (NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME). Default: every guarded
    /// StatefulSet of the current namespace (-A: of every namespace).
    #[arg(value_parser = parse_target)]
    pub target: Option<TargetRef>,

    /// Output format: `json` or `yaml` (a `RolloutStatusList`, docs/status-output.md). Default: a
    /// table.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,

    /// Which sets.
    #[command(flatten)]
    pub scope: ScopeArgs,

    /// The in-cluster stepper's record, and the local view.
    #[command(flatten)]
    pub record: crate::cli::record::RecordArgs,

    /// What the gates consult.
    #[command(flatten)]
    pub gates: GateArgs,

    /// The checks' endpoints, timeouts and deadline.
    #[command(flatten)]
    pub checks: CheckArgs,
}

/// `step` arguments.
#[derive(Debug, Args)]
pub struct StepArgs {
    /// The StatefulSet: NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME.
    #[arg(value_parser = parse_target)]
    pub target: TargetRef,

    /// Step even though a gate blocks (not past partition 0). Needs --reason; the Event records who
    /// asked and why.
    #[arg(long, requires = "reason")]
    pub force: bool,

    /// Why the step is forced (recorded in the ForcedStep Event).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Decide and report, write nothing (no patch, no Event).
    #[arg(long)]
    pub dry_run: bool,

    /// What the gates consult.
    #[command(flatten)]
    pub gates: GateArgs,

    /// The checks' endpoints, timeouts and deadline.
    #[command(flatten)]
    pub checks: CheckArgs,
}

/// `pause` arguments.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The StatefulSet: NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME.
    #[arg(value_parser = parse_target)]
    pub target: TargetRef,

    /// Why the rollout is held (stored in <prefix>/paused-reason and the RolloutPaused Event).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,

    /// Decide and report, write nothing (no patch, no Event).
    #[arg(long)]
    pub dry_run: bool,
}

/// `resume` arguments.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The StatefulSet: NAME, sts/NAME, statefulset/NAME or NAMESPACE/NAME.
    #[arg(value_parser = parse_target)]
    pub target: TargetRef,

    /// Also forget the rollback's record (<prefix>/failed-revision and a degraded-reason RolledBack):
    /// the revision the stepper rolled back (on-failure: rollback) may be stepped again.
    #[arg(long)]
    pub retry: bool,

    /// Decide and report, write nothing (no patch, no Event).
    #[arg(long)]
    pub dry_run: bool,
}
