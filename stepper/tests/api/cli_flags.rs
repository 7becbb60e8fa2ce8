//! The command line's parsing: the flags, their defaults and their errors, shared and global flags on
//! either side of the subcommand, kubectl's target forms, durations, `--http-check NAME=URL`, and the
//! HA manifest's leader-election flags.
use clap::{CommandFactory, Parser};
use jiff::SignedDuration;
use rstest::rstest;
use sts_stepper::cli::values::{parse_duration, parse_target};
use sts_stepper::cli::{Cli, Command, LogFormat, OutputFormat, TargetRef};

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn defaults() {
    let cli = Cli::try_parse_from(["sts-stepper", "watch"]).expect("parses");
    assert_eq!(cli.global.annotation_prefix, "safe-rollout.dev");
    assert!(cli.global.namespaces.is_empty());
    assert_eq!(cli.global.log_format, LogFormat::Text);
    let Command::Watch(w) = cli.command else {
        panic!("watch")
    };
    assert!(!w.dry_run && !w.gates.no_pdb_gate && !w.scope.all_namespaces);
    assert_eq!(w.pass.max_decision_age, SignedDuration::from_secs(1));
    assert_eq!(w.interval, SignedDuration::from_secs(30));
    assert_eq!(w.metrics_addr.to_string(), "0.0.0.0:8080");
}

#[test]
fn shared_flags_work_after_the_subcommand_and_repeat() {
    let cli = Cli::try_parse_from([
        "sts-stepper",
        "once",
        "-n",
        "a",
        "--namespace",
        "b",
        "--selector",
        "tier=db",
        "--annotation-prefix",
        "moco.cybozu.com",
        "--dry-run",
        "--log-format",
        "json",
        "--no-pdb-gate",
        "--context",
        "prod",
    ])
    .expect("parses");
    assert_eq!(cli.global.namespaces, ["a", "b"]);
    assert_eq!(cli.global.annotation_prefix, "moco.cybozu.com");
    assert_eq!(cli.global.log_format, LogFormat::Json);
    assert_eq!(cli.global.context.as_deref(), Some("prod"));
    let Command::Once(once) = cli.command else {
        panic!("once")
    };
    assert_eq!(once.scope.selector.as_deref(), Some("tier=db"));
    assert!(once.dry_run && once.gates.no_pdb_gate);
}

#[test]
fn global_flags_work_before_the_subcommand_too() {
    let cli = Cli::try_parse_from([
        "sts-stepper",
        "-n",
        "db",
        "--kubeconfig",
        "/tmp/kc",
        "--context",
        "prod",
        "status",
        "web",
    ])
    .expect("parses");
    assert_eq!(cli.global.namespaces, ["db"]);
    assert_eq!(
        cli.global.kubeconfig.as_deref(),
        Some(std::path::Path::new("/tmp/kc"))
    );
    let Command::Status(s) = cli.command else {
        panic!("status")
    };
    assert_eq!(s.target, parse_target("web").ok());
}

#[rstest]
#[case(&["sts-stepper", "--annotation-prefix", "Not_A_Domain", "once"], "not a DNS subdomain")]
#[case(&["sts-stepper", "step", "a/b/c"], "expected NAME, sts/NAME or NAMESPACE/NAME")]
#[case(&["sts-stepper", "step", "deployments.apps/web"], "not a StatefulSet type")]
#[case(&["sts-stepper", "status", "-A", "-n", "demo"], "cannot be used with")]
#[case(&["sts-stepper", "status", "-o", "wide"], "wide")]
#[case(&["sts-stepper", "status", "--dry-run"], "--dry-run")]
#[case(&["sts-stepper", "status", "--max-steps-per-pass", "1"], "--max-steps-per-pass")]
#[case(&["sts-stepper", "pause", "web", "--reason", "x", "--recover-stuck-pods"], "--recover-stuck-pods")]
#[case(&["sts-stepper", "step", "demo/web", "--force"], "--reason")]
#[case(&["sts-stepper", "wait", "demo/web", "--timeout", "soon"], "positive duration")]
#[case(&["sts-stepper", "watch", "--interval", "0s"], "positive duration")]
#[case(&["sts-stepper", "--log-format", "xml", "once"], "xml")]
fn bad_flags_are_refused_with_a_reason(#[case] args: &[&str], #[case] says: &str) {
    let err = Cli::try_parse_from(args).expect_err("refused").to_string();
    assert!(err.contains(says), "{err}");
}

#[test]
fn step_force_with_reason_and_wait_timeout_parse() {
    let cli = Cli::try_parse_from([
        "sts-stepper",
        "step",
        "demo/web",
        "--force",
        "--reason",
        "node web-1 is gone",
    ])
    .expect("parses");
    let Command::Step(s) = cli.command else {
        panic!("step")
    };
    assert!(s.force);
    assert_eq!(s.reason.as_deref(), Some("node web-1 is gone"));
    assert_eq!(
        s.target,
        TargetRef {
            namespace: Some("demo".into()),
            name: "web".into()
        }
    );
    let cli = Cli::try_parse_from(["sts-stepper", "wait", "demo/web", "--timeout", "1h30m"])
        .expect("parses");
    let Command::Wait(w) = cli.command else {
        panic!("wait")
    };
    assert_eq!(w.timeout, SignedDuration::from_secs(5400));
}

