//! The pure gates' verdict for the tests of `gates::decide`: the verdicts a test expects ([`step`],
//! [`blocked`]), the default [`GateOptions`], and the decision over a set, its pods and PDBs
//! ([`decide_with`], [`decide_one`] at [`now`](super::now)).
#![allow(dead_code)] // each test crate uses a subset

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use sts_stepper::gates::{GateOptions, Verdict, decide};
use sts_stepper::model::pods::{self, PdbView};
use sts_stepper::model::reasons::{Blocked, Reason};

use super::now;

/// The default gate options.
pub fn opts() -> GateOptions {
    GateOptions::default()
}

/// `gates::decide` over `set`, its `pods` and `pdbs`, with `opts` at `now`.
pub fn decide_with(
    set: &StatefulSet,
    pods: &[Pod],
    pdbs: &[PodDisruptionBudget],
    opts: &GateOptions,
    now: Timestamp,
) -> Verdict {
    let by_ordinal = pods::pods_by_ordinal(set, pods.iter());
    let views: Vec<PdbView<'_>> = pdbs.iter().map(PdbView::new).collect();
    decide(set, &by_ordinal, &views, opts, now)
}

/// [`decide_with`] without PDBs, with the default options at [`now`](super::now).
pub fn decide_one(set: &StatefulSet, pods: &[Pod]) -> Verdict {
    decide_with(set, pods, &[], &opts(), now())
}

/// The step `from` → `to`, pinned to the update revision `rev`.
pub fn step(from: i32, to: i32, rev: &str) -> Verdict {
    Verdict::Step {
        from,
        to,
        update_revision: rev.into(),
    }
}

/// Blocked by `reason`, with `detail`.
pub fn blocked(reason: Reason, detail: &str) -> Verdict {
    Verdict::Blocked(Blocked::new(reason, detail))
}
