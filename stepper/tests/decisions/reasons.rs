//! The gate reasons and the gate list: every `Reason`'s name round-trips and near misses do not parse,
//! `Reason::ALL` holds the fleet and probe gates in gate order, which reasons are expected waits,
//! `GATES` runs in `Reason::ALL`'s order and marks the gates that read pods, `reads_list` names the
//! list gates.
use rstest::rstest;
use sts_stepper::gates;
use sts_stepper::model::reasons::Reason;

#[test]
fn reason_names_round_trip() {
    for r in Reason::ALL {
        assert_eq!(Reason::parse(r.as_str()), Some(r));
        assert_eq!(r.to_string(), r.as_str());
    }
    assert_eq!(Reason::parse("podnotready"), None);
}

#[test]
fn the_gate_list_runs_in_reason_order_and_marks_the_pod_gates() {
    let order: Vec<Reason> = gates::GATES.iter().map(|g| g.reason).collect();
    let per_set: Vec<Reason> = Reason::ALL
        .into_iter()
        .filter(|r| !matches!(r, Reason::Throttled | Reason::ApiError))
        .collect();
    assert_eq!(
        order, per_set,
        "GATES and Reason::ALL disagree on the order"
    );
    let pod_gates: Vec<Reason> = gates::GATES
        .iter()
        .filter(|g| g.reads == gates::Reads::Pods)
        .map(|g| g.reason)
        .collect();
    assert_eq!(
        pod_gates,
        [
            Reason::PodNotReady,
            Reason::StepInProgress,
            Reason::PdbBlocked,
            Reason::PrimaryNotMoved,
            Reason::ApprovalPending
        ]
    );
}

/// `gates::reads_list` names exactly the gates `list_gate_block` runs (the planner reuses a block of
/// these instead of running the list gates again for a set whose pods were not read).
#[test]
fn reads_list_is_true_for_the_gates_of_the_list_only() {
    let list = [
        Reason::OutOfScope,
        Reason::Paused,
        Reason::InvalidAnnotation,
        Reason::FailedRevision,
        Reason::NotObserved,
        Reason::Settling,
        Reason::GroupBusy,
    ];
    for reason in Reason::ALL {
        assert_eq!(
            gates::reads_list(reason),
            list.contains(&reason),
            "{reason:?}"
        );
    }
}

// ---- Reason -----------------------------------------------------------------------------------------

#[test]
fn reason_all_contains_the_new_gates_in_gate_order() {
    let names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    let pos = |n: &str| {
        names
            .iter()
            .position(|x| *x == n)
            .unwrap_or_else(|| panic!("{n} missing from Reason::ALL"))
    };
    let new = [
        "GroupBusy",
        "OwnerNotHealthy",
        "PrometheusCheck",
        "Throttled",
    ];
    let idx: Vec<usize> = new.iter().map(|n| pos(n)).collect();
    assert!(idx.windows(2).all(|w| w[0] < w[1]), "{names:?}");
    assert!(
        pos("PdbBlocked") < idx[0] && idx[3] < pos("ApiError"),
        "{names:?}"
    );
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), Reason::ALL.len());
}

#[rstest]
fn reason_parse_round_trips(
    #[values(
        Reason::Paused,
        Reason::InvalidAnnotation,
        Reason::NotObserved,
        Reason::PodNotReady,
        Reason::StepInProgress,
        Reason::Settling,
        Reason::PdbBlocked,
        Reason::GroupBusy,
        Reason::OwnerNotHealthy,
        Reason::PrometheusCheck,
        Reason::Throttled,
        Reason::ApiError
    )]
    r: Reason,
) {
    assert!(Reason::ALL.contains(&r));
    assert_eq!(Reason::parse(r.as_str()), Some(r));
    assert_eq!(r.to_string(), r.as_str());
}

#[rstest]
#[case("groupbusy")]
#[case("Group Busy")]
#[case("")]
#[case("Throttled ")]
fn reason_parse_rejects_near_misses(#[case] name: &str) {
    assert_eq!(Reason::parse(name), None);
}

#[rstest]
#[case(Reason::GroupBusy, true)]
#[case(Reason::Throttled, true)]
#[case(Reason::OwnerNotHealthy, false)]
#[case(Reason::PrometheusCheck, false)]
fn new_reasons_expected_wait(#[case] r: Reason, #[case] want: bool) {
    assert_eq!(r.is_expected_wait(), want);
}
