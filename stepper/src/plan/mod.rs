//! Layer `plan` (pure): from one snapshot and the gates' verdicts to the writes and Events of a pass,
//! as plain data — the planner, the figures reported per set, the status annotations (and
//! `degraded-reason`), the JSON Patches (the step, `pause`/`resume`, `release`, a rollback), the
//! Events' wording and one set's status as `status` shows it.
//!
//! May import `rollout`, `gates`, `config`, `model` (ARCHITECTURE.md, "Layers"); never I/O.

pub mod approval_events;
pub mod approval_pending;
pub mod canary;
pub mod degraded;
pub mod effects;
pub mod events;
pub mod fields;
pub mod figures;
mod needs_pods;
pub mod patch;
pub mod pause;
pub mod planner;
pub mod rbac;
pub mod rejected;
pub mod release;
pub mod rollback;
pub mod set_plan;
pub mod set_status;
pub mod set_write;
pub mod snapshot;
pub mod status_annotations;

pub use figures::{Figures, Revisions};
pub use needs_pods::needs_pods;
pub use planner::{Planner, ProbeMap, Snapshot, needs, parse_configs, plan, plan_with};
pub use set_plan::SetPlan;
