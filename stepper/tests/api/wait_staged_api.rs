//! `wait` without a name and `release --wait` (the uninstall's "finish what is staged"): against a mocked
//! API server answering the real fixture bodies, which sets are still staged and what the stepper
//! recorded on each, the polls until none is, the timeout naming them, a LIST that fails; and the real
//! binary against the fake API server: the exit status, what it prints, and that `release --wait`
//! writes nothing at its timeout.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use crate::mock_api::moments::list_body;
use crate::mock_api::*;
use crate::support::fake_apiserver::FakeApiServer;
use http::Method;
use jiff::SignedDuration;
use serde_json::{Value, json};
use sts_stepper::cluster::kube::Scope;
use sts_stepper::commands::{Patience, Waited, staged_now, timed_out_lines, wait_none_staged};
use sts_stepper::config::Keys;

/// The set of fixture `moment`, renamed `namespace/name`, with `f` applied.
fn set_of(moment: &str, namespace: &str, name: &str, f: impl FnOnce(&mut Value)) -> Value {
    let list: Value = serde_json::from_slice(&list_body(moment, "statefulsets")).expect("json");
    let mut set = list["items"][0].clone();
    set["metadata"]["namespace"] = json!(namespace);
    set["metadata"]["name"] = json!(name);
    f(&mut set);
    set
}

