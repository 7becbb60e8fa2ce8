//! `status` shows the in-cluster stepper's record first: the record read from the real fixture sets
//! (annotations, and the time of the stepper's `managedFields` entry), its one-line summary in order of
//! urgency, whether it is current, what a local evaluation lacks, and the table the command prints (the
//! signs of life it is judged by: `status_heartbeat.rs`).

use std::sync::Arc;

use crate::common::*;
use crate::mock_api::*;
use jiff::SignedDuration;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::{View, status_items_with, status_view};
use sts_stepper::config::check::PROMETHEUS_FLAG;
use sts_stepper::config::{Keys, Served, SetConfig, http_check, webhook};
use sts_stepper::rollout::local_view::{missing_flags, step_note};
use sts_stepper::rollout::record::{Freshness, Heartbeat, freshness, record};

/// Moment `moment`'s set with `f` applied, and the stepper's field manager added to its managedFields
/// at `written` (as a JSON Patch with `?fieldManager=sts-stepper` records it).
fn set_of(moment: &str, written: Option<&str>, f: impl FnOnce(&mut Value)) -> Value {
    let list: Value = serde_json::from_slice(&fixture_body(&format!("{moment}-statefulsets.json")))
        .expect("json");
    let mut set = list["items"][0].clone();
    if let Some(t) = written {
        set["metadata"]["managedFields"]
            .as_array_mut()
            .expect("the fixture's managedFields")
            .push(json!({"manager": "sts-stepper", "operation": "Update", "apiVersion": "apps/v1",
                "time": t, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {"f:safe-rollout.dev/blocked-reason": {}}}}}));
    }
    f(&mut set);
    set
}

fn annotate(pairs: &[(&str, &str)]) -> impl FnOnce(&mut Value) {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (format!("safe-rollout.dev/{k}"), v.to_string()))
        .collect();
    move |s| {
        for (k, v) in pairs {
            s["metadata"]["annotations"][k] = json!(v);
        }
    }
}

fn summary(set: Value) -> String {
    let set: StatefulSet = serde_json::from_value(set).expect("a StatefulSet");
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    record(&set, &config, "sts-stepper").summary(now())
}

#[test]
fn the_summary_says_the_most_urgent_record_first_and_when_it_was_written() {
    let blocked = annotate(&[("blocked-reason", "PodNotReady")]);
    assert_eq!(
        summary(set_of(
            "3-web1-notready",
            Some("2026-11-23T01:17:00Z"),
            blocked
        )),
        "Blocked PodNotReady (written 3m ago)"
    );
    let waiting = annotate(&[
        ("blocked-reason", "ApprovalPending"),
        (
            "approval-pending",
            "approval of web-3 on web-7d7598bf9d asked at 2026-11-23T01:15:00Z",
        ),
    ]);
    assert_eq!(
        summary(set_of("2-stepped-4", None, waiting)),
        "Blocked ApprovalPending: approval of web-3 on web-7d7598bf9d asked at 2026-11-23T01:15:00Z"
    );
    let paused = annotate(&[
        ("blocked-reason", "Paused"),
        ("paused", "true"),
        ("paused-reason", "INC-1234 (paused by alice)"),
    ]);
    assert_eq!(
        summary(set_of("2-stepped-4", None, paused)),
        "Paused: INC-1234 (paused by alice)"
    );
    let degraded = annotate(&[
        ("paused", "true"),
        (
            "degraded-reason",
            "StepRejected: admission webhook \"x\" denied the request",
        ),
    ]);
    assert_eq!(
        summary(set_of("2-stepped-4", None, degraded)),
        "Degraded StepRejected: admission webhook \"x\" denied the request"
    );
}

