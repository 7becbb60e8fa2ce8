//! The real binary against a fake API server, as a kubectl user runs it: `kubectl safe-rollout status
//! web` in the kubeconfig context's namespace, `-n`, `-A`, `-o json|yaml`, through the plugin link.
//! The server answers with the recorded fixtures (namespace `demo`, web-1 NotReady).

use std::path::Path;
use std::process::Output;

use crate::support::fake_apiserver::FakeApiServer;
use serde_json::Value;

const MOMENT: &str = "3-web1-notready";

/// Runs the binary (through a `kubectl-safe_rollout` link when `plugin`) with `KUBECONFIG=kubeconfig`,
/// `HOME` empty and no `POD_NAMESPACE`, as a user's shell would.
async fn run(home: &Path, kubeconfig: &Path, plugin: bool, args: &[&str]) -> Output {
    let bin = if plugin {
        let link = home.join("kubectl-safe_rollout");
        if !link.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_sts-stepper"), &link).expect("link");
        }
        link
    } else {
        env!("CARGO_BIN_EXE_sts-stepper").into()
    };
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .env_remove("POD_NAMESPACE")
        .env_remove("POD_NAME")
        .env("RUST_LOG", "warn");
    // The server runs on this test's runtime; the child is waited for on a blocking thread. The
    // binary's own connect timeout bounds it.
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("runs")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_by_name_in_the_context_namespace_as_json() {
    let server = FakeApiServer::start(MOMENT).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = server.kubeconfig(dir.path(), Some("demo"));
    let out = run(
        dir.path(),
        &kubeconfig,
        true,
        &["status", "web", "-o", "json"],
    )
    .await;
    let doc = json(&out);
    assert_eq!(doc["apiVersion"], "safe-rollout.dev/v1");
    assert_eq!(doc["kind"], "RolloutStatusList");
    let item = &doc["items"][0];
    assert_eq!(
        (&item["namespace"], &item["name"]),
        (&"demo".into(), &"web".into())
    );
    assert_eq!(item["partition"], 4);
    assert_eq!(
        (
            &item["replicas"],
            &item["updatedReplicas"],
            &item["readyReplicas"]
        ),
        (&5.into(), &1.into(), &4.into())
    );
    assert_eq!(item["verdict"]["type"], "Blocked");
    assert_eq!(item["verdict"]["reason"], "PodNotReady");
    assert_eq!(item["verdict"]["message"], "web-1: ContainersNotReady");
    assert_eq!(item["paused"], false);
    let seen = server.seen();
    // Besides the stepper's own namespace, where its Lease and CronJob say whether its record is current.
    assert!(
        seen.iter().all(|s| s.contains("/namespaces/demo/")
            || s.starts_with(
                "/apis/coordination.k8s.io/v1/namespaces/sts-safe-rollout/leases/sts-stepper"
            )
            || s.starts_with("/apis/batch/v1/namespaces/sts-safe-rollout/cronjobs/sts-stepper")),
        "only the context's namespace is read: {seen:?}"
    );
    // The fake server has neither: the record's freshness is unknown, and says why.
    assert!(
        item["recorded"]["freshness"]
            .as_str()
            .is_some_and(|f| f.starts_with("unknown: ")),
        "{item}"
    );
    assert_eq!(item["recorded"]["stale"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n_overrides_the_context_and_sts_slash_names_the_set() {
    let server = FakeApiServer::start(MOMENT).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = server.kubeconfig(dir.path(), Some("elsewhere"));
    // The try: `kubectl safe-rollout status web -n <ns>`, here with kubectl's `sts/`, and the
    // gates evaluated here too (`--local`: the NEXT column).
    let out = run(
        dir.path(),
        &kubeconfig,
        true,
        &["status", "sts/web", "-n", "demo", "--local"],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("NAMESPACE  STATEFULSET"), "{table}");
    assert!(
        table.contains("Blocked PodNotReady web-1: ContainersNotReady"),
        "{table}"
    );
    assert!(
        server
            .seen()
            .iter()
            .all(|s| !s.contains("/namespaces/elsewhere/"))
    );
    // Without -n and no namespace in the context: `default`, where nothing is guarded.
    let kubeconfig = server.kubeconfig(dir.path(), None);
    let out = run(dir.path(), &kubeconfig, false, &["status"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "No guarded StatefulSets found in namespace default."
    );
    assert!(
        server
            .seen()
            .last()
            .is_some_and(|s| s.contains("/namespaces/default/"))
    );
    // A name that is not in the namespace.
    let out = run(dir.path(), &kubeconfig, false, &["status", "web"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("statefulset default/web not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_namespaces_as_yaml() {
    let server = FakeApiServer::start(MOMENT).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = server.kubeconfig(dir.path(), Some("elsewhere"));
    let out = run(
        dir.path(),
        &kubeconfig,
        false,
        &["status", "-A", "-o", "yaml"],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_saphyr::from_slice(&out.stdout).expect("YAML");
    assert_eq!(doc["kind"], "RolloutStatusList");
    assert_eq!(doc["items"][0]["namespace"], "demo");
    let seen = server.seen();
    assert!(
        seen.iter()
            .any(|s| s.starts_with("/apis/apps/v1/statefulsets")),
        "one LIST over every namespace: {seen:?}"
    );
    // -A with a name is refused, as kubectl refuses it.
    let out = run(dir.path(), &kubeconfig, false, &["status", "web", "-A"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("across all namespaces"));
}

/// `once` judges `--selector` itself (gate `OutOfScope`): its LIST carries no label selector, and a
/// selector it cannot read stops it before any request, naming the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_lists_every_set_and_refuses_a_bad_selector() {
    let server = FakeApiServer::start(MOMENT).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = server.kubeconfig(dir.path(), Some("demo"));
    let bad = run(
        dir.path(),
        &kubeconfig,
        false,
        &["once", "--dry-run", "--selector", "tier in db"],
    )
    .await;
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--selector \"tier in db\"") && err.contains("kubectl's -l form"),
        "{err}"
    );
    assert!(server.seen().is_empty(), "{:?}", server.seen());
    let out = run(
        dir.path(),
        &kubeconfig,
        false,
        &[
            "once",
            "--dry-run",
            "--selector",
            "safe-rollout.dev/guard=true",
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lists: Vec<String> = (server.seen().into_iter())
        .filter(|s| s.contains("/statefulsets"))
        .collect();
    assert_eq!(
        lists,
        ["/apis/apps/v1/statefulsets?"],
        "no labelSelector sent"
    );
}
