//! The command line: flags, defaults and their errors; the status table.
use clap::{CommandFactory, Parser};
use jiff::SignedDuration;
use rstest::rstest;
use sts_stepper::cli::values::{parse_duration, parse_target};
use sts_stepper::cli::{Cli, Command, LogFormat, Target};
use sts_stepper::commands::table;

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn defaults() {
    let cli = Cli::try_parse_from(["sts-stepper", "watch"]).expect("parses");
    assert_eq!(cli.global.annotation_prefix, "safe-rollout.dev");
    assert!(cli.global.namespaces.is_empty());
    assert!(!cli.global.dry_run && !cli.global.no_pdb_gate);
    assert_eq!(cli.global.log_format, LogFormat::Text);
    let Command::Watch(w) = cli.command else {
        panic!("watch")
    };
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
    assert_eq!(cli.global.selector.as_deref(), Some("tier=db"));
    assert_eq!(cli.global.annotation_prefix, "moco.cybozu.com");
    assert!(cli.global.dry_run && cli.global.no_pdb_gate);
    assert_eq!(cli.global.log_format, LogFormat::Json);
    assert_eq!(cli.global.context.as_deref(), Some("prod"));
}

#[rstest]
#[case(&["sts-stepper", "--annotation-prefix", "Not_A_Domain", "once"], "not a DNS subdomain")]
#[case(&["sts-stepper", "step", "web"], "expected NAMESPACE/NAME")]
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
        Target {
            namespace: "demo".into(),
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

#[rstest]
#[case("demo/web", true)]
#[case("demo/", false)]
#[case("/web", false)]
#[case("a/b/c", false)]
#[case("web", false)]
fn targets(#[case] s: &str, #[case] ok: bool) {
    assert_eq!(parse_target(s).is_ok(), ok, "{s}");
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
fn help_teaches_the_gates_and_every_subcommand() {
    let help = Cli::command().render_long_help().to_string();
    for word in [
        "Paused",
        "pause-at",
        "InvalidAnnotation",
        "NotObserved",
        "PodNotReady",
        "StepInProgress",
        "Settling",
        "PdbBlocked",
        "once",
        "watch",
        "status",
        "step",
        "wait",
        "--dry-run",
        "--annotation-prefix",
    ] {
        assert!(help.contains(word), "help lacks {word}");
    }
}

#[test]
fn status_table_aligns_columns() {
    let rows = vec![
        ["NAMESPACE".to_string(), "STATEFULSET".into(), "NEXT".into()],
        [
            "demo".into(),
            "web".into(),
            "Blocked PodNotReady web-1: ContainersNotReady".into(),
        ],
    ];
    assert_eq!(
        table(&rows),
        "NAMESPACE  STATEFULSET  NEXT\n\
         demo       web          Blocked PodNotReady web-1: ContainersNotReady\n"
    );
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
