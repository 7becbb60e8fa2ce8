//! The `OwnerNotHealthy` gate through `evaluate` and the plan: `<prefix>/owner-condition` (valid and
//! invalid values, another prefix), the controller ownerReference it reads, its place after the earlier
//! gates and `GroupBusy`, and the owner, then the queries, asked of the pass (`plan::needs`), also for the
//! real staged fixture. Every time is a fixed timestamp (`now()` = 2026-11-23T01:20:00Z).

use crate::common::owner::*;
use crate::common::plans::*;
use crate::common::prometheus_check::*;
use crate::common::*;
use k8s_openapi::api::core::v1::Pod;
use rstest::rstest;
use serde_json::{Value, json};
use std::sync::Arc;
use sts_stepper::config::{self, ConfigError};
use sts_stepper::gates::check::prometheus::{Query, QueryOutcome};
use sts_stepper::gates::{
    self, CheckRead, Evaluation, FleetView, Need, OwnerProbe, Probes, Verdict,
};
use sts_stepper::model::reasons::Reason;
use sts_stepper::model::{pods, set};
use sts_stepper::plan::{self, ProbeMap};

fn eval_set(v: &Value, pods: &[Pod], fleet: FleetView<'_>, probes: &Probes) -> Evaluation {
    let s = set_from(v.clone());
    let by = pods::pods_by_ordinal(&s, pods.iter());
    gates::evaluate(&s, &by, &[], fleet, probes, &opts(), now())
}

// ---- OwnerNotHealthy: evaluate ----------------------------------------------------------------------

fn no_owner_refs() -> Value {
    let mut v = owned_set_json("Healthy");
    v["metadata"]
        .as_object_mut()
        .expect("meta")
        .remove("ownerReferences");
    v
}

fn owner_refs(refs: Value) -> Value {
    let mut v = owned_set_json("Healthy");
    v["metadata"]["ownerReferences"] = refs;
    v
}

fn healthy_owner() -> Option<OwnerProbe> {
    Some(found(owner_obj(
        Some(3),
        None,
        json!([cond("Healthy", "True", Some(3))]),
    )))
}

#[rstest]
#[case::no_owner_references(
    no_owner_refs(),
    None,
    blocked(
        Reason::OwnerNotHealthy,
        "web: no controller ownerReference to read condition Healthy from"
    ),
    None
)]
#[case::owner_reference_not_controller(
    owner_refs(json!([{"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster", "name": "db",
                       "uid": OWNER_UID, "controller": false}])),
    healthy_owner(),
    blocked(Reason::OwnerNotHealthy, "web: no controller ownerReference to read condition Healthy from"), None
)]
#[case::owner_reference_controller_absent(
    owner_refs(json!([{"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster", "name": "db",
                       "uid": OWNER_UID}])),
    None,
    blocked(Reason::OwnerNotHealthy, "web: no controller ownerReference to read condition Healthy from"), None
)]
#[case::owner_not_read(
    owned_set_json("Healthy"),
    None,
    blocked(Reason::OwnerNotHealthy, "MySQLCluster db: not read yet"),
    Some(Need::Owner(owner_ref()))
)]
#[case::controller_among_several_refs(
    owner_refs(json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "uid-cm"},
                      owner_ref_json()])),
    None,
    blocked(Reason::OwnerNotHealthy, "MySQLCluster db: not read yet"), Some(Need::Owner(owner_ref()))
)]
#[case::read_healthy_steps(owned_set_json("Healthy"), healthy_owner(), step(3, 2), None)]
#[case::read_unhealthy(
    owned_set_json("Healthy"),
    Some(found(owner_obj(Some(3), None, json!([cond_why("Healthy", "False", "Degraded", "")])))),
    blocked(Reason::OwnerNotHealthy, "MySQLCluster db: condition Healthy is False (Degraded)"), None
)]
#[case::read_not_found(
    owned_set_json("Healthy"),
    Some(OwnerProbe::NotFound),
    blocked(Reason::OwnerNotHealthy, "MySQLCluster db: not found"),
    None
)]
#[case::moco_owner_healthy(
    owned_set_json("Healthy"),
    Some(found(moco_cluster("True", "Healthy", ""))),
    step(3, 2),
    None
)]
fn evaluate_owner_condition(
    #[case] v: Value,
    #[case] owner: Option<OwnerProbe>,
    #[case] want: Verdict,
    #[case] want_need: Option<Need>,
) {
    let probes = Probes {
        owner,
        prometheus: None,
        http: None,
        webhook: None,
    };
    let ev = eval_set(&v, &pods("web", 3, 3), FleetView::default(), &probes);
    assert_eq!(ev.verdict, want);
    assert_eq!(ev.need, want_need);
    assert!(ev.effects.is_empty(), "{:?}", ev.effects);
}

