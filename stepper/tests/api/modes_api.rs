//! `once` and `watch` decide the same, through kube-rs (issue 34): one cluster history — the recorded
//! rollout's moments in states that reach every gate (`common::states`: canary plans, checks, an owner,
//! a rollout group, the approval handshake on the pods with annotations of other owners) — served by a
//! mocked API server that answers LISTs and streams WATCH events (`mock_api::watch`). At each moment a
//! `once` pass (`KubeCluster`: LISTs) and a `watch` pass (`Caches::start`'s real watchers and reflector
//! stores, caught up with the server, under `CachedCluster`) must send the same writes: every PATCH
//! (StatefulSets and pods, byte for byte), Event and DELETE. Every PATCH of either mode — a request, a
//! withdrawal, a denial's handling, a step, the status annotations, a stuck pod's record — applied to
//! its object keeps the annotations of other owners on it, and one on an object without annotations
//! fails if another client added one since the read.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::common::states::states;
use futures::StreamExt;
use http::Method;
use jiff::Timestamp;
use kube::Client;
use serde_json::{Value, json};
use sts_stepper::cluster::Cluster;
use sts_stepper::cluster::caches::{CachedCluster, Caches, RestartHook};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::cluster::webhook::{WebhookCall, WebhookPost};
use sts_stepper::cluster::{AllProbes, Kind};
use sts_stepper::config::{Keys, Served, StepperScope, http_check};
use sts_stepper::gates::approval::webhook::answer::WebhookAnswer;
use sts_stepper::gates::check::http::HttpAnswer;
use sts_stepper::gates::check::prometheus::QueryOutcome;
use sts_stepper::gates::{CheckAnswer, CheckRead, GateOptions};
use sts_stepper::pass::{PassOptions, run_pass_with};
use sts_stepper::plan::Snapshot;

use crate::mock_api::watch::{WatchApi, Write};

/// The application's checks, answering alike for both steppers: a query with one series, an HTTP
/// answer whose `status` is `ok`; no webhook configured.
struct Healthy;

impl AllProbes for Healthy {
    async fn check(&self, read: &CheckRead) -> CheckAnswer {
        match read {
            CheckRead::Queries(queries) => {
                CheckAnswer::Queries(vec![QueryOutcome::NonEmpty(1); queries.len()])
            }
            CheckRead::Http(_) => CheckAnswer::Http(HttpAnswer::Json(json!({"status": "ok"}))),
        }
    }

    async fn webhook(&self, call: &WebhookCall) -> WebhookAnswer {
        WebhookPost::unconfigured(call)
    }
}

/// The owner of the owned states (`common::owner`): MOCO's MySQLCluster `db`, healthy, and the API
/// discovery of its group that finds its resource.
fn owner_objects() -> BTreeMap<String, Value> {
    let group = "/apis/moco.cybozu.com/v1beta2";
    BTreeMap::from([
        (
            group.to_string(),
            json!({"kind": "APIResourceList", "apiVersion": "v1",
                   "groupVersion": "moco.cybozu.com/v1beta2",
                   "resources": [{"name": "mysqlclusters", "singularName": "mysqlcluster",
                                  "namespaced": true, "kind": "MySQLCluster",
                                  "verbs": ["get", "list", "watch"]}]}),
        ),
        (
            format!("{group}/namespaces/demo/mysqlclusters/db"),
            json!({"apiVersion": "moco.cybozu.com/v1beta2", "kind": "MySQLCluster",
                   "metadata": {"name": "db", "namespace": "demo", "uid": "uid-owner",
                                "generation": 2},
                   "status": {"conditions": [{"type": "Healthy", "status": "True",
                                              "observedGeneration": 2, "reason": "Healthy",
                                              "message": "",
                                              "lastTransitionTime": "2026-11-23T01:00:00Z"}]}}),
        ),
    ])
}

/// An annotation of another owner (the application, another controller), which no write of the
/// stepper may remove or change.
const FOREIGN: (&str, &str) = ("example.com/owned-by-app", "keep-me");

