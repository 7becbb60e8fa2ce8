//! The fuzz soak: arbitrary and mutated requests through the `validate` entry point (natively, the same
//! function the wasm export calls; in wasm a panic is a trap, which the API server turns into a failed
//! admission). Every answer must be a well-formed ValidationResponse: accepted (maybe with a JSON object as
//! `mutated_object`) or rejected with a message; where the request is one the independent oracle
//! (`oracle/mod.rs`, the table written a second way) can read, the answer must be the table's, row and
//! returned object. `FUZZ_CASES` cases (4,000 by default; `make fuzz` runs 1,000,000), from every real
//! AdmissionReview in `fixtures/admission/` and `test_data/`.

use std::path::Path;
use std::sync::OnceLock;

use kubewarden_policy_sdk::response::ValidationResponse;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::{Value, json};
use sts_safe_rollout::response::Response;

mod oracle;

fn check_well_formed(payload: &[u8]) -> Result<ValidationResponse, TestCaseError> {
    let raw = sts_safe_rollout::validate(payload)
        .map_err(|e| TestCaseError::fail(format!("validate returned an error: {e}")))?;
    let response: ValidationResponse = serde_json::from_slice(&raw)
        .map_err(|e| TestCaseError::fail(format!("not a ValidationResponse: {e}")))?;
    if response.accepted {
        prop_assert!(response.message.is_none());
        if let Some(m) = &response.mutated_object {
            prop_assert!(m.is_object(), "mutated_object must be an object: {m}");
        }
    } else {
        prop_assert!(response.mutated_object.is_none());
        prop_assert!(
            response.message.as_deref().is_some_and(|m| !m.is_empty()),
            "rejection without a message"
        );
    }
    Ok(response)
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-5i64..20).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        Just(Value::from("true")),
        Just(Value::from("RollingUpdate")),
        Just(Value::from("OnDelete")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,8}",
                    Just("partition".to_string()),
                    Just("replicas".to_string()),
                    Just("safe-rollout.dev/force-rolling-update".to_string()),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Field paths (JSON Pointer) in a real request where a malformed value is most likely to hurt.
const PATHS: &[&str] = &[
    "/request",
    "/request/kind",
    "/request/kind/kind",
    "/request/operation",
    "/request/subResource",
    "/request/dryRun",
    "/request/object",
    "/request/oldObject",
    "/request/object/metadata",
    "/request/object/metadata/annotations",
    "/request/object/metadata/annotations/safe-rollout.dev~1force-rolling-update",
    "/request/object/metadata/annotations/safe-rollout.dev~1last-partition-update",
    "/request/object/metadata/generation",
    "/request/object/spec",
    "/request/object/spec/replicas",
    "/request/object/spec/updateStrategy",
    "/request/object/spec/updateStrategy/type",
    "/request/object/spec/updateStrategy/rollingUpdate",
    "/request/object/spec/updateStrategy/rollingUpdate/partition",
    "/request/object/spec/template",
    "/request/object/spec/minReadySeconds",
    "/request/oldObject/metadata",
    "/request/oldObject/metadata/annotations",
    "/request/oldObject/spec/replicas",
    "/request/oldObject/spec/updateStrategy/rollingUpdate/partition",
    "/request/oldObject/status",
    "/request/oldObject/status/readyReplicas",
    "/request/oldObject/status/observedGeneration",
    "/settings",
    "/settings/annotationPrefix",
];

/// Every real AdmissionReview: the captures (`fixtures/admission/`, not the `sts-*`
/// objects) and this repository's `test_data/`, as validation payloads with empty settings.
fn base_payloads() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = [root.join("fixtures/admission"), root.join("test_data")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".json")
                && !name.starts_with("sts-")
                && name != "expected-admission.json"
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let review: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            json!({"request": review["request"], "settings": {}})
        })
        .collect()
}

/// The corpus, read once per process.
fn corpus() -> &'static [Value] {
    static CORPUS: OnceLock<Vec<Value>> = OnceLock::new();
    CORPUS.get_or_init(base_payloads)
}

/// Sets the value at a JSON Pointer, creating objects along the way where the parent is an object.
fn set_pointer(root: &mut Value, pointer: &str, value: Value) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = root.pointer_mut(parent) {
        map.insert(last, value);
    }
}

