//! The `OwnerNotHealthy` gate's check of the owner it read, as a pure function (`check_owner`): the
//! `<prefix>/owner-condition` among the owner's `metav1.Condition`s (its status, reason and message,
//! its `observedGeneration` or the status', types that do not count), a replaced, missing or unreadable
//! owner, and a MOCO-shaped MySQLCluster.

use crate::common::owner::*;
use crate::common::*;
use rstest::rstest;
use serde_json::json;
use sts_stepper::gates::{self, OwnerProbe};
use sts_stepper::model::reasons::{Blocked, Reason};

// ---- OwnerNotHealthy: check_owner ----------------------------------------------------------------

#[rstest]
#[case::true_passes(found(owner_obj(Some(3), None, json!([cond("Healthy", "True", Some(3))]))), None)]
#[case::false_with_reason_and_message(
    found(owner_obj(Some(3), None, json!([cond_why("Healthy", "False", "Degraded", "1 of 3 instances down")]))),
    Some("MySQLCluster db: condition Healthy is False (Degraded: 1 of 3 instances down)")
)]
#[case::unknown_with_reason_only(
    found(owner_obj(Some(3), None, json!([cond_why("Healthy", "Unknown", "Reconciling", "")]))),
    Some("MySQLCluster db: condition Healthy is Unknown (Reconciling)")
)]
#[case::false_without_reason_or_message(
    found(owner_obj(Some(3), None, json!([{"type": "Healthy", "status": "False"}]))),
    Some("MySQLCluster db: condition Healthy is False")
)]
#[case::status_field_missing_is_unknown(
    found(owner_obj(Some(3), None, json!([{"type": "Healthy"}]))),
    Some("MySQLCluster db: condition Healthy is Unknown")
)]
#[case::lowercase_true_is_not_true(
    found(owner_obj(Some(3), None, json!([cond_why("Healthy", "true", "", "")]))),
    Some("MySQLCluster db: condition Healthy is true")
)]
#[case::condition_missing(
    found(owner_obj(Some(3), None, json!([cond("Available", "True", Some(3))]))),
    Some("MySQLCluster db: no condition Healthy in status.conditions")
)]
#[case::no_conditions_at_all(
    found(json!({"metadata": {"name": "db", "uid": OWNER_UID, "generation": 1}})),
    Some("MySQLCluster db: no condition Healthy in status.conditions")
)]
#[case::similar_type_names_do_not_count(
    found(owner_obj(Some(3), None, json!([cond("healthy", "True", None), cond("HealthyX", "True", None)]))),
    Some("MySQLCluster db: no condition Healthy in status.conditions")
)]
#[case::other_types_ignored_when_healthy(
    found(owner_obj(Some(3), None, json!([cond("Available", "False", None), cond("Healthy", "True", Some(3)),
                                          cond("ReconcileSuccess", "Unknown", None)]))),
    None
)]
#[case::other_types_true_do_not_help(
    found(owner_obj(Some(3), None, json!([cond("Available", "True", None),
                                          cond_why("Healthy", "False", "Degraded", "")]))),
    Some("MySQLCluster db: condition Healthy is False (Degraded)")
)]
#[case::condition_generation_stale(
    found(owner_obj(Some(3), None, json!([cond("Healthy", "True", Some(2))]))),
    Some("MySQLCluster db: condition Healthy is True for generation 2, but the owner is at generation 3")
)]
#[case::condition_generation_ahead(
    found(owner_obj(Some(3), None, json!([cond("Healthy", "True", Some(4))]))),
    Some("MySQLCluster db: condition Healthy is True for generation 4, but the owner is at generation 3")
)]
#[case::condition_generation_wins_over_status(
    found(owner_obj(Some(3), Some(2), json!([cond("Healthy", "True", Some(3))]))),
    None
)]
#[case::stale_condition_not_saved_by_status(
    found(owner_obj(Some(3), Some(3), json!([cond("Healthy", "True", Some(2))]))),
    Some("MySQLCluster db: condition Healthy is True for generation 2, but the owner is at generation 3")
)]
#[case::falls_back_to_status_observed_generation(
    found(owner_obj(Some(3), Some(2), json!([cond("Healthy", "True", None)]))),
    Some("MySQLCluster db: condition Healthy is True for generation 2, but the owner is at generation 3")
)]
#[case::status_observed_generation_current(
    found(owner_obj(Some(3), Some(3), json!([cond("Healthy", "True", None)]))),
    None
)]
#[case::neither_observed_generation_passes(
    found(owner_obj(Some(3), None, json!([cond("Healthy", "True", None)]))),
    None
)]
#[case::no_metadata_generation_passes(
    found(owner_obj(None, Some(7), json!([cond("Healthy", "True", Some(5))]))),
    None
)]
#[case::uid_mismatch_replaced_owner(
    found({
        let mut o = owner_obj(Some(1), None, json!([cond("Healthy", "True", Some(1))]));
        o["metadata"]["uid"] = json!("uid-new");
        o
    }),
    Some("MySQLCluster db: uid uid-new is not the owner uid-owner that web references (replaced?)")
)]
#[case::not_found(OwnerProbe::NotFound, Some("MySQLCluster db: not found"))]
#[case::failed_carries_the_cause(
    OwnerProbe::Failed("mysqlclusters.moco.cybozu.com \"db\" is forbidden: User \"system:serviceaccount:ops:sts-stepper\" cannot get resource".into()),
    Some("MySQLCluster db: cannot read: mysqlclusters.moco.cybozu.com \"db\" is forbidden: User \"system:serviceaccount:ops:sts-stepper\" cannot get resource")
)]
#[case::moco_healthy(found(moco_cluster("True", "Healthy", "")), None)]
#[case::moco_degraded(
    found(moco_cluster("False", "Degraded", "primary mysql-db-0 has 1 of 2 replicas")),
    Some(
        "MySQLCluster db: condition Healthy is False (Degraded: primary mysql-db-0 has 1 of 2 replicas)"
    )
)]
fn check_owner_edges(#[case] probe: OwnerProbe, #[case] want: Option<&str>) {
    let s = set_from(owned_set_json("Healthy"));
    let got = gates::check_owner(&s, "Healthy", &owner_ref(), &probe);
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::OwnerNotHealthy, d))),
    }
}

#[rstest]
#[case::initialized("Initialized", None)]
#[case::available("Available", None)]
#[case::reconcile_success("ReconcileSuccess", None)]
#[case::absent_type(
    "ClusteringActive",
    Some("MySQLCluster db: no condition ClusteringActive in status.conditions")
)]
fn check_owner_moco_other_conditions(#[case] condition: &str, #[case] want: Option<&str>) {
    let s = set_from(owned_set_json(condition));
    let probe = found(moco_cluster("False", "Degraded", ""));
    let got = gates::check_owner(&s, condition, &owner_ref(), &probe);
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::OwnerNotHealthy, d))),
    }
}
