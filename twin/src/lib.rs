//! The native twin's evaluator: runs `deploy/native/`'s MutatingAdmissionPolicy CEL on an admission request
//! as the API server would, so tests can compare the resulting object with policy.wasm's
//! (`tests/twin_fixtures.rs`, `tests/twin_properties.rs`), and checks its expressions against the CEL the
//! API server accepts (`tests/cel_subset.rs`).
pub mod defaulting;
pub mod evaluate;
pub mod kubernetes_cel;
pub mod policy;
pub mod subset;
