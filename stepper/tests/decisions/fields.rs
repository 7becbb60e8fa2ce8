//! "One picture of the cluster" (issue 34): every reader declares the fields of the objects it reads
//! (`model::fields`; the gates in `GATES`, the annotations' parse, recovery, the figures), and
//! - each gate decides on the objects cut down to its declaration exactly as on the whole objects, in
//!   many states of the recorded rollout (so a gate that reads a field it does not declare fails here);
//! - so do stuck-pod recovery and a whole pass's plans on the union of the declarations;
//! - `watch`'s caches keep every declared field, and nothing else (`cluster::cached`).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common::states::states;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sts_stepper::cluster::cached::{CachedPod, CachedSet, trim_pdb};
use sts_stepper::config::{self, Keys, Served, SetConfig, StepperScope};
use sts_stepper::gates::check::http::HttpAnswer;
use sts_stepper::gates::check::prometheus::QueryOutcome;
use sts_stepper::gates::recovery;
use sts_stepper::gates::{
    FleetView, GATES, GateEntry, GateInput, GateOptions, OwnerProbe, Probes, group_holder,
};
use sts_stepper::model::fields::{self, Field, Object, project};
use sts_stepper::model::pods::{PdbView, pods_by_ordinal};
use sts_stepper::plan::fields::union;
use sts_stepper::plan::{SetPlan, Snapshot, plan};

/// `o` cut down to `fields` (its kind's), decoded again as the same type.
fn cut<T: Serialize + DeserializeOwned>(o: &T, object: Object, fields: &[Field], keys: &Keys) -> T {
    let whole = serde_json::to_value(o).expect("json");
    serde_json::from_value(project(&whole, object, fields, &|k| keys.owns(k))).expect("decodes")
}

/// Every object of `snap` cut down to `fields`.
fn cut_snapshot(snap: &Snapshot, fields: &[Field], keys: &Keys) -> Snapshot {
    Snapshot {
        statefulsets: (snap.statefulsets.iter())
            .map(|s| Arc::new(cut(&**s, Object::StatefulSet, fields, keys)))
            .collect(),
        pods: (snap.pods.iter())
            .map(|p| cut(p, Object::Pod, fields, keys))
            .collect(),
        pdbs: (snap.pdbs.iter())
            .map(|p| cut(p, Object::PodDisruptionBudget, fields, keys))
            .collect(),
        ..snap.clone()
    }
}

/// What every gate reads besides its own fields: the objects' identity and ownership, the annotations.
fn with_common(own: &[&[Field]]) -> Vec<Field> {
    let mut all: Vec<Field> = [
        fields::IDENTITY.fields,
        fields::OWNERSHIP.fields,
        config::READS,
    ]
    .into_iter()
    .chain(own.iter().copied())
    .flatten()
    .copied()
    .collect();
    all.sort();
    all.dedup();
    all
}

/// The I/O gates' reads, as a pass would have made them: an owner whose `Healthy` condition is
/// `healthy`, a query with a result or none, an HTTP answer whose `status` is `ok` or not.
fn probes(healthy: bool) -> Probes {
    let status = if healthy { "True" } else { "False" };
    Probes {
        owner: Some(OwnerProbe::Found(json!({
            "metadata": {"generation": 3},
            "status": {"observedGeneration": 3,
                       "conditions": [{"type": "Healthy", "status": status}]}}))),
        prometheus: Some(vec![if healthy {
            QueryOutcome::NonEmpty(1)
        } else {
            QueryOutcome::Empty
        }]),
        http: Some(HttpAnswer::Json(
            json!({"status": if healthy { "ok" } else { "down" }}),
        )),
        webhook: None,
    }
}

/// Gate `g` on set `i` of `snap` (its pods, its namespace's PDBs, its rollout group's holder).
fn judge(
    g: &GateEntry,
    snap: &Snapshot,
    i: usize,
    opts: &GateOptions,
    probes: &Probes,
    now: Timestamp,
) -> String {
    let set = &*snap.statefulsets[i];
    let config = SetConfig::parse(set, &opts.keys);
    let pods: BTreeMap<u32, &Pod> = pods_by_ordinal(set, &snap.pods);
    let pdbs: Vec<PdbView<'_>> = snap.pdbs.iter().map(PdbView::new).collect();
    let configs: Vec<SetConfig> = (snap.statefulsets.iter())
        .map(|s| SetConfig::parse(s, &opts.keys))
        .collect();
    let group_holder = config.rollout_group.as_ref().and_then(|group| {
        group_holder(
            (snap.statefulsets.iter().zip(&configs))
                .filter(|(_, c)| c.rollout_group.as_ref() == Some(group))
                .map(|(s, _)| &**s),
        )
    });
    let input = GateInput {
        set,
        config: &config,
        pods: &pods,
        pdbs: &pdbs,
        fleet: FleetView {
            group_holder,
            covered_namespaces: None,
        },
        probes,
        opts,
        now,
    };
    format!("{:?}", (g.check)(&input))
}

const TIMES: [&str; 3] = [
    "2026-11-23T01:10:50Z",
    "2026-11-23T01:16:00Z",
    "2026-11-23T03:00:00Z",
];

