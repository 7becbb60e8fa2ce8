//! Every relative link of README.md and `docs/` resolves (file and `#anchor`), and every page is
//! reachable from README.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{read, root};

/// GitHub's anchor of a heading (as scripts/monitoring-static.py's `github_anchor`).
fn anchor(heading: &str) -> String {
    let text: String = heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '`' | '*' | '_'))
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ')
        .collect();
    text.replace(' ', "-")
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// The relative link targets of a Markdown text (`[text](target)`, not http(s), not in code blocks).
fn links(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for part in line.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            if !target.starts_with("http") && !target.starts_with("mailto:") && !target.is_empty() {
                out.push(target.to_string());
            }
        }
    }
    out
}

fn pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| format!("docs/{}", e.expect("entry").file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_relative_link_resolves_and_every_page_is_reachable_from_readme() {
    let mut files = vec!["README.md".to_string()];
    files.extend(pages());
    let mut broken = Vec::new();
    for file in &files {
        let dir = Path::new(file).parent().unwrap_or(Path::new(""));
        for link in links(&read(file)) {
            let (path, frag) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                PathBuf::from(file)
            } else {
                dir.join(path)
            };
            let full = root().join(&target);
            if !full.exists() {
                broken.push(format!("{file}: {link} (no {})", target.display()));
            } else if !frag.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&full).expect("readable");
                if !anchors(&text).contains(frag) {
                    broken.push(format!("{file}: {link} (no heading #{frag})"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    let readme_links: BTreeSet<String> = links(&read("README.md"))
        .into_iter()
        .map(|l| l.split('#').next().unwrap_or("").to_string())
        .collect();
    for page in pages() {
        assert!(
            readme_links.contains(&page),
            "{page} is not linked from README.md"
        );
    }
}
