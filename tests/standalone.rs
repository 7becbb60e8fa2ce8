//! The repository stands alone: a stranger who clones it, with nothing beside it, runs `make demo` and
//! `make test`. This test fails when a file of the repository reads or cites something outside it:
//!
//! - a relative path that climbs out of the repository (one or two `..` up, then `shared/fixtures`) from
//!   where it could be resolved — the file's own folder, its crate's folder (`CARGO_MANIFEST_DIR`), the
//!   repository's root (scripts and the Makefile run there) — and names the folder `shared` or something
//!   that exists out there (so a path that only exists beside a developer's checkout is caught where it
//!   exists: on CI, which clones the repository beside such a folder);
//! - an absolute path into the workplace (`/work/`);
//! - the old design document `DESIGN.md`, which lived beside the checkout (the semantics are
//!   `docs/design.md`).
//!
//! Every file under the root is read except build output (`target/`, `dist/`), dot-names (`.git`,
//! `.github/`: CI's own configuration, which names its own paths) and files that are not UTF-8 text.

use std::path::{Component, Path, PathBuf};

/// The repository's root (this crate is the workspace root).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What holds no file of the project: build output, rendered manifests, and dot-names (version control,
/// editors' and tools' state).
fn skipped(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "target" | "dist")
}

/// Every text file under `dir`, recursively, but the [`skipped`] folders.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().unwrap_or_else(|e| panic!("{name}: {e}"));
        if skipped(&name) {
            // (A worktree's `.git` is a file naming the main checkout's folder.)
        } else if kind.is_dir() {
            text_files(&path, out);
        } else if kind.is_file() && !name.ends_with(".wasm") {
            out.push(path);
        }
    }
}

/// `base` joined with `relative`, `..` and `.` resolved lexically (no file system access).
fn normalize(base: &Path, relative: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in base.join(relative).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The relative paths in `text` that start by climbing (`../x`, `../../x/y`): each a run of `../`
/// followed by path characters.
fn climbing_paths(text: &str) -> Vec<&str> {
    let is_path = |c: char| c.is_ascii_alphanumeric() || "._-/".contains(c);
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("../") {
        let tail = &rest[at..];
        // A `../` inside a longer relative path (`docs/../x`) climbs from there, not from the base.
        // (`${DIR:-../x}`: a `-` before it separates.)
        let before = rest[..at].chars().next_back().unwrap_or(' ');
        let starts_token = !(before.is_ascii_alphanumeric() || "._/".contains(before));
        let end = tail.find(|c: char| !is_path(c)).unwrap_or(tail.len());
        if starts_token && !tail[..end].trim_start_matches("../").is_empty() {
            found.push(&tail[..end]);
        }
        rest = &tail[end.max(3)..];
    }
    found
}

/// The nearest folder at or above `dir` (within the root) that holds a `Cargo.toml`.
fn crate_dir(dir: &Path, root: &Path) -> PathBuf {
    dir.ancestors()
        .take_while(|d| d.starts_with(root))
        .find(|d| d.join("Cargo.toml").is_file())
        .unwrap_or(root)
        .to_path_buf()
}

/// What is wrong with the relative `path` found in `file`: where it leads outside the repository.
fn outside(path: &str, file: &Path, root: &Path) -> Option<String> {
    let dir = file.parent().expect("a file has a folder");
    for base in [dir.to_path_buf(), crate_dir(dir, root), root.to_path_buf()] {
        let target = normalize(&base, path);
        if target.starts_with(root) {
            continue;
        }
        let first_outside = target
            .strip_prefix(root.parent().unwrap_or(root))
            .ok()
            .and_then(|t| t.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        if first_outside.as_deref() == Some("shared") || target.exists() {
            return Some(format!(
                "`{path}` from {} leads to {}, outside the repository",
                base.display(),
                target.display()
            ));
        }
    }
    None
}

/// Everything `text` (the contents of `file`) reads or cites outside the repository.
fn problems(text: &str, file: &Path, root: &Path) -> Vec<String> {
    let mut found: Vec<String> = climbing_paths(text)
        .into_iter()
        .filter_map(|p| outside(p, file, root))
        .collect();
    if text.contains("/work/") {
        found.push("an absolute path into the workplace (`/work/`)".into());
    }
    let old_design = ["DESIGN", ".md"].concat();
    if text.contains(&old_design) {
        found.push(format!(
            "cites {old_design}, which is not in the repository (the semantics are docs/design.md)"
        ));
    }
    found
}

#[test]
fn no_file_reads_or_cites_a_path_outside_the_repository() {
    let root = root();
    let mut files = Vec::new();
    text_files(&root, &mut files);
    assert!(
        files.len() > 100,
        "the walk found only {} files under {}",
        files.len(),
        root.display()
    );
    let mut report = Vec::new();
    // This file spells out the references it looks for, in its own test of the check.
    let this_file = root.join(file!());
    for file in files.iter().filter(|f| **f != this_file) {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue; // not UTF-8 text
        };
        for problem in problems(&text, file, &root) {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            report.push(format!("{}: {problem}", shown.display()));
        }
    }
    assert!(
        report.is_empty(),
        "files that read or cite something outside the repository (copy the data into fixtures/, \
         cite docs/design.md):\n{}",
        report.join("\n")
    );
}

/// The check itself: each kind of reference it must catch is caught, and the repository's own
/// relative paths (a crate reading `../fixtures`, a doc linking `../BENCHMARKS.md`) are not.
#[test]
fn the_check_catches_paths_outside_and_passes_paths_inside() {
    let root = root();
    let test_file = root.join("stepper/tests/common/mod.rs");
    let doc = root.join("docs/gitops.md");
    let script = root.join("scripts/demo-policy.sh");
    let caught = |text: &str, file: &Path| !problems(text, file, &root).is_empty();
    // The examples are put together here, so that no line of this file names such a path itself.
    let (up, shared) = ("../", "shared");
    assert!(caught(
        &format!(r#".join("{up}{up}{shared}/fixtures/api")"#),
        &test_file
    ));
    assert!(caught(
        &format!("SHARED=${{SHARED:-{up}{shared}}}"),
        &script
    ));
    assert!(caught(
        &format!("dir={up}{shared}/fixtures/admission"),
        &script
    ));
    assert!(caught("read /work/shared/crds/x.yaml", &script));
    assert!(caught("see DESIGN.md", &doc));
    assert!(!caught(r#".join("../fixtures/api")"#, &test_file));
    assert!(!caught("[BENCHMARKS.md](../BENCHMARKS.md)", &doc));
    assert!(!caught("dir=fixtures/admission", &script));
    assert!(!caught("a/../b and x../y", &script));
    assert_eq!(
        climbing_paths("a ../b/c, (../../d) ../"),
        vec!["../b/c", "../../d"]
    );
}
