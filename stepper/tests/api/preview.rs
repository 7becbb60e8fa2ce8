//! `preview`: what the policy's decision table does on a set's next template change (the real fixture
//! sets, edited into each row a template change can reach), the namespaces every scope excludes and the
//! default opt-in label held equal to `deploy/`, and the command's reads and table against a mocked API
//! server for each scope.

use crate::mock_api;
use std::sync::Arc;

use crate::common::*;
use crate::mock_api::{get, mock_client};
use clap::Parser;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use sts_stepper::cli::preview::GUARD_SELECTOR;
use sts_stepper::cli::{Cli, Command, PreviewScope};
use sts_stepper::commands::preview_text;
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::rollout::preview::{EXCLUDED_NAMESPACES, NextChange, preview};

/// The StatefulSet of fixture `moment` with `f` applied to its JSON.
fn set_of(moment: &str, f: impl FnOnce(&mut Value)) -> StatefulSet {
    let list: Value =
        serde_json::from_slice(&raw_fixture_body(&format!("{moment}-statefulsets.json")))
            .expect("json");
    let mut set = list["items"][0].clone();
    f(&mut set);
    serde_json::from_value(set).expect("a StatefulSet")
}

fn next_of(set: &StatefulSet) -> NextChange {
    preview(set, &SetConfig::parse(set, &Arc::new(Keys::default()))).next
}

fn annotate(key: &str, value: &str) -> impl FnOnce(&mut Value) {
    let (key, value) = (key.to_string(), value.to_string());
    move |s| s["metadata"]["annotations"][format!("safe-rollout.dev/{key}")] = json!(value)
}

#[test]
fn a_set_whose_pods_were_ready_is_staged_behind_partition_replicas() {
    // Moment 4: every pod Ready on the new revision, partition 0, no stamp yet (readyReplicas counts).
    let set = set_of("4-complete", |_| {});
    let p = preview(&set, &SetConfig::parse(&set, &Arc::new(Keys::default())));
    assert_eq!(p.next, NextChange::Staged { partition: 5 });
    assert_eq!(p.staged_now, None, "nothing staged now");
    assert!(!p.guarded_now);
    assert_eq!(p.strategy, "RollingUpdate");
    assert_eq!(
        p.next.to_string(),
        "staged behind partition 5; the stepper rolls it out step by step"
    );
}

#[test]
fn a_set_never_ready_rolls_natively_so_a_broken_first_deployment_is_fixed_by_a_re_apply() {
    let set = set_of("4-complete", |s| {
        s["status"]["readyReplicas"] = json!(0);
        s["status"]["availableReplicas"] = json!(0);
    });
    assert_eq!(next_of(&set), NextChange::NotInitialized);
    // The initialized stamp alone is enough to stage it.
    let stamped = set_of("4-complete", |s| {
        s["status"]["readyReplicas"] = json!(0);
        annotate("initialized", "true")(s);
    });
    assert_eq!(next_of(&stamped), NextChange::Staged { partition: 5 });
}

