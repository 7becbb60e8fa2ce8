//! ARCHITECTURE.md's "What adding an answerer kind touches", "What adding a check kind touches" and
//! "What adding a state annotation touches" against the code (issue 44 item 7): each answerer kind is one
//! folder of its three files, registered in one place and documented; the files a check kind reaches are
//! the table's; each gate state declared once has its `StateKey`. (The metrics' section is held by
//! `the_metric_table_lists_every_registered_metric`.)

use std::collections::BTreeSet;

use crate::{read, root, section};

const KINDS_DIR: &str = "stepper/src/cluster/answerer/kinds";

/// The kinds table of the section: (kind as the file spells it, folder).
fn table() -> Vec<(String, String)> {
    let text = read("ARCHITECTURE.md");
    section(&text, "## What adding an answerer kind touches")
        .iter()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let kind = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let folder = cells.get(2)?.strip_prefix("`kinds/")?.strip_suffix("/`")?;
            Some((kind.to_string(), folder.to_string()))
        })
        .collect()
}

/// The folders under `kinds/`.
fn folders() -> BTreeSet<String> {
    std::fs::read_dir(root().join(KINDS_DIR))
        .expect("kinds/")
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn every_answerer_kind_is_one_folder_registered_once_and_documented() {
    let table = table();
    let listed: BTreeSet<String> = table.iter().map(|(_, f)| f.clone()).collect();
    assert_eq!(
        listed,
        folders(),
        "ARCHITECTURE.md's kinds table vs {KINDS_DIR}/"
    );
    let registry = read(&format!("{KINDS_DIR}/mod.rs"));
    let kinds_const = registry
        .lines()
        .find_map(|l| l.strip_prefix("pub const KINDS: &str = \""))
        .and_then(|l| l.strip_suffix("\";"))
        .expect("KINDS");
    let named: BTreeSet<&str> = kinds_const.split(", ").collect();
    let help = read("stepper/src/cli/checks.rs");
    let docs = read("docs/answerers.md");
    for (kind, folder) in &table {
        for file in ["mod.rs", "decide.rs", "entry.rs"] {
            let path = root().join(KINDS_DIR).join(folder).join(file);
            assert!(path.is_file(), "kind {kind}: no {}", path.display());
        }
        assert!(
            registry.contains(&format!("pub mod {folder};")),
            "kinds/mod.rs declares no module {folder}"
        );
        assert!(
            registry.contains(&format!("Option<{folder}::entry::Entry>")),
            "kinds/mod.rs: no Entry field of kind {kind}"
        );
        let variants = registry
            .lines()
            .filter(|l| {
                l.trim_start().contains(&format!("({folder}::")) && l.trim_end().ends_with("),")
            })
            .count();
        assert!(
            variants >= 1,
            "kinds/mod.rs: no BuiltIn variant over {folder}"
        );
        assert!(
            named.contains(kind.as_str()),
            "KINDS ({kinds_const}) lacks {kind}"
        );
        assert!(
            help.contains(kind.as_str()),
            "--answerer-config's help does not name {kind}"
        );
        assert!(
            docs.contains(&format!("`{kind}`")) || docs.contains(&format!("{kind}:")),
            "docs/answerers.md does not name the kind {kind}"
        );
    }
    assert_eq!(
        named.len(),
        table.len(),
        "KINDS vs the table: {kinds_const}"
    );
}

#[test]
fn every_gate_state_declared_has_its_state_key() {
    let declared = read("rules/src/declared.rs");
    let states: Vec<&str> = declared
        .lines()
        .filter_map(|l| l.split("state(").nth(1)?.split(')').next())
        .filter(|n| n.chars().all(|c| c.is_ascii_uppercase() || c == '_') && !n.is_empty())
        .collect();
    assert!(!states.is_empty(), "no state row in DECLARED");
    // A constant of gates/effect.rs, or a check kind's own `CheckKind::STATE` under gates/check/.
    let effect = read("stepper/src/gates/effect.rs");
    let mut kinds = Vec::new();
    rust_files("stepper/src/gates/check", &mut kinds);
    let kinds: String = kinds.iter().map(|f| read(f)).collect();
    for name in states {
        assert!(
            effect.contains(&format!("StateKey(names::{name})"))
                || kinds.contains(&format!(
                    "const STATE: StateKey = StateKey::of(names::{name});"
                )),
            "{name} is a gate state in rules/src/declared.rs but neither gates/effect.rs nor a check \
             kind under gates/check/ has a StateKey for it"
        );
    }
}

/// The HTTP check's items as its code names them (ARCHITECTURE.md, "What adding a check kind touches").
const HTTP_CHECK_ITEMS: [&str; 20] = [
    "HttpCheckConfig",
    "HttpCheckArgs",
    "WithoutHttpCheck",
    "HttpCheckName",
    "MissingJsonPath",
    "JsonPathError",
    "MissingExpect",
    "ExpectError",
    "HttpAnswer",
    "HttpGet",
    "HttpChecks",
    "HttpEndpoint",
    "CheckRead::Http",
    "CheckAnswer::Http",
    "HTTP_CHECK",
    "Reason::HttpCheck",
    "http_check",
    "check::http",
    "<Http>",
    "ConfigError::Expect",
];

/// Every `.rs` file under `dir` (relative to the repository), recursively.
fn rust_files(dir: &str, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(root().join(dir)).expect(dir).flatten() {
        let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
        if entry.path().is_dir() {
            rust_files(&rel, out);
        } else if rel.ends_with(".rs") {
            out.push(rel);
        }
    }
}

/// True when the code of `text` (comment lines aside) names an item of the HTTP check.
fn names_the_http_check(text: &str) -> bool {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .any(|l| HTTP_CHECK_ITEMS.iter().any(|item| l.contains(item)))
}

#[test]
fn the_check_kind_table_is_every_file_the_http_check_touches() {
    let text = read("ARCHITECTURE.md");
    let listed: BTreeSet<String> = section(&text, "## What adding a check kind touches")
        .iter()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(2))
        .flat_map(|cell| cell.split(", "))
        .filter_map(|f| Some(f.trim().strip_prefix('`')?.strip_suffix('`')?.to_string()))
        .filter(|f| f.ends_with(".rs"))
        .collect();
    assert!(listed.len() > 3, "no table of files: {listed:?}");
    let mut files = Vec::new();
    rust_files("rules/src", &mut files);
    rust_files("stepper/src", &mut files);
    let touching: BTreeSet<String> = files
        .into_iter()
        .filter(|f| names_the_http_check(&read(f)))
        .collect();
    let unlisted: Vec<_> = touching.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&touching).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md's check kind table: files naming the HTTP check but not listed {unlisted:?}; \
         listed but not naming it {stale:?}"
    );
}

/// `Keys::of` is asked only declared names (`config/keys.rs`: an undeclared one would get the empty
/// key): every `keys.of(names::X)` in the stepper's code names a constant of `rules/src/annotations.rs`
/// whose value is a row of `DECLARED` (`annotations::ALL`).
#[test]
fn keys_are_asked_only_of_declared_names() {
    let constants: std::collections::BTreeMap<String, String> = read("rules/src/annotations.rs")
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("pub const ")?;
            let (name, value) = rest.split_once(": &str = \"")?;
            Some((name.to_string(), value.strip_suffix("\";")?.to_string()))
        })
        .collect();
    let mut files = Vec::new();
    rust_files("stepper/src", &mut files);
    let mut asked = 0;
    for file in files {
        for part in read(&file).split("keys.of(names::").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            let value = constants.get(&name);
            assert!(
                value.is_some_and(|v| sts_safe_rollout_rules::annotations::ALL.contains(&v.as_str())),
                "{file}: keys.of(names::{name}): not a declared annotation ({value:?})"
            );
            asked += 1;
        }
    }
    assert!(asked > 50, "only {asked} uses of keys.of found");
}
