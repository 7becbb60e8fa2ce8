//! The stepper's folders are its layers: ARCHITECTURE.md's "Layers" table says which folder may import
//! which, and every path to a module of the crate in the code (doc comments aside) obeys it.
//!
//! Also checked: every folder is in the table and every row is a folder; the pure layers import only
//! pure layers and no I/O crate (tokio, the kube client, reqwest, axum); nothing imports `commands`;
//! no two files import each other, directly or round a circle. A file names another by a `crate::`
//! path, a `super::` or `self::` path (resolved from the module it is written in: the file's, or an
//! inline module such as `mod tests`), or, in a `mod.rs`, a bare path to a child module
//! (`on_set::READS`).

mod graph;
mod paths;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use graph::{circles, import_graph};
use paths::{code, crate_paths, layer_of, resolve_paths, resolved_paths, rust_files};

/// One row of the table.
#[derive(Debug)]
struct Layer {
    pure: bool,
    may_import: BTreeSet<String>,
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// ARCHITECTURE.md's "## Layers" table: layer (folder) → its row.
fn table() -> BTreeMap<String, Layer> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("ARCHITECTURE.md readable");
    let section = text
        .split("\n## Layers\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a '## Layers' section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut layers = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 4, "a Layers row has 4 cells: {line}");
        let name = cells[0].trim_matches('`').trim_end_matches('/').to_string();
        let pure = match cells[1] {
            "pure" => true,
            "I/O" => false,
            other => panic!("layer {name}: kind {other:?}, expected pure or I/O"),
        };
        let may_import = cells[3]
            .split(',')
            .map(|s| s.trim().trim_matches('`').trim_end_matches('/').to_string())
            .filter(|s| !s.is_empty() && s != "—")
            .collect();
        layers.insert(name, Layer { pure, may_import });
    }
    assert!(
        layers.len() >= 5,
        "the Layers table has its rows: {layers:?}"
    );
    layers
}

#[test]
fn every_folder_is_a_row_and_every_row_a_folder() {
    let layers = table();
    let folders: BTreeSet<String> = std::fs::read_dir(src())
        .expect("src/ readable")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().expect("name").to_string_lossy().to_string())
        .collect();
    let rows: BTreeSet<String> = layers.keys().cloned().collect();
    assert_eq!(
        folders, rows,
        "stepper/src/ folders vs ARCHITECTURE.md's Layers rows"
    );
    let loose: Vec<String> = std::fs::read_dir(src())
        .expect("src/ readable")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().expect("name").to_string_lossy().to_string())
        .filter(|n| n != "lib.rs" && n != "main.rs")
        .collect();
    assert!(
        loose.is_empty(),
        "every file lives in a layer's folder: {loose:?}"
    );
}

#[test]
fn the_table_is_a_stack_with_pure_layers_at_the_bottom() {
    let layers = table();
    for (name, layer) in &layers {
        for below in &layer.may_import {
            let Some(target) = layers.get(below) else {
                panic!("layer {name} may import {below}, which is not a row");
            };
            assert!(
                !layer.pure || target.pure,
                "pure layer {name} may not import the I/O layer {below}"
            );
            assert_ne!(below, "commands", "{name}: nothing imports commands");
        }
    }
    // No circle between folders: a depth-first walk never meets a layer on its own path.
    fn walk<'a>(name: &'a str, layers: &'a BTreeMap<String, Layer>, path: &mut Vec<&'a str>) {
        assert!(
            !path.contains(&name),
            "layers import each other round a circle: {path:?} → {name}"
        );
        path.push(name);
        for below in &layers[name].may_import {
            walk(below, layers, path);
        }
        path.pop();
    }
    for name in layers.keys() {
        walk(name, &layers, &mut Vec::new());
    }
}