#[test]
fn forced_and_on_delete_sets_stay_unguarded() {
    let forced = set_of("4-complete", annotate("force-rolling-update", "true"));
    assert_eq!(next_of(&forced), NextChange::ForceRollingUpdate);
    assert!(
        next_of(&forced)
            .to_string()
            .starts_with("Unguarded: force-rolling-update")
    );
    let on_delete = set_of("4-complete", |s| {
        s["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    });
    assert_eq!(next_of(&on_delete), NextChange::OnDelete("OnDelete".into()));
    // `"True"` is not `"true"`: the set is staged, as every boolean annotation of the project reads.
    let not_forced = set_of("4-complete", annotate("force-rolling-update", "True"));
    assert_eq!(next_of(&not_forced), NextChange::Staged { partition: 5 });
}

#[test]
fn a_set_staged_now_and_marked_says_so_and_the_stepper_steps_it() {
    let set = set_of("1-staged", annotate("guarded", "true"));
    let p = preview(&set, &SetConfig::parse(&set, &Arc::new(Keys::default())));
    assert_eq!(p.staged_now, Some(5));
    assert!(p.guarded_now);
    // A scaled-up set is staged behind its new replica count on its next change.
    let scaled = set_of("1-staged", |s| s["spec"]["replicas"] = json!(7));
    assert_eq!(next_of(&scaled), NextChange::Staged { partition: 7 });
}

#[test]
fn a_set_of_an_excluded_namespace_is_never_sent_to_the_policy() {
    for ns in EXCLUDED_NAMESPACES {
        let set = set_of("4-complete", |s| s["metadata"]["namespace"] = json!(ns));
        assert_eq!(next_of(&set), NextChange::ExcludedNamespace, "{ns}");
    }
}

/// A deploy/ manifest as JSON.
fn manifest(rel: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_excluded_namespaces_and_the_opt_in_label_are_deploys() {
    let policy = manifest("deploy/policy/cluster-admission-policy.yaml");
    let binding = manifest("deploy/native/mutating-admission-policy-binding.yaml");
    let excluded = json!([{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
        "values": EXCLUDED_NAMESPACES}]);
    assert_eq!(
        policy["spec"]["namespaceSelector"]["matchExpressions"],
        excluded
    );
    assert_eq!(
        binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"],
        excluded
    );
    let (key, value) = GUARD_SELECTOR.split_once('=').expect("key=value");
    assert_eq!(
        policy["spec"]["objectSelector"],
        json!({"matchLabels": {key: value}})
    );
    let cronjob = manifest("deploy/stepper/cronjob.yaml");
    let args = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(args[1], json!(format!("--selector={GUARD_SELECTOR}")));
}

const STS_ALL: &str = "/apis/apps/v1/statefulsets?";

/// A StatefulSetList of moment 4's set, once per (namespace, name, labels).
fn sets(items: &[(&str, &str, bool)]) -> Vec<u8> {
    let items: Vec<Value> = items
        .iter()
        .map(|(ns, name, labelled)| {
            let mut s: Value = serde_json::to_value(set_of("4-complete", |_| {})).expect("json");
            s["metadata"]["namespace"] = json!(ns);
            s["metadata"]["name"] = json!(name);
            if *labelled {
                s["metadata"]["labels"] = json!({"safe-rollout.dev/guard": "true"});
            }
            s
        })
        .collect();
    serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "1"}, "items": items}))
    .expect("json")
}

async fn run_preview(scope: PreviewScope, script: Vec<mock_api::Expect>) -> (String, Vec<String>) {
    let (client, server) = mock_client(script);
    let text = preview_text(&client, &scope, Vec::new(), &Arc::new(Keys::default()))
        .await
        .expect("preview");
    drop(client);
    let seen = server.await.expect("script");
    (text, seen.into_iter().map(|s| s.uri).collect())
}

#[tokio::test]
async fn the_opt_in_scope_lists_the_labelled_sets_and_counts_the_others() {
    let all = sets(&[
        ("db", "postgres", true),
        ("monitoring", "prometheus", false),
        ("kube-system", "etcd-backup", false),
    ]);
    let (text, uris) = run_preview(
        PreviewScope::ObjectLabel(GUARD_SELECTOR.into()),
        vec![
            get(STS_ALL, all),
            get(
                "/apis/apps/v1/statefulsets?&labelSelector=safe-rollout.dev%2Fguard%3Dtrue",
                sets(&[("db", "postgres", true)]),
            ),
        ],
    )
    .await;
    assert_eq!(uris.len(), 2);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("NAMESPACE  STATEFULSET  STRATEGY"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("db         postgres     RollingUpdate  no")
            && lines[1]
                .ends_with("staged behind partition 5; the stepper rolls it out step by step"),
        "{text}"
    );
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        text.contains("Scope: StatefulSets labelled safe-rollout.dev/guard=true"),
        "{text}"
    );
    assert!(
        text.contains("1 of 3 StatefulSets are in this scope, 1 of them staged on their next template change; 2 keep the native rolling update."),
        "{text}"
    );
}

