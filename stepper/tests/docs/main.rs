//! `make docs-check`: every page of `docs/` that lists names the code defines lists exactly those —
//! annotations (`rules/src/annotations.rs`), each subcommand's flags (clap's `Command`), metrics (the
//! registry), the `errors_total` reasons (`ClusterError::reason`), Event reasons (`plan/events.rs`),
//! gate reasons in gate order (`model/reasons.rs`), the `status -o json` fields (the serialized
//! document) — and every relative link of README.md and `docs/` resolves (file and `#anchor`), every
//! page is reachable from README, and README stays short; ARCHITECTURE.md's "What adding a cluster
//! read touches" holds to the wrappers and the implementations of `Cluster` (`cluster_reads.rs`).
//!
//! Not run by `cargo test --workspace` (`test = false` in Cargo.toml): `make docs-check` runs it as
//! its own step of `make test`, counted once.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::CommandFactory;
use serde_json::Value;
use sts_safe_rollout_rules::annotations;
use sts_stepper::cli::Cli;
use sts_stepper::cluster::ClusterError;
use sts_stepper::gates::recovery::StuckPod;
use sts_stepper::model::reasons::{Blocked, Reason};
use sts_stepper::pass::recovery::{RecoveryOutcome, RecoveryReport};
use sts_stepper::pass::{Outcome, PassReport, SetReport};
use sts_stepper::plan::Figures;
use sts_stepper::plan::events::REASONS;
use sts_stepper::plan::rejected::RefusedWrite;
use sts_stepper::plan::set_status::{
    HealthDoc, LocalViewDoc, PausePlanDoc, RecordDoc, RolloutStatus, RolloutStatusList,
    StuckPodStatus, VerdictStatus,
};
use sts_stepper::serve::metrics::Metrics;

mod change_kinds;
mod cluster_reads;
mod gate_list;
mod links;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The lines of the section under the heading `heading` (its level and text, e.g. `## once`), up to
/// the next heading of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.split(' ').next().unwrap_or("").len();
    let mut lines = text.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no heading {heading:?}");
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// The backquoted text of the first cell of each table row in `lines` (`| \`name\` | …`).
fn first_cells<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect()
}

fn set<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_string).collect()
}

#[test]
fn the_annotation_table_lists_every_annotation() {
    let text = read("docs/annotations.md");
    let lines: Vec<&str> = text.lines().collect();
    let names = first_cells(&lines);
    assert!(
        names.contains(&"prometheus-query-<N>"),
        "the numbered form: {names:?}"
    );
    let documented: Vec<&str> = names
        .into_iter()
        .filter(|n| *n != "prometheus-query-<N>")
        .collect();
    assert_eq!(
        set(documented.iter().copied()),
        set(annotations::ALL),
        "docs/annotations.md vs annotations::ALL"
    );
    assert_eq!(
        documented.len(),
        annotations::ALL.len(),
        "a name listed twice: {documented:?}"
    );
}

