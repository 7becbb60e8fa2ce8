//! The checks' clients and how a pass uses them, from the `--prometheus-*`, `--http-check*` and
//! `--webhook*` flags and the `--webhook-config` file.

use anyhow::Result;

use super::to_std;
use crate::cli::PrometheusArgs;
use crate::cli::webhook_file;
use crate::cluster::Checks;
use crate::cluster::http_check::HttpChecks;
use crate::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use crate::cluster::webhook::{Endpoint, Webhooks};
use crate::pass::PassOptions;
use crate::pass::probes::ProbeOptions;

/// How a pass runs its checks' reads, from `--check-concurrency` and `--check-deadline` (default:
/// twice the longest of `--prometheus-timeout`, `--http-check-timeout` and `--webhook-timeout`, or a
/// `--webhook-config` entry's own timeout ([`check_options`]): a read started late in the
/// pass still gets its whole timeout, and a pass whose checks all hang ends after two timeouts
/// whatever the fleet's size).
pub fn probe_options(g: &PrometheusArgs) -> ProbeOptions {
    let longest = g
        .prometheus_timeout
        .max(g.http_check_timeout)
        .max(g.webhook_timeout);
    ProbeOptions {
        concurrency: g.check_concurrency.get(),
        deadline: Some(to_std(
            g.check_deadline
                .unwrap_or_else(|| longest.saturating_mul(2)),
        )),
        call_webhooks: true,
    }
}

/// The checks' clients from the `--prometheus-*`, `--http-check*` and `--webhook*` flags (and the
/// `--webhook-config` file).
///
/// # Errors
/// A bad URL, CA file or webhook file, a check name given twice, naming the flag.
pub fn checks(g: &PrometheusArgs) -> Result<Checks> {
    let http = if g.http_check.is_empty() {
        None
    } else {
        let timeout = to_std(g.http_check_timeout);
        Some(HttpChecks::new(&g.http_check, timeout).map_err(anyhow::Error::msg)?)
    };
    let file = match &g.webhook_config {
        Some(path) => webhook_file::read(path).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let endpoints = webhook_file::merge(&g.webhook, file).map_err(anyhow::Error::msg)?;
    let webhooks = if endpoints.is_empty() {
        None
    } else {
        let default = to_std(g.webhook_timeout);
        let endpoints: Vec<Endpoint> = endpoints
            .into_iter()
            .map(|e| Endpoint {
                timeout: e.timeout.unwrap_or(default),
                name: e.name,
                url: e.url,
                bearer_token_file: e.bearer_token_file,
            })
            .collect();
        let ca = g.webhook_ca_file.as_deref();
        Some(Webhooks::new(&endpoints, ca).map_err(anyhow::Error::msg)?)
    };
    Ok(Checks {
        prometheus: prometheus(g)?,
        http,
        webhooks,
    })
}

/// What a pass needs of the check flags: the reads' bound and deadline ([`probe_options`]; no webhook
/// call with `--dry-run`) and the configured HTTP check and webhook names (a set naming another is
/// `InvalidAnnotation`).
pub fn check_options(g: &PrometheusArgs, checks: &Checks, opts: &mut PassOptions) {
    opts.probes = probe_options(g);
    opts.probes.call_webhooks = !opts.dry_run;
    // A --webhook-config entry's own timeout may be the longest: the default deadline covers it too.
    let longest = checks.webhooks.as_ref().and_then(Webhooks::longest_timeout);
    if let (None, Some(longest), Some(deadline)) = (g.check_deadline, longest, opts.probes.deadline)
    {
        opts.probes.deadline = Some(deadline.max(longest.saturating_mul(2)));
    }
    opts.gates.webhooks = Some(
        checks
            .webhooks
            .as_ref()
            .map(Webhooks::names)
            .unwrap_or_default(),
    );
    opts.gates.http_checks = Some(
        checks
            .http
            .as_ref()
            .map(HttpChecks::names)
            .unwrap_or_default(),
    );
}

/// The Prometheus client from the `--prometheus-*` flags; `None` without `--prometheus-url`.
///
/// # Errors
/// A bad URL or CA file, naming the flag.
pub fn prometheus(g: &PrometheusArgs) -> Result<Option<PrometheusClient>> {
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
