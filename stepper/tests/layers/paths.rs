//! The paths to the crate's modules a source file names, and the files they resolve to: `crate::`,
//! `super::` and `self::` paths (from the module they are written in), a `mod.rs`'s bare paths to its
//! children; braces expanded, comments and `pub(in …)` visibilities left out.

use std::path::{Path, PathBuf};

use crate::src;

/// Every `.rs` file under `dir`, recursively.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub fn code(path: &Path) -> String {
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
pub fn crate_paths(code: &str) -> Vec<Vec<String>> {
    raw_paths(code)
        .into_iter()
        .filter_map(|(_, p)| (p.first()? == "crate").then(|| p[1..].to_vec()))
        .collect()
}

/// Every path the code names (`a::b`, `a::{b, c::{d, self}}` expanded to its leaves, `self` leaves
/// and globs dropped, `as` renames ignored; not the path of a `pub(in …)` visibility), with the byte
/// offset where it starts.
pub fn raw_paths(code: &str) -> Vec<(usize, Vec<String>)> {
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
pub fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .enumerate()
        .filter(|(i, s)| !s.is_empty() && *s != "*" && (*i == 0 || *s != "self"))
        .map(|(_, s)| s.to_string())
        .collect()
}

/// The offset of the `}` closing the `{` at `open`.
pub fn matching(code: &str, open: usize) -> Option<usize> {
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
pub fn group_leaves(body: &str) -> Vec<Vec<String>> {
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
pub fn module_of(file: &Path) -> Vec<String> {
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
pub fn inline_modules(code: &str) -> Vec<(String, std::ops::Range<usize>)> {
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
pub fn resolved_paths(file: &Path) -> Vec<Vec<String>> {
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
pub fn resolve_paths(
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
pub fn layer_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).expect("under src/");
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_string_lossy().to_string();
    parts.next().map(|_| first)
}

/// The file a `crate::` path names: the deepest module file its segments reach.
pub fn resolve(segments: &[String]) -> Option<PathBuf> {
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