/// Removes the value at a JSON Pointer, if its parent is an object.
fn remove_pointer(root: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = root.pointer_mut(parent) {
        map.remove(&last);
    }
}

/// A plausible edit of a real request: the values a real StatefulSet takes where the table looks, so most
/// edited requests stay valid StatefulSets and walk every row.
fn plausible_edit() -> impl Strategy<Value = (String, Option<Value>)> {
    let side = prop_oneof![Just("object"), Just("oldObject")];
    let count = prop_oneof![Just(None), (0i64..8).prop_map(|n| Some(json!(n)))];
    let prefix = prop_oneof![Just("safe-rollout.dev"), Just("moco.cybozu.com")];
    let annotation = prop_oneof![
        Just("force-rolling-update"),
        Just("initialized"),
        Just("last-partition-update")
    ];
    let annotation_value = prop_oneof![
        Just(None),
        Just(Some(json!("true"))),
        Just(Some(json!("True"))),
        Just(Some(json!("2026-11-23T00:00:00Z"))),
        Just(Some(json!("2026-11-23T00:05:00Z"))),
    ];
    prop_oneof![
        (side.clone(), count.clone()).prop_map(|(s, v)| (format!("/request/{s}/spec/replicas"), v)),
        (side.clone(), count.clone()).prop_map(|(s, v)| (
            format!("/request/{s}/spec/updateStrategy/rollingUpdate/partition"),
            v
        )),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/readyReplicas"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/availableReplicas"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/status/observedGeneration"), v)),
        (side.clone(), count.clone())
            .prop_map(|(s, v)| (format!("/request/{s}/metadata/generation"), v)),
        (side.clone(), prop_oneof![Just(None), Just(Some(json!(10)))])
            .prop_map(|(s, v)| (format!("/request/{s}/spec/minReadySeconds"), v)),
        (
            side.clone(),
            prop_oneof![
                Just(None),
                Just(Some(json!("RollingUpdate"))),
                Just(Some(json!("OnDelete")))
            ]
        )
            .prop_map(|(s, v)| (format!("/request/{s}/spec/updateStrategy/type"), v)),
        (
            side.clone(),
            prop_oneof![Just(json!("nginx:1.25")), Just(json!("nginx:1.26"))]
        )
            .prop_map(|(s, v)| (
                format!("/request/{s}/spec/template/spec/containers/0/image"),
                Some(v)
            )),
        (side, prefix.clone(), annotation, annotation_value)
            .prop_map(|(s, p, a, v)| (format!("/request/{s}/metadata/annotations/{p}~1{a}"), v)),
        prop_oneof![
            Just("CREATE"),
            Just("UPDATE"),
            Just("DELETE"),
            Just("CONNECT")
        ]
        .prop_map(|op| ("/request/operation".to_string(), Some(json!(op)))),
        prop_oneof![
            Just(None),
            Just(Some(json!(""))),
            Just(Some(json!("status")))
        ]
        .prop_map(|v| ("/request/subResource".to_string(), v)),
        prefix.prop_map(|p| ("/settings/annotationPrefix".to_string(), Some(json!(p)))),
    ]
}

/// One fuzz case: how a payload is made from the corpus.
#[derive(Debug, Clone)]
enum Case {
    /// Arbitrary bytes.
    Bytes(Vec<u8>),
    /// An arbitrary JSON value, as the payload or as its request.
    Json(Value, bool),
    /// A real request, its `oldObject` optionally replaced by its `object` first (so only the edits
    /// differ), then plausible edits (`None` removes) and arbitrary values at sensitive paths.
    Edited {
        fixture: usize,
        same_old: bool,
        plausible: Vec<(String, Option<Value>)>,
        arbitrary: Vec<(usize, Value)>,
    },
    /// A real request's bytes with some bytes overwritten.
    Corrupted(usize, Vec<(usize, u8)>),
}

