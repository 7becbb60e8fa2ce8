//! The flag groups several subcommands share, each under its own `--help` heading: which sets
//! (`Scope`), what the gates consult (`Gates`, `Prometheus check`), how a pass writes (`Pass`), and
//! `status`'s output format.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use jiff::SignedDuration;

use crate::cli::values::{parse_duration, parse_http_check, parse_webhook};

/// Which StatefulSets a listing subcommand (`status`, `once`, `watch`) covers besides `-n`.
#[derive(Debug, Args, Clone, Default, PartialEq, Eq)]
#[command(next_help_heading = "Scope")]
pub struct ScopeArgs {
    /// Every namespace. `status` lists the current namespace without it (as `kubectl get`); `once`
    /// and `watch` cover every namespace without -n anyway (they are controllers).
    #[arg(short = 'A', long, conflicts_with = "namespaces")]
    pub all_namespaces: bool,

    /// Only StatefulSets matching this label selector (e.g. `tier=db,app!=legacy`).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// What the gates consult, for the subcommands that judge them (`once`, `watch`, `status`, `step`,
/// `wait`).
#[derive(Debug, Args, Clone, Default, PartialEq, Eq)]
#[command(next_help_heading = "Gates")]
pub struct GateArgs {
    /// Turn the PdbBlocked gate off (by default a PDB selecting the pods with
    /// status.disruptionsAllowed < 1 blocks the step).
    #[arg(long)]
    pub no_pdb_gate: bool,
}

/// Where the PrometheusCheck gate sends its queries, the HttpCheck gate its GETs and the approval
/// webhook its POSTs (`once`, `watch`, `status`, `step`).
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Prometheus check")]
pub struct PrometheusArgs {
    /// Prometheus base URL for the PrometheusCheck gate (sets annotated <prefix>/prometheus-query),
    /// e.g. http://prometheus-operated.monitoring:9090. Without it such sets never step.
    #[arg(long, env = "STS_STEPPER_PROMETHEUS_URL", value_name = "URL")]
    pub prometheus_url: Option<String>,

    /// Timeout of one Prometheus query (connect and answer); a timeout is an error of the check (it
    /// holds the step; never a failure).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub prometheus_timeout: SignedDuration,

    /// Checks' reads (Prometheus queries, owner reads) of one pass in flight at once.
    #[arg(long, default_value = "8", value_name = "N")]
    pub check_concurrency: std::num::NonZeroUsize,

    /// The whole pass's time for its checks' reads and webhook calls; a read not done by then is an
    /// error of its check, never a failure. Default: twice the longest of --prometheus-timeout,
    /// --http-check-timeout and --webhook-timeout.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub check_deadline: Option<SignedDuration>,

    /// File with a bearer token for Prometheus (mounted from a Secret; read at every query).
    #[arg(long, value_name = "FILE", conflicts_with = "prometheus_username")]
    pub prometheus_bearer_token_file: Option<PathBuf>,

    /// Username for HTTP basic auth to Prometheus (with --prometheus-password-file).
    #[arg(long, value_name = "USER", requires = "prometheus_password_file")]
    pub prometheus_username: Option<String>,

    /// File with the basic-auth password for Prometheus (mounted from a Secret; read at every query).
    #[arg(long, value_name = "FILE", requires = "prometheus_username")]
    pub prometheus_password_file: Option<PathBuf>,

    /// PEM file of CA certificates to trust for an https Prometheus besides the built-in web PKI
    /// roots (TLS is always verified).
    #[arg(long, value_name = "FILE")]
    pub prometheus_ca_file: Option<PathBuf>,

    /// An endpoint the HttpCheck gate may GET, as NAME=URL (repeatable), e.g.
    /// es-health=http://elasticsearch.search:9200/_cluster/health. A set's <prefix>/http-check names
    /// it; annotations never carry a URL. Without it such sets never step.
    #[arg(long = "http-check", value_parser = parse_http_check, value_name = "NAME=URL", help_heading = "HTTP check")]
    pub http_check: Vec<(String, String)>,

    /// Timeout of one HTTP check's GET (connect and answer); a timeout is an error of the check (it
    /// holds the step; never a failure).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION", help_heading = "HTTP check")]
    pub http_check_timeout: SignedDuration,

