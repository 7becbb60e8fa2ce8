//! Layer `pass` (I/O): one pass through a [`crate::cluster::Cluster`] — what it reads and when
//! ([`reads`]), the fresh re-read before a step ([`fresh`]), the recovery phase ([`recovery`]), a
//! refused write made visible on the set ([`rejected`]), the I/O gates' reads run concurrently
//! under a deadline ([`probes`]), what a pass reports ([`report`]), and the
//! pass itself ([`run`]: snapshot → the I/O gates' reads → plan → writes).
//!
//! May import `cluster`, `plan`, `rollout`, `gates`, `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod fresh;
pub mod options;
mod outcome;
pub mod probes;
pub mod reads;
pub mod recovery;
pub mod rejected;
pub mod report;
pub mod returning;
pub mod rollback;
pub mod run;

pub use options::{DEFAULT_MAX_DECISION_AGE, PassOptions, PodReads};
pub use report::{Outcome, PassReport, SetReport};
pub use run::{
    Decided, decide, execute, gather_probes, plan_pass, run_pass, run_pass_with, unwritten,
    verdict_outcome, write,
};
