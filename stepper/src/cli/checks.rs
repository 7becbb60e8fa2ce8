//! The checks' flags (`once`, `watch`, `status`, `step`): one group per kind of check, each under its
//! own `--help` heading — Prometheus ([`PrometheusArgs`]), the HTTP checks ([`HttpCheckArgs`]), the
//! approval webhooks ([`WebhookArgs`]) — and what bounds all of a pass's reads ([`CheckArgs`]:
//! `--check-concurrency`, `--check-deadline`).

// The doc comments of the flags are their `--help` text (clap), written for a terminal: `<prefix>/…`
// and bare URLs there are text, not HTML or links.
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use std::path::PathBuf;

use clap::Args;
use jiff::SignedDuration;

use crate::cli::http_check_file;
use crate::cli::values::{parse_duration, parse_webhook, parse_webhook_serves};

/// The default timeout of one read of every kind of check (`--prometheus-timeout`,
/// `--http-check-timeout`, `--webhook-timeout`): 10 s.
pub const DEFAULT_TIMEOUT: SignedDuration = SignedDuration::from_secs(10);

/// The checks' flags: each kind's group, and the bound and deadline of a pass's reads.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
pub struct CheckArgs {
    /// Where the PrometheusCheck gate sends its queries.
    #[command(flatten)]
    pub prometheus: PrometheusArgs,

    /// Checks' reads (Prometheus queries, owner reads) of one pass in flight at once.
    #[arg(
        long,
        default_value = "8",
        value_name = "N",
        help_heading = "Prometheus check"
    )]
    pub check_concurrency: std::num::NonZeroUsize,

    /// The whole pass's time for its checks' reads, webhook calls and built-in answers; a read not
    /// done by then is an error of its check, never a failure. Default: twice the longest bound of
    /// those configured (--prometheus-timeout with --prometheus-url, --http-check-timeout with
    /// --http-check, each webhook's own, each --answerer-config entry's longest answer: its reads and
    /// its move, a Redis failover's pause included), 20s with none.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", help_heading = "Prometheus check")]
    pub check_deadline: Option<SignedDuration>,

    /// Where the HttpCheck gate sends its GETs.
    #[command(flatten)]
    pub http: HttpCheckArgs,

    /// Where the approval webhook's POSTs go.
    #[command(flatten)]
    pub webhook: WebhookArgs,
}

impl Default for CheckArgs {
    fn default() -> Self {
        CheckArgs {
            prometheus: PrometheusArgs::default(),
            check_concurrency: std::num::NonZeroUsize::new(8)
                .unwrap_or(std::num::NonZeroUsize::MIN),
            check_deadline: None,
            http: HttpCheckArgs::default(),
            webhook: WebhookArgs::default(),
        }
    }
}

/// Where the PrometheusCheck gate sends its queries, and how it authenticates.
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
}

impl Default for PrometheusArgs {
    fn default() -> Self {
        PrometheusArgs {
            prometheus_url: None,
            prometheus_timeout: DEFAULT_TIMEOUT,
            prometheus_bearer_token_file: None,
            prometheus_username: None,
            prometheus_password_file: None,
            prometheus_ca_file: None,
        }
    }
}

/// The endpoints the HttpCheck gate may GET.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "HTTP check")]
pub struct HttpCheckArgs {
    /// An endpoint the HttpCheck gate may GET, as NAME=URL (repeatable), e.g.
    /// es-health=http://elasticsearch.search:9200/_cluster/health. A set's <prefix>/http-check names
    /// it; annotations never carry a URL. Without it (or --http-check-config) such sets never step.
    #[arg(long = "http-check", value_parser = http_check_file::parse_flag, value_name = "NAME=URL")]
    pub http_check: Vec<(String, String)>,

    /// A YAML file of HTTP checks that need more than a URL (apiVersion: safe-rollout.dev/v1alpha1,
    /// kind: HttpCheckConfig, checks: a list of name, url and optionally timeoutSeconds, tls {caFile,
    /// certFile, keyFile, serverName} and auth {basic {username or usernameFile, passwordFile} or
    /// bearerTokenFile}), e.g. a ConfigMap's key mounted in the stepper's pod; every secret is a file
    /// (a mounted Secret) read at every call. Read at start, merged with the --http-check flags (each
    /// name once).
    #[arg(long, value_name = "FILE")]
    pub http_check_config: Option<PathBuf>,