/// `snap`'s objects as the server holds them: the set and every other pod also carry an annotation of
/// another owner ([`FOREIGN`]); the rest keep the map they had (some have none).
fn objects(snap: &Snapshot) -> Vec<(&'static str, Value)> {
    fn json(o: &impl serde::Serialize) -> Value {
        serde_json::to_value(o).expect("json")
    }
    let foreign = |mut o: Value| {
        o["metadata"]["annotations"][FOREIGN.0] = json!(FOREIGN.1);
        o
    };
    let mut out: Vec<(&'static str, Value)> = Vec::new();
    out.extend((snap.statefulsets.iter()).map(|s| ("statefulsets", foreign(json(&**s)))));
    out.extend(snap.pods.iter().enumerate().map(|(i, p)| {
        (
            "pods",
            if i % 2 == 1 {
                foreign(json(p))
            } else {
                json(p)
            },
        )
    }));
    out.extend(snap.pdbs.iter().map(|p| ("poddisruptionbudgets", json(p))));
    out
}

/// Every PATCH of `writes` applied to the object it targets as served now: the annotations of other
/// owners are all still there, unchanged; where the object has no annotations map, a key another
/// client adds between the read and the write makes the patch fail (nothing removed). Returns the
/// number of patches applied, and of those on an object without annotations.
fn keeps_what_others_own(api: &WatchApi, writes: &[Write], name: &str) -> (usize, usize) {
    let (mut applied, mut bare) = (0, 0);
    for w in writes.iter().filter(|w| w.method == Method::PATCH) {
        let Some(before) = api.object(&w.path) else {
            continue;
        };
        let patch: json_patch::Patch =
            serde_json::from_value(w.body.clone()).expect("a JSON Patch");
        let foreign = |o: &Value| -> BTreeMap<String, Value> {
            (o["metadata"]["annotations"]
                .as_object()
                .into_iter()
                .flatten())
            .filter(|(k, _)| !k.starts_with("safe-rollout.dev/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
        };
        let mut after = before.clone();
        if json_patch::patch(&mut after, &patch).is_err() {
            continue; // a failed test op: nothing written
        }
        applied += 1;
        assert_eq!(
            foreign(&after),
            foreign(&before),
            "{name}: {} {}",
            w.path,
            w.body
        );
        if before["metadata"].get("annotations").is_none() {
            bare += 1;
            let mut raced = before.clone();
            raced["metadata"]["annotations"] = json!({"example.com/added-meanwhile": "x"});
            raced["metadata"]["resourceVersion"] = json!("racing");
            assert!(
                json_patch::patch(&mut raced, &patch).is_err(),
                "{name}: a write on an object read without annotations removes a key added since: {}",
                w.body
            );
        }
    }
    (applied, bare)
}

/// A write as both steppers must send it: PATCHes and DELETEs whole; an Event by what it says
/// (its name and times are the recorder's).
fn comparable(w: &Write) -> Value {
    if w.method == Method::POST && w.path.ends_with("/events") {
        let b = &w.body;
        return json!({"event": [b["reason"], b["type"], b["note"], b["action"],
                                b["regarding"]["name"]]});
    }
    json!({"method": w.method.as_str(), "path": w.path, "body": w.body})
}

/// Waits until `cluster`'s caches hold what `api` serves now (every object at its resourceVersion).
async fn caught_up(cluster: &CachedCluster<'_>, api: &WatchApi) {
    let want = api.versions();
    for _ in 0..2000 {
        let mut have = BTreeMap::new();
        let key = |kind: &str, m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            (
                (
                    kind.to_string(),
                    m.namespace.clone().unwrap_or_default(),
                    m.name.clone().unwrap_or_default(),
                ),
                m.resource_version.clone().unwrap_or_default(),
            )
        };
        for s in cluster.list_statefulsets().await.expect("cached") {
            let (k, v) = key("statefulsets", &s.metadata);
            have.insert(k, v);
        }
        for p in cluster.list_pods().await.expect("cached") {
            let (k, v) = key("pods", &p.metadata);
            have.insert(k, v);
        }
        for p in cluster.list_pdbs().await.expect("cached") {
            let (k, v) = key("poddisruptionbudgets", &p.metadata);
            have.insert(k, v);
        }
        if have == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the caches never caught up with the server");
}

fn options() -> PassOptions {
    PassOptions {
        gates: GateOptions {
            served: Served::default().with(&http_check::FLAG, vec!["app".into()]),
            recover_stuck_pods: true,
            ..GateOptions::default()
        },
        ..PassOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_watch_send_the_same_writes_through_one_history() {
    let (api, client): (WatchApi, Client) = WatchApi::start();
    let keys = Arc::new(Keys::default());
    let hook: RestartHook = Arc::new(|resource| panic!("the {resource} watch failed"));
    let (caches, streams) = Caches::start(&client, &Scope::default(), &keys, &hook);
    for mut s in [
        streams.sets.map(|_| ()).boxed(),
        streams.pods.map(|_| ()).boxed(),
        streams.pdbs.map(|_| ()).boxed(),
    ] {
        tokio::spawn(async move { while s.next().await.is_some() {} });
    }
    caches.ready().await;
    api.watching(3).await; // sets, pods, PDBs: before the first change, or it is never sent
    let (mut compared, mut kinds) = (0, BTreeMap::<String, usize>::new());
    let mut notes = Vec::new();
    let (mut patched, mut bare) = (0, 0);
    // Every state in the default scope, and (one in four) under an opt-in --selector the fixture set
    // does not match: held `OutOfScope` alike in both modes.
    let runs = states()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (name, snap))| {
            let opted_out =
                (i % 4 == 0).then(|| (format!("{name} --selector"), snap.clone(), true));
            std::iter::once((name, snap, false)).chain(opted_out)
        });
    for (name, snap, opted_out) in runs {
        let mut opts = options();
        if opted_out {
            opts.gates.scope =
                StepperScope::new(Some("safe-rollout.dev/guard=true")).expect("scope");
        }
        api.set_objects(objects(&snap), owner_objects());
        for at in ["2026-11-23T01:16:00Z", "2026-11-23T03:00:00Z"] {
            let now: Timestamp = at.parse().expect("time");
            // A client per pass: Events are not folded into the series of an earlier pass's.
            let once_api = KubeCluster::new(client.clone(), Scope::default(), None);
            run_pass_with(&once_api, &Healthy, &opts, now)
                .await
                .unwrap_or_else(|e| panic!("{name}: once: {e}"));
            let once_writes = api.take_writes();
            let (n, b) = keeps_what_others_own(&api, &once_writes, &name);
            (patched, bare) = (patched + n, bare + b);
            let once: Vec<Value> = once_writes.iter().map(comparable).collect();
            let watch_api = KubeCluster::new(client.clone(), Scope::default(), None);
            let cached = CachedCluster {
                caches: &caches,
                api: &watch_api,
            };
            caught_up(&cached, &api).await;
            run_pass_with(&cached, &Healthy, &opts, now)
                .await
                .unwrap_or_else(|e| panic!("{name}: watch: {e}"));
            let watch_writes = api.take_writes();
            let (n, b) = keeps_what_others_own(&api, &watch_writes, &name);
            (patched, bare) = (patched + n, bare + b);
            let watch: Vec<Value> = watch_writes.iter().map(comparable).collect();
            assert_eq!(
                watch, once,
                "{name} at {at}: the two modes wrote differently"
            );
            for w in &once {
                notes.extend(w["event"][2].as_str().map(str::to_string));
                let kind = match (&w["method"], &w["path"]) {
                    (Value::String(m), Value::String(p)) => {
                        format!("{m} {}", p.split('/').rev().nth(1).unwrap_or(""))
                    }
                    _ => format!("Event {}", w["event"][0]),
                };
                *kinds.entry(kind).or_default() += 1;
            }
            compared += 1;
        }
    }
    // The history made every kind of write the stepper makes.
    for kind in [
        "PATCH statefulsets",
        "PATCH pods",
        "DELETE pods",
        "Event \"Stepped\"",
        "Event \"ApprovalRequested\"",
        "Event \"Blocked\"",
    ] {
        assert!(
            kinds.get(kind).is_some_and(|n| *n > 0),
            "no {kind} in {kinds:?}"
        );
    }
    assert!(compared > 200, "{compared} moments compared");
    assert!(
        patched > 100,
        "{patched} patches checked for others' annotations"
    );
    // The wait shown counts from the request's `update-requested-at` (01:15:00), in both modes.
    assert!(
        notes
            .iter()
            .any(|n| n.contains("waiting 60 s of 300 s for approval of web-4")),
        "{notes:#?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("OutOfScope")),
        "a set out of the stepper's scope is announced in both modes"
    );
    // A pod not Ready on a rolled-back revision is returned at once, in both modes (issue 43).
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("deleted pod web-1, not Ready on revision")),
        "{notes:#?}"
    );
    assert!(api.watches() >= 3, "the caches watched the server");
}
