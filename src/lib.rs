//! sts-safe-rollout: a Kubewarden policy that stages StatefulSet template changes behind the
//! rolling-update partition, plus the pieces the stepper shares with it.

pub mod annotations;
pub mod statefulset;
