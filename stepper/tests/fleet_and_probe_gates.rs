//! The gates that read beyond the set, as pure functions and through the plan: `OwnerNotHealthy` (`check_owner`,
//! `evaluate` with `<prefix>/owner-condition`, a MOCO-shaped MySQLCluster owner), `GroupBusy`
//! (`group_holder`, `check_group`, `plan::plan` over a rollout group), `PrometheusCheck`
//! (`check_config`, `check_result`, `current_state`, `CheckState`, and through `plan::needs` /
//! `plan::plan_with`: the query need, the step, the state written under a `test` op, the pause and
//! its `Paused` follow-up on the patched object) and `Throttled` (`throttle`, `steps_in_last_minute`,
//! `plan_with` with `--max-steps-per-pass` / `--max-steps-per-minute`), plus the four new `Reason`s,
//! and short multi-pass sequences where each pass's patches are applied to the set's JSON with
//! `json_patch::patch`. Every time is a fixed timestamp (`now()` = 2026-11-23T01:20:00Z); nothing
//! reads a clock. The four defects this file found (a `+` in a query number, the per-minute throttle
//! detail, steps counted per set instead of per step, a pause without a Warning) are fixed; their
//! tests stay.
mod common;

use common::*;
use jiff::{SignedDuration, Timestamp};
use json_patch::Patch;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use rstest::rstest;
use serde_json::{Value, json};
use std::sync::Arc;

use sts_stepper::config::check::CheckLimits;
use sts_stepper::config::{self, ConfigError, Keys, SetConfig, check_config};
use sts_stepper::gates::prometheus::{
    CheckConfig, CheckResult, CheckState, Query, QueryOutcome, check_result, current_state,
};
use sts_stepper::gates::throttle;
use sts_stepper::gates::{
    self, Evaluation, FleetView, GateInput, GateOptions, Idle, Need, OwnerProbe, Probes, Verdict,
};
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::model::{pods, set};
use sts_stepper::plan::events::EventType;
use sts_stepper::plan::{self, ProbeMap, SetPlan, Snapshot};

const PREFIX: &str = "safe-rollout.dev";
const OWNER_UID: &str = "uid-owner";
const QUERY: &str = "up{job=\"web\"} == 1";

// ---- builders -------------------------------------------------------------------------------------

/// The annotation keys under [`PREFIX`].
fn keys() -> Keys {
    Keys::new(PREFIX)
}

/// The sets' annotations as the stepper reads them (under [`PREFIX`]).
fn configs(sets: &[StatefulSet]) -> Vec<SetConfig> {
    let keys = Arc::new(keys());
    sets.iter().map(|s| SetConfig::parse(s, &keys)).collect()
}

/// The stored `<prefix>/prometheus-check` of `set` under `prefix`, as the stepper reads it.
fn stored(set: &StatefulSet, prefix: &str) -> Option<String> {
    SetConfig::parse(set, &Arc::new(Keys::new(prefix)))
        .stamps
        .prometheus_check
}

fn key(name: &str) -> String {
    format!("{PREFIX}/{name}")
}

fn annotate(mut v: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, val) in pairs {
        v["metadata"]["annotations"][*k] = json!(val);
    }
    v
}

fn opts() -> GateOptions {
    GateOptions::default()
}

fn step(from: i32, to: i32) -> Verdict {
    Verdict::Step {
        from,
        to,
        update_revision: "b".into(),
    }
}

fn blocked(reason: Reason, detail: &str) -> Verdict {
    Verdict::Blocked(Blocked::new(reason, detail))
}

fn to_json(p: &Option<Patch>) -> Value {
    serde_json::to_value(p).expect("json")
}

/// Applies `patch` to a copy of `doc`, as the API server would.
fn applied(doc: &Value, patch: &Patch) -> Result<Value, String> {
    let mut out = doc.clone();
    json_patch::patch(&mut out, patch).map_err(|e| e.to_string())?;
    Ok(out)
}

fn snapshot(sets: Vec<Value>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        statefulsets: sets.into_iter().map(|v| set_from(v).into()).collect(),
        pods,
        ..Snapshot::default()
    }
}

fn plan_one(v: Value, pods: Vec<Pod>, probes: Option<Probes>) -> SetPlan {
    let mut map = ProbeMap::new();
    if let Some(p) = probes {
        map.insert(0, p);
    }
    plan::plan_with(&snapshot(vec![v], pods), &opts(), now(), &map)
        .pop()
        .expect("one plan")
}

fn by_name<'a>(plans: &'a [SetPlan], ns: &str, name: &str) -> &'a SetPlan {
    plans
        .iter()
        .find(|p| p.namespace == ns && p.name == name)
        .unwrap_or_else(|| panic!("no plan for {ns}/{name}"))
}

/// A staged set `ns/name` (uid `uid-<ns>-<name>`), 3 replicas, in `<prefix>/rollout-group` `group`
/// when given; `partition` None = absent. Staged: revisions a → b with `3 − partition` pods updated.
fn member_json(
    ns: &str,
    name: &str,
    partition: Option<i32>,
    staged: bool,
    group: Option<&str>,
) -> Value {
    let updated = if staged {
        3 - partition.unwrap_or(1).clamp(0, 3)
    } else {
        3
    };
    let mut v = set_json(name, 3, partition, updated);
    v["metadata"]["namespace"] = json!(ns);
    v["metadata"]["uid"] = json!(format!("uid-{ns}-{name}"));
    v["metadata"]["annotations"][key("initialized")] = json!("true");
    if !staged {
        v["status"]["currentRevision"] = json!("b");
    }
    if let Some(g) = group {
        v["metadata"]["annotations"][key("rollout-group")] = json!(g);
    }
    v
}

/// Ready pods 0..3 of `ns/name` owned by uid `uid-<ns>-<name>`; ordinals ≥ `from_new` on `b`.
fn member_pods(ns: &str, name: &str, from_new: u32) -> Vec<Pod> {
    (0..3)
        .map(|i| {
            let mut v = pod_json(name, name, i, if i >= from_new { "b" } else { "a" });
            v["metadata"]["namespace"] = json!(ns);
            v["metadata"]["ownerReferences"][0]["uid"] = json!(format!("uid-{ns}-{name}"));
            pod_from(v)
        })
        .collect()
}

// ---- OwnerNotHealthy: builders --------------------------------------------------------------------

fn owner_ref_json() -> Value {
    json!({"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster", "name": "db",
           "uid": OWNER_UID, "controller": true, "blockOwnerDeletion": true})
}

fn owner_ref() -> OwnerReference {
    serde_json::from_value(owner_ref_json()).expect("valid OwnerReference")
}

/// `web` (3 replicas, staged at partition 3, initialized) owned by MySQLCluster `db`, gated on
/// `condition`.
fn owned_set_json(condition: &str) -> Value {
    let mut v = annotate(
        set_json("web", 3, Some(3), 0),
        &[
            (&key("owner-condition"), condition),
            (&key("initialized"), "true"),
        ],
    );
    v["metadata"]["ownerReferences"] = json!([owner_ref_json()]);
    v
}

/// A condition in `metav1.Condition` shape; `og` is its `observedGeneration` (omitted when None,
/// as `omitempty` does).
fn cond(type_: &str, status: &str, og: Option<i64>) -> Value {
    let mut c = json!({"type": type_, "status": status,
                       "lastTransitionTime": "2026-11-23T01:00:00Z", "reason": type_, "message": ""});
    if let Some(g) = og {
        c["observedGeneration"] = json!(g);
    }
    c
}

fn cond_why(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "lastTransitionTime": "2026-11-23T01:00:00Z",
           "reason": reason, "message": message})
}

fn owner_obj(generation: Option<i64>, status_observed: Option<i64>, conditions: Value) -> Value {
    let mut v = json!({"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster",
                       "metadata": {"name": "db", "namespace": "ns", "uid": OWNER_UID},
                       "status": {"conditions": conditions}});
    if let Some(g) = generation {
        v["metadata"]["generation"] = json!(g);
    }
    if let Some(o) = status_observed {
        v["status"]["observedGeneration"] = json!(o);
    }
    v
}

fn found(v: Value) -> OwnerProbe {
    OwnerProbe::Found(v)
}

