//! The policy's decision natively (no wasm): the whole `validate` entry point (payload parsing, typed
//! reads, decision, mutation, response encoding) and the pure decision alone, on real AdmissionReviews.
//!
//! cargo bench -p sts-safe-rollout --bench decision

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

fn payload(fixture: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/admission")
        .join(fixture);
    let review: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json!({"request": review["request"], "settings": {}})
        .to_string()
        .into_bytes()
}

fn bench(c: &mut Criterion) {
    for fixture in ["create-default.json", "update-image.json"] {
        let bytes = payload(fixture);
        c.bench_function(&format!("validate/{fixture}"), |b| {
            b.iter(|| sts_safe_rollout::validate(black_box(&bytes)).unwrap())
        });
        c.bench_function(&format!("parse_payload/{fixture}"), |b| {
            b.iter(|| sts_safe_rollout::request::parse_payload(black_box(&bytes)).unwrap())
        });
        c.bench_function(&format!("sdk_parse/{fixture}"), |b| {
            b.iter(|| {
                kubewarden_policy_sdk::request::ValidationRequest::<Value>::new(black_box(&bytes))
                    .unwrap()
            })
        });
        c.bench_function(&format!("decision_only/{fixture}"), |b| {
            b.iter_batched(
                || {
                    sts_safe_rollout::request::parse_payload(&bytes)
                        .unwrap()
                        .request
                },
                |request| {
                    sts_safe_rollout::response::evaluate(black_box(request), "safe-rollout.dev")
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