    /// Timeout of one HTTP check's GET (connect and answer) unless its --http-check-config entry sets
    /// timeoutSeconds; a timeout is an error of the check (it holds the step; never a failure).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub http_check_timeout: SignedDuration,
}

impl Default for HttpCheckArgs {
    fn default() -> Self {
        HttpCheckArgs {
            http_check: Vec::new(),
            http_check_config: None,
            http_check_timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// The approval webhooks the stepper may POST to.
#[derive(Debug, Args, Clone, PartialEq, Eq)]
#[command(next_help_heading = "Approval webhook")]
pub struct WebhookArgs {
    /// An approval webhook the stepper may POST to, as NAME=URL (repeatable), e.g.
    /// db-approver=http://approver.db:8080/approve. A set's <prefix>/pre-update-webhook names it (or
    /// an entry of --webhook-config or --answerer-config); annotations never carry a URL. Without any,
    /// such sets never step.
    #[arg(long = "webhook", value_parser = parse_webhook, value_name = "NAME=URL")]
    pub webhook: Vec<(String, String)>,

    /// The sets a --webhook flag's webhook serves, as NAME=NAMESPACE/SET[,NAMESPACE/SET…] (repeatable;
    /// a namespace or a set given as * is any), e.g. db-approver=db/postgres,db/*. Required for every
    /// --webhook flag: a set outside them is refused (InvalidAnnotation) before the webhook is called,
    /// so a StatefulSet editor cannot send another team's webhook questions. A --webhook-config entry
    /// gives its own serves.
    #[arg(long = "webhook-serves", value_parser = parse_webhook_serves, value_name = "NAME=SETS")]
    pub webhook_serves: Vec<(String, String)>,

    /// A YAML file of approval webhooks (apiVersion: safe-rollout.dev/v1alpha1, kind: WebhookConfig,
    /// webhooks: a list of name, serves (the sets that may name it, NAMESPACE/SET), url and optionally timeoutSeconds, tls {caFile, certFile, keyFile,
    /// serverName} and auth {basic {username or usernameFile, passwordFile} or bearerTokenFile}), e.g.
    /// a ConfigMap's key mounted in the stepper's pod; every secret is a file (a mounted Secret) read
    /// at every call. Read at start, merged with the --webhook flags (each name once).
    #[arg(long, value_name = "FILE")]
    pub webhook_config: Option<PathBuf>,

    /// Timeout of one webhook call (connect and answer) unless its --webhook-config entry sets
    /// timeoutSeconds; a timeout is an error, not a decision (it holds the step; webhook-error-limit of
    /// them in a row record the rollout as Degraded).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub webhook_timeout: SignedDuration,

    /// PEM file of CA certificates to trust for https webhooks besides the built-in web PKI roots
    /// (TLS is always verified): the tls.caFile of every webhook whose --webhook-config entry sets
    /// none; read again at every call.
    #[arg(long, value_name = "FILE")]
    pub webhook_ca_file: Option<PathBuf>,

    /// A YAML file of built-in answerers (apiVersion: safe-rollout.dev/v1alpha1, kind:
    /// AnswererConfig, answerers: a list of name, serves (the sets that may name it, NAMESPACE/SET), optionally timeoutSeconds, and one kind — patroni, redisSentinel, etcd —
    /// with the members' address template, e.g. http://{pod}.{service}.{namespace}.svc:8008): the
    /// stepper answers the approval questions itself for these systems and moves their leader before
    /// its pod goes (docs/answerers.md). A set's <prefix>/pre-update-webhook names an entry as it names a
    /// webhook; each name once across both. Read at start.
    #[arg(long, value_name = "FILE")]
    pub answerer_config: Option<PathBuf>,
}

impl Default for WebhookArgs {
    fn default() -> Self {
        WebhookArgs {
            webhook: Vec::new(),
            webhook_serves: Vec::new(),
            webhook_config: None,
            webhook_timeout: DEFAULT_TIMEOUT,
            webhook_ca_file: None,
            answerer_config: None,
        }
    }
}
