//! What a local evaluation of the gates (`status --local`, `step` from a workstation) cannot judge as the
//! in-cluster stepper does: the checks a set asks for whose flags the machine running the command lacks.
//! The gates that read only the Kubernetes API (pods, PDBs, the set's annotations, the owner) are judged
//! the same anywhere with the same RBAC; a check is judged only with the flag that names its endpoint. Pure.

use crate::config::{Answerer, SetConfig};

/// The check flags of the machine that evaluates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalChecks {
    /// `--prometheus-url` is set.
    pub prometheus: bool,
    /// The names of its `--http-check NAME=URL` flags.
    pub http_checks: Vec<String>,
    /// The names of its approval webhooks (`--webhook NAME=URL`, `--webhook-config`).
    pub webhooks: Vec<String>,
}

/// The flags `local` lacks to judge `config`'s checks as a stepper configured for them would, each as
/// the flag to add: `--prometheus-url URL` (for `prometheus-query`), `--http-check NAME=URL`,
/// `--webhook NAME=URL` (or a `--webhook-config` entry). Empty: the local view judges every gate.
pub fn missing_flags(config: &SetConfig, local: &LocalChecks) -> Vec<String> {
    let mut missing = Vec::new();
    if config.prometheus.is_some() && !local.prometheus {
        missing.push("--prometheus-url URL".to_string());
    }
    if let Some(check) = &config.http_check
        && !local.http_checks.contains(&check.name)
    {
        missing.push(format!("--http-check {}=URL", check.name));
    }
    if let Some(Answerer::Webhook(webhook)) = &config.answerer
        && !local.webhooks.contains(&webhook.name)
    {
        missing.push(format!("--webhook {}=URL", webhook.name));
    }
    missing
}

/// What `step` without `--force`, run from a workstation, says before it judges: the gates it judges as
/// the in-cluster stepper does (those that read only the Kubernetes API, with this machine's RBAC), the
/// checks it cannot judge for want of `missing` flags (their gates hold the step here), and what the
/// in-cluster stepper recorded (`recorded`: [`crate::rollout::record::Record::summary`]).
pub fn step_note(missing: &[String], recorded: &str) -> String {
    let judged = "step judges the gates here, with this machine's flags and RBAC: pods, \
                  PodDisruptionBudgets, pauses, the owner and the set's annotations as the in-cluster \
                  stepper does";
    let cannot = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "; not the checks it has no flag for, whose gates hold the step here: without {}",
            missing.join(", ")
        )
    };
    format!("{judged}{cannot}. The in-cluster stepper recorded: {recorded}.")
}
