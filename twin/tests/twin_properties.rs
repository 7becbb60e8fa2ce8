//! The twin by property: generated StatefulSet requests (CREATE, or UPDATE of an old/new pair varying
//! replicas, partition, force, OnDelete, the step and initialized stamps, readiness, spec and metadata
//! changes, with either annotation prefix) give the same stored object through policy.wasm and through the
//! CEL of `deploy/native/`. Objects are generated as the API server presents them (defaulted).
//!
//! `TWIN_CASES` sets the number of cases (default 512); `TWIN_ROWS=1` prints how often each row came up.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;

use common::{Agreement, INVALID, judge, presented, twin, wasm};
use native_twin::policy::SHIPPED_PREFIX;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

/// The stored object's state.
#[derive(Debug, Clone)]
struct Side {
    replicas: i64,
    /// `None`: `type: RollingUpdate` with no `rollingUpdate` (kept so by the API server's defaulting).
    partition: Option<i64>,
    on_delete: bool,
    forced: Option<&'static str>,
    initialized: Option<&'static str>,
    step_stamp: Option<&'static str>,
    annotations_map: bool,
    image: &'static str,
    label: &'static str,
    min_ready_seconds: i64,
}

#[derive(Debug, Clone)]
struct Status {
    generation: i64,
    observed_behind: bool,
    ready: i64,
    available: i64,
}

#[derive(Debug, Clone)]
struct Case {
    create: bool,
    prefix: &'static str,
    old: Side,
    new: Side,
    status: Option<Status>,
}

fn side() -> impl Strategy<Value = Side> {
    (
        (
            0i64..5,
            prop_oneof![8 => (0i64..7).prop_map(Some), 1 => Just(None), 1 => Just(Some(-1))],
        ),
        prop::bool::weighted(0.15),
        prop::sample::select(vec![None, None, Some("true"), Some("True")]),
        prop::sample::select(vec![None, Some("true"), Some("false")]),
        prop::sample::select(vec![
            None,
            Some("2026-11-23T10:00:00Z"),
            Some("2026-11-23T10:05:00Z"),
        ]),
        prop::bool::weighted(0.85),
        prop::sample::select(vec!["nginx:1.25", "nginx:1.26"]),
        prop::sample::select(vec!["team-a", "team-b"]),
        prop::sample::select(vec![0i64, 10]),
    )
        .prop_map(
            |(
                (replicas, partition),
                on_delete,
                forced,
                initialized,
                step_stamp,
                map,
                image,
                label,
                mrs,
            )| Side {
                replicas,
                partition,
                on_delete,
                forced,
                initialized,
                step_stamp,
                annotations_map: map
                    || forced.is_some()
                    || initialized.is_some()
                    || step_stamp.is_some(),
                image,
                label,
                min_ready_seconds: mrs,
            },
        )
}

/// A new side that keeps most of the old one: each field changes with a small probability, so spec-equal
/// pairs (metadata-only, partition-only) are common.
fn changed(old: Side) -> impl Strategy<Value = Side> {
    (side(), prop::collection::vec(prop::bool::weighted(0.2), 10)).prop_map(
        move |(other, flips)| {
            let pick = |i: usize| flips[i];
            let mut new = old.clone();
            if pick(0) {
                new.replicas = other.replicas;
            }
            if pick(1) || pick(9) {
                new.partition = other.partition;
            }
            if pick(2) {
                new.on_delete = other.on_delete;
            }
            if pick(3) {
                new.forced = other.forced;
            }
            if pick(4) {
                new.initialized = other.initialized;
            }
            if pick(5) || pick(9) {
                new.step_stamp = other.step_stamp;
            }
            if pick(6) {
                new.image = other.image;
            }
            if pick(7) {
                new.label = other.label;
            }
            if pick(8) {
                new.min_ready_seconds = other.min_ready_seconds;
            }
            new.annotations_map = if pick(7) {
                other.annotations_map
            } else {
                old.annotations_map
            } || new.forced.is_some()
                || new.initialized.is_some()
                || new.step_stamp.is_some();
            new
        },
    )
}

fn status() -> impl Strategy<Value = Option<Status>> {
    prop::option::weighted(
        0.9,
        (
            1i64..4,
            prop::bool::weighted(0.2),
            prop_oneof![Just(0i64), 0i64..5],
            0i64..5,
        )
            .prop_map(|(generation, behind, ready, available)| Status {
                generation,
                observed_behind: behind,
                ready,
                available,
            }),
    )
}

/// Any case: CREATE, or UPDATE of an old side and a [`changed`] new one.
fn any_case() -> impl Strategy<Value = Case> {
    (
        prop::bool::weighted(0.2),
        prop::sample::select(vec![SHIPPED_PREFIX, "moco.cybozu.com"]),
        side(),
        status(),
    )
        .prop_flat_map(|(create, prefix, old, status)| {
            changed(old.clone()).prop_map(move |new| Case {
                create,
                prefix,
                old: old.clone(),
                new,
                status: status.clone(),
            })
        })
}

