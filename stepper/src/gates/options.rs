//! The stepper settings that change what the gates do ([`GateOptions`], from the flags).

use std::sync::Arc;

use crate::config::{Keys, Served, StepperScope};

/// Stepper settings that change what the gates do (from the flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateOptions {
    /// The annotation keys under `--annotation-prefix` (default `safe-rollout.dev`), built once at the
    /// border (`commands::Context`); nothing below it sees the prefix.
    pub keys: Arc<Keys>,
    /// Whether the `PdbBlocked` gate runs (default true; `--no-pdb-gate` turns it off).
    pub pdb_gate: bool,
    /// `--max-steps-per-pass`: steps one pass takes over all sets in scope (`None`: unlimited).
    pub max_steps_per_pass: Option<u32>,
    /// `--max-steps-per-minute`: steps over all sets in scope in any 60 seconds, counted from their
    /// `<prefix>/recent-steps` / `<prefix>/last-partition-update` stamps (`None`: unlimited).
    pub max_steps_per_minute: Option<u32>,
    /// `--recover-stuck-pods`: stuck-pod recovery deletes the pods [`crate::gates::recovery::decide`] says to (its
    /// sets' pods are read too); off, a stuck pod past its recovery time is only recorded
    /// (`degraded-reason: StuckPod: …`).
    pub recover_stuck_pods: bool,
    /// The endpoints configured on the stepper (`--http-check`, `--webhook`, the files' entries; from
    /// [`crate::cluster::Checks::served`]): a set's `http-check` or `pre-update-webhook` naming another is
    /// `InvalidAnnotation` ([`Served::unknown`]). Empty where the flags are not known (`wait`, the
    /// simulation, the library's default): a name is then not judged, and an endpoint the stepper cannot
    /// reach is an error of its check (held, fail closed).
    pub served: Served,
    /// The stepper's scope (`--selector`, the namespaces every scope excludes): a guarded set outside
    /// it is held `OutOfScope`. Judged on each set listed ([`StepperScope::excludes`]); the default
    /// covers every namespace but the excluded ones.
    pub scope: StepperScope,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            keys: Arc::new(Keys::default()),
            pdb_gate: true,
            max_steps_per_pass: None,
            max_steps_per_minute: None,
            recover_stuck_pods: false,
            served: Served::default(),
            scope: StepperScope::default(),
        }
    }
}