fn arb_case() -> impl Strategy<Value = Case> {
    let fixtures = corpus().len();
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Case::Bytes),
        1 => (arb_json(), any::<bool>()).prop_map(|(v, wrap)| Case::Json(v, wrap)),
        6 => (
            0..fixtures,
            any::<bool>(),
            prop::collection::vec(plausible_edit(), 0..6),
            prop::collection::vec((0..PATHS.len(), arb_json()), 0..2),
        )
            .prop_map(|(fixture, same_old, plausible, arbitrary)| Case::Edited {
                fixture,
                same_old,
                plausible,
                arbitrary,
            }),
        1 => (0..fixtures, prop::collection::vec((any::<usize>(), any::<u8>()), 1..4))
            .prop_map(|(f, edits)| Case::Corrupted(f, edits)),
    ]
}

/// The payload a case stands for, and whether the oracle may judge it (it is valid JSON).
fn payload_of(case: &Case) -> (Vec<u8>, Option<Value>) {
    match case {
        Case::Bytes(b) => (b.clone(), None),
        Case::Json(v, wrap) => {
            let v = if *wrap {
                json!({"request": v, "settings": {}})
            } else {
                v.clone()
            };
            (v.to_string().into_bytes(), Some(v))
        }
        Case::Edited {
            fixture,
            same_old,
            plausible,
            arbitrary,
        } => {
            let mut p = corpus()[*fixture].clone();
            if *same_old && p["request"]["object"].is_object() {
                p["request"]["oldObject"] = p["request"]["object"].clone();
            }
            for (pointer, value) in plausible {
                match value {
                    Some(v) => set_pointer(&mut p, pointer, v.clone()),
                    None => remove_pointer(&mut p, pointer),
                }
            }
            for (path, value) in arbitrary {
                set_pointer(&mut p, PATHS[*path], value.clone());
            }
            (p.to_string().into_bytes(), Some(p))
        }
        Case::Corrupted(f, edits) => {
            let mut bytes = corpus()[*f].to_string().into_bytes();
            for (at, b) in edits {
                let i = at % bytes.len();
                bytes[i] = *b;
            }
            (bytes, None)
        }
    }
}

/// The number of fuzz cases: `FUZZ_CASES` (`make fuzz` sets 1,000,000), else 4,000.
fn fuzz_cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000)
}

/// The random seed: `FUZZ_SEED` (any integer; `make fuzz` passes none), else a fixed one, so the default
/// run is the same every time and a failing seed can be replayed.
fn fuzz_seed() -> [u8; 32] {
    let n: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x0005_afe2_0110_u64);
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&n.to_le_bytes());
    seed
}

/// The rows of the table, by `Row`'s names, and `rejected`.
const ROWS: [&str; 14] = [
    "NotAStatefulSet",
    "Subresource",
    "NotCreateOrUpdate",
    "Forced",
    "OnDelete",
    "StagedOnCreate",
    "NotInitialized",
    "StagedOnUpdate",
    "PartitionRaised",
    "Stepped",
    "LoweredBeforeInitialized",
    "PartitionRestored",
    "MetadataOnly",
    "rejected",
];

/// Checks one payload: a well-formed answer always, and the oracle's answer (row and returned object)
/// where the oracle can read the request.
fn check(case: &Case) -> Result<Outcome, TestCaseError> {
    let (bytes, value) = payload_of(case);
    let response = check_well_formed(&bytes)?;
    // The oracle reads what the policy reads: the bytes decoded (a float's text may not round-trip).
    let Some(value) = value.and_then(|_| serde_json::from_slice::<Value>(&bytes).ok()) else {
        return Ok(Outcome::Unjudged);
    };
    match oracle::expected(&value) {
        oracle::Expected::Unknown => Ok(Outcome::Unjudged),
        oracle::Expected::Rejected => {
            prop_assert!(
                !response.accepted,
                "the table refuses this request: {value}"
            );
            Ok(Outcome::Judged("rejected"))
        }
        oracle::Expected::Answer(row, object) => {
            prop_assert!(
                response.accepted,
                "{row} must accept: {:?} for {value}",
                response.message
            );
            // The answer went through JSON text once; so does the expected object.
            let object = object.map(|o| serde_json::from_str::<Value>(&o.to_string()).unwrap());
            prop_assert_eq!(&response.mutated_object, &object, "{} for {}", row, value);
            let request = sts_safe_rollout::request::parse_payload(&bytes)
                .unwrap()
                .request;
            let prefix = value["settings"]["annotationPrefix"]
                .as_str()
                .unwrap_or("safe-rollout.dev");
            let got = match sts_safe_rollout::response::evaluate(request, prefix) {
                Response::Accept(r) | Response::Mutate(r, _) => format!("{r:?}"),
                Response::Reject(m) => m,
            };
            prop_assert_eq!(got.as_str(), row, "row for {}", value);
            Ok(Outcome::Judged(row))
        }
    }
}

