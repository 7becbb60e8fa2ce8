//! One list of gates: `gates::GATES` is the order; `--help` lists it (`tests/api/cli_help.rs`),
//! docs/gates.md's table lists it, and every annotation a gate's `--help` line names is an annotation of
//! `annotations::ALL`, has its row in docs/annotations.md and is named in that gate's row of
//! docs/gates.md. A new gate is one row of `GATES`, one of docs/gates.md and its annotations' rows.

use sts_safe_rollout_rules::annotations;
use sts_stepper::gates;

use super::{first_cells, read};

/// docs/gates.md's gate table: (reason, the whole row).
fn gate_rows(text: &str) -> Vec<(&str, &str)> {
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("| reason | blocks while |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    first_cells(&table)
        .into_iter()
        .zip(table[2..].iter().copied())
        .collect()
}

/// The annotation names `text` writes as `<prefix>/NAME` (a trailing `*` kept: a family of names).
fn prefixed(text: &str) -> Vec<&str> {
    text.split("<prefix>/")
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '*'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// True when `name` (or, ending in `*`, a name it starts) is among `names`.
fn known(name: &str, names: &[&str]) -> bool {
    match name.strip_suffix('*') {
        Some(stem) => names.iter().any(|n| n.starts_with(stem)),
        None => names.contains(&name),
    }
}

#[test]
fn the_gate_table_help_and_docs_are_one_list() {
    let gates_md = read("docs/gates.md");
    let rows = gate_rows(&gates_md);
    let listed: Vec<&str> = rows.iter().map(|(r, _)| *r).collect();
    let table: Vec<&str> = gates::help()
        .iter()
        .map(|(r, _)| r.as_str())
        .chain(["ApiError"])
        .collect();
    assert_eq!(
        listed, table,
        "docs/gates.md vs GATES (then Throttled, ApiError)"
    );

    let annotations_md = read("docs/annotations.md");
    let lines: Vec<&str> = annotations_md.lines().collect();
    let documented = first_cells(&lines);
    let mut named = 0;
    let mut wrong = Vec::new();
    for (reason, help) in gates::help() {
        let row = rows
            .iter()
            .find(|(r, _)| *r == reason.as_str())
            .map(|(_, row)| *row)
            .unwrap_or_default();
        for name in prefixed(help) {
            named += 1;
            if !known(name, &annotations::ALL) {
                wrong.push(format!("{reason}: <prefix>/{name} not in annotations::ALL"));
            }
            if !known(name, &documented) {
                wrong.push(format!(
                    "{reason}: <prefix>/{name} without a row in docs/annotations.md"
                ));
            }
            let stem = name.trim_end_matches('*');
            if !(row.contains(&format!("<prefix>/{stem}")) || row.contains(&format!("`{stem}"))) {
                wrong.push(format!(
                    "{reason}: <prefix>/{name} not in its docs/gates.md row"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "--help vs the docs:\n{}",
        wrong.join("\n")
    );
    assert!(named >= 10, "the gates' help names annotations: {named}");
}

#[test]
fn prefixed_names_are_read_as_the_help_writes_them() {
    assert_eq!(
        prefixed("annotation <prefix>/paused: \"true\" (or <prefix>/prometheus-query*,\nx)"),
        ["paused", "prometheus-query*"]
    );
    assert!(known("prometheus-query*", &["prometheus-query-1"]));
    assert!(!known("paused", &["paused-reason"]));
}
