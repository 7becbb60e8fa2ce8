//! What a local evaluation of the gates (`status --local`, `step` from a workstation) cannot judge as the
//! in-cluster stepper does: the checks a set asks for whose flags the machine running the command lacks.
//! The gates that read only the Kubernetes API (pods, PDBs, the set's annotations, the owner) are judged
//! the same anywhere with the same RBAC; a check is judged only with the flag that names its endpoint. Pure.

use crate::config::{Served, SetConfig};

/// The flags `local` (the endpoints of the machine that evaluates: [`crate::cluster::Checks::served`])
/// lacks to judge `config`'s checks as a stepper configured for them would, each as the flag to add:
/// `--prometheus-url URL` (for `prometheus-query`), `--http-check NAME=URL`, `--webhook NAME=URL` (or a
/// `--webhook-config` entry): [`Served::missing`]. Empty: the local view judges every gate.
pub fn missing_flags(config: &SetConfig, local: &Served) -> Vec<String> {
    config
        .named_endpoints()
        .filter_map(|named| local.missing(&named))
        .collect()
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
