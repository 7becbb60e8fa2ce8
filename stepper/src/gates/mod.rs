//! The gates: pure checks over one StatefulSet, in docs/design.md's order, from one list
//! ([`table::GATES`]).
//!
//! Each gate is a `fn(&GateInput) -> Result<(), Blocked>` named after the [`Reason`](crate::model::reasons::Reason) it returns, and
//! lives in the module of its family with what it reads and what it asks the pass to do: [`set`]
//! (`Paused`, `InvalidAnnotation`, `NotObserved`, `Settling`), [`pods`] (`PodNotReady`,
//! `StepInProgress`, `PdbBlocked`), [`fleet`] (`GroupBusy`, `OwnerNotHealthy`), [`check`]
//! (`PrometheusCheck`, `HttpCheck`), [`approval`] (`PrimaryNotMoved`, `ApprovalPending`); the fleet's
//! step budget (`Throttled`) is [`throttle`], over all sets. One [`GateInput`] carries everything a
//! gate may read; [`evaluate_input`] skips unguarded and idle sets, runs [`GATES`] in order and returns
//! the [`Evaluation`], whose writes on the set are typed [`Effect`]s. The canary plan is [`pause_points`] (its effects `canary`), stuck-pod
//! recovery's decision [`recovery`], the return of pods a re-apply left on a failed revision
//! [`returning`]. Nothing here reads a clock or talks to the API server.
//!
//! This file only names the modules and what they offer; no module of `gates` imports it.
//!
//! Layer `gates` (pure): may import `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod approval;
mod canary;
pub mod check;
mod effect;
mod evaluate;
pub mod failure;
pub mod fleet;
mod input;
mod next_step;
mod options;
pub mod pause_points;
pub mod pods;
mod probes;
pub mod recovery;
mod return_pod;
pub mod returning;
pub mod rollback;
pub mod scope;
pub mod set;
mod table;
pub mod throttle;
mod verdict;

pub use approval::{approval_pending, primary_not_moved};
pub use effect::{DegradedOwner, Effect, StateKey};
pub use evaluate::{UNMARKED, before_gates, decide, evaluate, evaluate_input, withdraws_requests};
pub use fleet::{check_group, check_owner, group_busy, group_holder, owner_not_healthy};
pub use input::{FleetView, Gate, GateInput};
pub use next_step::{NextStep, StepError, next_step, step_target};
pub use options::GateOptions;
pub use pods::{
    POD_STATE, check_pdbs, check_pods_ready, check_step_done, pdb_blocked, pod_not_ready,
    pods_below_partition_ready, replaced_while_down, step_in_progress,
};
pub use probes::{CheckAnswer, CheckRead, Need, OwnerProbe, Probes, may_need_reads};
pub use set::{check_observed, invalid_annotation, not_observed, paused, settling};
pub use table::{GATES, GateEntry, Reads, help, list_gate_block, readers, reads_list};
pub use verdict::{Evaluation, Idle, Verdict};