#[test]
fn without_owner_condition_annotation_the_owner_is_never_needed() {
    let mut v = owned_set_json("Healthy");
    v["metadata"]["annotations"]
        .as_object_mut()
        .expect("annotations")
        .remove(&key("owner-condition"));
    let ev = eval_set(
        &v,
        &pods("web", 3, 3),
        FleetView::default(),
        &Probes::default(),
    );
    assert_eq!(ev.verdict, step(3, 2));
    assert_eq!(ev.need, None);
}

/// The owner gate runs only after the earlier gates: a set they block has no need.
#[rstest]
#[case::pod_not_ready(owned_set_json("Healthy"), Some(0), Reason::PodNotReady)]
#[case::paused(annotate(owned_set_json("Healthy"), &[("safe-rollout.dev/paused", "true")]), None, Reason::Paused)]
#[case::not_observed({
    let mut v = owned_set_json("Healthy");
    v["status"]["observedGeneration"] = json!(1);
    v
}, None, Reason::NotObserved)]
#[case::settling(
    annotate(owned_set_json("Healthy"), &[("safe-rollout.dev/initial-delay-seconds", "600"),
                                          ("safe-rollout.dev/last-partition-update", "2026-11-23T01:19:00Z")]),
    None, Reason::Settling
)]
fn owner_gate_runs_after_the_earlier_gates(
    #[case] v: Value,
    #[case] missing: Option<usize>,
    #[case] want: Reason,
) {
    // web-0 missing (below the partition: not exempt as a pod the step replaces).
    let mut p = pods("web", 3, 3);
    if let Some(i) = missing {
        p.remove(i);
    }
    let ev = eval_set(&v, &p, FleetView::default(), &Probes::default());
    assert!(
        matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == want),
        "{:?}",
        ev.verdict
    );
    assert_eq!(ev.need, None);
}

#[test]
fn owner_gate_runs_after_group_busy() {
    let holder = set_from(member_json("ns", "a", Some(3), true, Some("db")));
    let v = annotate(owned_set_json("Healthy"), &[(&key("rollout-group"), "db")]);
    let ev = eval_set(
        &v,
        &pods("web", 3, 3),
        FleetView {
            group_holder: Some(&holder),
            covered_namespaces: None,
        },
        &Probes::default(),
    );
    assert!(
        matches!(&ev.verdict, Verdict::Blocked(b) if b.reason == Reason::GroupBusy),
        "{:?}",
        ev.verdict
    );
    assert_eq!(ev.need, None);
}

#[rstest]
#[case::empty("")]
#[case::only_space(" ")]
#[case::inner_space("Healthy Now")]
#[case::leading_space(" Healthy")]
#[case::trailing_newline("Healthy\n")]
#[case::tab("Healthy\tTrue")]
#[case::slash("moco.cybozu.com/Healthy")]
#[case::lone_slash("/")]
fn invalid_owner_condition_is_invalid_annotation(#[case] value: &str) {
    // Invalid before PodNotReady: web-0 is missing and the annotation is still what is reported.
    let mut p = pods("web", 3, 3);
    p.remove(0);
    let ev = eval_set(
        &owned_set_json(value),
        &p,
        FleetView::default(),
        &Probes::default(),
    );
    assert_eq!(
        ev.verdict,
        blocked(
            Reason::InvalidAnnotation,
            &format!(
                "safe-rollout.dev/owner-condition: {value:?} is not a condition type; expected a name such as \"Healthy\" or \"Ready\""
            )
        )
    );
    assert_eq!(ev.need, None);
    let set = set_from(owned_set_json(value));
    let got = config::owner_condition(&set, &keys());
    assert_eq!(
        got,
        Err(ConfigError::OwnerCondition {
            key: "safe-rollout.dev/owner-condition".into(),
            value: value.into(),
        })
    );
    assert_eq!(
        got.map_err(|e| e.to_string()).map(|_| ()),
        Err(format!(
            "safe-rollout.dev/owner-condition: {value:?} is not a condition type; expected a name such as \"Healthy\" or \"Ready\""
        ))
    );
}

#[rstest]
#[case("Healthy")]
#[case("Ready")]
#[case("ReconcileSuccess")]
#[case("example.com-Ready")]
fn valid_owner_conditions_parse(#[case] value: &str) {
    assert_eq!(
        config::owner_condition(&set_from(owned_set_json(value)), &keys()),
        Ok(Some(value))
    );
}