/// A MOCO MySQLCluster (`moco.cybozu.com/v1beta2`) as its API returns it: `metav1.Condition`s
/// Initialized, Available, Healthy, StatefulSetReady, ReconcileSuccess (MOCO sets no
/// `observedGeneration` on them and no `status.observedGeneration`; it records
/// `status.reconcileInfo.generation`).
fn moco_cluster(healthy: &str, reason: &str, message: &str) -> Value {
    let c = |t: &str, s: &str, r: &str, m: &str| {
        json!({"type": t, "status": s, "lastTransitionTime": "2026-11-23T00:40:12Z",
               "reason": r, "message": m})
    };
    json!({
        "apiVersion": "moco.cybozu.com/v1beta2",
        "kind": "MySQLCluster",
        "metadata": {"name": "db", "namespace": "ns", "uid": OWNER_UID, "generation": 4,
                     "resourceVersion": "918273", "creationTimestamp": "2026-11-20T09:00:00Z",
                     "finalizers": ["moco.cybozu.com/mysqlcluster"]},
        "spec": {"replicas": 3,
                 "podTemplate": {"spec": {"containers": [{"name": "mysqld",
                                                          "image": "ghcr.io/cybozu-go/moco/mysql:8.4.3"}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "mysql-data"},
                                           "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}]},
        "status": {
            "conditions": [
                c("Initialized", "True", "Initialized", ""),
                c("Available", "True", "Available", ""),
                c("Healthy", healthy, reason, message),
                c("StatefulSetReady", "True", "StatefulSetReady", ""),
                c("ReconcileSuccess", "True", "ReconcileSuccess", "")
            ],
            "currentPrimaryIndex": 0,
            "syncedReplicas": 3,
            "errantReplicas": 0,
            "backup": {},
            "reconcileInfo": {"lastReconcileTime": "2026-11-23T01:19:30Z", "generation": 4,
                              "reconcileVersion": 1}
        }
    })
}

fn eval_set(v: &Value, pods: &[Pod], fleet: FleetView<'_>, probes: &Probes) -> Evaluation {
    let s = set_from(v.clone());
    let by = pods::pods_by_ordinal(&s, pods.iter());
    gates::evaluate(&s, &by, &[], fleet, probes, &opts(), now())
}

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
    assert!(ev.changes.is_empty(), "{:?}", ev.changes);
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
            Need::Queries(vec![Query {
                annotation: key("prometheus-query"),
                expr: QUERY.into()
            }])
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

// ---- GroupBusy: group_holder and check_group -------------------------------------------------------

#[rstest]
#[case::all_unstarted_first_by_name(&[("c", Some(3), true), ("a", Some(3), true), ("b", Some(3), true)], Some("a"))]
#[case::started_first(&[("a", Some(3), true), ("c", Some(2), true), ("b", Some(3), true)], Some("c"))]
#[case::started_then_name(&[("c", Some(1), true), ("b", Some(2), true), ("a", Some(3), true)], Some("b"))]
#[case::partition_absent_counts_as_started(&[("a", Some(3), true), ("b", None, true)], Some("b"))]
#[case::partition_zero_counts_as_started(&[("a", Some(3), true), ("z", Some(0), true)], Some("z"))]
#[case::partition_above_replicas_not_started(&[("b", Some(3), true), ("a", Some(5), true)], Some("a"))]
#[case::unstaged_never_holds(&[("a", Some(3), false), ("b", Some(3), true)], Some("b"))]
#[case::unstaged_started_never_holds(&[("a", Some(1), false), ("b", Some(3), true)], Some("b"))]
#[case::none_staged(&[("a", Some(3), false), ("b", Some(0), false)], None)]
#[case::empty(&[], None)]
fn group_holder_order(#[case] members: &[(&str, Option<i32>, bool)], #[case] want: Option<&str>) {
    let sets: Vec<StatefulSet> = members
        .iter()
        .map(|(n, p, staged)| set_from(member_json("ns", n, *p, *staged, Some("kafka"))))
        .collect();
    let got = gates::group_holder(sets.iter()).and_then(|s| s.metadata.name.as_deref());
    assert_eq!(got, want);
}

#[rstest]
#[case::no_holder(None, None)]
#[case::holder_is_self(Some(member_json("ns", "web", Some(3), true, Some("kafka"))), None)]
#[case::other_holder_unstarted(
    Some(member_json("ns", "a", Some(3), true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 0/3, partition 3)")
)]
#[case::other_holder_started(
    Some(member_json("ns", "a", Some(2), true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 1/3, partition 2)")
)]
#[case::other_holder_partition_absent(
    Some(member_json("ns", "a", None, true, Some("kafka"))),
    Some("rollout-group kafka: a rolls out first (updated 2/3, partition 0)")
)]
#[case::same_name_other_uid(
    Some(member_json("other", "web", Some(3), true, Some("kafka"))),
    Some("rollout-group kafka: web rolls out first (updated 0/3, partition 3)")
)]
fn check_group_holder_and_non_holder(#[case] holder: Option<Value>, #[case] want: Option<&str>) {
    let s = set_from(member_json("ns", "web", Some(3), true, Some("kafka")));
    let holder = holder.map(set_from);
    let got = gates::check_group(&s, "kafka", holder.as_ref());
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::GroupBusy, d))),
    }
}

#[rstest]
#[case::absent(None, Ok(None))]
#[case::named(Some("kafka"), Ok(Some("kafka")))]
#[case::empty(Some(""), Err(()))]
#[case::blank(Some("  "), Err(()))]
fn rollout_group_values(#[case] value: Option<&str>, #[case] want: Result<Option<&str>, ()>) {
    let s = set_from(member_json("ns", "web", Some(3), true, value));
    let got = config::rollout_group(&s, &keys());
    match want {
        Ok(w) => assert_eq!(got, Ok(w)),
        Err(()) => {
            let e = got.expect_err("invalid");
            assert_eq!(
                e,
                ConfigError::EmptyRolloutGroup {
                    key: "safe-rollout.dev/rollout-group".into()
                }
            );
            assert_eq!(
                e.to_string(),
                "safe-rollout.dev/rollout-group: empty; expected a group name (\"kafka\")"
            );
        }
    }
}

// ---- GroupBusy: through the plan ------------------------------------------------------------------

#[test]
fn one_set_of_a_staged_group_steps_the_first_by_name() {
    // Snapshot order c, a, b: the holder is chosen by name, not by list order.
    let names = ["c", "a", "b"];
    let sets = names
        .iter()
        .map(|n| member_json("ns", n, Some(3), true, Some("kafka")))
        .collect();
    let all_pods = names.iter().flat_map(|n| member_pods("ns", n, 3)).collect();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert_eq!(by_name(&plans, "ns", "a").verdict, step(3, 2));
    assert!(by_name(&plans, "ns", "a").step.is_some());
    for n in ["b", "c"] {
        let p = by_name(&plans, "ns", n);
        assert_eq!(
            p.verdict,
            blocked(
                Reason::GroupBusy,
                "rollout-group kafka: a rolls out first (updated 0/3, partition 3)"
            ),
            "{n}"
        );
        assert!(p.step.is_none(), "{n}");
        assert_eq!(p.status_events.len(), 1, "{n}");
        assert_eq!(
            p.status_events[0].type_,
            EventType::Normal,
            "{n}: an expected wait"
        );
        assert_eq!(
            to_json(&p.status_annotations),
            json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                    "value": "GroupBusy"}]),
            "{n}"
        );
    }
    let steps = plans.iter().filter(|p| p.step.is_some()).count();
    assert_eq!(steps, 1);
}

#[test]
fn a_started_member_holds_the_group_before_the_first_by_name() {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(2), true, Some("kafka")),
    ];
    let all_pods = [member_pods("ns", "a", 3), member_pods("ns", "b", 2)].concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(2, 1));
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::GroupBusy,
            "rollout-group kafka: b rolls out first (updated 1/3, partition 2)"
        )
    );
}

#[test]
fn a_blocked_holder_still_holds_and_an_idle_partition_zero_holder_too() {
    // a's pod a-1 is missing: a is blocked PodNotReady, b still waits for it.
    let mut a_pods = member_pods("ns", "a", 3);
    a_pods.remove(1);
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(sets, [a_pods, member_pods("ns", "b", 3)].concat()),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(Reason::PodNotReady, "a-1: missing")
    );
    assert!(matches!(&by_name(&plans, "ns", "b").verdict,
                     Verdict::Blocked(b) if b.reason == Reason::GroupBusy));
    // z: partition absent with an update staged (the controller rolls it): it holds the group.
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "z", None, true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(
            sets,
            [member_pods("ns", "a", 3), member_pods("ns", "z", 1)].concat(),
        ),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "z").verdict,
        Verdict::Idle(Idle::PartitionZero)
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::GroupBusy,
            "rollout-group kafka: z rolls out first (updated 2/3, partition 0)"
        )
    );
}