#[test]
fn without_a_blocked_reason_the_record_tells_stepping_staged_and_idle_apart() {
    let stepped = annotate(&[("last-partition-update", "2026-11-23T01:10:42Z")]);
    assert_eq!(
        summary(set_of("2-stepped-4", Some("2026-11-23T01:10:42Z"), stepped)),
        "Stepping: last step 9m ago (written 9m ago)"
    );
    assert_eq!(
        summary(set_of("1-staged", None, |_| {})),
        "Staged: no step yet"
    );
    assert_eq!(summary(set_of("4-complete", None, |_| {})), "Idle");
    // Without the policy's mark, a staged partition is a person's: the stepper leaves it.
    let unmarked = |s: &mut Value| {
        s["metadata"]["annotations"]
            .as_object_mut()
            .expect("annotations")
            .remove("safe-rollout.dev/guarded");
    };
    assert_eq!(
        summary(set_of("1-staged", None, unmarked)),
        "Staged by hand: not stepped (no guarded mark)"
    );
    // Another manager's entries (kubectl, kube-controller-manager) are not the stepper's write.
    let set: StatefulSet = serde_json::from_value(set_of("4-complete", None, |_| {})).expect("set");
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    assert!(
        set.metadata
            .managed_fields
            .as_ref()
            .is_some_and(|m| m.len() >= 3)
    );
    assert_eq!(record(&set, &config, "sts-stepper").written_at, None);
}

fn beat(at: &str, source: &str) -> Heartbeat {
    Heartbeat {
        at: at.parse().expect("time"),
        source: source.into(),
    }
}

#[test]
fn a_record_is_current_while_the_stepper_showed_life_within_the_bound() {
    let bound = SignedDuration::from_mins(6);
    let lease = beat(
        "2026-11-23T01:19:58Z",
        "Lease sts-safe-rollout/sts-stepper renewed",
    );
    let cron = beat(
        "2026-11-23T01:00:00Z",
        "CronJob sts-safe-rollout/sts-stepper last succeeded",
    );
    // The newest sign wins.
    let fresh = freshness(&[cron.clone(), lease.clone()], "x", now(), bound);
    assert_eq!(fresh, Freshness::Current(lease));
    assert_eq!(fresh.stale(), Some(false));
    assert_eq!(
        fresh.describe(now(), bound),
        "current: Lease sts-safe-rollout/sts-stepper renewed 2s ago"
    );
    let stale = freshness(std::slice::from_ref(&cron), "x", now(), bound);
    assert_eq!(stale, Freshness::Stale(cron));
    assert!(
        stale
            .describe(now(), bound)
            .starts_with("STALE: CronJob sts-safe-rollout/sts-stepper last succeeded 20m ago (over --stale-after 6m)"),
        "{}",
        stale.describe(now(), bound)
    );
    // Exactly at the bound is still current; one second past it is not.
    let edge = beat("2026-11-23T01:14:00Z", "Lease");
    assert_eq!(freshness(&[edge], "", now(), bound).stale(), Some(false));
    let past = beat("2026-11-23T01:13:59Z", "Lease");
    assert_eq!(freshness(&[past], "", now(), bound).stale(), Some(true));
    let unknown = freshness(&[], "no Lease", now(), bound);
    assert_eq!(
        (unknown.stale(), unknown.describe(now(), bound)),
        (None, "unknown: no Lease".into())
    );
}

#[test]
fn the_local_view_names_each_flag_it_lacks_for_the_sets_checks() {
    let checked = set_of(
        "2-stepped-4",
        None,
        annotate(&[
            ("prometheus-query", "up == 1"),
            ("http-check", "es-health"),
            ("http-check-jsonpath", "$.status"),
            ("http-check-expect", "green"),
        ]),
    );
    let set: StatefulSet = serde_json::from_value(checked).expect("set");
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    assert_eq!(
        missing_flags(&config, &Served::default()),
        ["--prometheus-url URL", "--http-check es-health=URL"]
    );
    let equipped = Served::default()
        .with(&PROMETHEUS_FLAG, vec![])
        .with(&http_check::FLAG, vec!["es-health".into()])
        .with(&webhook::FLAG, vec![]);
    assert!(missing_flags(&config, &equipped).is_empty());
    let webhooked = set_of(
        "2-stepped-4",
        None,
        annotate(&[("pre-update-webhook", "db-approver")]),
    );
    let set: StatefulSet = serde_json::from_value(webhooked).expect("set");
    let config = SetConfig::parse(&set, &Arc::new(Keys::default()));
    assert_eq!(
        missing_flags(&config, &equipped),
        ["--webhook db-approver=URL"]
    );
}

