//! A pod event that changes only what `watch`'s caches drop — the `status` annotation Patroni rewrites on
//! every member's pod every loop — is stored (its resourceVersion is the precondition of the writes
//! decided from the cache) but wakes no early pass: `Caches::start`'s pod stream does not yield it, while
//! the next event that changes a kept field (the pod's readiness) is yielded (issue 45 item 5,
//! `cluster::pod_news`). Through kube-rs's real watcher and reflector store, fed by a mocked API server
//! with the MODIFIED event a v1.36.2 API server sent for Patroni's patch
//! (`fixtures/api/scale/pod-patroni-modified.jsonl`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use sts_stepper::cluster::Cluster;
use sts_stepper::cluster::cached::CachedPod;
use sts_stepper::cluster::caches::{CachedCluster, Caches, RestartHook};
use sts_stepper::cluster::kube::{KubeCluster, Scope};
use sts_stepper::config::Keys;
use tokio::sync::mpsc;

use crate::mock_api::watch::WatchApi;

/// The Patroni member the captured event carries.
fn member() -> Value {
    let path = format!(
        "{}/../fixtures/api/scale/pod-patroni-modified.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let line = std::fs::read_to_string(&path).expect("fixture");
    let mut event: Value = serde_json::from_str(&line).expect("a watch event");
    event["object"].take()
}

/// `pod` after Patroni's next loop: a new WAL position in its `status` annotation.
fn next_loop(pod: &Value) -> Value {
    let mut pod = pod.clone();
    let status = pod["metadata"]["annotations"]["status"]
        .as_str()
        .expect("Patroni's status")
        .replace("50335744", "50339840");
    pod["metadata"]["annotations"]["status"] = json!(status);
    pod
}

/// The pod as the caches keep it, its resourceVersion aside.
fn kept(mut pod: Pod) -> Pod {
    pod.metadata.resource_version = None;
    pod
}

/// The store's only pod, once it holds `resource_version`.
async fn stored(cached: &CachedCluster<'_>, resource_version: &str) -> Pod {
    for _ in 0..500 {
        let pods = cached.list_pods().await.expect("pods");
        if let [pod] = pods.as_slice()
            && pod.metadata.resource_version.as_deref() == Some(resource_version)
        {
            return pod.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the store never held resourceVersion {resource_version}")
}

fn ready(event: &Event<CachedPod>) -> Option<String> {
    let Event::Apply(pod) = event else {
        return None;
    };
    let pod = Pod::from(pod);
    let conditions = pod.status?.conditions?;
    conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patroni_status_rewrite_is_stored_but_wakes_no_pass_and_a_readiness_change_does() {
    let (api, client) = WatchApi::start();
    let member = member();
    let key = (
        "pods".to_string(),
        "db".to_string(),
        "patroni-7-2".to_string(),
    );
    api.set_objects(vec![("pods", member.clone())], BTreeMap::new());
    let keys = Arc::new(Keys::default());
    let hook: RestartHook = Arc::new(|resource| panic!("the {resource} watch failed"));
    let (caches, streams) = Caches::start(&client, &Scope::default(), &keys, &hook);
    for mut s in [
        streams.sets.map(|_| ()).boxed(),
        streams.pdbs.map(|_| ()).boxed(),
    ] {
        tokio::spawn(async move { while s.next().await.is_some() {} });
    }
    // What an early pass hears of (`commands::watch::changes` reads this stream).
    let (heard, mut yielded) = mpsc::unbounded_channel();
    let mut pods = streams.pods;
    tokio::spawn(async move {
        while let Some(event) = pods.next().await {
            let _ = heard.send(event);
        }
    });
    caches.ready().await;
    let kube = KubeCluster::new(client.clone(), Scope::default(), None);
    let cached = CachedCluster {
        caches: &caches,
        api: &kube,
    };
    let before = stored(&cached, &api.versions()[&key]).await;
    // The first list is yielded, up to its end.
    let listed = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = yielded.recv().await {
            if matches!(event, Event::InitDone) {
                return true;
            }
        }
        false
    });
    assert!(listed.await.expect("the list's end is yielded"));
    api.watching(3).await; // sets, pods, PDBs: before the change, or it is never sent

    // Patroni's loop: a MODIFIED event with a new resourceVersion, nothing kept changed.
    let rewritten = next_loop(&member);
    api.set_objects(vec![("pods", rewritten.clone())], BTreeMap::new());
    let version = api.versions()[&key].clone();
    assert_ne!(before.metadata.resource_version.as_ref(), Some(&version));
    let after = stored(&cached, &version).await;
    assert_eq!(kept(after), kept(before), "the kept pod is unchanged");

    // Then the pod goes unready: yielded, and the first event yielded since the list.
    let mut unready = rewritten;
    let conditions = unready["status"]["conditions"]
        .as_array_mut()
        .expect("conditions");
    for c in conditions.iter_mut().filter(|c| c["type"] == "Ready") {
        c["status"] = json!("False");
    }
    api.set_objects(vec![("pods", unready)], BTreeMap::new());
    let next = tokio::time::timeout(Duration::from_secs(10), yielded.recv())
        .await
        .expect("the readiness change is yielded")
        .expect("the stream runs");
    assert_eq!(ready(&next).as_deref(), Some("False"), "{next:?}");
}