#[test]
fn other_namespaces_other_groups_and_ungrouped_sets_are_independent() {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some("kafka")),
        member_json("ns", "b", Some(3), true, Some("kafka")),
        member_json("other", "a", Some(3), true, Some("kafka")),
        member_json("other", "b", Some(3), true, Some("kafka")),
        member_json("ns", "c", Some(3), true, Some("zk")),
        member_json("ns", "d", Some(3), true, None),
    ];
    let all_pods = [
        member_pods("ns", "a", 3),
        member_pods("ns", "b", 3),
        member_pods("other", "a", 3),
        member_pods("other", "b", 3),
        member_pods("ns", "c", 3),
        member_pods("ns", "d", 3),
    ]
    .concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    for (ns, n) in [("ns", "a"), ("other", "a"), ("ns", "c"), ("ns", "d")] {
        assert_eq!(by_name(&plans, ns, n).verdict, step(3, 2), "{ns}/{n}");
    }
    for ns in ["ns", "other"] {
        assert_eq!(
            by_name(&plans, ns, "b").verdict,
            blocked(
                Reason::GroupBusy,
                "rollout-group kafka: a rolls out first (updated 0/3, partition 3)"
            ),
            "{ns}/b"
        );
    }
}

#[rstest]
#[case::empty("")]
#[case::blank("   ")]
fn an_empty_rollout_group_is_invalid_and_holds_nothing(#[case] value: &str) {
    let sets = vec![
        member_json("ns", "a", Some(3), true, Some(value)),
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let plans = plan::plan(
        &snapshot(
            sets,
            [member_pods("ns", "a", 3), member_pods("ns", "b", 3)].concat(),
        ),
        &opts(),
        now(),
    );
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::InvalidAnnotation,
            "safe-rollout.dev/rollout-group: empty; expected a group name (\"kafka\")"
        )
    );
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(3, 2));
}

#[test]
fn unguarded_members_are_ignored() {
    let forced = annotate(
        member_json("ns", "a", Some(3), true, Some("kafka")),
        &[(&key("force-rolling-update"), "true")],
    );
    let mut on_delete = member_json("ns", "a0", None, true, Some("kafka"));
    on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    let sets = vec![
        forced,
        on_delete,
        member_json("ns", "b", Some(3), true, Some("kafka")),
    ];
    let all_pods = [
        member_pods("ns", "a", 3),
        member_pods("ns", "a0", 3),
        member_pods("ns", "b", 3),
    ]
    .concat();
    let plans = plan::plan(&snapshot(sets, all_pods), &opts(), now());
    assert!(matches!(
        by_name(&plans, "ns", "a").verdict,
        Verdict::Unguarded(_)
    ));
    assert!(matches!(
        by_name(&plans, "ns", "a0").verdict,
        Verdict::Unguarded(_)
    ));
    assert_eq!(by_name(&plans, "ns", "b").verdict, step(3, 2));
}

// ---- PrometheusCheck: check_config ------------------------------------------------------------------

fn q(annotation: &str, expr: &str) -> Query {
    Query {
        annotation: annotation.into(),
        expr: expr.into(),
    }
}

fn cfg(queries: &[(&str, &str)], period: u32, threshold: u32, limit: Option<u32>) -> CheckConfig {
    CheckConfig {
        queries: queries.iter().map(|(a, e)| q(a, e)).collect(),
        limits: CheckLimits {
            period_seconds: period,
            success_threshold: threshold,
            failure_limit: limit,
            error_limit: 4,
        },
    }
}

fn set_with(pairs: &[(&str, &str)]) -> StatefulSet {
    set_from(annotate(set_json("web", 3, Some(3), 0), pairs))
}

#[rstest]
#[case::no_annotations(&[], Ok(None))]
#[case::settings_without_query(&[("safe-rollout.dev/check-period-seconds", "10"),
                                 ("safe-rollout.dev/success-threshold", "3")], Ok(None))]
#[case::other_prefix_ignored(&[("other.dev/prometheus-query", "up"),
                               ("other.dev/prometheus-query-x", "up"),
                               ("other.dev/check-period-seconds", "x")], Ok(None))]
#[case::not_a_query_name_ignored(&[("safe-rollout.dev/prometheus-queries", "up")], Ok(None))]
#[case::one_query_defaults(&[("safe-rollout.dev/prometheus-query", "up")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 30, 1, None))))]
#[case::query_is_trimmed(&[("safe-rollout.dev/prometheus-query", "  up == 1\n")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up == 1")], 30, 1, None))))]
#[case::numeric_order(&[("safe-rollout.dev/prometheus-query-10", "ten"),
                        ("safe-rollout.dev/prometheus-query-2", "two"),
                        ("safe-rollout.dev/prometheus-query", "zero"),
                        ("safe-rollout.dev/prometheus-query-1", "one")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "zero"),
                  ("safe-rollout.dev/prometheus-query-1", "one"),
                  ("safe-rollout.dev/prometheus-query-2", "two"),
                  ("safe-rollout.dev/prometheus-query-10", "ten")], 30, 1, None))))]
#[case::numbered_only(&[("safe-rollout.dev/prometheus-query-999", "last"),
                        ("safe-rollout.dev/prometheus-query-3", "three")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query-3", "three"),
                  ("safe-rollout.dev/prometheus-query-999", "last")], 30, 1, None))))]
#[case::all_settings(&[("safe-rollout.dev/prometheus-query", "up"),
                       ("safe-rollout.dev/check-period-seconds", "10"),
                       ("safe-rollout.dev/success-threshold", "3"),
                       ("safe-rollout.dev/failure-limit", "5")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 10, 3, Some(5)))))]
#[case::minimum_settings(&[("safe-rollout.dev/prometheus-query", "up"),
                           ("safe-rollout.dev/check-period-seconds", "1"),
                           ("safe-rollout.dev/success-threshold", "1"),
                           ("safe-rollout.dev/failure-limit", "1")],
    Ok(Some(cfg(&[("safe-rollout.dev/prometheus-query", "up")], 1, 1, Some(1)))))]
#[case::query_0(&[("safe-rollout.dev/prometheus-query-0", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-0")))]
#[case::query_x(&[("safe-rollout.dev/prometheus-query-x", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-x")))]
#[case::query_01(&[("safe-rollout.dev/prometheus-query-01", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-01")))]
#[case::query_1000(&[("safe-rollout.dev/prometheus-query-1000", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-1000")))]
#[case::query_dash(&[("safe-rollout.dev/prometheus-query-", "up")], Err(bad_query("safe-rollout.dev/prometheus-query-")))]
#[case::query_minus(&[("safe-rollout.dev/prometheus-query--1", "up")], Err(bad_query("safe-rollout.dev/prometheus-query--1")))]
#[case::bad_number_beside_good(&[("safe-rollout.dev/prometheus-query", "up"),
                                 ("safe-rollout.dev/prometheus-query-x", "up")],
    Err(bad_query("safe-rollout.dev/prometheus-query-x")))]
#[case::empty_query(&[("safe-rollout.dev/prometheus-query", "")],
    Err("safe-rollout.dev/prometheus-query: empty; expected a PromQL query".into()))]
#[case::blank_numbered_query(&[("safe-rollout.dev/prometheus-query", "up"), ("safe-rollout.dev/prometheus-query-2", " \n ")],
    Err("safe-rollout.dev/prometheus-query-2: empty; expected a PromQL query".into()))]
fn check_config_cases(
    #[case] pairs: &[(&str, &str)],
    #[case] want: Result<Option<CheckConfig>, String>,
) {
    let got = check_config(&set_with(pairs), &keys());
    if let Err(e) = &got {
        let query = keys().prometheus_query;
        assert!(
            matches!(e, ConfigError::QueryName { query: q, .. } if *q == query)
                || matches!(e, ConfigError::EmptyQuery { .. }),
            "{e:?}"
        );
    }
    assert_eq!(got.map_err(|e| e.to_string()), want);
}

fn bad_query(k: &str) -> String {
    format!(
        "{k}: not a query annotation; expected safe-rollout.dev/prometheus-query or safe-rollout.dev/prometheus-query-<N> with N from 1 to 999"
    )
}

#[rstest]
fn check_config_bad_numbers_name_the_annotation(
    #[values(
        "check-period-seconds",
        "success-threshold",
        "failure-limit",
        "check-error-limit"
    )]
    name: &str,
    #[values("0", "-1", "1.5", "x", "", " 3", "+3", "99999999999")] value: &str,
) {
    let k = key(name);
    let got = check_config(
        &set_with(&[("safe-rollout.dev/prometheus-query", "up"), (&k, value)]),
        &keys(),
    );
    assert_eq!(
        got,
        Err(ConfigError::CheckCount {
            key: k.clone(),
            value: value.into(),
        })
    );
    assert_eq!(
        got.map_err(|e| e.to_string()),
        Err(format!(
            "{k}: {value:?} is not valid; expected a whole number ≥ 1 (\"3\")"
        ))
    );
}