/// An UPDATE that moves only the partition (the stepper's step, a person's edit), lowered 7 times in
/// 10: the rows of docs/design.md's rows 7 and 8, rare among [`any_case`]'s since they need every other
/// field unchanged.
/// Half of them on a set not initialized yet (no `initialized` stamp, no Ready pod).
fn partition_move() -> impl Strategy<Value = Case> {
    (
        any_case(),
        (prop::bool::weighted(0.7), 1i64..4),
        prop::sample::select(vec![None, Some("2026-11-23T10:10:00Z")]),
        any::<bool>(),
    )
        .prop_map(|(mut case, (lower, by), stamp, uninitialized)| {
            let before = case.old.partition.unwrap_or(0);
            let partition = if lower {
                (before - by).max(0)
            } else {
                before + by
            };
            case.create = false;
            case.old.on_delete = false;
            case.old.forced = None;
            if uninitialized {
                case.old.initialized = None;
                if let Some(status) = &mut case.status {
                    status.ready = 0;
                }
            }
            case.new = Side {
                partition: Some(partition),
                step_stamp: stamp.or(case.old.step_stamp),
                ..case.old.clone()
            };
            case.new.annotations_map |= case.new.step_stamp.is_some();
            case
        })
}

/// The cases of the property: [`any_case`], and [`partition_move`] often enough that every row of the
/// table comes up in a run. Measured over 10,000 cases (`TWIN_ROWS=1 TWIN_CASES=10000` prints the
/// counts), the least common rows (`Invalid`, `PartitionRestored`, `NotInitialized`) each come up in
/// about 3.5–4 % of cases, so 512 cases miss one with a chance of about 1 in 10⁸ (a row at 0.5 %,
/// as `LoweredBeforeInitialized` was before this mix, is missed by 8 % of runs).
fn case() -> impl Strategy<Value = Case> {
    prop_oneof![3 => any_case(), 2 => partition_move()]
}

fn statefulset(side: &Side, prefix: &str, status: Option<&Status>) -> Value {
    let mut annotations = Map::new();
    for (name, value) in [
        ("force-rolling-update", side.forced),
        ("initialized", side.initialized),
        ("last-partition-update", side.step_stamp),
    ] {
        if let Some(value) = value {
            annotations.insert(format!("{prefix}/{name}"), Value::from(value));
        }
    }
    let strategy = match (side.on_delete, side.partition) {
        (true, _) => json!({"type": "OnDelete"}),
        (false, None) => json!({"type": "RollingUpdate"}),
        (false, Some(p)) => json!({"type": "RollingUpdate", "rollingUpdate": {"partition": p}}),
    };
    let generation = status.map_or(1, |s| s.generation);
    let mut metadata = json!({"name": "web", "namespace": "demo", "uid": "u-1", "generation": generation,
        "labels": {"team": side.label}});
    if side.annotations_map {
        metadata["annotations"] = Value::Object(annotations);
    }
    let mut object = json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata,
        "spec": {
            "replicas": side.replicas, "serviceName": "web", "podManagementPolicy": "Parallel",
            "minReadySeconds": side.min_ready_seconds, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": side.image}]}},
            "updateStrategy": strategy,
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}
        }
    });
    if let Some(s) = status {
        object["status"] = json!({
            "replicas": side.replicas,
            "observedGeneration": if s.observed_behind { s.generation - 1 } else { s.generation },
            "readyReplicas": s.ready, "availableReplicas": s.available.min(s.ready),
            "currentRevision": "web-1", "updateRevision": "web-1", "updatedReplicas": side.replicas
        });
    }
    object
}

fn request(case: &Case) -> Value {
    let object = statefulset(&case.new, case.prefix, None);
    let mut request = json!({
        "uid": "generated", "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
        "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
        "name": "web", "namespace": "demo",
        "operation": if case.create { "CREATE" } else { "UPDATE" },
        "userInfo": {"username": "admin"}, "object": object,
    });
    if !case.create {
        request["oldObject"] = statefulset(&case.old, case.prefix, case.status.as_ref());
    }
    presented(&request)
}

#[test]
fn generated_requests_store_the_same_object() {
    let cases = std::env::var("TWIN_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(512);
    let twins = [
        (SHIPPED_PREFIX, twin(SHIPPED_PREFIX)),
        ("moco.cybozu.com", twin("moco.cybozu.com")),
    ];
    let policy = wasm();
    let rows = Mutex::new(BTreeMap::<String, usize>::new());
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let result = runner.run(&case(), |case| {
        let twin = &twins
            .iter()
            .find(|(p, _)| *p == case.prefix)
            .expect("a twin per prefix")
            .1;
        let request = request(&case);
        let row = twin
            .variable(&request, "row")
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let agreement = judge(twin, &policy, &request, case.prefix).map_err(TestCaseError::fail)?;
        let by_design_only_when_invalid = match agreement {
            Agreement::Same => true,
            Agreement::ByDesign(name) => name == INVALID && row == INVALID,
        };
        prop_assert!(by_design_only_when_invalid, "row {row}: {agreement:?}");
        *rows
            .lock()
            .unwrap()
            .entry(row.as_str().unwrap_or("?").to_owned())
            .or_default() += 1;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = rows.into_inner().unwrap();
    let every_row = [
        "Forced",
        "OnDelete",
        "Invalid",
        "StagedOnCreate",
        "StagedOnUpdate",
        "NotInitialized",
        "MetadataOnly",
        "PartitionRaised",
        "Stepped",
        "LoweredBeforeInitialized",
        "PartitionRestored",
    ];
    if std::env::var_os("TWIN_ROWS").is_some() {
        eprintln!("rows in {cases} cases: {seen:?}");
    }
    let missing: Vec<_> = every_row
        .iter()
        .filter(|r| !seen.contains_key(**r))
        .collect();
    assert!(
        missing.is_empty() || cases < 256,
        "rows never generated in {cases} cases: {missing:?} (rows seen: {seen:?})"
    );
}