#[test]
fn owner_condition_of_another_prefix_is_ignored() {
    let mut v = annotate(
        set_json("web", 3, Some(3), 0),
        &[("other.dev/owner-condition", "Healthy")],
    );
    v["metadata"]["ownerReferences"] = json!([owner_ref_json()]);
    assert_eq!(
        config::owner_condition(&set_from(v.clone()), &keys()),
        Ok(None)
    );
    let ev = eval_set(
        &v,
        &pods("web", 3, 3),
        FleetView::default(),
        &Probes::default(),
    );
    assert_eq!((ev.verdict, ev.need), (step(3, 2), None));
}

#[test]
fn controller_owner_picks_the_controller_reference() {
    let s = set_from(owner_refs(json!([
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "uid-cm", "controller": false},
        owner_ref_json()
    ])));
    assert_eq!(set::controller_owner(&s), Some(&owner_ref()));
    assert_eq!(set::controller_owner(&set_from(no_owner_refs())), None);
}

#[test]
fn needs_asks_for_the_owner_then_the_queries_then_plans_a_step() {
    let v = annotate(
        owned_set_json("Healthy"),
        &[(&key("prometheus-query"), QUERY)],
    );
    let snap = snapshot(vec![v], pods("web", 3, 3));
    let none = ProbeMap::new();
    assert_eq!(
        plan::needs(&snap, &opts(), now(), &none),
        vec![(0, Need::Owner(owner_ref()))]
    );
    let mut probes = ProbeMap::new();
    probes.insert(
        0,
        Probes {
            owner: healthy_owner(),
            prometheus: None,
            http: None,
            webhook: None,
        },
    );
    assert_eq!(
        plan::needs(&snap, &opts(), now(), &probes),
        vec![(
            0,
            Need::Check(CheckRead::Queries(vec![Query {
                annotation: key("prometheus-query"),
                expr: QUERY.into()
            }]))
        )]
    );
    probes.get_mut(&0).expect("probes").prometheus = Some(vec![QueryOutcome::NonEmpty(1)]);
    assert_eq!(plan::needs(&snap, &opts(), now(), &probes), vec![]);
    let p = plan::plan_with(&snap, &opts(), now(), &probes);
    assert_eq!(p[0].verdict, step(3, 2));
    // An unhealthy owner: no query need, the owner's block.
    probes.insert(
        0,
        Probes {
            owner: Some(OwnerProbe::NotFound),
            prometheus: None,
            http: None,
            webhook: None,
        },
    );
    assert_eq!(plan::needs(&snap, &opts(), now(), &probes), vec![]);
    assert_eq!(
        plan::plan_with(&snap, &opts(), now(), &probes)[0].verdict,
        blocked(Reason::OwnerNotHealthy, "MySQLCluster db: not found")
    );
}

// ---- the fixture set with the new annotations -------------------------------------------------------

#[test]
fn the_real_staged_fixture_with_an_owner_condition_needs_its_owner() {
    let mut snap = moment("1-staged");
    let set = Arc::make_mut(&mut snap.statefulsets[0]);
    set.metadata
        .annotations
        .get_or_insert_default()
        .insert(key("owner-condition"), "Healthy".into());
    // The fixture set has no owner: the gate blocks and asks nothing.
    assert_eq!(plan::needs(&snap, &opts(), now(), &ProbeMap::new()), vec![]);
    assert_eq!(
        plan::plan(&snap, &opts(), now())[0].verdict,
        blocked(
            Reason::OwnerNotHealthy,
            "web: no controller ownerReference to read condition Healthy from"
        )
    );
    // Owned by a MySQLCluster: the owner is needed, then a healthy one lets the step 5 → 4 go.
    Arc::make_mut(&mut snap.statefulsets[0])
        .metadata
        .owner_references = Some(vec![owner_ref()]);
    assert_eq!(
        plan::needs(&snap, &opts(), now(), &ProbeMap::new()),
        vec![(0, Need::Owner(owner_ref()))]
    );
    let mut probes = ProbeMap::new();
    probes.insert(
        0,
        Probes {
            owner: Some(found(moco_cluster("True", "Healthy", ""))),
            prometheus: None,
            http: None,
            webhook: None,
        },
    );
    assert_eq!(
        plan::plan_with(&snap, &opts(), now(), &probes)[0].verdict,
        Verdict::Step {
            from: 5,
            to: 4,
            update_revision: REV_NEW.into()
        }
    );
}