#[test]
fn check_config_follows_a_custom_prefix() {
    let s = set_with(&[
        ("moco.cybozu.com/prometheus-query", "mine"),
        ("moco.cybozu.com/success-threshold", "2"),
        ("safe-rollout.dev/prometheus-query", "not mine"),
        ("safe-rollout.dev/success-threshold", "x"),
    ]);
    assert_eq!(
        check_config(&s, &Keys::new("moco.cybozu.com")),
        Ok(Some(cfg(
            &[("moco.cybozu.com/prometheus-query", "mine")],
            30,
            2,
            None
        )))
    );
}

#[test]
fn check_config_rejects_a_plus_sign_in_the_query_number() {
    let got = check_config(
        &set_with(&[("safe-rollout.dev/prometheus-query-+1", "up")]),
        &keys(),
    );
    assert_eq!(
        got.map_err(|e| e.to_string()),
        Err(bad_query("safe-rollout.dev/prometheus-query-+1"))
    );
}

// ---- PrometheusCheck: verdict -----------------------------------------------------------------------

const Q0: &str = "safe-rollout.dev/prometheus-query";
const Q1: &str = "safe-rollout.dev/prometheus-query-1";

fn st(successes: u32, failures: u32, secs_ago: i64, last_failure: Option<&str>) -> CheckState {
    CheckState {
        update_revision: "b".into(),
        partition: 3,
        successes,
        failures,
        last_check: now() - SignedDuration::from_secs(secs_ago),
        last_failure: last_failure.map(str::to_string),
        ..CheckState::default()
    }
}

/// `st` after `errors` consecutive checks without an answer, the last for `cause`.
fn st_err(successes: u32, failures: u32, errors: u32, secs_ago: i64, cause: &str) -> CheckState {
    CheckState {
        errors,
        last_error: Some(cause.into()),
        ..st(successes, failures, secs_ago, None)
    }
}

fn new_state(successes: u32, failures: u32, last_failure: Option<&str>) -> Option<CheckState> {
    Some(st(successes, failures, 0, last_failure))
}

fn wait(detail: &str, state: Option<CheckState>) -> CheckResult {
    CheckResult::Wait {
        detail: detail.into(),
        state,
    }
}

const EMPTY_Q0: &str = "safe-rollout.dev/prometheus-query returned an empty result";

#[rstest]
#[case::due_without_state(cfg(&[(Q0, "up")], 30, 1, None), None, None, CheckResult::Due)]
#[case::due_after_exactly_one_period(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 30, None)), None, CheckResult::Due)]
#[case::due_when_passed_but_period_over(cfg(&[(Q0, "up")], 30, 1, None), Some(st(1, 0, 31, None)), None, CheckResult::Due)]
#[case::pass_at_threshold_1(cfg(&[(Q0, "up")], 30, 1, None), None, Some(vec![QueryOutcome::NonEmpty(3)]),
    CheckResult::Pass { state: new_state(1, 0, None) })]
#[case::wait_below_threshold(cfg(&[(Q0, "up")], 30, 2, None), None, Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 30s", new_state(1, 0, None)))]
#[case::pass_reaching_threshold(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 30, None)), Some(vec![QueryOutcome::NonEmpty(1)]),
    CheckResult::Pass { state: new_state(2, 0, None) })]
#[case::success_keeps_failures(cfg(&[(Q0, "up")], 10, 3, Some(5)), Some(st(1, 2, 10, Some("old"))), Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("2 of 3 consecutive checks passed, 2 failed of limit 5; next check in 10s", new_state(2, 2, None)))]
#[case::empty_resets_successes(cfg(&[(Q0, "up")], 30, 3, None), Some(st(2, 0, 30, None)), Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 3 consecutive checks passed, 1 failed; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 1, Some(EMPTY_Q0))))]
#[case::no_answer_is_an_error_not_a_failure(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 1, 45, None)),
    Some(vec![QueryOutcome::Error("connection refused".into())]),
    wait("0 of 1 consecutive checks passed, 1 failed of limit 3, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: connection refused; next check in 30s",
         Some(st_err(0, 1, 1, 0, "safe-rollout.dev/prometheus-query got no answer: connection refused"))))]
#[case::an_error_resets_the_successes_and_adds_to_the_errors(cfg(&[(Q0, "up")], 30, 3, None), Some(st_err(2, 0, 2, 30, "old")),
    Some(vec![QueryOutcome::Error("HTTP 503 Service Unavailable".into())]),
    wait("0 of 3 consecutive checks passed, 0 failed, 3 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: HTTP 503 Service Unavailable; next check in 30s",
         Some(st_err(0, 0, 3, 0, "safe-rollout.dev/prometheus-query got no answer: HTTP 503 Service Unavailable"))))]
#[case::an_answer_ends_the_errors(cfg(&[(Q0, "up")], 30, 2, None), Some(st_err(0, 0, 5, 30, "old")),
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 30s", new_state(1, 0, None)))]
#[case::an_empty_answer_ends_the_errors_as_a_failure(cfg(&[(Q0, "up")], 30, 1, None), Some(st_err(0, 0, 5, 30, "old")),
    Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 1 consecutive checks passed, 1 failed; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 1, Some(EMPTY_Q0))))]
#[case::errors_never_pause(cfg(&[(Q0, "up")], 30, 1, Some(1)), Some(st_err(0, 0, 9, 30, "old")),
    Some(vec![QueryOutcome::Error("timeout".into())]),
    wait("0 of 1 consecutive checks passed, 0 failed of limit 1, 10 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query got no answer: timeout; next check in 30s",
         Some(st_err(0, 0, 10, 0, "safe-rollout.dev/prometheus-query got no answer: timeout"))))]
#[case::second_query_empty(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::Empty]),
    wait("0 of 1 consecutive checks passed, 1 failed; last check failed: safe-rollout.dev/prometheus-query-1 returned an empty result; next check in 30s",
         new_state(0, 1, Some("safe-rollout.dev/prometheus-query-1 returned an empty result"))))]
#[case::an_empty_answer_outweighs_an_error(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::Error("HTTP 503".into()), QueryOutcome::Empty]),
    wait("0 of 1 consecutive checks passed, 1 failed; last check failed: safe-rollout.dev/prometheus-query-1 returned an empty result; next check in 30s",
         new_state(0, 1, Some("safe-rollout.dev/prometheus-query-1 returned an empty result"))))]
#[case::first_unanswered_query_named(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::Error("HTTP 503".into())]),
    wait("0 of 1 consecutive checks passed, 0 failed, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query-1 got no answer: HTTP 503; next check in 30s",
         Some(st_err(0, 0, 1, 0, "safe-rollout.dev/prometheus-query-1 got no answer: HTTP 503"))))]
#[case::missing_outcome_is_an_error(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("0 of 1 consecutive checks passed, 0 failed, 1 in a row got no answer (check-error-limit 4); last check errored: safe-rollout.dev/prometheus-query-1 was not run; next check in 30s",
         Some(st_err(0, 0, 1, 0, "safe-rollout.dev/prometheus-query-1 was not run"))))]
#[case::all_queries_pass(cfg(&[(Q0, "a"), (Q1, "b")], 30, 1, None), None,
    Some(vec![QueryOutcome::NonEmpty(1), QueryOutcome::NonEmpty(7)]),
    CheckResult::Pass { state: new_state(1, 0, None) })]
#[case::not_due_passed(cfg(&[(Q0, "up")], 30, 2, None), Some(st(2, 1, 29, None)), None, CheckResult::Pass { state: None })]
#[case::not_due_passed_above_threshold(cfg(&[(Q0, "up")], 30, 2, None), Some(st(5, 0, 0, None)),
    Some(vec![QueryOutcome::Empty]), CheckResult::Pass { state: None })]
#[case::not_due_wait_seconds_left(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 10, None)), None,
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 20s", None))]
#[case::not_due_wait_one_second_left(cfg(&[(Q0, "up")], 30, 2, Some(4)), Some(st(0, 1, 29, Some("x was empty"))), None,
    wait("0 of 2 consecutive checks passed, 1 failed of limit 4; last check failed: x was empty; next check in 1s", None))]
#[case::not_due_ignores_outcomes(cfg(&[(Q0, "up")], 30, 2, None), Some(st(1, 0, 10, None)),
    Some(vec![QueryOutcome::NonEmpty(1)]),
    wait("1 of 2 consecutive checks passed, 0 failed; next check in 20s", None))]
#[case::failure_limit_reached(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 2, 30, None)), Some(vec![QueryOutcome::Empty]),
    CheckResult::Pause { reason: format!("PrometheusCheck failed 3 times (failure-limit 3) since the last step; last: {EMPTY_Q0}") })]
#[case::failure_limit_1_first_failure(cfg(&[(Q0, "up")], 30, 1, Some(1)), None,
    Some(vec![QueryOutcome::Empty]),
    CheckResult::Pause { reason: format!("PrometheusCheck failed 1 times (failure-limit 1) since the last step; last: {EMPTY_Q0}") })]
