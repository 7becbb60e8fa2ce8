//! The gates' verdict on the four real fixture moments of a rollout (`fixtures/api/`): the step of each,
//! the not-ready pod, the PDB without a disruption left, when the rollout is complete, and
//! `minReadySeconds` against a recorded pod's Ready time.

use crate::common::verdicts::*;
use crate::common::*;
use std::sync::Arc;

use jiff::Timestamp;
use rstest::rstest;
use sts_stepper::gates::{self, GateOptions, Idle, Verdict};
use sts_stepper::model::pods::{self, PdbView};
use sts_stepper::model::reasons::Reason;
use sts_stepper::rollout::complete::rollout_complete;

fn moment_verdict(name: &str, opts: &GateOptions, now: Timestamp) -> Verdict {
    let snap = moment(name);
    assert_eq!(snap.statefulsets.len(), 1, "{name}: one StatefulSet");
    decide_with(&snap.statefulsets[0], &snap.pods, &snap.pdbs, opts, now)
}

// ---- the four real moments ----------------------------------------------------------------------

#[rstest]
#[case::staged("1-staged", step(5, 4, REV_NEW))]
#[case::stepped_4("2-stepped-4", step(4, 3, REV_NEW))]
#[case::web1_notready(
    "3-web1-notready",
    blocked(Reason::PodNotReady, "web-1: ContainersNotReady")
)]
#[case::complete("4-complete", Verdict::Idle(Idle::UpToDate))]
fn fixture_moments(#[case] name: &str, #[case] want: Verdict) {
    assert_eq!(moment_verdict(name, &opts(), now()), want);
}

#[test]
fn fixture_3_pdb_has_no_disruption_left() {
    let snap = moment("3-web1-notready");
    let set = &snap.statefulsets[0];
    let by_ordinal = pods::pods_by_ordinal(set, snap.pods.iter());
    assert_eq!(by_ordinal.len(), 5);
    let views: Vec<_> = snap.pdbs.iter().map(PdbView::new).collect();
    let err = gates::check_pdbs(set, &by_ordinal, &views).unwrap_err();
    assert_eq!(err.reason, Reason::PdbBlocked);
    assert_eq!(
        err.detail,
        "PodDisruptionBudget web: disruptionsAllowed 0 (currentHealthy 4, desiredHealthy 4)"
    );
    // Moment 2 has one disruption left: the PDB gate passes.
    let snap2 = moment("2-stepped-4");
    let views2: Vec<_> = snap2.pdbs.iter().map(PdbView::new).collect();
    let by2 = pods::pods_by_ordinal(&snap2.statefulsets[0], snap2.pods.iter());
    assert_eq!(
        gates::check_pdbs(&snap2.statefulsets[0], &by2, &views2),
        Ok(())
    );
}

#[test]
fn fixture_moments_rollout_complete_only_at_4() {
    for name in MOMENTS {
        let snap = moment(name);
        let set = &snap.statefulsets[0];
        let by = pods::pods_by_ordinal(set, snap.pods.iter());
        let views: Vec<_> = snap.pdbs.iter().map(PdbView::new).collect();
        let got = rollout_complete(set, &by, &views, &opts(), now());
        match name {
            "4-complete" => assert_eq!(got, Ok(())),
            "3-web1-notready" => assert_eq!(got.unwrap_err().reason, Reason::PodNotReady),
            _ => assert_eq!(got.unwrap_err().reason, Reason::StepInProgress, "{name}"),
        }
    }
}

#[rstest]
// web-4 became Ready at 01:10:43; minReadySeconds 30 makes it available at 01:11:13 exactly.
#[case("2026-11-23T01:11:12Z", false)]
#[case("2026-11-23T01:11:13Z", true)]
fn fixture_2_min_ready_seconds_edge(#[case] at_time: &str, #[case] steps: bool) {
    let mut snap = moment("2-stepped-4");
    Arc::make_mut(&mut snap.statefulsets[0])
        .spec
        .as_mut()
        .expect("spec")
        .min_ready_seconds = Some(30);
    let got = decide_with(
        &snap.statefulsets[0],
        &snap.pods,
        &snap.pdbs,
        &opts(),
        at(at_time),
    );
    if steps {
        assert_eq!(got, step(4, 3, REV_NEW));
    } else {
        assert_eq!(
            got,
            blocked(
                Reason::PodNotReady,
                "web-4: not available yet: Ready for 29s of minReadySeconds 30"
            )
        );
    }
}
