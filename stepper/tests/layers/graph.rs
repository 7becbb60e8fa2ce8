//! The import graph of the crate's files and its circles (strongly connected groups, Tarjan).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::paths::{resolve, resolved_paths, rust_files};
use crate::src;

/// Each file's imports: the files its paths resolve to ([`resolved_paths`], [`resolve`]), itself aside.
pub fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
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
pub fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<(PathBuf, PathBuf)>> {
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
