//! The annotation names are the user-facing API: README's annotation table and
//! `sts_safe_rollout_rules::annotations::ALL` list the same names.

use std::collections::BTreeSet;

use sts_safe_rollout_rules::annotations;

/// The first-column names of README's `### Annotations` table (the backquoted text of each row).
fn readme_names() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md readable");
    let section = readme
        .split("### Annotations")
        .nth(1)
        .expect("README has an ### Annotations section");
    let section = section.split("\n### ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_table_and_the_names_module_agree() {
    let readme = readme_names();
    assert!(
        readme.iter().any(|n| n == "prometheus-query-<N>"),
        "README documents the numbered query form: {readme:?}"
    );
    let documented: BTreeSet<&str> = readme
        .iter()
        .map(String::as_str)
        .filter(|n| *n != "prometheus-query-<N>")
        .collect();
    let known: BTreeSet<&str> = annotations::ALL.into_iter().collect();
    assert_eq!(
        documented, known,
        "README's annotation table vs sts_safe_rollout_rules::annotations::ALL"
    );
    assert_eq!(
        documented.len() + 1,
        readme.len(),
        "a name listed twice in README: {readme:?}"
    );
}