#[case::failure_limit_not_reached(cfg(&[(Q0, "up")], 30, 1, Some(3)), Some(st(0, 1, 30, None)), Some(vec![QueryOutcome::Empty]),
    wait(&format!("0 of 1 consecutive checks passed, 2 failed of limit 3; last check failed: {EMPTY_Q0}; next check in 30s"),
         new_state(0, 2, Some(EMPTY_Q0))))]
#[case::success_at_limit_does_not_pause(cfg(&[(Q0, "up")], 30, 1, Some(2)), Some(st(0, 2, 30, None)),
    Some(vec![QueryOutcome::NonEmpty(1)]), CheckResult::Pass { state: new_state(1, 2, None) })]
fn check_result_cases(
    #[case] config: CheckConfig,
    #[case] state: Option<CheckState>,
    #[case] outcomes: Option<Vec<QueryOutcome>>,
    #[case] want: CheckResult,
) {
    let got = check_result(&config, state.as_ref(), outcomes.as_deref(), 3, "b", now());
    assert_eq!(got, want);
}

#[test]
fn check_result_records_the_partition_and_revision_it_was_given() {
    let got = check_result(
        &cfg(&[(Q0, "up")], 30, 2, None),
        None,
        Some(&[QueryOutcome::NonEmpty(1)]),
        7,
        "web-7c9f",
        now(),
    );
    let CheckResult::Wait { state: Some(s), .. } = got else {
        panic!("{got:?}")
    };
    assert_eq!((s.partition, s.update_revision.as_str()), (7, "web-7c9f"));
}

// ---- PrometheusCheck: current_state and CheckState ------------------------------------------------

fn with_state(raw: &str) -> StatefulSet {
    set_with(&[("safe-rollout.dev/prometheus-check", raw)])
}

#[rstest]
#[case::matching(
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":2,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    Some(st(1, 2, 30, None))
)]
#[case::matching_with_failure(
    r#"{"updateRevision":"b","partition":3,"successes":0,"failures":1,"lastCheck":"2026-11-23T01:19:30Z","lastFailure":"q empty"}"#,
    Some(st(0, 1, 30, Some("q empty")))
)]
#[case::other_partition(
    r#"{"updateRevision":"b","partition":4,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::other_revision(
    r#"{"updateRevision":"a","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::unreadable_json("{", None)]
#[case::not_json("successes=1", None)]
#[case::missing_field(r#"{"updateRevision":"b","partition":3,"successes":1}"#, None)]
#[case::bad_time(
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"yesterday"}"#,
    None
)]
#[case::negative_count(
    r#"{"updateRevision":"b","partition":3,"successes":-1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    None
)]
#[case::empty_value("", None)]
fn current_state_cases(#[case] raw: &str, #[case] want: Option<CheckState>) {
    assert_eq!(
        current_state(stored(&with_state(raw), PREFIX).as_deref(), 3, "b"),
        want
    );
}

#[test]
fn current_state_absent_or_of_another_prefix_is_none() {
    assert_eq!(
        current_state(stored(&set_with(&[]), PREFIX).as_deref(), 3, "b"),
        None
    );
    let s = set_with(&[(
        "other.dev/prometheus-check",
        r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:19:30Z"}"#,
    )]);
    assert_eq!(current_state(stored(&s, PREFIX).as_deref(), 3, "b"), None);
    assert_eq!(
        current_state(stored(&s, "other.dev").as_deref(), 3, "b"),
        Some(st(1, 0, 30, None))
    );
}

#[rstest]
#[case::without_failure(
    st(1, 0, 0, None),
    r#"{"updateRevision":"b","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:20:00Z"}"#
)]
#[case::with_failure(
    st(0, 2, 42, Some("q \"x\" empty")),
    r#"{"updateRevision":"b","partition":3,"successes":0,"failures":2,"lastCheck":"2026-11-23T01:19:18Z","lastFailure":"q \"x\" empty"}"#
)]
fn check_state_annotation_shape_and_round_trip(#[case] state: CheckState, #[case] want: &str) {
    let raw = state.to_annotation();
    assert_eq!(raw, want);
    let back: CheckState = serde_json::from_str(&raw).expect("parse back");
    assert_eq!(back, state);
    assert_eq!(
        current_state(stored(&with_state(&raw), PREFIX).as_deref(), 3, "b"),
        Some(state)
    );
}

#[test]
fn check_state_reads_the_documented_example() {
    let s: CheckState = serde_json::from_str(
        r#"{"updateRevision":"web-7c9f","partition":3,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:10:42Z"}"#,
    )
    .expect("documented shape");
    assert_eq!(s.update_revision, "web-7c9f");
    assert_eq!(s.last_check, at("2026-11-23T01:10:42Z"));
    assert_eq!(s.last_failure, None);
}

// ---- PrometheusCheck: through needs / plan_with -----------------------------------------------------

/// `web` staged at partition 3, pods ready, initialized, with one query and `extra` annotations.
fn prom_set_json(extra: &[(&str, &str)]) -> Value {
    let v = annotate(
        set_json("web", 3, Some(3), 0),
        &[
            (&key("prometheus-query"), QUERY),
            (&key("initialized"), "true"),
        ],
    );
    annotate(v, extra)
}

fn outcomes(o: Vec<QueryOutcome>) -> Option<Probes> {
    Some(Probes {
        owner: None,
        prometheus: Some(o),
        http: None,
        webhook: None,
    })
}

fn state_json(successes: u32, failures: u32, last_check: &str) -> String {
    format!(
        r#"{{"updateRevision":"b","partition":3,"successes":{successes},"failures":{failures},"lastCheck":"{last_check}"}}"#
    )
}

fn path_of(op: &Value) -> &str {
    op["path"].as_str().unwrap_or_default()
}

#[test]
fn a_set_with_a_query_needs_the_queries_first() {
    let snap = snapshot(vec![prom_set_json(&[])], pods("web", 3, 3));
    assert_eq!(
        plan::needs(&snap, &opts(), now(), &ProbeMap::new()),
        vec![(0, Need::Queries(vec![q(Q0, QUERY)]))]
    );
    let p = plan::plan(&snap, &opts(), now());
    assert_eq!(
        p[0].verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: check due (1 query), not run yet"
        )
    );
    assert!(p[0].step.is_none());
    // A set blocked before the gate needs nothing.
    let mut missing = pods("web", 3, 3);
    missing.remove(0);
    let snap = snapshot(vec![prom_set_json(&[])], missing);
    assert_eq!(plan::needs(&snap, &opts(), now(), &ProbeMap::new()), vec![]);
}

#[rstest]
#[case::no_old_state(None)]
#[case::stale_state_of_an_earlier_step(Some(r#"{"updateRevision":"b","partition":4,"successes":1,"failures":0,"lastCheck":"2026-11-23T01:00:00Z"}"#))]
#[case::unreadable_state(Some("{"))]
fn threshold_1_steps_and_the_step_patch_removes_the_state(#[case] old: Option<&str>) {
    let extra: Vec<(&str, &str)> = old
        .iter()
        .map(|o| ("safe-rollout.dev/prometheus-check", *o))
        .collect();
    let v = prom_set_json(&extra);
    let snap = snapshot(vec![v.clone()], pods("web", 3, 3));
    let mut probes = ProbeMap::new();
    probes.insert(
        0,
        outcomes(vec![QueryOutcome::NonEmpty(1)]).expect("probes"),
    );
    assert_eq!(plan::needs(&snap, &opts(), now(), &probes), vec![]);
    let p = plan::plan_with(&snap, &opts(), now(), &probes)
        .pop()
        .expect("plan");
    assert_eq!(p.verdict, step(3, 2));
    assert!(p.status_annotations.is_none(), "{:?}", p.status_annotations);
    let ops = to_json(&p.step);
    let removes: Vec<&Value> = ops
        .as_array()
        .expect("ops")
        .iter()
        .filter(|op| path_of(op) == "/metadata/annotations/safe-rollout.dev~1prometheus-check")
        .collect();
    match old {
        Some(_) => assert_eq!(
            removes,
            vec![
                &json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check"})
            ]
        ),
        None => assert!(removes.is_empty(), "{ops}"),
    }
    let after = applied(&v, p.step.as_ref().expect("step")).expect("step applies");
    assert_eq!(
        after["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        json!(2)
    );
    assert!(
        after["metadata"]["annotations"]
            .get(key("prometheus-check"))
            .is_none()
    );
}

#[test]
fn threshold_2_writes_the_state_guarded_by_resource_version_when_absent() {
    let v = prom_set_json(&[("safe-rollout.dev/success-threshold", "2")]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::NonEmpty(2)]),
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 1 of 2 consecutive checks passed, 0 failed; next check in 30s"
        )
    );
    assert!(p.step.is_none());
    let new = state_json(1, 0, "2026-11-23T01:20:00Z");
    assert_eq!(
        to_json(&p.status_annotations),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": new}
        ])
    );
    assert_eq!(p.status_events.len(), 1);
    assert_eq!(
        p.status_events[0].type_,
        EventType::Normal,
        "counting up successes is an expected wait"
    );
    let patch = p.status_annotations.as_ref().expect("status_annotations");
    let after = applied(&v, patch).expect("applies to the observed object");
    assert_eq!(
        after["metadata"]["annotations"][key("prometheus-check")],
        json!(new)
    );
    // Another stepper wrote in between: the resourceVersion moved, the patch fails.
    let mut raced = v.clone();
    raced["metadata"]["resourceVersion"] = json!("101");
    assert!(applied(&raced, patch).is_err());
}

