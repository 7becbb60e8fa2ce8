//! Layer `rollout` (pure): what state a set's rollout is in, read from the objects — when it is
//! really complete ([`complete`], what `wait` waits for) and its health as GitOps tools should report
//! it ([`health`], what `status` shows and `deploy/gitops/` renders for Argo CD and Flux).
//!
//! May import `gates`, `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod complete;
pub mod health;