#[test]
fn every_import_goes_down_the_table() {
    let layers = table();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let Some(layer) = layer_of(file) else {
            continue;
        };
        let row = &layers[&layer];
        for path in resolved_paths(file) {
            let Some(target) = path.first() else {
                continue;
            };
            if *target != layer && !row.may_import.contains(target) {
                wrong.push(format!(
                    "{} ({layer}) imports crate::{}",
                    file.strip_prefix(src()).expect("under src").display(),
                    path.join("::")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against ARCHITECTURE.md's Layers table:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn pure_layers_use_no_io_crate() {
    let layers = table();
    let io = [
        "tokio::",
        "reqwest::",
        "axum::",
        "kube::api",
        "kube::Api",
        "kube::Client",
        "kube::runtime",
    ];
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let Some(layer) = layer_of(file) else {
            continue;
        };
        if !layers[&layer].pure {
            continue;
        }
        let code = code(file);
        for needle in io {
            if code.contains(needle) {
                wrong.push(format!("{} uses {needle}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "pure layers doing I/O:\n{}",
        wrong.join("\n")
    );
}

/// No two files import each other, directly or round a circle, counting every way a file names
/// another: `crate::…`, `super::…`, `self::…`, and a `mod.rs` naming its children (`child::…`).
/// `sim/` is left out: the simulation is one world whose parts (the API server, the kubelet, the
/// application, the oracle) call each other by design, and it is no layer the stepper's code imports
/// from (issue 35: "no import circle in `stepper/src` outside `sim/`").
#[test]
fn no_two_files_import_each_other() {
    let rel = |p: &PathBuf| {
        p.strip_prefix(src())
            .expect("under src")
            .display()
            .to_string()
    };
    let sim = src().join("sim");
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = import_graph()
        .into_iter()
        .filter(|(file, _)| !file.starts_with(&sim))
        .collect();
    let found: Vec<String> = circles(&graph)
        .iter()
        .map(|edges| {
            edges
                .iter()
                .map(|(f, t)| format!("  {} → {}", rel(f), rel(t)))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files import each other round a circle ({} groups):\n{}",
        found.len(),
        found.join("\n--\n")
    );
}

/// `super::` and `self::` paths (in the file's module, or in an inline module of it such as `mod
/// tests`) and a `mod.rs`'s bare paths to its children are read as imports, so a circle through them
/// cannot hide (`gates/on_approval.rs` named `super::on_webhook`, which named `super::on_approval`).
#[test]
fn the_parser_sees_super_self_and_child_paths() {
    let module = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    let code = "pub(in crate::gates) fn g() {}\nuse super::approval::{self, StepPod};\nuse super::{Evaluation, on_webhook::{self, switchover_note}};\nfn f() { self::helper(); on_set::READS; crate::model::set::name(x); }\nmod tests {\n    use super::*;\n    use super::super::verdict::Verdict;\n}\n";
    let no_children = |_: &str| false;
    assert_eq!(
        resolve_paths(code, &module(&["gates", "on_approval"]), &no_children),
        vec![
            path("gates::approval"),
            path("gates::approval::StepPod"),
            path("gates::Evaluation"),
            path("gates::on_webhook"),
            path("gates::on_webhook::switchover_note"),
            path("gates::on_approval::helper"),
            path("model::set::name"),
            path("gates::on_approval"),
            path("gates::verdict::Verdict"),
        ],
        "on_set is no child of a file that is not a mod.rs"
    );
    let children = |name: &str| name == "on_set";
    let in_mod = resolve_paths(code, &module(&["gates"]), &children);
    assert!(in_mod.contains(&path("gates::on_set::READS")), "{in_mod:?}");
    assert!(in_mod.contains(&path("approval::StepPod")), "{in_mod:?}");
    // Two files naming each other through `super::` are a circle.
    let a = src().join("gates/a.rs");
    let b = src().join("gates/b.rs");
    let edges = BTreeMap::from([
        (a.clone(), BTreeSet::from([b.clone()])),
        (b.clone(), BTreeSet::from([a.clone()])),
    ]);
    assert_eq!(circles(&edges), vec![vec![(a.clone(), b.clone()), (b, a)]]);
}

#[test]
fn the_parser_sees_grouped_and_nested_paths() {
    let paths =
        crate_paths("use crate::gates::{self, GateOptions};\nlet x = crate::plan::plan(a);");
    assert_eq!(
        paths,
        vec![
            vec!["gates".to_string()],
            vec!["gates".to_string(), "GateOptions".to_string()],
            vec!["plan".to_string(), "plan".to_string()],
        ]
    );
    assert!(
        crate_paths("/// [`crate::commands`]").len() == 1,
        "raw text still parses"
    );
    assert!(
        crate_paths(&code(&src().join("lib.rs"))).is_empty(),
        "lib.rs code names no crate path"
    );
}