#[test]
fn threshold_3_updates_the_state_guarded_by_its_old_value() {
    let old = state_json(1, 0, "2026-11-23T01:19:30Z");
    let v = prom_set_json(&[
        ("safe-rollout.dev/success-threshold", "3"),
        ("safe-rollout.dev/prometheus-check", &old),
        ("safe-rollout.dev/blocked-reason", "PrometheusCheck"),
    ]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::NonEmpty(1)]),
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 2 of 3 consecutive checks passed, 0 failed; next check in 30s"
        )
    );
    let new = state_json(2, 0, "2026-11-23T01:20:00Z");
    assert_eq!(
        to_json(&p.status_annotations),
        json!([
            {"op": "test", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": old},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": new}
        ])
    );
    assert!(p.status_events.is_empty(), "reason already announced");
    let patch = p.status_annotations.as_ref().expect("status_annotations");
    assert!(applied(&v, patch).is_ok());
    // Another stepper counted this period first: its state differs, the test op fails.
    let mut raced = v.clone();
    raced["metadata"]["annotations"][key("prometheus-check")] =
        json!(state_json(2, 0, "2026-11-23T01:19:59Z"));
    assert!(applied(&raced, patch).is_err());
    // Not due yet (10 s later, on the patched object): nothing to read and nothing to write.
    let after = applied(&v, patch).expect("applies");
    let snap = snapshot(vec![after], pods("web", 3, 3));
    let later = now() + SignedDuration::from_secs(10);
    assert_eq!(plan::needs(&snap, &opts(), later, &ProbeMap::new()), vec![]);
    let p = plan::plan_with(&snap, &opts(), later, &ProbeMap::new())
        .pop()
        .expect("plan");
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            "web: 2 of 3 consecutive checks passed, 0 failed; next check in 20s"
        )
    );
    assert!(p.status_annotations.is_none(), "{:?}", p.status_annotations);
}

#[test]
fn a_failure_below_the_limit_is_recorded_and_a_warning() {
    let v = prom_set_json(&[("safe-rollout.dev/failure-limit", "3")]);
    let p = plan_one(v, pods("web", 3, 3), outcomes(vec![QueryOutcome::Empty]));
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            &format!(
                "web: 0 of 1 consecutive checks passed, 1 failed of limit 3; last check failed: {EMPTY_Q0}; next check in 30s"
            )
        )
    );
    assert_eq!(p.status_events[0].type_, EventType::Warning);
    let ops = to_json(&p.status_annotations);
    assert_eq!(
        ops[0],
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": "100"})
    );
    let written = ops
        .as_array()
        .expect("ops")
        .iter()
        .find(|op| path_of(op) == "/metadata/annotations/safe-rollout.dev~1prometheus-check")
        .expect("state written");
    let s: CheckState =
        serde_json::from_str(written["value"].as_str().expect("string")).expect("state");
    assert_eq!(s, st(0, 1, 0, Some(EMPTY_Q0)));
}

#[test]
fn reaching_the_failure_limit_pauses_and_the_next_pass_is_paused() {
    let old = state_json(0, 1, "2026-11-23T01:19:00Z");
    let v = prom_set_json(&[
        ("safe-rollout.dev/failure-limit", "2"),
        ("safe-rollout.dev/prometheus-check", &old),
    ]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::Empty]),
    );
    let reason = format!(
        "PrometheusCheck failed 2 times (failure-limit 2) since the last step; last: {EMPTY_Q0}"
    );
    assert_eq!(
        p.verdict,
        blocked(
            Reason::PrometheusCheck,
            &format!("web: {reason}: rollout paused")
        )
    );
    assert!(p.step.is_none());
    let paused_reason = format!("{reason} (at 2026-11-23T01:20:00Z)");
    assert_eq!(
        to_json(&p.status_annotations),
        json!([
            {"op": "test", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": old},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused", "value": "true"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused-reason", "value": paused_reason},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason",
             "value": format!("FailureLimit: {reason}")}
        ])
    );
    assert!(
        !p.status_events
            .iter()
            .any(|e| e.reason == "RolloutDegraded"),
        "the RolloutPaused Event announces it: {:?}",
        p.status_events
    );
    assert_eq!(p.status_events[0].type_, EventType::Warning);
    let after = applied(
        &v,
        p.status_annotations.as_ref().expect("status_annotations"),
    )
    .expect("applies");
    assert!(
        after["metadata"]["annotations"]
            .get(key("prometheus-check"))
            .is_none()
    );
    let snap = snapshot(vec![after], pods("web", 3, 3));
    assert_eq!(plan::needs(&snap, &opts(), now(), &ProbeMap::new()), vec![]);
    let next = plan::plan(&snap, &opts(), now()).pop().expect("plan");
    assert_eq!(
        next.verdict,
        blocked(
            Reason::Paused,
            &format!("web: safe-rollout.dev/paused is \"true\": {paused_reason}")
        )
    );
    let next_ops = to_json(&next.status_annotations).to_string();
    assert!(
        !next_ops.contains("degraded-reason"),
        "kept while paused: {next_ops}"
    );
}

#[test]
fn a_failure_limit_of_1_pauses_on_the_first_failed_check_guarded_by_resource_version() {
    // An unanswered check never pauses (tests/check_errors.rs); an empty answer does.
    let v = prom_set_json(&[("safe-rollout.dev/failure-limit", "1")]);
    let p = plan_one(
        v.clone(),
        pods("web", 3, 3),
        outcomes(vec![QueryOutcome::Empty]),
    );
    let reason = "PrometheusCheck failed 1 times (failure-limit 1) since the last step; last: safe-rollout.dev/prometheus-query returned an empty result";
    assert_eq!(
        to_json(&p.status_annotations),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "PrometheusCheck"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused", "value": "true"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1paused-reason",
             "value": format!("{reason} (at 2026-11-23T01:20:00Z)")},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1degraded-reason",
             "value": format!("FailureLimit: {reason}")}
        ])
    );
    let after = applied(
        &v,
        p.status_annotations.as_ref().expect("status_annotations"),
    )
    .expect("applies");
    let next = plan_one(after, pods("web", 3, 3), None);
    assert!(
        matches!(&next.verdict, Verdict::Blocked(b) if b.reason == Reason::Paused && b.detail.contains("returned an empty result")),
        "{:?}",
        next.verdict
    );
}

#[rstest]
#[case::paused_with_reason(&[("safe-rollout.dev/paused", "true"), ("safe-rollout.dev/paused-reason", "canary hold")],
    Some("web: safe-rollout.dev/paused is \"true\": canary hold"))]
#[case::paused_without_reason(&[("safe-rollout.dev/paused", "true")], Some("web: safe-rollout.dev/paused is \"true\""))]
#[case::reason_without_pause(&[("safe-rollout.dev/paused-reason", "left over")], None)]
#[case::paused_not_exactly_true(&[("safe-rollout.dev/paused", "True"), ("safe-rollout.dev/paused-reason", "x")], None)]
fn paused_gate_shows_the_paused_reason(#[case] pairs: &[(&str, &str)], #[case] want: Option<&str>) {
    let s = set_with(pairs);
    let config = SetConfig::parse(&s, &Arc::new(keys()));
    let got = gates::paused(&GateInput {
        set: &s,
        config: &config,
        pods: &Default::default(),
        pdbs: &[],
        fleet: FleetView::default(),
        probes: &Probes::default(),
        opts: &opts(),
        now: now(),
    });
    match want {
        None => assert_eq!(got, Ok(())),
        Some(d) => assert_eq!(got, Err(Blocked::new(Reason::Paused, d))),
    }
}

#[test]
fn invalid_prometheus_annotations_block_before_the_pods_are_judged() {
    let v = prom_set_json(&[("safe-rollout.dev/check-period-seconds", "0")]);
    let p = plan_one(v, vec![], None);
    assert_eq!(
        p.verdict,
        blocked(
            Reason::InvalidAnnotation,
            "safe-rollout.dev/check-period-seconds: \"0\" is not valid; expected a whole number ≥ 1 (\"3\")"
        )
    );
}

// ---- Throttled: throttle ----------------------------------------------------------------------------

