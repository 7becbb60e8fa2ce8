//! The stepper's folders are its layers: ARCHITECTURE.md's "Layers" table says which folder may import
//! which, and every path to a module of the crate in the code (doc comments aside) obeys it.
//!
//! Also checked: every folder is in the table and every row is a folder; the pure layers import only
//! pure layers and no I/O crate (tokio, the kube client, reqwest, axum); nothing imports `commands`;
//! no two files import each other, directly or round a circle. A file names another by a `crate::`
//! path, a `super::` or `self::` path (resolved from the module it is written in: the file's, or an
//! inline module such as `mod tests`), or, in a `mod.rs`, a bare path to a child module
//! (`on_set::READS`).

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
/// (`crate::plan::events::EventNote` → `["plan", "events", "EventNote"]`), braces expanded.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    raw_paths(code)
        .into_iter()
        .filter_map(|(_, p)| (p.first()? == "crate").then(|| p[1..].to_vec()))
        .collect()
}

/// Every path the code names (`a::b`, `a::{b, c::{d, self}}` expanded to its leaves, `self` leaves
/// and globs dropped, `as` renames ignored; not the path of a `pub(in …)` visibility), with the byte
/// offset where it starts.
fn raw_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ident(bytes[i])
            && !bytes[i].is_ascii_digit()
            && (i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let at = i;
        let mut end = i;
        while end < bytes.len() && (ident(bytes[end]) || bytes[end] == b':') {
            end += 1;
        }
        let text = &code[at..end];
        if !text.contains("::") {
            i = end;
            continue;
        }
        if code[..at].ends_with("pub(in ") {
            i = end; // a visibility (`pub(in crate::gates)`), not an import
            continue;
        }
        let prefix = segments(text);
        if text.ends_with("::") && bytes.get(end) == Some(&b'{') {
            let close = matching(code, end).unwrap_or(code.len());
            for leaf in group_leaves(&code[end + 1..close.min(code.len())]) {
                let mut full = prefix.clone();
                full.extend(leaf);
                out.push((at, full));
            }
            i = close + 1;
        } else {
            out.push((at, prefix));
            i = end;
        }
    }
    out
}

/// The segments of `a::b::` (`*` dropped, and `self` but a leading one: `self::x` names `x` in this
/// module).
fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .enumerate()
        .filter(|(i, s)| !s.is_empty() && *s != "*" && (*i == 0 || *s != "self"))
        .map(|(_, s)| s.to_string())
        .collect()
}

/// The offset of the `}` closing the `{` at `open`.
fn matching(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The leaf paths of a use tree's group (`b, c::{d, self}, e as f`), relative to the group's prefix.
fn group_leaves(body: &str) -> Vec<Vec<String>> {
    let mut items = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&body[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[from..]);
    let mut out = Vec::new();
    for item in items.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if let Some(open) = item.find('{') {
            let prefix = segments(&item[..open]);
            let close = item.rfind('}').unwrap_or(item.len());
            for leaf in group_leaves(&item[open + 1..close]) {
                let mut full = prefix.clone();
                full.extend(leaf);
                out.push(full);
            }
        } else {
            let path = item.split(" as ").next().unwrap_or(item);
            // A leaf `self` names the group's prefix itself.
            out.push(segments(path).into_iter().filter(|s| s != "self").collect());
        }
    }
    out
}