/// `status` over moment 3 with the stepper's record on `web`: the document's `recorded`, and the table.
#[tokio::test]
async fn status_shows_the_record_first_and_the_local_view_on_request() {
    let web = set_of(
        "3-web1-notready",
        Some("2026-11-23T01:17:00Z"),
        annotate(&[
            ("guarded", "true"),
            ("blocked-reason", "HttpCheck"),
            ("http-check", "es-health"),
            ("http-check-jsonpath", "$.status"),
            ("http-check-expect", "green"),
        ]),
    );
    let list = serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": [web]}))
    .expect("json");
    let script = vec![
        get(STS_ALL, list),
        set_pods("demo", "app=web", fixture_body("3-web1-notready-pods.json")),
        namespace_pdbs("demo", fixture_body("3-web1-notready-pdbs.json")),
    ];
    let (cluster, server) = mock_cluster(Scope::default(), script);
    let mut items = status_items_with(
        &cluster,
        &Checks::default(),
        &web_pods(),
        None,
        &Served::default(),
        now(),
    )
    .await
    .expect("status");
    drop(cluster);
    server.await.expect("script");
    let bound = SignedDuration::from_mins(6);
    let fresh = freshness(
        &[beat("2026-11-23T01:00:00Z", "CronJob x last succeeded")],
        "",
        now(),
        bound,
    );
    items[0].recorded.judge(&fresh, now(), bound);
    let doc = serde_json::to_value(&items[0]).expect("json");
    assert_eq!(doc["recorded"]["blockedReason"], "HttpCheck");
    assert_eq!(doc["recorded"]["writtenAt"], "2026-11-23T01:17:00Z");
    assert_eq!(
        doc["recorded"]["summary"],
        "Blocked HttpCheck (written 3m ago)"
    );
    assert_eq!(doc["recorded"]["stale"], true);
    assert_eq!(
        doc["localView"]["missingFlags"],
        json!(["--http-check es-health=URL"])
    );
    // The local verdict is still there, unchanged in meaning: pods are judged the same anywhere.
    assert_eq!(doc["verdict"]["reason"], "PodNotReady");

    let view = |local| View {
        local,
        freshness: fresh.describe(now(), bound),
    };
    let recorded = status_view(&items, &view(false), true, "safe-rollout.dev/pause-at");
    let head = recorded.lines().next().expect("a header");
    assert!(head.ends_with("HEALTH       RECORDED"), "{recorded}");
    assert!(
        !recorded.contains("NEXT"),
        "no local view unasked: {recorded}"
    );
    assert!(
        recorded
            .lines()
            .nth(1)
            .expect("a row")
            .ends_with("STALE Blocked HttpCheck (written 3m ago)"),
        "{recorded}"
    );
    assert!(
        recorded.contains("records STALE: CronJob x last succeeded 20m ago"),
        "{recorded}"
    );
    assert!(
        recorded.contains("Evaluate the gates on this machine too: --local."),
        "{recorded}"
    );

    let both = status_view(&items, &view(true), true, "safe-rollout.dev/pause-at");
    let head = both.lines().next().expect("a header");
    assert!(
        head.contains("  HEALTH       RECORDED  ") && head.ends_with("  NEXT (LOCAL VIEW)"),
        "{both}"
    );
    assert!(
        both.lines()
            .nth(1)
            .expect("a row")
            .ends_with("Blocked PodNotReady web-1: ContainersNotReady"),
        "{both}"
    );
    assert!(
        both.contains("NEXT (LOCAL VIEW): the gates evaluated on this machine"),
        "{both}"
    );
    assert!(
        both.contains("  demo/web: not judged here without --http-check es-health=URL\n"),
        "{both}"
    );
}

#[test]
fn a_step_from_a_workstation_says_what_it_judges_and_what_it_cannot() {
    let note = step_note(
        &["--http-check es-health=URL".into()],
        "Blocked HttpCheck (written 3m ago)",
    );
    assert!(
        note.starts_with("step judges the gates here, with this machine's flags and RBAC"),
        "{note}"
    );
    assert!(
        note.ends_with("; not the checks it has no flag for, whose gates hold the step here: without --http-check es-health=URL. The in-cluster stepper recorded: Blocked HttpCheck (written 3m ago)."),
        "{note}"
    );
    let all = step_note(&[], "Idle");
    assert!(!all.contains("not the checks"), "{all}");
    assert!(
        all.ends_with("as the in-cluster stepper does. The in-cluster stepper recorded: Idle."),
        "{all}"
    );
}
