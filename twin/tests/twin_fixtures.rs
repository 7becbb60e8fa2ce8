//! The twin by test on recorded requests: every AdmissionReview in `fixtures/admission/` (captured
//! from a real API server; its README says which request each is) and every request in `test_data/`, through
//! policy.wasm (the reference, via the runner's library) and through the CEL of `deploy/native/`. Both must
//! store the same object; the few differences by design are named here, per file, with their row.

mod common;

use std::path::Path;

use common::{Agreement, INVALID, MALFORMED, judge, presented, repo, twin, wasm};
use native_twin::policy::SHIPPED_PREFIX;
use serde_json::Value;

/// Requests where the two differ by design, and the row that says why (docs/native-twin.md, "What differs, by design").
const BY_DESIGN: &[(&str, &str)] = &[
    ("partition-negative-rejected-later.json", INVALID),
    ("malformed-replicas.json", MALFORMED),
];

fn requests_in(dir: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
            // AdmissionReviews only (the shared `sts-*.json` are stored objects; expected-admission.json is
            // the table of answers).
            (doc["kind"] == "AdmissionReview").then(|| (name, doc["request"].clone()))
        })
        .collect()
}

fn check_all(dir: &Path, minimum: usize) {
    let twin = twin(SHIPPED_PREFIX);
    let policy = wasm();
    let requests = requests_in(dir);
    assert!(
        requests.len() >= minimum,
        "{}: expected at least {minimum} AdmissionReviews, found {}",
        dir.display(),
        requests.len()
    );
    let mut failures = Vec::new();
    for (name, request) in &requests {
        let want = BY_DESIGN
            .iter()
            .find(|(file, _)| file == name)
            .map_or(Agreement::Same, |(_, row)| Agreement::ByDesign(row));
        match judge(&twin, &policy, request, SHIPPED_PREFIX) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!("{name}: expected {want:?}, got {got:?}")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_shared_admission_review_stores_the_same_object() {
    check_all(&repo().join("fixtures/admission"), 17);
}

#[test]
fn every_test_data_request_stores_the_same_object() {
    check_all(&repo().join("test_data"), 17);
}

/// The twin names the same table row as the expectations file for every captured request it matches
/// (`test_data/expected-admission.json`, the table's answers for the real requests).
#[test]
fn the_twin_names_the_expected_row_for_every_shared_capture() {
    let twin = twin(SHIPPED_PREFIX);
    let text = std::fs::read_to_string(repo().join("test_data/expected-admission.json")).unwrap();
    let expected: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    let requests = requests_in(&repo().join("fixtures/admission"));
    let mut checked = 0;
    for (name, request) in requests {
        let want = expected[&name]["row"].as_str();
        let request = presented(&request);
        let got = twin.variable(&request, "row");
        match want {
            // Rows outside the policy's match (subresources, DELETE) never reach its CEL.
            Some("Subresource" | "NotCreateOrUpdate" | "NotAStatefulSet") => {
                assert_eq!(
                    twin.admit(&request),
                    native_twin::evaluate::Outcome::NotMatched,
                    "{name}"
                );
            }
            Some(row) => {
                assert_eq!(got.unwrap(), Value::from(row), "{name}");
                checked += 1;
            }
            None => assert_eq!(got.unwrap(), Value::from(INVALID), "{name}"),
        }
    }
    assert!(checked >= 10, "only {checked} rows compared");
}

/// The real captures are already defaulted by the API server: the harness's defaulting changes none of them
/// (so it models what the API server does, not something of its own).
#[test]
fn defaulting_is_a_no_op_on_real_captures() {
    for (name, request) in requests_in(&repo().join("fixtures/admission")) {
        assert_eq!(presented(&request), request, "{name}");
    }
}
