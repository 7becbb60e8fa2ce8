//! The `PrometheusCheck` gate's counting across passes against a real Prometheus: the stepper's client's
//! outcomes feed the gate's pure [`check_result`], with the state round-tripped through the
//! `<prefix>/prometheus-check` annotation as a CronJob pass would; `success-threshold` counts
//! consecutive checks, `failure-limit` counts empty results, no answer is counted apart.
//!
//! Setup and skipping: `support/prometheus_app.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::support::prometheus::{PrometheusServer, Web};
use crate::support::prometheus_app::{client, healthy_app, pod_ready};
use crate::support::prometheus_bin::prometheus_or_skip;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sts_safe_rollout_rules::annotations::PROMETHEUS_CHECK;
use sts_stepper::cluster::prometheus::PrometheusClient;
use sts_stepper::config::{Keys, SetConfig, check_config};
use sts_stepper::gates::check::prometheus::{
    CheckConfig, CheckResult, CheckState, check_result, current_state,
};

const PREFIX: &str = "safe-rollout.dev";
const PARTITION: i32 = 3;
const REVISION: &str = "web-7d7598bf9d";

/// `web` in `ns` with these `<prefix>/…` annotations.
fn set(annotations: &[(&str, &str)]) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| (format!("{PREFIX}/{k}"), (*v).to_string()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        ..StatefulSet::default()
    }
}

/// A set's check as successive passes run it: the configuration from its annotations, the state
/// read from and written back to `<prefix>/prometheus-check` between passes.
struct Rollout {
    set: StatefulSet,
    config: CheckConfig,
}

/// The stored `<prefix>/prometheus-check` of `set`, as the stepper reads it.
fn stored(set: &StatefulSet) -> Option<String> {
    SetConfig::parse(set, &Arc::new(Keys::new(PREFIX)))
        .stamps
        .state("prometheus-check")
        .map(str::to_string)
}

impl Rollout {
    fn new(annotations: &[(&str, &str)]) -> Rollout {
        let set = set(annotations);
        let config = check_config(&set, &Keys::new(PREFIX))
            .expect("valid annotations")
            .expect("a check is configured");
        Rollout { set, config }
    }

    fn state(&self) -> Option<CheckState> {
        current_state(stored(&self.set).as_deref(), PARTITION, REVISION)
    }

    /// One pass at `now`: the verdict, running the queries against `prometheus` when a check is due,
    /// and recording the new state in the annotation.
    async fn pass(&mut self, prometheus: &PrometheusClient, now: Timestamp) -> CheckResult {
        let state = self.state();
        let first = check_result(&self.config, state.as_ref(), None, PARTITION, REVISION, now);
        if first != CheckResult::Due {
            return first;
        }
        let mut outcomes = Vec::new();
        for q in &self.config.queries {
            outcomes.push(prometheus.query(&q.expr).await);
        }
        let v = check_result(
            &self.config,
            state.as_ref(),
            Some(&outcomes),
            PARTITION,
            REVISION,
            now,
        );
        if let CheckResult::Pass { state: Some(s) } | CheckResult::Wait { state: Some(s), .. } = &v
        {
            self.set
                .metadata
                .annotations
                .get_or_insert_default()
                .insert(format!("{PREFIX}/{PROMETHEUS_CHECK}"), s.to_annotation());
        }
        v
    }
}

#[track_caller]
fn waiting(v: &CheckResult) -> (&str, &CheckState) {
    match v {
        CheckResult::Wait {
            detail,
            state: Some(s),
        } => (detail, s),
        other => panic!("expected Wait with a new state, got {other:?}"),
    }
}

fn t(seconds: i64) -> Timestamp {
    let t0: Timestamp = "2026-11-23T05:00:00Z".parse().expect("time");
    t0 + SignedDuration::from_secs(seconds)
}

