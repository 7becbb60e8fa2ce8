//! Hosts a Kubewarden waPC policy the way Kubewarden's policy-evaluator does (`wapc` +
//! `wasmtime-provider`), so a policy can be run like `kwctl run` where `kwctl` is not installed.
//!
//! [`admission`] turns an AdmissionReview file into the payload a policy receives and the guest's reply
//! into the AdmissionResponse `kwctl run` prints; [`host`] loads and calls the module, compiled once and
//! then read from wasmtime's cache ([`compile_cache`]); [`registry`] pulls and pushes `registry://`
//! policies as Kubewarden's policy-fetcher does.

pub mod admission;
pub mod compile_cache;
pub mod host;
pub mod registry;