#[test]
fn each_gate_decides_on_its_declared_fields_as_on_the_whole_objects() {
    let mut judged = BTreeMap::<&str, std::collections::BTreeSet<bool>>::new();
    // The stepper's scope: every set, or the opt-in label's (which no fixture set carries).
    let scopes = [None, Some("safe-rollout.dev/guard=true")];
    for (pdb_gate, scope) in [true, false].into_iter().zip(scopes) {
        let opts = GateOptions {
            pdb_gate,
            served: Served::default().with(&config::http_check::FLAG, vec!["app".into()]),
            scope: StepperScope::new(scope).expect("selector"),
            ..GateOptions::default()
        };
        for (name, snap) in states() {
            for g in GATES {
                let cut = cut_snapshot(&snap, &with_common(g.fields), &opts.keys);
                for (t, healthy) in TIMES.iter().flat_map(|t| [(t, true), (t, false)]) {
                    let now: Timestamp = t.parse().expect("time");
                    let probes = probes(healthy);
                    for i in 0..snap.statefulsets.len() {
                        let whole = judge(g, &snap, i, &opts, &probes, now);
                        assert_eq!(
                            judge(g, &cut, i, &opts, &probes, now),
                            whole,
                            "gate {} on {name} at {t}: it reads a field it does not declare",
                            g.reason
                        );
                        judged
                            .entry(g.reason.as_str())
                            .or_default()
                            .insert(whole.starts_with("Ok"));
                    }
                }
            }
        }
    }
    // The states reach both answers of every gate (a gate always passing would prove nothing).
    for g in GATES {
        let seen = &judged[g.reason.as_str()];
        assert!(
            seen.len() == 2,
            "gate {} only ever passed or only ever blocked: {seen:?}",
            g.reason
        );
    }
}

#[test]
fn recovery_and_whole_plans_decide_on_the_union_as_on_the_whole_objects() {
    let keys = Arc::new(Keys::default());
    let opts = GateOptions {
        recover_stuck_pods: true,
        ..GateOptions::default()
    };
    let recovery_fields = with_common(&[recovery::READS, sts_stepper::gates::POD_STATE]);
    let union = union();
    let decided = |snap: &Snapshot, now| -> Vec<(ObjectReference, SetPlan)> {
        plan(snap, &opts, now)
            .into_iter()
            .map(|mut p| {
                let reference = p.reference();
                p.set = Arc::default();
                (reference, p)
            })
            .collect()
    };
    let mut found = 0;
    for (name, snap) in states() {
        let cut_recovery = cut_snapshot(&snap, &recovery_fields, &keys);
        let cut_union = cut_snapshot(&snap, &union, &keys);
        for t in TIMES {
            let now: Timestamp = t.parse().expect("time");
            for (whole, cut) in snap.statefulsets.iter().zip(&cut_recovery.statefulsets) {
                let decide = |s: &StatefulSet, pods: &[Pod]| {
                    let config = SetConfig::parse(s, &keys);
                    recovery::decide(s, &config, &pods_by_ordinal(s, pods), true, now)
                };
                let want = decide(whole, &snap.pods);
                found += usize::from(want.is_some());
                assert_eq!(
                    decide(cut, &cut_recovery.pods),
                    want,
                    "recovery on {name} at {t}"
                );
            }
            assert_eq!(
                decided(&cut_union, now),
                decided(&snap, now),
                "plans on {name} at {t}"
            );
        }
    }
    assert!(found > 0, "some state has a stuck pod");
}

/// `o` as `watch`'s store keeps it, read back as a pass reads it, as JSON.
fn through_cache<C, T>(o: &T, keep: impl Fn(&mut C), back: impl Fn(&C) -> T) -> Value
where
    C: DeserializeOwned,
    T: Serialize,
{
    let mut c: C = serde_json::from_value(serde_json::to_value(o).expect("json")).expect("decodes");
    keep(&mut c);
    serde_json::to_value(back(&c)).expect("json")
}

/// `v` without what says nothing: `null`, `""`, `{}`, `[]` (k8s-openapi writes required fields even
/// when unset, `spec.template: {}`; the kept ownerReference's `apiVersion`), and without the
/// `apiVersion` and `kind` k8s-openapi writes for every resource.
fn pruned(v: &Value) -> Value {
    let mut v = pruned_members(v);
    if let Some(m) = v.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}

fn pruned_members(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), pruned_members(v)))
                .filter(|(_, v)| {
                    !matches!(v, Value::Null) && v != "" && v != &json!({}) && v != &json!([])
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(pruned_members).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_caches_keep_every_declared_field_and_nothing_else() {
    let keys = Arc::new(Keys::default());
    let union = union();
    let own = |k: &str| keys.owns(k);
    let mut objects: Vec<(Object, Value, Value)> = Vec::new();
    for (_, snap) in states() {
        for s in &snap.statefulsets {
            let cached = through_cache::<CachedSet, StatefulSet>(
                &**s,
                |c| c.keep(&keys),
                |c| (**c.set()).clone(),
            );
            objects.push((
                Object::StatefulSet,
                serde_json::to_value(&**s).expect("json"),
                cached,
            ));
        }
        for p in &snap.pods {
            let cached = through_cache::<CachedPod, Pod>(p, |c| c.keep(&keys), |c| Pod::from(c));
            objects.push((Object::Pod, serde_json::to_value(p).expect("json"), cached));
        }
        for p in &snap.pdbs {
            let cached = through_cache::<PodDisruptionBudget, PodDisruptionBudget>(
                p,
                trim_pdb,
                Clone::clone,
            );
            objects.push((
                Object::PodDisruptionBudget,
                serde_json::to_value(p).expect("json"),
                cached,
            ));
        }
    }
    for (object, whole, cached) in &objects {
        assert_eq!(
            project(cached, *object, &union, &own),
            project(whole, *object, &union, &own),
            "a {object:?} cache drops a declared field"
        );
        assert_eq!(
            pruned(&project(cached, *object, &union, &own)),
            pruned(cached),
            "a {object:?} cache keeps a field no reader declares"
        );
    }
}
