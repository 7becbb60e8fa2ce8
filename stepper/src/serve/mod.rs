//! Layer `serve` (I/O): what a running stepper shows — Prometheus metrics set from each pass's report
//! ([`metrics`], their label sets in `labels`) and `watch`'s HTTP endpoints `/metrics` and `/healthz` ([`server`]).
//!
//! May import `pass`, `leader`, `cluster`, `plan`, `rollout`, `gates`, `config`, `model`
//! (ARCHITECTURE.md, "Layers").

mod labels;
pub mod metrics;
pub mod server;