/// The long flags of the first cell of each row (`-n, --namespace NS` → `namespace`).
fn flags_of(lines: &[&str]) -> BTreeSet<String> {
    first_cells(lines)
        .iter()
        .flat_map(|cell| cell.split_whitespace())
        .filter_map(|w| w.trim_end_matches(',').strip_prefix("--"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_flag_tables_list_each_subcommands_flags() {
    let text = read("docs/commands.md");
    let mut cmd = Cli::command();
    cmd.build();
    let global: BTreeSet<String> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    assert_eq!(
        flags_of(&section(&text, "## Global options")),
        global,
        "Global options"
    );
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let own: BTreeSet<String> = sub
            .get_arguments()
            .filter(|a| !a.is_global_set())
            .filter_map(|a| a.get_long().map(str::to_string))
            .filter(|l| l != "help")
            .collect();
        let heading = format!("## {}", sub.get_name());
        assert_eq!(flags_of(&section(&text, &heading)), own, "{heading}");
    }
}

/// A pass report that gives every per-set and per-pass family a series: a set stepped (with its
/// decision's age), a set blocked by an API error (and waiting for an approval), a set rolled back, a
/// pod recovered.
fn busy_report() -> PassReport {
    let set = |name: &str, outcome: Outcome| SetReport {
        namespace: "demo".into(),
        name: name.into(),
        figures: Figures {
            last_partition_update: Some("2026-11-23T01:10:42Z".parse().expect("time")),
            approval_wait: matches!(outcome, Outcome::Blocked(_)).then_some((40, 600)),
            ..Figures::default()
        },
        decision_age_seconds: matches!(outcome, Outcome::Stepped { .. }).then_some(0.2),
        error: matches!(outcome, Outcome::Blocked(_)).then(|| ClusterError::Transport {
            action: "patch".into(),
            message: "timeout".into(),
        }),
        outcome,
        event_errors: vec![],
        rejection: None,
        news: true,
        webhook_call: Some(("db-approver".into(), "Wait")),
    };
    PassReport {
        sets: vec![
            set("stepped", Outcome::Stepped { from: 2, to: 1 }),
            set(
                "blocked",
                Outcome::Blocked(Blocked::new(Reason::ApiError, "x")),
            ),
            set("rolled-back", Outcome::RolledBack("web-b → web-a".into())),
        ],
        recoveries: vec![RecoveryReport {
            namespace: "demo".into(),
            statefulset: "stepped".into(),
            pod: StuckPod {
                name: "stepped-1".into(),
                uid: "u".into(),
                resource_version: "1".into(),
                ordinal: 1,
                revision: "a".into(),
                expected_revision: "b".into(),
                not_ready_seconds: 400,
                failed_revision: false,
            },
            outcome: RecoveryOutcome::Deleted,
            event_error: None,
        }],
    }
}

#[test]
fn the_metric_table_lists_every_registered_metric() {
    let metrics = Metrics::new();
    metrics.observe(&busy_report(), 0.5, 1.0);
    metrics.watch_restarted("pods");
    let encoded = metrics.encode();
    let registered: BTreeSet<String> = encoded
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| match l.split_once(' ') {
            Some((name, "counter")) => format!("{name}_total"),
            Some((name, _)) => name.to_string(),
            None => l.to_string(),
        })
        .collect();
    let text = read("docs/metrics.md");
    let documented = set(first_cells(&section(
        &text,
        "## Metrics (`watch`, `GET /metrics`, OpenMetrics text)",
    )));
    assert_eq!(documented, registered, "docs/metrics.md vs the registry");
}

#[test]
fn the_error_reason_table_lists_every_counted_reason() {
    let text = read("docs/metrics.md");
    let documented = set(first_cells(&section(&text, "## Error reasons")));
    // A refused write is counted by its Event's reason; any other error by its own; a lost Lease is
    // no error.
    let counted = [RefusedWrite::Step, RefusedWrite::StatusAnnotations]
        .map(RefusedWrite::reason)
        .into_iter()
        .chain(ClusterError::REASONS)
        .filter(|r| *r != "NotLeader");
    assert_eq!(
        documented,
        set(counted),
        "docs/metrics.md, Error reasons vs ClusterError::REASONS"
    );
}

#[test]
fn the_event_table_lists_every_reason() {
    let text = read("docs/events.md");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        set(first_cells(&lines)),
        set(REASONS),
        "docs/events.md vs plan::events::REASONS"
    );
}

#[test]
fn the_gate_table_lists_every_reason_in_gate_order() {
    let text = read("docs/gates.md");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("| reason | blocks while |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let want: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        first_cells(&table),
        want,
        "docs/gates.md vs Reason::ALL, in order"
    );
}

