//! The rules sts-safe-rollout's admission policy and its stepper share: every annotation name
//! ([`annotations`]) and the policy's decision table over a StatefulSet's own JSON ([`decision`]), with
//! the JSON view it reads ([`view`]) and the one shape of its rejection messages ([`field_error`],
//! typed as [`Error`]); and
//! the policy's pure border and answer around the table: the validation payload read ([`request`]) and
//! answered ([`response`]).
//!
//! Pure functions over `serde_json::Value`: no Kubewarden SDK, no k8s-openapi, no I/O. The policy crate
//! (`sts-safe-rollout`) wraps it in waPC entry points and re-exports these modules unchanged; the stepper
//! (`sts-stepper`) and its simulated API server depend on this crate alone, so their build compiles
//! neither the SDK nor a second k8s-openapi. `request` and `response` live here rather than in the policy
//! crate so that the JSON code they share with `decision` (`BTreeMap<String, Value>` edits, decoding) is
//! instantiated in one crate: a release build shares no generic instantiation across crates, and split
//! they cost policy.wasm 13 KB of duplicate code (BENCHMARKS.md, "policy.wasm size").

pub mod annotations;
pub mod decision;
mod declared;
mod edit;
pub mod error;
pub mod field_error;
pub mod request;
pub mod response;
mod spec_compare;
pub mod view;

pub use error::Error;