fn listed(items: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({"kind": "StatefulSetList", "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "9"}, "items": items}))
    .expect("json")
}

/// The stepper recorded `PodNotReady` on the set, in a write of its own at 01:15:00.
fn blocked(s: &mut Value) {
    s["metadata"]["annotations"]["safe-rollout.dev/blocked-reason"] = json!("PodNotReady");
    s["metadata"]["managedFields"]
        .as_array_mut()
        .expect("managedFields")
        .push(
            json!({"manager": "sts-stepper", "operation": "Update", "apiVersion": "apps/v1",
            "time": "2026-11-23T01:15:00Z", "fieldsType": "FieldsV1", "fieldsV1": {}}),
        );
}

fn keys() -> Arc<Keys> {
    Arc::new(Keys::default())
}

#[tokio::test]
async fn each_staged_set_is_named_with_what_the_stepper_recorded_and_the_others_are_not() {
    let items = [
        set_of("1-staged", "demo", "web", |_| {}),
        set_of("2-stepped-4", "db", "pg", blocked),
        // Nothing staged: every pod on the update revision, partition back at 5.
        set_of("4-complete", "demo", "done", |s| {
            s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(5)
        }),
        // Staged, but forced: the native rolling update has it already.
        set_of("1-staged", "demo", "forced", |s| {
            s["metadata"]["annotations"]["safe-rollout.dev/force-rolling-update"] = json!("true")
        }),
        // OnDelete: pods change only when deleted; no partition to lower.
        set_of("1-staged", "demo", "ondelete", |s| {
            s["spec"]["updateStrategy"] = json!({"type": "OnDelete"})
        }),
    ];
    let (cluster, server) = mock_cluster(Scope::default(), vec![get(STS_ALL, listed(&items))]);
    let (count, staged) = staged_now(&cluster, &keys(), now()).await.expect("list");
    drop(cluster);
    assert_eq!(
        server.await.expect("script").len(),
        1,
        "one LIST, no pod read"
    );
    assert_eq!(count, 5);
    let lines: Vec<String> = staged.iter().map(|s| s.line()).collect();
    assert_eq!(
        lines,
        [
            format!(
                "db/pg: staged behind partition 4 (1 of 5 pods on {REV_NEW}); the stepper recorded: \
                 Blocked PodNotReady (written 5m ago)"
            ),
            format!(
                "demo/web: staged behind partition 5 (0 of 5 pods on {REV_NEW}); the stepper recorded: \
                 Staged: no step yet"
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_wait_polls_until_the_last_staged_set_is_stepped_out() {
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![
            get(STS_ALL, list_body("1-staged", "statefulsets")),
            get(STS_ALL, list_body("2-stepped-4", "statefulsets")),
            get(STS_ALL, list_body("4-complete", "statefulsets")),
        ],
    );
    let started = tokio::time::Instant::now();
    let patience = Patience {
        timeout: SignedDuration::from_mins(60),
        poll: SignedDuration::from_secs(5),
    };
    let waited = wait_none_staged(&cluster, &keys(), patience)
        .await
        .expect("wait");
    drop(cluster);
    assert_eq!(server.await.expect("script").len(), 3);
    assert_eq!(waited, Waited::NoneStaged { listed: 1 });
    // Two polls of 5 s between the three LISTs: no busy loop, no sleep after the last.
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn at_the_timeout_the_sets_still_staged_are_named_with_what_to_do() {
    let stuck = listed(&[set_of("2-stepped-4", "demo", "web", blocked)]);
    let (cluster, server) = mock_cluster(
        Scope::default(),
        (0..3).map(|_| get(STS_ALL, stuck.clone())).collect(),
    );
    let patience = Patience {
        timeout: SignedDuration::from_secs(10),
        poll: SignedDuration::from_secs(5),
    };
    let waited = wait_none_staged(&cluster, &keys(), patience)
        .await
        .expect("wait");
    drop(cluster);
    assert_eq!(
        server.await.expect("script").len(),
        3,
        "LISTs at 0, 5 and 10 s"
    );
    let Waited::TimedOut(staged) = waited else {
        panic!("timed out: {waited:?}")
    };
    assert_eq!(staged.len(), 1);
    assert!(
        staged[0]
            .recorded
            .starts_with("Blocked PodNotReady (written "),
        "{staged:?}"
    );
    assert_eq!(
        staged[0].progress_key(),
        "demo/web partition 4 Blocked PodNotReady"
    );
    let lines = timed_out_lines(&staged, SignedDuration::from_secs(10), "in every namespace");
    assert_eq!(
        lines[0],
        "timed out after 10s: 1 StatefulSet still staged in every namespace:"
    );
    assert!(lines[1].starts_with(&format!(
        "  demo/web: staged behind partition 4 (1 of 5 pods on {REV_NEW}); the stepper recorded: \
         Blocked PodNotReady"
    )));
    assert!(lines[2].contains("kubectl safe-rollout step"), "{lines:?}");
    assert_eq!(lines.len(), 3);
}

#[tokio::test]
async fn a_list_that_fails_stops_the_wait_instead_of_calling_nothing_staged() {
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![expect(
            Method::GET,
            STS_ALL,
            403,
            status_body(
                403,
                "Forbidden",
                "statefulsets.apps is forbidden: User \"alice\" cannot list resource \"statefulsets\"",
            ),
        )],
    );
    let patience = Patience {
        timeout: SignedDuration::from_mins(1),
        poll: SignedDuration::from_secs(5),
    };
    let err = wait_none_staged(&cluster, &keys(), patience)
        .await
        .expect_err("a refused LIST is an error");
    drop(cluster);
    server.await.expect("script");
    assert!(err.to_string().contains("cannot list resource"), "{err}");
}

/// Runs the binary with `KUBECONFIG=kubeconfig` and `HOME` empty.
async fn run(home: &Path, kubeconfig: &Path, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sts-stepper"));
    cmd.args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .env_remove("POD_NAMESPACE")
        .env_remove("POD_NAME")
        .env("RUST_LOG", "warn");
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exits_0_once_nothing_is_staged_and_1_naming_what_still_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let done = FakeApiServer::start("4-complete").await;
    let out = run(
        dir.path(),
        &done.kubeconfig(dir.path(), None),
        &["wait", "-A"],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout(&out),
        "no StatefulSet staged in every namespace (1 listed): `release` forces nothing\n"
    );
    let staged = FakeApiServer::start("1-staged").await;
    let kubeconfig = staged.kubeconfig(dir.path(), Some("demo"));
    let out = run(
        dir.path(),
        &kubeconfig,
        &["wait", "--timeout", "1s", "--poll", "1s"],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("timed out after 1s: 1 StatefulSet still staged in namespace demo:\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  demo/web: staged behind partition 5 (0 of 5 pods on {REV_NEW}); the stepper \
             recorded: Staged: no step yet\n"
        )),
        "{text}"
    );
    assert!(
        staged
            .seen()
            .iter()
            .all(|s| s.starts_with("/apis/apps/v1/namespaces/demo/statefulsets?")),
        "only LISTs of the context's namespace: {:?}",
        staged.seen()
    );
    // A name with -A or -l: refused, naming the flag.
    let out = run(dir.path(), &kubeconfig, &["wait", "web", "-A"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("across all namespaces (-A)"));
    let out = run(dir.path(), &kubeconfig, &["wait", "web", "-l", "tier=db"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-l/--selector chooses the sets"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_wait_at_its_timeout_writes_nothing_and_never_forces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = FakeApiServer::start("1-staged").await;
    let kubeconfig = server.kubeconfig(dir.path(), None);
    let args = ["release", "-A", "--wait", "--timeout", "1s", "--poll", "1s"];
    let out = run(dir.path(), &kubeconfig, &args).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("timed out after 1s: 1 StatefulSet still staged in every namespace:\n"),
        "{text}"
    );
    assert!(
        text.ends_with("Nothing released: release --wait never forces.\n"),
        "{text}"
    );
    let seen = server.seen();
    assert!(seen.len() >= 2, "polled: {seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.starts_with("/apis/apps/v1/statefulsets?")),
        "LISTs only, no PATCH: {seen:?}"
    );
}

#[test]
fn wait_takes_a_scope_and_release_wait_refuses_force() {
    use clap::Parser;
    use sts_stepper::cli::{Cli, Command};
    let cli = Cli::try_parse_from(["sts-stepper", "wait", "-A", "-l", "tier=db"]).expect("parses");
    let Command::Wait(w) = cli.command else {
        panic!("wait")
    };
    assert!(w.target.is_none() && w.scope.all_namespaces);
    assert_eq!(w.scope.selector.as_deref(), Some("tier=db"));
    let cli = Cli::try_parse_from(["sts-stepper", "release", "-A", "--wait", "--timeout", "2h"])
        .expect("parses");
    let Command::Release(r) = cli.command else {
        panic!("release")
    };
    assert!(r.wait && !r.force);
    assert_eq!(r.timeout, SignedDuration::from_hours(2));
    for (args, says) in [
        (vec!["release", "--wait", "--force"], "cannot be used with"),
        (vec!["release", "--timeout", "5m"], "--wait"),
        (vec!["wait", "-A", "-n", "demo"], "cannot be used with"),
    ] {
        let err = Cli::try_parse_from(std::iter::once("sts-stepper").chain(args.iter().copied()))
            .expect_err("refused")
            .to_string();
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
