//! Layer `rollout` (pure): what state a set's rollout is in, read from the objects — when it is
//! really complete ([`complete`], what `wait` waits for), its health as GitOps tools should report
//! it ([`health`], what `status` shows and `deploy/gitops/` renders for Argo CD and Flux), and where it
//! stands against its canary plan ([`pause_plan`], what `status` prints), and what the policy would do
//! on its next template change ([`preview`], what `preview` prints); what the in-cluster stepper recorded
//! on it and whether that record is current ([`record`], what `status` shows first), and what a local
//! evaluation cannot judge ([`local_view`]); whether an update is still staged behind its partition
//! ([`staged`], what `wait` without a name waits to see none of, and what `release` refuses unforced).
//!
//! May import `gates`, `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod complete;
pub mod health;
pub mod local_view;
pub mod pause_plan;
pub mod preview;
pub mod record;
pub mod staged;
