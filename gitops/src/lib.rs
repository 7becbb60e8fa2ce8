//! Runs `deploy/gitops/` — the rollout health of a StatefulSet as Argo CD Lua and Flux CEL — in real
//! interpreters, the way those tools run it, so the tests can compare both with sts-stepper's own
//! verdict (`sts_stepper::rollout::health`) on every fixture and simulated frame:
//! [`argocd`] (Lua 5.1, Argo CD's argocd-cm sandbox), [`flux`] (cel-rust, kustomize-controller's
//! evaluation order) and [`manifests`] (the shipped files).
pub mod argocd;
pub mod flux;
pub mod manifests;
