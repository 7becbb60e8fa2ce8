//! ARCHITECTURE.md's "What adding a cluster read touches" against the code (issue 44 item 6): a new read
//! costs its caller and at most one place, because no wrapper states a method it does not change, only
//! the clusters that talk to the world implement `Cluster`, none of them re-implements a read that
//! `Cluster` provides over `get`, `list` and `can_i`, and `Wrapper` forwards every other method.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::{read, root, section};

const HEADING: &str = "## What adding a cluster read touches";

/// Reads every wrapper forwards unchanged, to the API server: a provided read is written over them.
const API_READS: [&str; 6] = [
    "self.get(",
    "self.get::<",
    "self.list(",
    "self.list::<",
    "self.can_i(",
    "self.can_i::<",
];

/// The reads `Cluster` provides over `get`, `list` and `can_i` (e.g. `get_controller_revision`): its
/// methods `Wrapper` does not forward, each with the text of its default body, whitespace removed.
fn provided_reads() -> BTreeMap<String, String> {
    let code = bare(&read("stepper/src/cluster/mod.rs"));
    let cluster = &code[code.find("pub trait Cluster").expect("trait Cluster")..];
    let forwarded = trait_fns("cluster/wrapper.rs", "Wrapper");
    block_fns(cluster)
        .into_iter()
        .filter(|f| !forwarded.contains(f))
        .map(|f| {
            let at = cluster.find(&format!("fn {f}(")).expect("declared");
            let decl = &cluster[at..];
            // The body: from the first `{` after the signature (a declaration ends at `;` before any).
            let body = match (decl.find('{'), decl.find(';')) {
                (Some(open), Some(semi)) if semi < open => String::new(),
                // Without whitespace: rustfmt may break `self` and `.list::<…>` apart.
                (Some(open), _) => decl[open..open + block_end(&decl[open..])]
                    .split_whitespace()
                    .collect(),
                _ => String::new(),
            };
            (f, body)
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `code` without its comments and the contents of its string literals (so a `{` in a message
/// counts for nothing).
fn bare(code: &str) -> String {
    let mut out = String::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut in_string = false;
        let mut escaped = false;
        for c in line.chars() {
            if in_string {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => escaped = false,
                }
                continue;
            }
            if c == '"' {
                in_string = true;
            }
            out.push(c);
        }
        out.push('\n');
    }
    out
}

/// Where the block that opens at the start of `text` (a `{`) closes (the whole text if it does not).
fn block_end(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The names of the functions the block that opens at the first `{` of `text` states.
fn block_fns(text: &str) -> BTreeSet<String> {
    let start = text.find('{').unwrap_or(text.len());
    let end = start + block_end(&text[start..]);
    text[start..end]
        .split("fn ")
        .skip(1)
        .map(|f| f.chars().take_while(|c| c.is_alphanumeric() || *c == '_'))
        .map(Iterator::collect)
        .collect()
}

/// The `impl … <trait> for <Type>` blocks of `code` (bare): the type's name and the names of the
/// functions the block states.
fn impls(code: &str, trait_name: &str) -> Vec<(String, BTreeSet<String>)> {
    let needle = format!(" {trait_name} for ");
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("\nimpl") {
        rest = &rest[at + 1..];
        let header = rest.split('{').next().unwrap_or("");
        let Some((_, ty)) = header.split_once(&needle) else {
            continue;
        };
        let ty: String = ty
            .trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        found.push((ty, block_fns(rest)));
    }
    found
}

/// The functions trait `name` declares in `file` (under `stepper/src`).
fn trait_fns(file: &str, name: &str) -> BTreeSet<String> {
    let code = bare(&read(&format!("stepper/src/{file}")));
    let at = code
        .find(&format!("pub trait {name}"))
        .unwrap_or_else(|| panic!("{file} declares trait {name}"));
    block_fns(&code[at..])
}

/// Every `impl … <trait> for <Type>` of the stepper's code: (file under `stepper/src`, type, the
/// functions it states).
fn all_impls(trait_name: &str) -> Vec<(String, String, BTreeSet<String>)> {
    let src = root().join("stepper/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut all = Vec::new();
    for file in files {
        let code = bare(&format!(
            "\n{}",
            std::fs::read_to_string(&file).expect("readable")
        ));
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .display()
            .to_string();
        for (ty, fns) in impls(&code, trait_name) {
            all.push((rel.clone(), ty, fns));
        }
    }
    all
}

/// The section's wrapper table: type → (file, the functions it states).
fn wrapper_rows(lines: &[&str]) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let mut rows = BTreeMap::new();
    for line in lines.iter().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let ticked = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        let name = ticked(cells[0]).remove(0);
        let file = ticked(cells[1]).remove(0);
        rows.insert(name, (file, ticked(cells[2]).into_iter().collect()));
    }
    rows
}

#[test]
fn each_wrapper_states_exactly_what_its_row_says() {
    let text = read("ARCHITECTURE.md");
    let rows = wrapper_rows(&section(&text, HEADING));
    assert!(rows.contains_key("LeaderCluster"), "{rows:?}");
    let found: BTreeMap<String, (String, BTreeSet<String>)> = all_impls("Wrapper")
        .into_iter()
        .map(|(file, ty, fns)| (ty, (file, fns)))
        .collect();
    assert_eq!(
        found, rows,
        "the wrappers in the code (left) against ARCHITECTURE.md's table (right)"
    );
    let provided = provided_reads();
    for (ty, (_, fns)) in &found {
        assert!(
            fns.contains("inner") && !fns.iter().any(|f| provided.contains_key(f)),
            "{ty} states {fns:?}"
        );
    }
}

#[test]
fn only_the_named_clusters_implement_cluster_and_none_restates_a_provided_read() {
    let text = read("ARCHITECTURE.md");
    let lines = section(&text, HEADING);
    let named = lines
        .iter()
        .find(|l| l.starts_with("No implementation of `Cluster`"))
        .expect("the sentence naming the implementations");
    let mut files: BTreeSet<String> = named
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".rs"))
        .map(str::to_string)
        .collect();
    // The one blanket implementation: every wrapper is a `Cluster`.
    files.insert("cluster/wrapper.rs".into());
    let impls = all_impls("Cluster");
    let provided = provided_reads();
    let implementing: BTreeSet<String> = impls.iter().map(|(f, ..)| f.clone()).collect();
    assert_eq!(implementing, files, "files with an `impl Cluster for`");
    for (file, ty, fns) in &impls {
        let restated: Vec<&String> = fns.iter().filter(|f| provided.contains_key(*f)).collect();
        assert!(restated.is_empty(), "{file}: {ty} restates {restated:?}");
        assert!(!fns.is_empty(), "{file}: {ty} parsed without its functions");
    }
}