/// A file's module path under `crate`: `gates/on_set.rs` → `["gates", "on_set"]`, `gates/mod.rs` →
/// `["gates"]`, `lib.rs` → `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src/");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The inline modules of `code` (`mod tests { … }`, `mod wire { … }`): name and byte range.
fn inline_modules(code: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut rest = 0;
    while let Some(at) = code[rest..].find("mod ") {
        let start = rest + at;
        rest = start + 4;
        if start > 0 && code.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let after = &code[rest..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let brace =
            rest + name.len() + after[name.len()..].len() - after[name.len()..].trim_start().len();
        if name.is_empty() || code.as_bytes().get(brace) != Some(&b'{') {
            continue;
        }
        let close = matching(code, brace).unwrap_or(code.len());
        out.push((name, brace..close));
    }
    out
}

/// Every module path the code of `file` names, crate-absolute ([`resolve`] from the file's module, with
/// its child modules: the files of its folder for a `mod.rs`).
fn resolved_paths(file: &Path) -> Vec<Vec<String>> {
    let children_dir = if matches!(
        file.file_name().and_then(|n| n.to_str()),
        Some("mod.rs" | "lib.rs")
    ) {
        file.parent().expect("parent").to_path_buf()
    } else {
        file.with_extension("")
    };
    let is_child = |name: &str| {
        children_dir.join(format!("{name}.rs")).is_file()
            || children_dir.join(name).join("mod.rs").is_file()
    };
    resolve_paths(&code(file), &module_of(file), &is_child)
}

/// The module paths `code`, written in `module`, names, crate-absolute: `crate::…`; `super::…` and
/// `self::…` from the module the path is written in (`module`, or an inline module in it, e.g. `mod
/// tests`); a bare `child::…` naming a child module of `module` (`is_child`: `gates/mod.rs`'s
/// `on_set::READS`). Other paths (std, other crates, local items) are left out.
fn resolve_paths(
    code: &str,
    module: &[String],
    is_child: &dyn Fn(&str) -> bool,
) -> Vec<Vec<String>> {
    let inline = inline_modules(code);
    let mut out = Vec::new();
    for (at, path) in raw_paths(code) {
        let Some(first) = path.first() else { continue };
        let mut here = module.to_vec();
        for (name, range) in &inline {
            if range.contains(&at) {
                here.push(name.clone());
            }
        }
        let nested = here.len() > module.len();
        let resolved = match first.as_str() {
            "crate" => path[1..].to_vec(),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                if ups > here.len() {
                    continue;
                }
                let mut base = here[..here.len() - ups].to_vec();
                base.extend(path[ups..].iter().cloned());
                base
            }
            "self" => {
                let mut base = here.clone();
                base.extend(path[1..].iter().cloned());
                base
            }
            name if !nested && is_child(name) => {
                let mut base = module.to_vec();
                base.extend(path.iter().cloned());
                base
            }
            _ => continue,
        };
        out.push(resolved);
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

/// Each file's imports: the files its paths resolve to ([`resolved_paths`], [`resolve`]), itself aside.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files
        .iter()
        .map(|file| {
            let targets = resolved_paths(file)
                .iter()
                .filter_map(|p| resolve(p))
                .filter(|t| t != file)
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// The groups of files that import each other round a circle (the graph's strongly connected
/// components of more than one file, Tarjan's algorithm), each with its imports inside the group.
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<(PathBuf, PathBuf)>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        groups: Vec<Vec<&'a PathBuf>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, f: &'a PathBuf) {
        let n = w.index.len();
        w.index.insert(f, n);
        w.low.insert(f, n);
        w.stack.push(f);
        for t in w.edges.get(f).into_iter().flatten() {
            let Some((t, _)) = w.edges.get_key_value(t) else {
                continue;
            };
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[f].min(w.low[t]);
                w.low.insert(f, low);
            } else if w.stack.contains(&t) {
                let low = w.low[f].min(w.index[t]);
                w.low.insert(f, low);
            }
        }
        if w.low[f] == w.index[f] {
            let mut group = Vec::new();
            while let Some(g) = w.stack.pop() {
                group.push(g);
                if g == f {
                    break;
                }
            }
            w.groups.push(group);
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        groups: Vec::new(),
    };
    for f in edges.keys() {
        if !w.index.contains_key(f) {
            visit(&mut w, f);
        }
    }
    w.groups
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let mut inside = Vec::new();
            for f in &g {
                for t in edges[*f].iter().filter(|t| g.contains(t)) {
                    inside.push(((*f).clone(), t.clone()));
                }
            }
            inside.sort();
            inside
        })
        .collect()
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
