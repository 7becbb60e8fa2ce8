//! A plan that writes nothing is reported without I/O (`pass::run::unwritten`, the path of most sets in
//! most passes): on the real fixtures, under annotation sets that idle, pause, block and record, its
//! report is exactly what `execute` reports for it, and `execute` sends no request for it.

use crate::mock_api;
use std::sync::Arc;

use crate::common::*;
use rstest::rstest;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::gates::GateOptions;
use sts_stepper::pass::{execute, unwritten};
use sts_stepper::plan::plan;

#[rstest]
#[case::initialized(json!({"safe-rollout.dev/initialized": "true"}))]
#[case::announced(json!({"safe-rollout.dev/initialized": "true",
    "safe-rollout.dev/blocked-reason": "PodNotReady"}))]
#[case::paused(json!({"safe-rollout.dev/paused": "true", "safe-rollout.dev/blocked-reason": "Paused"}))]
#[case::invalid(json!({"safe-rollout.dev/step": "0", "safe-rollout.dev/blocked-reason": "InvalidAnnotation"}))]
#[case::forced(json!({"safe-rollout.dev/force-rolling-update": "true"}))]
#[tokio::test]
async fn a_plan_that_writes_nothing_is_reported_as_execute_reports_it(#[case] annotations: Value) {
    let mut compared = 0;
    for name in MOMENTS {
        let mut snap = moment(name);
        for s in &mut snap.statefulsets {
            let s = Arc::make_mut(s);
            let map = s.metadata.annotations.get_or_insert_default();
            for (k, v) in annotations.as_object().expect("a map") {
                map.insert(k.clone(), v.as_str().expect("a string").to_string());
            }
        }
        for p in plan(&snap, &GateOptions::default(), now()) {
            if !p.writes_nothing() {
                continue;
            }
            for dry_run in [false, true] {
                // No request scripted: any request fails the mock server's script.
                let (api, server) = mock_api::mock_cluster(Scope::default(), vec![]);
                let report = execute(&api, p.clone(), dry_run).await;
                drop(api);
                assert!(
                    server.await.expect("script").is_empty(),
                    "{name}: no request"
                );
                assert_eq!(unwritten(p.clone()), report, "{name}, dry run {dry_run}");
                compared += 1;
            }
        }
    }
    assert!(compared > 0, "some plan writes nothing under {annotations}");
}
