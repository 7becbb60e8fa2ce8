//! What the command line prints: each subcommand's `--help` showing only its own flags and the global
//! ones under one heading, every flag under its group's heading, the gates taught in the main help; and
//! the status table's aligned columns.
use clap::CommandFactory;
use rstest::rstest;
use sts_stepper::cli::Cli;
use sts_stepper::commands::table;
use sts_stepper::gates;
use sts_stepper::model::reasons::Reason;

/// The long flags each subcommand's `--help` lists (its own, then the global ones).
fn long_flags(sub: &str) -> Vec<String> {
    let mut cmd = Cli::command();
    cmd.build();
    let sub = cmd.find_subcommand(sub).expect("subcommand");
    sub.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect()
}

const GLOBAL: [&str; 5] = [
    "namespace",
    "kubeconfig",
    "context",
    "annotation-prefix",
    "log-format",
];

/// Each subcommand's `--help` shows its own flags and the global ones, nothing of the others:
/// `status --help` offers no `--dry-run`, `--recover-stuck-pods` or step budget.
#[rstest]
#[case("status", &["output", "all-namespaces", "selector", "no-pdb-gate", "prometheus-url"],
       &["dry-run", "recover-stuck-pods", "max-steps-per-pass", "max-steps-per-minute", "max-decision-age", "interval"])]
#[case("once", &["dry-run", "all-namespaces", "selector", "recover-stuck-pods", "max-steps-per-pass", "max-steps-per-minute", "max-decision-age", "no-pdb-gate", "prometheus-url"],
       &["output", "interval", "leader-election", "timeout"])]
#[case("watch", &["interval", "debounce", "metrics-addr", "leader-election", "dry-run", "recover-stuck-pods", "max-steps-per-minute"],
       &["output", "timeout", "force"])]
#[case("step", &["force", "reason", "dry-run", "no-pdb-gate", "prometheus-url"],
       &["all-namespaces", "selector", "recover-stuck-pods", "max-steps-per-pass", "output"])]
#[case("wait", &["timeout", "poll", "no-pdb-gate", "all-namespaces", "selector"],
       &["dry-run", "prometheus-url", "recover-stuck-pods", "output", "force"])]
#[case("release", &["all-namespaces", "selector", "force", "dry-run", "wait", "timeout", "poll"],
       &["no-pdb-gate", "prometheus-url", "output", "reason"])]
#[case("pause", &["reason", "dry-run"],
       &["no-pdb-gate", "prometheus-url", "recover-stuck-pods", "selector", "output"])]
#[case("resume", &["dry-run"], &["reason", "no-pdb-gate", "prometheus-url", "recover-stuck-pods"])]
fn each_subcommand_help_shows_its_own_flags(
    #[case] sub: &str,
    #[case] own: &[&str],
    #[case] not: &[&str],
) {
    let flags = long_flags(sub);
    for flag in own.iter().chain(&GLOBAL) {
        assert!(
            flags.iter().any(|f| f == flag),
            "{sub} lacks --{flag}: {flags:?}"
        );
    }
    for flag in not {
        assert!(
            !flags.iter().any(|f| f == flag),
            "{sub} offers --{flag}: {flags:?}"
        );
    }
}

/// The global flags stand under one heading, after the subcommand's own.
#[test]
fn global_flags_stand_under_one_heading() {
    let mut cmd = Cli::command();
    cmd.build(); // propagates the global flags to the subcommands, as parsing does
    let help = cmd
        .find_subcommand_mut("status")
        .expect("status")
        .render_long_help()
        .to_string();
    let heading = help
        .find("\nGlobal options:\n")
        .expect("a Global options heading");
    for flag in GLOBAL {
        let at = help
            .find(&format!("--{flag}"))
            .unwrap_or_else(|| panic!("--{flag} in {help}"));
        assert!(at > heading, "--{flag} under Global options");
    }
    let own = help.find("--output").expect("--output");
    assert!(own < heading, "the subcommand's own flags come first");
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

/// The main help's gate list is the gate table's ([`gates::help`]): every row of `GATES` in its order,
/// then `Throttled`; with `ApiError` (no gate: a read or write failed) that is every reason.
#[test]
fn the_help_lists_the_gates_of_the_table_in_order() {
    let help = Cli::command().render_long_help().to_string();
    let listed: Vec<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| Reason::parse(w).is_some())
        .collect();
    let table: Vec<&str> = gates::GATES
        .iter()
        .map(|g| g.reason.as_str())
        .chain(["Throttled"])
        .collect();
    assert_eq!(listed, table, "--help vs GATES");
    let helped: Vec<&str> = gates::help().iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(helped, table);
    let mut every = table.clone();
    every.push("ApiError");
    let all: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(every, all, "GATES, Throttled and ApiError are every reason");
    for (reason, text) in gates::help() {
        assert!(
            text.lines().all(|l| !l.is_empty() && l.len() <= 78),
            "{reason}'s help: lines of 1 to 78 characters: {text:?}"
        );
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

/// Every flag stands under its group's heading in every subcommand's `--help` (a flattened group's
/// heading must not leak onto the flags after it).
#[test]
fn every_flag_stands_under_its_groups_heading() {
    let mut cmd = Cli::command();
    cmd.build();
    let heading_of = |long: &str| -> Option<&'static str> {
        match long {
            l if l.starts_with("prometheus-") || l.starts_with("check-") => {
                Some("Prometheus check")
            }
            l if l.starts_with("http-check") => Some("HTTP check"),
            l if l.starts_with("webhook") || l == "answerer-config" => Some("Approval webhook"),
            l if l.starts_with("leader-election") => Some("Leader election"),
            "recover-stuck-pods"
            | "max-steps-per-pass"
            | "max-steps-per-minute"
            | "max-decision-age" => Some("Pass"),
            "all-namespaces" | "selector" | "namespace-selector" | "cluster-wide" => Some("Scope"),
            "no-pdb-gate" => Some("Gates"),
            "local" | "stepper-namespace" | "stale-after" => Some("Recorded verdict"),
            l if GLOBAL.contains(&l) => Some("Global options"),
            _ => None,
        }
    };
    for sub in cmd.get_subcommands() {
        for arg in sub.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            assert_eq!(
                arg.get_help_heading(),
                heading_of(long),
                "{} --{long}",
                sub.get_name()
            );
        }
    }
}
