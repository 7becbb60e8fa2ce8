//! The stepper's folders are its layers: ARCHITECTURE.md's "Layers" table says which folder may import
//! which, and every `crate::…` path in the code (doc comments aside) obeys it.
//!
//! Also checked: every folder is in the table and every row is a folder; the pure layers import only
//! pure layers and no I/O crate (tokio, the kube client, reqwest, axum); nothing imports `commands`;
//! no two files import each other, directly or round a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One row of the table.
#[derive(Debug)]
struct Layer {
    pure: bool,
    may_import: BTreeSet<String>,
}

fn src() -> PathBuf {
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

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without comments: doc links (`[`crate::x`]`) are not imports.
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .expect("readable source")
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.split(" // ").next().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths under `crate::` the code names, each as its segments up to the first non-module one
/// (`crate::plan::events::EventNote` → `["plan", "events", "EventNote"]`), braces expanded one level.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut segments: Vec<String> = path
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let after = &rest[path.len()..];
        if after.starts_with('{') {
            let inner = &after[1..after.find('}').unwrap_or(after.len())];
            for item in inner.split(',') {
                let item: Vec<String> = item
                    .trim()
                    .split("::")
                    .filter(|s| !s.is_empty() && *s != "self")
                    .map(|s| s.split_whitespace().next().unwrap_or(s).to_string())
                    .collect();
                let mut full = segments.clone();
                full.extend(item);
                out.push(full);
            }
            continue;
        }
        if segments.is_empty() {
            continue;
        }
        segments.retain(|s| s != "self");
        out.push(segments);
    }
    out
}

/// The layer (top folder under `src/`) of a file; `None` for `lib.rs` and `main.rs`.
fn layer_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).expect("under src/");
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_string_lossy().to_string();
    parts.next().map(|_| first)
}

/// The file a `crate::` path names: the deepest module file its segments reach.
fn resolve(segments: &[String]) -> Option<PathBuf> {
    let mut dir = src();
    let mut found = None;
    for s in segments {
        let as_dir = dir.join(s);
        let as_file = dir.join(format!("{s}.rs"));
        if as_dir.join("mod.rs").is_file() {
            found = Some(as_dir.join("mod.rs"));
            dir = as_dir;
        } else if as_file.is_file() {
            found = Some(as_file);
            break;
        } else {
            break;
        }
    }
    found
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
        for path in crate_paths(&code(file)) {
            let target = &path[0];
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

#[test]
fn no_two_files_import_each_other() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for file in &files {
        let targets = crate_paths(&code(file))
            .iter()
            .filter_map(|p| resolve(p))
            .filter(|t| t != file)
            .collect();
        edges.insert(file.clone(), targets);
    }
    // A mod.rs that re-exports a child (`pub use child::…`) depends on it.
    for file in &files {
        if file.file_name().is_some_and(|n| n == "mod.rs") {
            let dir = file.parent().expect("parent");
            for line in code(file).lines() {
                if let Some(rest) = line.trim().strip_prefix("pub use ") {
                    let child = rest.split("::").next().unwrap_or("");
                    let child_file = dir.join(format!("{child}.rs"));
                    if child_file.is_file() {
                        edges.get_mut(file).expect("known").insert(child_file);
                    }
                }
            }
        }
    }
    fn visit(
        f: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        path: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
    ) {
        if let Some(at) = path.iter().position(|p| p == f) {
            let circle: Vec<String> = path[at..]
                .iter()
                .chain([f])
                .map(|p| {
                    p.strip_prefix(src())
                        .expect("under src")
                        .display()
                        .to_string()
                })
                .collect();
            panic!(
                "files import each other round a circle: {}",
                circle.join(" → ")
            );
        }
        if !done.insert(f.clone()) {
            return;
        }
        path.push(f.clone());
        for t in edges.get(f).into_iter().flatten() {
            visit(t, edges, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for f in edges.keys() {
        visit(f, &edges, &mut Vec::new(), &mut done);
    }
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
