//! The settings of a pass ([`PassOptions`]) and which pods it reads ([`PodReads`]).

use std::time::Duration;

use crate::gates::GateOptions;
use crate::pass::probes::ProbeOptions;

/// Settings of a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassOptions {
    /// Gate settings (annotation prefix, PDB gate, step budget, stuck-pod recovery).
    pub gates: GateOptions,
    /// Decide and report, write nothing (`--dry-run`).
    pub dry_run: bool,
    /// Which pods and PDBs are read after the StatefulSet list ([`PodReads`]).
    pub pod_reads: PodReads,
    /// `--max-decision-age` (default 1 s): a step decided on pods read longer ago is decided again on
    /// that set's freshly read pods before it is written.
    pub max_decision_age: Duration,
    /// How the I/O gates' reads run: `--check-concurrency`, `--check-deadline`.
    pub probes: ProbeOptions,
}

impl Default for PassOptions {
    fn default() -> Self {
        PassOptions {
            gates: GateOptions::default(),
            dry_run: false,
            pod_reads: PodReads::default(),
            max_decision_age: DEFAULT_MAX_DECISION_AGE,
            probes: ProbeOptions::default(),
        }
    }
}

/// The default of `--max-decision-age`: 1 s (docs/design.md, "A step is decided on fresh pods").
pub const DEFAULT_MAX_DECISION_AGE: Duration = Duration::from_secs(1);

/// Which pods (and PDBs) a pass reads after the StatefulSet list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PodReads {
    /// The candidates' own ([`crate::plan::Planner::candidates`]): per candidate one LIST of its namespace with its
    /// [`crate::model::set::pod_selector`], per candidate namespace one LIST of PDBs (`once`, `watch`).
    #[default]
    Candidates,
    /// The pods of the set `namespace/name` only, whatever its gates say, and the PDBs of its
    /// namespace (`status`, `step` and `wait` on one set).
    Set {
        /// `metadata.namespace`.
        namespace: String,
        /// `metadata.name`.
        name: String,
    },
    /// Every pod and PDB in scope, one LIST each (`status` over the whole scope).
    Scope,
}