/// idx 0 ns/b, 1 ns/a, 2 ns2/a (all unstarted, partition 3), 3 ns2/z (started, partition 2): the
/// budget goes to 3, 1, 0, 2 in that order.
fn throttle_sets() -> Vec<StatefulSet> {
    vec![
        set_from(member_json("ns", "b", Some(3), true, None)),
        set_from(member_json("ns", "a", Some(3), true, None)),
        set_from(member_json("ns2", "a", Some(3), true, None)),
        set_from(member_json("ns2", "z", Some(2), true, None)),
    ]
}

fn throttle_opts(per_pass: Option<u32>, per_minute: Option<u32>) -> GateOptions {
    GateOptions {
        max_steps_per_pass: per_pass,
        max_steps_per_minute: per_minute,
        ..GateOptions::default()
    }
}

const PASS_2: &str = "--max-steps-per-pass 2: 2 sets step first in this pass";

#[rstest]
#[case::unlimited(None, None, 9, &[], None)]
#[case::per_pass_2(Some(2), None, 0, &[0, 2], Some(PASS_2))]
#[case::per_pass_ignores_recent(Some(2), None, 50, &[0, 2], Some(PASS_2))]
#[case::per_pass_4_all_fit(Some(4), None, 0, &[], None)]
#[case::per_pass_0(Some(0), None, 0, &[3, 1, 0, 2], Some("--max-steps-per-pass 0: 0 sets step first in this pass"))]
#[case::per_minute_minus_recent(None, Some(4), 1, &[2],
    Some("--max-steps-per-minute 4: 1 steps in the last 60s, 3 more in this pass"))]
#[case::per_minute_no_recent(None, Some(3), 0, &[2],
    Some("--max-steps-per-minute 3: 0 steps in the last 60s, 3 more in this pass"))]
#[case::per_minute_spent(None, Some(2), 2, &[3, 1, 0, 2],
    Some("--max-steps-per-minute 2: 2 steps in the last 60s, 0 more in this pass"))]
#[case::per_minute_overspent(None, Some(2), 5, &[3, 1, 0, 2],
    Some("--max-steps-per-minute 2: 5 steps in the last 60s, 0 more in this pass"))]
#[case::both_minute_smaller(Some(3), Some(5), 3, &[0, 2],
    Some("--max-steps-per-minute 5: 3 steps in the last 60s, 2 more in this pass"))]
#[case::both_pass_smaller(Some(1), Some(5), 0, &[1, 0, 2],
    Some("--max-steps-per-pass 1: 1 sets step first in this pass"))]
#[case::both_equal_names_pass(Some(2), Some(4), 2, &[0, 2], Some(PASS_2))]
fn throttle_budget(
    #[case] per_pass: Option<u32>,
    #[case] per_minute: Option<u32>,
    #[case] recent: u32,
    #[case] want: &[usize],
    #[case] first_detail: Option<&str>,
) {
    let sets = throttle_sets();
    let steps: Vec<(usize, &StatefulSet)> = sets.iter().enumerate().collect();
    let got = throttle::throttle(&steps, &throttle_opts(per_pass, per_minute), recent);
    assert_eq!(got.iter().map(|(i, _)| *i).collect::<Vec<_>>(), want);
    assert!(got.iter().all(|(_, b)| b.reason == Reason::Throttled));
    assert_eq!(got.first().map(|(_, b)| b.detail.as_str()), first_detail);
    if first_detail.is_some_and(|d| d.starts_with("--max-steps-per-pass")) {
        assert!(
            got.iter()
                .all(|(_, b)| Some(b.detail.as_str()) == first_detail)
        );
    }
}

#[test]
fn throttle_keeps_the_snapshot_indices_it_was_given() {
    let sets = throttle_sets();
    // Sparse indices, as plan_with passes them (only the sets that would step).
    let steps = vec![(7, &sets[0]), (11, &sets[3]), (13, &sets[1])];
    let got = throttle::throttle(&steps, &throttle_opts(Some(1), None), 0);
    assert_eq!(got.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![13, 7]);
}

#[test]
fn throttle_per_minute_detail_names_the_steps_granted_for_every_throttled_set() {
    let sets = throttle_sets();
    let steps: Vec<(usize, &StatefulSet)> = sets.iter().enumerate().collect();
    let got = throttle::throttle(&steps, &throttle_opts(None, Some(2)), 2);
    assert_eq!(got.len(), 4);
    for (i, b) in &got {
        assert_eq!(
            b.detail, "--max-steps-per-minute 2: 2 steps in the last 60s, 0 more in this pass",
            "set {i}"
        );
    }
}

// ---- Throttled: steps_in_last_minute ----------------------------------------------------------------

fn stamped(name: &str, stamp: Option<&str>) -> StatefulSet {
    let mut v = member_json("ns", name, Some(3), true, None);
    if let Some(s) = stamp {
        v["metadata"]["annotations"][key("last-partition-update")] = json!(s);
    }
    set_from(v)
}

#[rstest]
#[case::now("2026-11-23T01:20:00Z", 1)]
#[case::one_second_ago("2026-11-23T01:19:59Z", 1)]
#[case::fifty_nine_seconds_ago("2026-11-23T01:19:01Z", 1)]
#[case::just_under_sixty("2026-11-23T01:19:00.001Z", 1)]
#[case::sixty_seconds_ago("2026-11-23T01:19:00Z", 0)]
#[case::sixty_one_seconds_ago("2026-11-23T01:18:59Z", 0)]
#[case::an_hour_ago("2026-11-23T00:20:00Z", 0)]
#[case::unreadable("yesterday", 0)]
#[case::empty("", 0)]
#[case::date_only("2026-11-23", 0)]
fn steps_in_last_minute_edges(#[case] stamp: &str, #[case] want: u32) {
    let sets = vec![stamped("a", Some(stamp))];
    assert_eq!(throttle::steps_in_last_minute(&configs(&sets), now()), want);
}

#[test]
fn steps_in_last_minute_counts_sets_over_the_fleet() {
    let mut other_prefix = member_json("ns", "f", Some(3), true, None);
    other_prefix["metadata"]["annotations"]["other.dev/last-partition-update"] =
        json!("2026-11-23T01:19:50Z");
    let sets = vec![
        stamped("a", Some("2026-11-23T01:19:01Z")),
        stamped("b", Some("2026-11-23T01:19:00Z")),
        stamped("c", Some("garbage")),
        stamped("d", None),
        stamped("e", Some("2026-11-23T01:19:50Z")),
        set_from(other_prefix),
    ];
    assert_eq!(throttle::steps_in_last_minute(&configs(&sets), now()), 2);
    assert_eq!(throttle::steps_in_last_minute(&configs(&[]), now()), 0);
    let later: Timestamp = at("2026-11-23T01:20:01Z");
    assert_eq!(throttle::steps_in_last_minute(&configs(&sets), later), 1);
}

// ---- Throttled: through plan_with -------------------------------------------------------------------

#[test]
fn five_steppable_sets_with_two_steps_per_pass() {
    let names = ["e", "c", "a", "d", "b"];
    let sets = names
        .iter()
        .map(|n| member_json("ns", n, Some(3), true, None))
        .collect();
    let all_pods = names.iter().flat_map(|n| member_pods("ns", n, 3)).collect();
    let snap = snapshot(sets, all_pods);
    let plans = plan::plan_with(
        &snap,
        &throttle_opts(Some(2), None),
        now(),
        &ProbeMap::new(),
    );
    assert_eq!(plans.len(), 5);
    for n in ["a", "b"] {
        let p = by_name(&plans, "ns", n);
        assert_eq!(p.verdict, step(3, 2), "{n}");
        assert!(p.step.is_some(), "{n}");
    }
    for n in ["c", "d", "e"] {
        let p = by_name(&plans, "ns", n);
        assert_eq!(p.verdict, blocked(Reason::Throttled, PASS_2), "{n}");
        assert!(p.step.is_none(), "{n}");
        assert_eq!(
            to_json(&p.status_annotations),
            json!([{"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason",
                    "value": "Throttled"}]),
            "{n}"
        );
        assert_eq!(p.status_events[0].type_, EventType::Normal, "{n}");
        assert_eq!(p.status_events[0].note, format!("Throttled {PASS_2}"));
    }
    // Without the flag all five step.
    let plans = plan::plan(&snap, &opts(), now());
    assert!(plans.iter().all(|p| p.verdict == step(3, 2)));
}

