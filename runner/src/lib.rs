//! Hosts a Kubewarden waPC policy the way Kubewarden's policy-evaluator does (`wapc` +
//! `wasmtime-provider`), so a policy can be run like `kwctl run` where `kwctl` is not installed.
//!
//! [`admission`] turns an AdmissionReview file into the payload a policy receives and the guest's reply
//! into the AdmissionResponse `kwctl run` prints; [`host`] loads and calls the module.

pub mod admission;
pub mod host;