/// Whether the oracle judged a case, and its row (or `rejected`).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Judged(&'static str),
    Unjudged,
}

#[test]
fn fuzz_validate_answers_every_request_as_the_table_says() {
    let cases = fuzz_cases();
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let rows = std::sync::Mutex::new(std::collections::BTreeMap::<&str, u64>::new());
    let start = std::time::Instant::now();
    let seed = fuzz_seed();
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    proptest::test_runner::TestRunner::new_with_rng(config, rng)
        .run(&arb_case(), |case| {
            if let Outcome::Judged(row) = check(&case)? {
                *rows.lock().unwrap().entry(row).or_default() += 1;
            }
            Ok(())
        })
        .unwrap();
    let rows = rows.into_inner().unwrap();
    let judged: u64 = rows.values().sum();
    eprintln!(
        "fuzz: {cases} cases (seed {:?}) in {:.1} s, {judged} judged by the oracle: {rows:?}",
        std::env::var("FUZZ_SEED").unwrap_or_else(|_| "default".into()),
        start.elapsed().as_secs_f64()
    );
    // Every row of the table (and a rejection) was judged: 4,000 cases from the default seed reach all.
    if cases >= 4000 {
        for row in ROWS {
            assert!(rows.contains_key(row), "no case reached {row}: {rows:?}");
        }
    }
    // The plausible edits keep most requests valid StatefulSets: the oracle must judge a good share.
    assert!(
        u64::from(cases) < 100 || judged * 4 > u64::from(cases),
        "judged {judged} of {cases}"
    );
}

#[test]
fn named_bad_inputs_are_rejected_with_the_field_or_accepted() {
    let base = fixture("update-image");
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        (
            "/request/object/spec/replicas",
            json!("3"),
            Some("request.object.spec.replicas"),
        ),
        (
            "/request/object/spec/updateStrategy/rollingUpdate/partition",
            json!(-1),
            Some("spec.updateStrategy.rollingUpdate.partition"),
        ),
        (
            "/request/object/metadata",
            Value::Null,
            Some("request.object.metadata"),
        ),
        (
            "/request/object",
            json!([1, 2, 3]),
            Some("request.object: expected a StatefulSet object"),
        ),
        (
            "/request/oldObject",
            json!("x"),
            Some("request.oldObject: expected a StatefulSet object"),
        ),
        (
            "/settings",
            json!({"annotationPrefix": "Not A Prefix"}),
            Some("invalid settings: annotationPrefix"),
        ),
        ("/request/operation", json!(7), Some("request.operation")),
    ];
    for (pointer, value, needle) in cases {
        let mut payload = base.clone();
        set_pointer(&mut payload, pointer, value);
        let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
        let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
        match needle {
            Some(n) => {
                assert!(!response.accepted, "{pointer}: accepted");
                let m = response.message.unwrap_or_default();
                assert!(m.contains(n), "{pointer}: {m:?} lacks {n:?}");
            }
            None => assert!(response.accepted, "{pointer}: rejected"),
        }
    }
}

#[test]
fn a_one_mebibyte_annotation_is_decided_normally() {
    let mut payload = fixture("update-image");
    let big = "x".repeat(1 << 20);
    set_pointer(
        &mut payload,
        "/request/object/metadata/annotations/example.com~1big",
        json!(big),
    );
    let raw = sts_safe_rollout::validate(payload.to_string().as_bytes()).unwrap();
    let response: ValidationResponse = serde_json::from_slice(&raw).unwrap();
    assert!(response.accepted);
    let mutated = response.mutated_object.expect("template change is staged");
    assert_eq!(
        mutated["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        3
    );
    assert_eq!(
        mutated["metadata"]["annotations"]["example.com/big"]
            .as_str()
            .map(str::len),
        Some(1 << 20)
    );
}

/// The corpus payload whose request uid names `name` (the captures are found by operation).
fn fixture(name: &str) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/admission");
    let review: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
            .unwrap();
    json!({"request": review["request"], "settings": {}})
}