#[test]
fn a_started_rollout_gets_the_budget_first_through_plan_with() {
    // e is started (partition 2) and was stepped 30 s ago: it counts as recent and still goes first.
    let mut e = member_json("ns", "e", Some(2), true, None);
    e["metadata"]["annotations"][key("last-partition-update")] = json!("2026-11-23T01:19:30Z");
    let sets = vec![
        member_json("ns", "a", Some(3), true, None),
        member_json("ns", "b", Some(3), true, None),
        e,
    ];
    let all_pods = [
        member_pods("ns", "a", 3),
        member_pods("ns", "b", 3),
        member_pods("ns", "e", 2),
    ]
    .concat();
    let plans = plan::plan_with(
        &snapshot(sets, all_pods),
        &throttle_opts(None, Some(2)),
        now(),
        &ProbeMap::new(),
    );
    assert_eq!(by_name(&plans, "ns", "e").verdict, step(2, 1));
    assert_eq!(
        by_name(&plans, "ns", "a").verdict,
        blocked(
            Reason::Throttled,
            "--max-steps-per-minute 2: 1 steps in the last 60s, 1 more in this pass"
        )
    );
    assert!(matches!(&by_name(&plans, "ns", "b").verdict,
                     Verdict::Blocked(b) if b.reason == Reason::Throttled));
}

#[test]
fn a_throttled_set_still_records_its_prometheus_check_state() {
    let with_query = |n: &str| {
        annotate(
            member_json("ns", n, Some(3), true, None),
            &[(&key("prometheus-query"), QUERY)],
        )
    };
    let snap = snapshot(
        vec![with_query("a"), with_query("b")],
        [member_pods("ns", "a", 3), member_pods("ns", "b", 3)].concat(),
    );
    let o = throttle_opts(Some(1), None);
    assert_eq!(
        plan::needs(&snap, &o, now(), &ProbeMap::new()),
        vec![
            (0, Need::Queries(vec![q(Q0, QUERY)])),
            (1, Need::Queries(vec![q(Q0, QUERY)]))
        ]
    );
    let mut probes = ProbeMap::new();
    for i in 0..2 {
        probes.insert(
            i,
            outcomes(vec![QueryOutcome::NonEmpty(1)]).expect("probes"),
        );
    }
    let plans = plan::plan_with(&snap, &o, now(), &probes);
    assert_eq!(plans[0].verdict, step(3, 2));
    assert!(
        plans[0].status_annotations.is_none(),
        "{:?}",
        plans[0].status_annotations
    );
    assert_eq!(
        plans[1].verdict,
        blocked(
            Reason::Throttled,
            "--max-steps-per-pass 1: 1 sets step first in this pass"
        )
    );
    let new = state_json(1, 0, "2026-11-23T01:20:00Z");
    assert_eq!(
        to_json(&plans[1].status_annotations),
        json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1blocked-reason", "value": "Throttled"},
            {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check", "value": new}
        ])
    );
    // Next pass, 10 s later, b alone: the recorded pass lets it step without a new query.
    let b = applied(
        &with_query("b"),
        plans[1]
            .status_annotations
            .as_ref()
            .expect("status_annotations"),
    )
    .expect("applies");
    let later = now() + SignedDuration::from_secs(10);
    let snap = snapshot(vec![b], member_pods("ns", "b", 3));
    assert_eq!(plan::needs(&snap, &o, later, &ProbeMap::new()), vec![]);
    let p = plan::plan_with(&snap, &o, later, &ProbeMap::new())
        .pop()
        .expect("plan");
    assert_eq!(p.verdict, step(3, 2));
    let ops = to_json(&p.step);
    assert!(
        ops.as_array().expect("ops").contains(
            &json!({"op": "remove", "path": "/metadata/annotations/safe-rollout.dev~1prometheus-check"})
        ),
        "{ops}"
    );
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

// ---- multi-pass sequences (each pass's patches applied to the set's JSON) ---------------------------

/// One pass over `web` alone at `t` with `probes`; returns the plan and the set's JSON after its
/// status_annotations and step patches, with the StatefulSet controller's part of a step (pods ≥ partition on
/// `b`, status counters) simulated.
fn pass_at(v: &Value, o: &GateOptions, t: Timestamp, probes: Option<Probes>) -> (SetPlan, Value) {
    let replicas = v["spec"]["replicas"].as_i64().expect("replicas");
    let partition = v["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .expect("partition");
    let from_new = u32::try_from(partition.min(replicas)).expect("ordinal");
    let snap = snapshot(
        vec![v.clone()],
        pods("web", u32::try_from(replicas).expect("count"), from_new),
    );
    let mut map = ProbeMap::new();
    if let Some(p) = probes {
        map.insert(0, p);
    }
    let p = plan::plan_with(&snap, o, t, &map).pop().expect("plan");
    let mut after = v.clone();
    for patch in [&p.status_annotations, &p.step].into_iter().flatten() {
        after = applied(&after, patch).expect("patch applies");
    }
    let partition = after["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .expect("partition");
    let updated = replicas - partition.min(replicas);
    after["status"]["updatedReplicas"] = json!(updated);
    after["status"]["currentReplicas"] = json!(replicas - updated);
    (p, after)
}

#[test]
fn max_steps_per_minute_limits_the_steps_of_one_set_too() {
    let o = throttle_opts(None, Some(2));
    let mut v = annotate(
        set_json("web", 5, Some(5), 0),
        &[(&key("initialized"), "true")],
    );
    let mut stepped = Vec::new();
    for secs in [0, 10, 20] {
        let t = now() + SignedDuration::from_secs(secs);
        let (p, after) = pass_at(&v, &o, t, None);
        if matches!(p.verdict, Verdict::Step { .. }) {
            stepped.push(secs);
        }
        v = after;
    }
    assert_eq!(stepped, vec![0, 10], "at most 2 steps within one minute");
}

#[test]
fn a_failure_limit_pause_is_announced_as_a_warning() {
    let o = opts();
    let mut v = prom_set_json(&[
        ("safe-rollout.dev/success-threshold", "2"),
        ("safe-rollout.dev/failure-limit", "2"),
    ]);
    let mut events = Vec::new();
    let mut decisions = Vec::new();
    for (secs, outcome) in [
        (0, Some(QueryOutcome::NonEmpty(1))),
        (30, Some(QueryOutcome::Empty)),
        (60, Some(QueryOutcome::Empty)),
        (90, None),
    ] {
        let t = now() + SignedDuration::from_secs(secs);
        let (p, after) = pass_at(
            &v,
            &o,
            t,
            outcome.map(|q| outcomes(vec![q]).expect("probes")),
        );
        decisions.push(match &p.verdict {
            Verdict::Blocked(b) => b.reason,
            d => panic!("{secs}s: {d:?}"),
        });
        events.extend(p.status_events);
        v = after;
    }
    assert_eq!(
        decisions,
        [
            Reason::PrometheusCheck,
            Reason::PrometheusCheck,
            Reason::PrometheusCheck,
            Reason::Paused
        ]
    );
    assert!(
        events.iter().any(|e| e.type_ == EventType::Warning),
        "{events:#?}"
    );
}

#[test]
fn a_failing_check_then_the_pause_over_passes() {
    // The sequence above, failing from the first check: its first Event is a Warning.
    let o = opts();
    let mut v = prom_set_json(&[("safe-rollout.dev/failure-limit", "2")]);
    let (p, after) = pass_at(&v, &o, now(), outcomes(vec![QueryOutcome::Empty]));
    assert_eq!(p.status_events.len(), 1);
    assert_eq!(p.status_events[0].type_, EventType::Warning);
    v = after;
    // 10 s later: not due, nothing read or written.
    let later = now() + SignedDuration::from_secs(10);
    let (p, after) = pass_at(&v, &o, later, None);
    assert!(p.status_annotations.is_none() && p.step.is_none());
    assert_eq!(after, v);
    // 30 s later: due; the second failure pauses.
    let (p, after) = pass_at(
        &v,
        &o,
        now() + SignedDuration::from_secs(30),
        outcomes(vec![QueryOutcome::Empty]),
    );
    assert!(
        matches!(&p.verdict, Verdict::Blocked(b) if b.detail.ends_with(": rollout paused")),
        "{:?}",
        p.verdict
    );
    assert_eq!(
        after["metadata"]["annotations"][key("paused")],
        json!("true")
    );
    // A person resumes (removes paused and paused-reason): the counts start over, the check is due.
    let mut resumed = after;
    let ann = resumed["metadata"]["annotations"]
        .as_object_mut()
        .expect("annotations");
    ann.remove(&key("paused"));
    ann.remove(&key("paused-reason"));
    let snap = snapshot(vec![resumed.clone()], pods("web", 3, 3));
    let t = now() + SignedDuration::from_secs(40);
    assert_eq!(
        plan::needs(&snap, &o, t, &ProbeMap::new()),
        vec![(0, Need::Queries(vec![q(Q0, QUERY)]))]
    );
    let (p, _) = pass_at(&resumed, &o, t, outcomes(vec![QueryOutcome::NonEmpty(1)]));
    assert_eq!(p.verdict, step(3, 2));
}