/// A method of `Cluster` that `Wrapper` does not forward answers, in every wrapper, with its default:
/// right for a read written over the reads every wrapper passes on to the API server (`get`, `list`,
/// `can_i`), wrong for any other (the simulation's answer, or one from the snapshot instead of the
/// wrapped cluster's). So every method `Wrapper` leaves out must be such a read.
#[test]
fn the_wrapper_forwards_every_method_of_cluster_but_the_reads_written_over_get_list_and_can_i() {
    let provided = provided_reads();
    let names: BTreeSet<&str> = provided.keys().map(String::as_str).collect();
    for known in [
        "get_controller_revision",
        "list_namespaces",
        "may_delete_pods",
    ] {
        assert!(
            names.contains(known),
            "{known} is a provided read: {names:?}"
        );
    }
    for (name, body) in &provided {
        assert!(
            API_READS.iter().any(|r| body.contains(r)),
            "Cluster::{name} is not forwarded by Wrapper and not written over get, list or can_i: \
             forward it in cluster/wrapper.rs ({body:?})"
        );
    }
    let cluster = {
        let code = bare(&read("stepper/src/cluster/mod.rs"));
        block_fns(&code[code.find("pub trait Cluster").expect("trait Cluster")..])
    };
    let mut wrapper = trait_fns("cluster/wrapper.rs", "Wrapper");
    assert!(
        wrapper.remove("inner") && wrapper.remove("before_write"),
        "{wrapper:?}"
    );
    assert!(
        wrapper.is_subset(&cluster),
        "Wrapper forwards no method Cluster lacks: {wrapper:?}"
    );
}

#[test]
fn every_file_the_section_names_exists() {
    let text = read("ARCHITECTURE.md");
    let named: BTreeSet<String> = section(&text, HEADING)
        .iter()
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|s| s.ends_with(".rs"))
        .map(str::to_string)
        .collect();
    assert!(named.len() >= 8, "{named:?}");
    for file in named {
        let path = if file.starts_with("stepper/") {
            root().join(&file)
        } else {
            root().join("stepper/src").join(&file)
        };
        assert!(path.is_file(), "{file} named in {HEADING:?} does not exist");
    }
}

#[test]
fn the_parser_finds_impl_blocks_and_their_functions() {
    let code = bare(
        "\nimpl<A: Cluster> Wrapper for CachedCluster<'_, A> {\n    fn inner(&self) -> &A { \
         self.api }\n    async fn list_pods(&self) { format!(\"{x\"); }\n}\n\nimpl Other for X {\n    \
         fn nope() {}\n}\n",
    );
    let found = impls(&code, "Wrapper");
    assert_eq!(
        found,
        vec![(
            "CachedCluster".to_string(),
            BTreeSet::from(["inner".to_string(), "list_pods".to_string()])
        )]
    );
}