#[tokio::test]
async fn the_cluster_wide_scope_names_the_sets_of_excluded_namespaces_apart() {
    let all = sets(&[
        ("db", "postgres", false),
        ("kube-system", "etcd-backup", false),
    ]);
    let (text, _) = run_preview(PreviewScope::ClusterWide, vec![get(STS_ALL, all)]).await;
    assert!(text.contains("\ndb "), "{text}");
    assert!(!text.contains("\nkube-system "), "not a row: {text}");
    assert!(
        text.contains("1 of 2 StatefulSets are in this scope, 1 of them staged on their next template change; 1 keep the native rolling update (1 in the namespaces the policy always excludes: kube-system/etcd-backup)."),
        "{text}"
    );
}

#[tokio::test]
async fn the_namespace_label_scope_lists_every_set_of_the_labelled_namespaces() {
    let all = sets(&[
        ("db", "postgres", false),
        ("db", "redis", false),
        ("monitoring", "prometheus", false),
    ]);
    let namespaces = serde_json::to_vec(&json!({"kind": "NamespaceList", "apiVersion": "v1",
        "metadata": {}, "items": [{"metadata": {"name": "db", "labels": {"safe-rollout.dev/guard": "true"}}}]}))
    .expect("json");
    let (text, uris) = run_preview(
        PreviewScope::NamespaceLabel(GUARD_SELECTOR.into()),
        vec![
            get(STS_ALL, all),
            get(
                "/api/v1/namespaces?&labelSelector=safe-rollout.dev%2Fguard%3Dtrue",
                namespaces,
            ),
        ],
    )
    .await;
    assert_eq!(uris.len(), 2);
    assert!(
        text.contains("\ndb  ") && text.contains(" postgres ") && text.contains(" redis "),
        "{text}"
    );
    assert!(!text.contains("prometheus  "), "{text}");
    assert!(
        text.contains("2 of 3 StatefulSets are in this scope"),
        "{text}"
    );
}

#[tokio::test]
async fn no_set_in_scope_says_so() {
    let (text, _) = run_preview(
        PreviewScope::ObjectLabel("tier=db".into()),
        vec![
            get(STS_ALL, sets(&[("db", "postgres", false)])),
            get(
                "/apis/apps/v1/statefulsets?&labelSelector=tier%3Ddb",
                sets(&[]),
            ),
        ],
    )
    .await;
    assert!(
        text.starts_with("No StatefulSet in any namespace is in this scope."),
        "{text}"
    );
    assert!(
        text.contains("0 of 1 StatefulSets are in this scope"),
        "{text}"
    );
}

fn scope_of(args: &[&str]) -> Result<PreviewScope, String> {
    let cli = Cli::try_parse_from(["sts-stepper", "preview"].iter().chain(args))
        .map_err(|e| e.to_string())?;
    let Command::Preview(p) = cli.command else {
        panic!("preview")
    };
    Ok(p.scope())
}

#[test]
fn the_flags_name_one_scope_the_opt_in_label_by_default() {
    assert_eq!(
        scope_of(&[]),
        Ok(PreviewScope::ObjectLabel(GUARD_SELECTOR.into()))
    );
    assert_eq!(
        scope_of(&["-A", "-l", "tier=db"]),
        Ok(PreviewScope::ObjectLabel("tier=db".into()))
    );
    assert_eq!(
        scope_of(&["--namespace-selector", "team=db"]),
        Ok(PreviewScope::NamespaceLabel("team=db".into()))
    );
    assert_eq!(scope_of(&["--cluster-wide"]), Ok(PreviewScope::ClusterWide));
    for both in [
        &["-l", "tier=db", "--cluster-wide"][..],
        &["--namespace-selector", "a=b", "--cluster-wide"],
        &["-l", "tier=db", "--namespace-selector", "a=b"],
        &["-A", "-n", "db"],
    ] {
        let err = scope_of(both).expect_err("two scopes at once");
        assert!(err.contains("cannot be used with"), "{both:?}: {err}");
    }
}
