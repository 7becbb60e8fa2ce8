//! The soak: `FUZZ_CASES` cases from a fixed (or `FUZZ_SEED`) seed, each answer well formed and, where the
//! oracle reads the request, the table's; every row of the table reached.

use kubewarden_policy_sdk::response::ValidationResponse;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::Value;
use sts_safe_rollout::response::Response;

use crate::cases::{Case, arb_case, payload_of};
use crate::oracle;

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