#[tokio::test]
async fn success_threshold_counts_consecutive_checks_across_passes() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());
    let mut rollout = Rollout::new(&[
        ("prometheus-query", "sts_test_healthy == 1"),
        ("prometheus-query-2", "sum(sts_test_pod_ready) >= 3"),
        ("success-threshold", "3"),
        ("check-period-seconds", "30"),
    ]);
    assert_eq!(rollout.config.queries.len(), 2);

    let v = rollout.pass(&c, t(0)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (1, 0), "{detail}");
    assert!(
        detail.contains("1 of 3 consecutive checks passed"),
        "{detail}"
    );

    // Not due yet: nothing is queried, the stored count stands.
    let v = rollout.pass(&c, t(10)).await;
    assert!(
        matches!(&v, CheckResult::Wait { detail, state: None } if detail.contains("next check in 20s")),
        "{v:?}"
    );

    let v = rollout.pass(&c, t(30)).await;
    assert_eq!(waiting(&v).1.successes, 2);

    // One pod goes unready: the second query turns empty, the count starts over.
    app.set(&pod_ready(2), 0.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", false).await;
    let v = rollout.pass(&c, t(60)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (0, 1), "{detail}");
    let failure = s.last_failure.as_deref().unwrap_or_default();
    assert!(
        failure.contains("prometheus-query-2 returned an empty result"),
        "{failure}"
    );

    app.set(&pod_ready(2), 1.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", true).await;
    for (i, now) in [90, 120].into_iter().enumerate() {
        let v = rollout.pass(&c, t(now)).await;
        let s = waiting(&v).1;
        assert_eq!((s.successes, s.failures), (i as u32 + 1, 1));
    }
    let v = rollout.pass(&c, t(150)).await;
    let CheckResult::Pass { state: Some(s) } = &v else {
        panic!("expected Pass with a new state, got {v:?}");
    };
    assert_eq!(s.successes, 3);
    // Within the period the stored passes still hold, without a query.
    assert_eq!(
        rollout.pass(&c, t(170)).await,
        CheckResult::Pass { state: None }
    );
    // A step (new partition) starts over: the stored state is not this observation's.
    assert_eq!(
        current_state(stored(&rollout.set).as_deref(), PARTITION - 1, REVISION),
        None
    );
}

#[tokio::test]
async fn failure_limit_counts_empty_results_and_no_answer_apart() {
    let bin = prometheus_or_skip!();
    let app = healthy_app().await;
    let mut prom = PrometheusServer::start(&bin, &app, Web::default()).await;
    let c = client(&prom.url());
    let mut rollout = Rollout::new(&[
        ("prometheus-query-1", "sum(sts_test_pod_ready) >= 3"),
        ("success-threshold", "2"),
        ("failure-limit", "2"),
        ("check-period-seconds", "10"),
    ]);

    assert_eq!(waiting(&rollout.pass(&c, t(0)).await).1.successes, 1);

    app.set(&pod_ready(1), 0.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", false).await;
    let v = rollout.pass(&c, t(10)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures), (0, 1));
    assert!(detail.contains("1 failed of limit 2"), "{detail}");

    // A success in between resets the successes, not the failures since the last step.
    app.set(&pod_ready(1), 1.0);
    prom.wait_until("sum(sts_test_pod_ready) >= 3", true).await;
    let v = rollout.pass(&c, t(20)).await;
    assert_eq!((waiting(&v).1.successes, waiting(&v).1.failures), (1, 1));

    // No answer is an error, not a failure (issue 29 item 3): counted apart, never a pause.
    prom.stop();
    let v = rollout.pass(&c, t(30)).await;
    let (detail, s) = waiting(&v);
    assert_eq!((s.successes, s.failures, s.errors), (0, 1, 1));
    assert!(
        detail.contains("1 failed of limit 2, 1 in a row got no answer")
            && detail
                .contains("last check errored: safe-rollout.dev/prometheus-query-1 got no answer")
            && detail.to_lowercase().contains("connection"),
        "{detail}"
    );
    let v = rollout.pass(&c, t(40)).await;
    assert_eq!(waiting(&v).1.errors, 2, "{v:?}");
}
