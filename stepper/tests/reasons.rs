//! The gate reasons and the gate list: every `Reason`'s name round-trips, `GATES` runs in
//! `Reason::ALL`'s order and marks the gates that read pods, `reads_list` names the list gates.
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
        Reason::Paused,
        Reason::InvalidAnnotation,
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
