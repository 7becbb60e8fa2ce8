//! Hosts a Kubewarden waPC policy the way Kubewarden's policy-evaluator does (`wapc` +
//! `wasmtime-provider`), so a policy can be run like `kwctl run` where `kwctl` is not installed.
//!
//! [`admission`] turns an AdmissionReview file into the payload a policy receives and the guest's reply
//! into the AdmissionResponse `kwctl run` prints; [`host`] loads and calls the module, compiled once and
//! then read from wasmtime's cache ([`compile_cache`]); [`registry`] pulls and pushes `registry://`
//! policies as Kubewarden's policy-fetcher does; [`signing`] and [`verify`] sign them and check their
//! cosign signatures ([`verification_config`]: Kubewarden's verification config) with the sigstore crate;
//! [`attach`] publishes an SBOM beside them as `cosign attach sbom` does. Those four need the default
//! feature `signing`. [`yaml`] reads settings and verification configs as `kwctl` reads them.

pub mod admission;
#[cfg(feature = "signing")]
pub mod attach;
pub mod compile_cache;
pub mod host;
pub mod registry;
#[cfg(feature = "signing")]
pub mod signing;
#[cfg(feature = "signing")]
pub mod sigstore_client;
#[cfg(feature = "signing")]
pub mod verification_config;
#[cfg(feature = "signing")]
pub mod verify;
pub mod yaml;
