//! The checks' clients and how a pass uses them, from the checks' flags ([`CheckArgs`]: `--prometheus-*`,
//! `--http-check*`, `--webhook*`, `--check-*`) and the `--http-check-config` and `--webhook-config`
//! files.

use std::time::Duration;

use anyhow::Result;

use super::context::to_std;
use crate::cli::checks::DEFAULT_TIMEOUT;
use crate::cli::{CheckArgs, PrometheusArgs};
use crate::cli::{http_check_file, webhook_file};
use crate::cluster::Checks;
use crate::cluster::answerer::{Answerers, file as answerer_file};
use crate::cluster::http_check::{HttpChecks, HttpEndpoint};
use crate::cluster::prometheus::{Auth, PrometheusClient, PrometheusConfig};
use crate::cluster::webhook::{Endpoint, Webhooks};
use crate::pass::PassOptions;
use crate::pass::probes::ProbeOptions;

/// The default `--check-deadline`: twice the longest of `timeouts`, the read bounds of the check
/// kinds configured ([`configured_timeouts`]), so a read started late in the pass still gets its whole
/// timeout and a pass whose checks all hang ends after two timeouts whatever the fleet's size; twice
/// [`DEFAULT_TIMEOUT`] (20 s) when none is configured (the owner reads alone). A kind with no
/// endpoint configured never stretches it.
pub fn default_deadline(timeouts: impl IntoIterator<Item = Duration>) -> Duration {
    timeouts
        .into_iter()
        .max()
        .unwrap_or_else(|| to_std(DEFAULT_TIMEOUT))
        .saturating_mul(2)
}

/// The read bound of each check kind `checks` configures: `--prometheus-timeout` with
/// `--prometheus-url`, each HTTP check's own (`--http-check-timeout`, or its `--http-check-config`
/// entry's `timeoutSeconds`), each webhook's own (`--webhook-timeout`, or its `--webhook-config`
/// entry's `timeoutSeconds`).
pub fn configured_timeouts(g: &CheckArgs, checks: &Checks) -> Vec<Duration> {
    let mut timeouts = Vec::new();
    if checks.prometheus.is_some() {
        timeouts.push(to_std(g.prometheus.prometheus_timeout));
    }
    timeouts.extend(checks.http.as_ref().and_then(HttpChecks::longest_timeout));
    timeouts.extend(checks.webhooks.as_ref().and_then(Webhooks::longest_timeout));
    timeouts.extend(checks.answerers.as_ref().and_then(Answerers::longest_call));
    timeouts
}

/// How a pass runs its checks' reads, from `--check-concurrency` and `--check-deadline` (default:
/// `default_deadline` of the kinds `checks` configures).
pub fn probe_options(g: &CheckArgs, checks: &Checks) -> ProbeOptions {
    ProbeOptions {
        concurrency: g.check_concurrency.get(),
        deadline: Some(match g.check_deadline {
            Some(deadline) => to_std(deadline),
            None => default_deadline(configured_timeouts(g, checks)),
        }),
        call_webhooks: true,
    }
}

