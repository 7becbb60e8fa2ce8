//! Layer `serve` (I/O): what a running stepper shows — Prometheus metrics set from each pass's report
//! ([`metrics`]) and `watch`'s HTTP endpoints `/metrics` and `/healthz` ([`server`]).
//!
//! May import `pass`, `leader`, `cluster`, `plan`, `rollout`, `gates`, `config`, `model`
//! (ARCHITECTURE.md, "Layers").

pub mod metrics;
pub mod server;