/// Every path of `v`: object keys joined by `.`, array items as `[]` (their first item's keys).
fn paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                paths(child, &p, out);
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                paths(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_status_field_table_lists_every_field_of_the_document() {
    let item = RolloutStatus {
        namespace: "demo".into(),
        name: "web".into(),
        partition: Some(4),
        replicas: 5,
        current_replicas: 4,
        updated_replicas: 1,
        ready_replicas: 4,
        current_revision: Some("a".into()),
        update_revision: Some("b".into()),
        last_partition_update: Some("2026-11-23T01:10:42Z".into()),
        verdict: VerdictStatus::of(&sts_stepper::gates::Verdict::Step {
            from: 4,
            to: 3,
            update_revision: "b".into(),
        }),
        health: HealthDoc {
            status: "Progressing",
            message: "stepping: 1 of 5 pods on b, partition 4".into(),
        },
        paused: false,
        paused_reason: Some("x".into()),
        degraded_reason: Some("StepRejected: x".into()),
        stuck_pod: Some(StuckPodStatus {
            name: "web-1".into(),
            not_ready_seconds: 400,
            revision: "a".into(),
            expected_revision: "b".into(),
            recovery: "Delete",
            recovery_message: "deleted this pass".into(),
        }),
        pause_plan: Some(PausePlanDoc {
            written: "1,60%:30".into(),
            state: "next pause at 60% (3 pods), point 2 of 2, bake 30 s".into(),
        }),
        recorded: RecordDoc {
            blocked_reason: Some("PodNotReady".into()),
            approval_pending: Some("x".into()),
            missing_rbac: Some("x".into()),
            written_at: Some("2026-11-23T01:10:42Z".into()),
            summary: "Blocked PodNotReady (written 3m ago)".into(),
            stale: Some(false),
            freshness: "current".into(),
        },
        local_view: LocalViewDoc {
            missing_flags: vec!["--http-check es=URL".into()],
        },
        unguarded: false,
    };
    let doc = serde_json::to_value(RolloutStatusList::new(vec![item])).expect("json");
    let mut found = BTreeSet::new();
    paths(&doc, "", &mut found);
    let text = read("docs/status-output.md");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        set(first_cells(&lines)),
        found,
        "docs/status-output.md vs the document"
    );
}

#[test]
fn readme_is_a_ten_minute_read() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move reference to docs/"
    );
    let readme = read("README.md");
    let first = readme
        .lines()
        .skip_while(|l| !l.starts_with("```sh"))
        .nth(1)
        .unwrap_or("");
    assert!(first.starts_with("make demo"), "make demo first: {first}");
}

/// The `--webhook-config` example of docs/approvals.md is a file the stepper reads.
#[test]
fn the_webhook_file_example_parses() {
    let text = read("docs/approvals.md");
    let start = text
        .find("apiVersion: safe-rollout.dev/v1alpha1\nkind: WebhookConfig\n")
        .expect("the example in docs/approvals.md");
    let end = start + text[start..].find("```").expect("its code block's end");
    let endpoints =
        sts_stepper::cli::webhook_file::parse(&text[start..end]).expect("the example parses");
    let names: Vec<&str> = endpoints.iter().map(|(e, _)| e.name.as_str()).collect();
    assert_eq!(names, ["db-approver", "kafka-can-roll"]);
    assert!(endpoints[1].1.admits("kafka", "logs") && !endpoints[1].1.admits("demo", "logs"));
}

/// The Elasticsearch 8 example of docs/gates.md ("Secured endpoints") is an `--http-check-config` file the
/// stepper reads: https, the CA of ECK's HTTP certificate, basic auth of the `elastic` user from a file.
#[test]
fn the_http_check_file_example_parses() {
    use sts_stepper::config::endpoint_auth::{Credentials, Username};
    let text = read("docs/gates.md");
    let start = text
        .find("apiVersion: safe-rollout.dev/v1alpha1\nkind: HttpCheckConfig\n")
        .expect("the example in docs/gates.md");
    let end = start + text[start..].find("```").expect("its code block's end");
    let checks =
        sts_stepper::cli::http_check_file::parse(&text[start..end]).expect("the example parses");
    assert_eq!(checks.len(), 1);
    let es = &checks[0];
    assert_eq!(es.name, "es-health");
    assert!(es.url.starts_with("https://"), "{}", es.url);
    let ca = es.access.tls.as_ref().and_then(|t| t.ca_file.clone());
    assert_eq!(ca, Some("/var/run/secrets/es-http-ca/ca.crt".into()));
    assert!(matches!(
        &es.access.credentials,
        Some(Credentials::Basic { username: Username::Value(u), .. }) if u == "elastic"
    ));
    // The Secrets the example mounts are where the file reads them.
    for dir in [
        "/var/run/secrets/es-http-ca",
        "/var/run/secrets/es-elastic-user",
    ] {
        assert!(
            text[end..].contains(&format!("mountPath: {dir},")),
            "{dir} mounted"
        );
    }
}