/// The checks' clients from the `--prometheus-*`, `--http-check*` and `--webhook*` flags (and the
/// `--http-check-config` and `--webhook-config` files).
///
/// # Errors
/// A bad URL, CA file, TLS file or file of endpoints, a check name given twice, naming the flag (and
/// the entry, the field and the path).
pub fn checks(g: &CheckArgs) -> Result<Checks> {
    let answerers = match &g.webhook.answerer_config {
        Some(path) => Some(Answerers::new(
            answerer_file::read(path).map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };
    let checks = Checks {
        prometheus: prometheus(&g.prometheus)?,
        http: http_checks(g)?,
        webhooks: webhooks(g)?,
        answerers,
    };
    if let Some(name) = both_kinds(&checks) {
        anyhow::bail!(
            "--answerer-config: {name:?} is also a --webhook name; expected each name once (a set's pre-update-webhook names one of them)"
        );
    }
    Ok(checks)
}

/// A name configured both as a webhook and as a built-in answerer, if any.
fn both_kinds(checks: &Checks) -> Option<String> {
    let answerers = checks.answerers.as_ref()?;
    checks
        .webhooks
        .iter()
        .flat_map(Webhooks::names)
        .find(|n| answerers.get(n).is_some())
}

/// The HTTP checks of the `--http-check` flags and the `--http-check-config` file; `None` without any.
fn http_checks(g: &CheckArgs) -> Result<Option<HttpChecks>> {
    let h = &g.http;
    let file = match &h.http_check_config {
        Some(path) => http_check_file::read(path).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let all = http_check_file::merge(&h.http_check, file).map_err(anyhow::Error::msg)?;
    if all.is_empty() {
        return Ok(None);
    }
    let default = to_std(h.http_check_timeout);
    let endpoints: Vec<HttpEndpoint> = all
        .into_iter()
        .map(|e| HttpEndpoint {
            timeout: e.timeout.unwrap_or(default),
            name: e.name,
            url: e.url,
            access: e.access,
        })
        .collect();
    Ok(Some(
        HttpChecks::with_endpoints(&endpoints).map_err(anyhow::Error::msg)?,
    ))
}

/// The webhooks of the `--webhook` flags and the `--webhook-config` file; `None` without any.
fn webhooks(g: &CheckArgs) -> Result<Option<Webhooks>> {
    let w = &g.webhook;
    let file = match &w.webhook_config {
        Some(path) => webhook_file::read(path).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let mut serves =
        webhook_file::flag_serves(&w.webhook_serves, &w.webhook).map_err(anyhow::Error::msg)?;
    let mut entries = Vec::with_capacity(file.len());
    for (endpoint, s) in file {
        serves.push((endpoint.name.clone(), s));
        entries.push(endpoint);
    }
    let all = webhook_file::merge(&w.webhook, entries).map_err(anyhow::Error::msg)?;
    if all.is_empty() {
        return Ok(None);
    }
    let default = to_std(w.webhook_timeout);
    let mut endpoints: Vec<Endpoint> = Vec::with_capacity(all.len());
    for e in all {
        let Some(i) = serves.iter().position(|(n, _)| *n == e.name) else {
            anyhow::bail!(
                "--webhook {}=…: no --webhook-serves {}=NAMESPACE/SET,…; expected the sets that may name it (a webhook hears only the sets it names: docs/approvals.md, \"Which sets a webhook serves\")",
                e.name,
                e.name
            );
        };
        endpoints.push(Endpoint {
            timeout: e.timeout.unwrap_or(default),
            serves: Some(serves.swap_remove(i).1),
            name: e.name,
            url: e.url,
            access: e.access,
        });
    }
    let ca = w.webhook_ca_file.as_deref();
    Ok(Some(
        Webhooks::new(&endpoints, ca).map_err(anyhow::Error::msg)?,
    ))
}

/// What a pass needs of the check flags: the reads' bound and deadline ([`probe_options`]; no webhook
/// call with `--dry-run`) and the endpoints configured (a set naming another is `InvalidAnnotation`).
pub fn check_options(g: &CheckArgs, checks: &Checks, opts: &mut PassOptions) {
    opts.probes = probe_options(g, checks);
    opts.probes.call_webhooks = !opts.dry_run;
    opts.gates.served = checks.served();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn deadline(g: &CheckArgs) -> Option<Duration> {
        probe_options(g, &checks(g).expect("clients")).deadline
    }

    /// Only the kinds configured stretch the default deadline: Prometheus at 5 s and nothing else is a
    /// 10 s deadline, whatever `--webhook-timeout` and `--http-check-timeout` say.
    #[test]
    fn only_the_configured_checks_set_the_default_deadline() {
        let secs = |s| Some(Duration::from_secs(s));
        let mut g = CheckArgs::default();
        g.prometheus.prometheus_timeout = jiff::SignedDuration::from_secs(5);
        g.webhook.webhook_timeout = jiff::SignedDuration::from_secs(30);
        g.http.http_check_timeout = jiff::SignedDuration::from_secs(15);
        assert_eq!(deadline(&g), secs(20), "nothing configured: twice 10 s");
        g.prometheus.prometheus_url = Some("http://prometheus:9090".into());
        assert_eq!(deadline(&g), secs(10), "Prometheus alone: twice its 5 s");
        g.http.http_check = vec![("es".into(), "http://es:9200/_cluster/health".into())];
        assert_eq!(
            deadline(&g),
            secs(30),
            "with the HTTP check: twice its 15 s"
        );
        g.webhook.webhook = vec![("db".into(), "http://approver.db:8080/approve".into())];
        g.webhook.webhook_serves = vec![("db".into(), "db/*".into())];
        assert_eq!(deadline(&g), secs(60), "with a webhook: twice its 30 s");
        g.check_deadline = Some(jiff::SignedDuration::from_secs(7));
        assert_eq!(deadline(&g), secs(7), "a given --check-deadline stands");
    }

    /// A `--webhook` flag without `--webhook-serves` is refused at start, naming the flag to add; with
    /// it, the set outside is `InvalidAnnotation` (the gates' `Served::refused`).
    #[test]
    fn a_webhook_flag_must_say_which_sets_it_serves() {
        let mut g = CheckArgs::default();
        g.webhook.webhook = vec![("db".into(), "http://approver.db:8080/approve".into())];
        let e = checks(&g).expect_err("unbound").to_string();
        assert!(
            e.contains("--webhook db=…: no --webhook-serves db=NAMESPACE/SET"),
            "{e}"
        );
        g.webhook.webhook_serves = vec![("db".into(), "db/postgres".into())];
        let served = checks(&g).expect("bound").served();
        let named = crate::config::Named {
            annotation: "safe-rollout.dev/pre-update-webhook",
            flag: crate::config::webhook::FLAG,
            name: Some("db"),
        };
        assert_eq!(served.refused(&named, "db", "postgres"), None);
        assert!(served.refused(&named, "tenant", "postgres").is_some());
    }
}
