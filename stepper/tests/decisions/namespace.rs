//! Which namespace a command means, as kubectl decides it: `-n` over the kubeconfig context's
//! namespace over `default`; in a pod `$POD_NAMESPACE`, then the service account's namespace. The
//! pure rules row by row, then the real kubeconfig reading (`--kubeconfig`, `--context`).
use rstest::rstest;
use sts_stepper::cli::namespace::{controller_namespaces, query_namespaces};
use sts_stepper::cli::{GlobalArgs, LogFormat, NamespaceSource, Target, TargetRef};
use sts_stepper::commands::load;

fn kubeconfig(ns: Option<&str>) -> NamespaceSource {
    NamespaceSource::Kubeconfig {
        context_namespace: ns.map(str::to_string),
    }
}

fn in_cluster(pod: Option<&str>, sa: Option<&str>) -> NamespaceSource {
    NamespaceSource::InCluster {
        pod_namespace: pod.map(str::to_string),
        service_account_namespace: sa.map(str::to_string),
    }
}

#[rstest]
#[case::context_namespace(kubeconfig(Some("db")), "db")]
#[case::no_namespace_is_default(kubeconfig(None), "default")]
#[case::empty_namespace_is_default(kubeconfig(Some("")), "default")]
#[case::blank_namespace_is_default(kubeconfig(Some("  ")), "default")]
#[case::pod_namespace_first(in_cluster(Some("ops"), Some("sa-ns")), "ops")]
#[case::service_account_trimmed(in_cluster(None, Some("sa-ns\n")), "sa-ns")]
#[case::empty_pod_namespace_skipped(in_cluster(Some(""), Some("sa-ns")), "sa-ns")]
#[case::nothing_in_a_pod_is_default(in_cluster(None, None), "default")]
fn the_current_namespace(#[case] source: NamespaceSource, #[case] want: &str) {
    assert_eq!(source.current_namespace(), want);
}

fn named(namespace: Option<&str>, name: &str) -> TargetRef {
    TargetRef {
        namespace: namespace.map(str::to_string),
        name: name.into(),
    }
}

/// A named set's namespace: typed, else `-n`, else the current namespace; ambiguity refused.
#[rstest]
#[case::current(named(None, "web"), &[], Ok("ctx/web"))]
#[case::flag_over_current(named(None, "web"), &["db"], Ok("db/web"))]
#[case::typed(named(Some("demo"), "web"), &[], Ok("demo/web"))]
#[case::typed_and_same_flag(named(Some("demo"), "web"), &["demo"], Ok("demo/web"))]
#[case::typed_and_other_flag(named(Some("demo"), "web"), &["db"], Err("differs from -n"))]
#[case::two_flags(named(None, "web"), &["a", "b"], Err("give -n once"))]
fn a_named_set_resolves_its_namespace(
    #[case] target: TargetRef,
    #[case] flags: &[&str],
    #[case] want: Result<&str, &str>,
) {
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let got = target.resolve(&flags, "ctx").map(|t: Target| t.to_string());
    match (got, want) {
        (Ok(got), Ok(want)) => assert_eq!(got, want),
        (Err(got), Err(want)) => assert!(got.contains(want), "{got}"),
        (got, want) => panic!("{got:?}, want {want:?}"),
    }
}

/// `status` lists like `kubectl get` (the current namespace, `-n`'s, `-A` all); `once` and `watch`
/// pass over every namespace unless `-n` says otherwise. Empty = every namespace.
#[rstest]
#[case::nothing(&[], false, &["ctx"], &[])]
#[case::flag(&["a", "b"], false, &["a", "b"], &["a", "b"])]
#[case::all(&[], true, &[], &[])]
fn status_is_a_query_once_and_watch_are_controllers(
    #[case] flags: &[&str],
    #[case] all: bool,
    #[case] status: &[&str],
    #[case] controller: &[&str],
) {
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    assert_eq!(query_namespaces(&flags, all, "ctx"), status);
    assert_eq!(controller_namespaces(&flags, all), controller);
}

const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: with-namespace
clusters:
  - name: c
    cluster:
      server: http://127.0.0.1:1
contexts:
  - name: with-namespace
    context: {cluster: c, user: u, namespace: db}
  - name: without-namespace
    context: {cluster: c, user: u}
  - name: empty-namespace
    context: {cluster: c, user: u, namespace: ""}
users:
  - name: u
    user: {token: t}
"#;

fn global(kubeconfig: &std::path::Path, context: Option<&str>) -> GlobalArgs {
    GlobalArgs {
        namespaces: vec![],
        kubeconfig: Some(kubeconfig.to_path_buf()),
        context: context.map(str::to_string),
        annotation_prefix: "safe-rollout.dev".into(),
        log_format: LogFormat::Text,
    }
}

/// The real kubeconfig reading: the current context's namespace, `--context`'s, an empty one.
#[tokio::test]
async fn the_kubeconfig_context_gives_the_namespace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("config");
    std::fs::write(&path, KUBECONFIG).expect("write kubeconfig");
    for (context, want) in [
        (None, "db"),
        (Some("with-namespace"), "db"),
        (Some("without-namespace"), "default"),
        (Some("empty-namespace"), "default"),
    ] {
        let (config, source) = load(&global(&path, context)).await.expect("loads");
        assert_eq!(source.current_namespace(), want, "{context:?}");
        assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:1/");
    }
    let err = load(&global(&path, Some("nosuch")))
        .await
        .expect_err("no such context")
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
}

/// A kubeconfig that exists but cannot be read is an error naming it, never a silent fall back to
/// the in-cluster service account (kube-rs's `Config::infer` would fall back).
#[tokio::test]
async fn a_broken_kubeconfig_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("config");
    std::fs::write(&path, "clusters: [not yaml").expect("write kubeconfig");
    let err = format!(
        "{:#}",
        load(&global(&path, None)).await.expect_err("broken")
    );
    assert!(err.contains("reading kubeconfig"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
}