    /// An approval webhook the stepper may POST to, as NAME=URL (repeatable), e.g.
    /// db-approver=http://approver.db:8080/approve. A set's <prefix>/pre-update-webhook names it;
    /// annotations never carry a URL. Without it (or --webhook-config) such sets never step.
    #[arg(long = "webhook", value_parser = parse_webhook, value_name = "NAME=URL", help_heading = "Approval webhook")]
    pub webhook: Vec<(String, String)>,

    /// A YAML file of approval webhooks (apiVersion: safe-rollout.dev/v1alpha1, kind: WebhookConfig,
    /// webhooks: a list of name, url and optionally timeoutSeconds and bearerTokenFile), e.g. a
    /// ConfigMap's key mounted in the stepper's pod; read at start, merged with the --webhook flags
    /// (each name once).
    #[arg(long, value_name = "FILE", help_heading = "Approval webhook")]
    pub webhook_config: Option<PathBuf>,

    /// Timeout of one webhook call (connect and answer) unless its --webhook-config entry sets
    /// timeoutSeconds; a timeout is an error, not a decision (it holds the step; webhook-error-limit of
    /// them in a row record the rollout as Degraded).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION", help_heading = "Approval webhook")]
    pub webhook_timeout: SignedDuration,

    /// PEM file of CA certificates to trust for https webhooks besides the built-in web PKI roots
    /// (TLS is always verified).
    #[arg(long, value_name = "FILE", help_heading = "Approval webhook")]
    pub webhook_ca_file: Option<PathBuf>,
}

impl Default for PrometheusArgs {
    fn default() -> Self {
        PrometheusArgs {
            prometheus_url: None,
            prometheus_timeout: SignedDuration::from_secs(10),
            check_concurrency: std::num::NonZeroUsize::new(8)
                .unwrap_or(std::num::NonZeroUsize::MIN),
            check_deadline: None,
            prometheus_bearer_token_file: None,
            prometheus_username: None,
            prometheus_password_file: None,
            prometheus_ca_file: None,
            http_check: Vec::new(),
            http_check_timeout: SignedDuration::from_secs(10),
            webhook: Vec::new(),
            webhook_config: None,
            webhook_timeout: SignedDuration::from_secs(10),
            webhook_ca_file: None,
        }
    }
}

/// How the controller subcommands (`once`, `watch`) pass: recovery, the fleet's step budget, the
/// decision's age.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Pass")]
pub struct PassArgs {
    /// Stuck-pod recovery: delete a pod that has not been Ready for <prefix>/recover-after-seconds
    /// (default 300) and runs a revision its ordinal should no longer run, so the StatefulSet
    /// controller recreates it (with OrderedReady it waits for such a pod forever). One pod per set
    /// per pass, only when no other pod of the set is down; never for a paused set, never with
    /// --dry-run. Needs pod `delete` (the opt-in RBAC component deploy/stepper/recovery/).
    #[arg(long)]
    pub recover_stuck_pods: bool,

    /// At most N steps per pass over all StatefulSets in scope (gate Throttled). Started rollouts
    /// get the budget first, then namespace/name order. Default: unlimited.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps_per_pass: Option<u32>,

    /// At most N steps in any 60 seconds over all StatefulSets in scope, counted from their
    /// <prefix>/last-partition-update stamps, so CronJob passes and restarts share one budget
    /// (gate Throttled). Default: unlimited.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps_per_minute: Option<u32>,

    /// A step decided on pods read longer ago than this is decided again on a fresh read of that
    /// set's pods before its write (nothing in the step's patch pins a pod's readiness).
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "DURATION")]
    pub max_decision_age: SignedDuration,
}

impl Default for PassArgs {
    fn default() -> Self {
        PassArgs {
            recover_stuck_pods: false,
            max_steps_per_pass: None,
            max_steps_per_minute: None,
            max_decision_age: SignedDuration::from_secs(1),
        }
    }
}

/// `status -o`: a machine-readable document instead of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One JSON document (`RolloutStatusList`, docs/status-output.md).
    Json,
    /// The same document as YAML.
    Yaml,
}