/// kubectl's ways to name a StatefulSet, and `NAMESPACE/NAME`: `Some((namespace typed, name))`.
#[rstest]
#[case("web", Some((None, "web")))]
#[case("sts/web", Some((None, "web")))]
#[case("statefulset/web", Some((None, "web")))]
#[case("statefulsets/web", Some((None, "web")))]
#[case("statefulset.apps/web", Some((None, "web")))]
#[case("statefulsets.apps/web", Some((None, "web")))]
#[case("sts.apps/web", Some((None, "web")))]
#[case("statefulset.v1.apps/web", Some((None, "web")))]
#[case("STS/web", Some((None, "web")))]
#[case("demo/web", Some((Some("demo"), "web")))]
#[case("demo/", None)]
#[case("/web", None)]
#[case("sts/", None)]
#[case("a/b/c", None)]
#[case("", None)]
#[case("we b", None)]
#[case("deployment.apps/web", None)]
fn targets(#[case] s: &str, #[case] want: Option<(Option<&str>, &str)>) {
    let got = parse_target(s).ok();
    let want = want.map(|(namespace, name)| TargetRef {
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    });
    assert_eq!(got, want, "{s}");
}

#[test]
fn status_takes_a_name_with_n_and_an_output_format() {
    // The first try: `kubectl safe-rollout status web -n e2e`.
    let cli = Cli::try_parse_from(["sts-stepper", "status", "web", "-n", "e2e", "-o", "json"])
        .expect("parses");
    let Command::Status(s) = cli.command else {
        panic!("status")
    };
    assert_eq!(s.output, Some(OutputFormat::Json));
    let target = s.target.expect("a target");
    let resolved = target
        .resolve(&cli.global.namespaces, "default")
        .expect("resolves");
    assert_eq!(resolved.to_string(), "e2e/web");
    let cli = Cli::try_parse_from(["sts-stepper", "status", "-A", "-o", "yaml"]).expect("parses");
    let Command::Status(s) = cli.command else {
        panic!("status")
    };
    assert!(s.scope.all_namespaces);
    assert_eq!(s.output, Some(OutputFormat::Yaml));
}

#[rstest]
#[case("30s", Some(30))]
#[case("2m", Some(120))]
#[case("PT5M", Some(300))]
#[case("-5s", None)]
#[case("0s", None)]
#[case("5", None)]
fn durations(#[case] s: &str, #[case] secs: Option<i64>) {
    assert_eq!(parse_duration(s).ok().map(|d| d.as_secs()), secs, "{s}");
}

#[test]
fn the_ha_manifest_flags_parse_into_a_leader_config() {
    // The args of deploy/stepper/watch/deployment.yaml, with the downward-API values filled in.
    let manifest = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/stepper/watch/deployment.yaml"
    ))
    .expect("manifest");
    let args: Vec<String> = manifest
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != "args:")
        .skip(1)
        .map_while(|l| l.strip_prefix("- "))
        .map(|a| {
            a.replace("$(POD_NAMESPACE)", "sts-safe-rollout")
                .replace("$(POD_NAME)", "sts-stepper-abc")
        })
        .collect();
    assert!(args.iter().any(|a| a == "--leader-election"), "{args:?}");
    let cli = Cli::try_parse_from(std::iter::once("sts-stepper".to_string()).chain(args))
        .expect("the manifest's args parse");
    let Command::Watch(w) = cli.command else {
        panic!("watch expected");
    };
    let (namespace, config) = w.leader.config().expect("valid").expect("election on");
    assert_eq!(namespace, "sts-safe-rollout");
    assert_eq!(config.lease_name, "sts-stepper");
    assert_eq!(config.identity, "sts-stepper-abc");
    assert_eq!(config.lease_duration, std::time::Duration::from_secs(15));
    assert_eq!(config.renew_deadline, std::time::Duration::from_secs(10));
    assert_eq!(config.retry_period, std::time::Duration::from_secs(2));
}

#[test]
fn leader_election_without_an_identity_is_refused_naming_the_flag() {
    let cli = Cli::try_parse_from([
        "sts-stepper",
        "watch",
        "--leader-election",
        "--leader-election-namespace=ns",
    ])
    .expect("parses");
    let Command::Watch(mut w) = cli.command else {
        panic!("watch expected");
    };
    w.leader.leader_election_identity = None; // POD_NAME may be set where the tests run
    let err = w.leader.config().expect_err("no identity");
    assert!(err.contains("--leader-election-identity"), "{err}");
}

/// `--http-check NAME=URL` is repeatable and checked at parse time, naming the flag and the form.
#[test]
fn http_checks_are_name_equals_url() {
    let cli = Cli::try_parse_from([
        "sts-stepper",
        "once",
        "--http-check",
        "es-health=http://es.search:9200/_cluster/health",
        "--http-check",
        "kafka-rest=https://kafka-rest.kafka:8082/v3/clusters",
        "--http-check-timeout",
        "5s",
    ])
    .expect("parses");
    let Command::Once(once) = cli.command else {
        panic!("once expected");
    };
    assert_eq!(
        once.checks.http.http_check,
        vec![
            (
                "es-health".to_string(),
                "http://es.search:9200/_cluster/health".to_string()
            ),
            (
                "kafka-rest".to_string(),
                "https://kafka-rest.kafka:8082/v3/clusters".to_string()
            ),
        ]
    );
    assert_eq!(once.checks.http.http_check_timeout.as_secs(), 5);
    let err = Cli::try_parse_from(["sts-stepper", "once", "--http-check", "http://es:9200"])
        .expect_err("a URL alone")
        .to_string();
    assert!(
        err.contains("--http-check") && err.contains("expected NAME=URL"),
        "{err}"
    );
}
