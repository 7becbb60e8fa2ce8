//! Every frame of every shipped scenario (`scenarios/*.yaml`, played guarded and native on the
//! simulated StatefulSet controller with the real policy decision and stepper pass): the stepper, the
//! Lua and the CEL agree on the StatefulSet as stored after each simulated second. Played guarded, the
//! simulated API server applies the policy's change (`rules` `decision::apply`), which writes the
//! guarded mark; played native (no policy), no set carries it and every verdict is the built-in rule's.

mod common;

use std::collections::BTreeMap;

use gitops_health::manifests::repo_root;
use sts_stepper::sim::scenario::{Scenario, run};

use common::{GUARDED, Renderings};

const UNMARKED: &str = "unguarded (no safe-rollout.dev/guarded mark): ";

/// The seed `sts-stepper simulate` uses by default.
const SEED: u64 = 1;

/// Plays `file` and checks every frame; returns how many frames had each status.
fn check_scenario(r: &Renderings, file: &str, native: bool) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(repo_root().join("scenarios").join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let scenario = Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let played = run(&scenario, native, SEED).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mode = if native { "native" } else { "guarded" };
    let mut seen = BTreeMap::new();
    for frame in &played.frames {
        let name = format!("{file} ({mode}) at t={}s", frame.t);
        let agreed = r.check(&name, &frame.set);
        let mark = frame.set["metadata"]["annotations"].get(GUARDED);
        let marked = mark.and_then(|v| v.as_str()) == Some("true");
        assert_eq!(marked, !native, "{name}: the guarded mark {mark:?}");
        let message = &agreed.health.message;
        if native && !message.starts_with("waiting for the StatefulSet controller") {
            assert!(message.starts_with(UNMARKED), "{name}: {message}");
        }
        *seen.entry(agreed.health.status).or_insert(0) += 1;
    }
    seen
}

fn scenario_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo_root().join("scenarios"))
        .expect("scenarios/")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.ends_with(".yaml").then_some(name)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_three_renderings_agree_on_every_frame_of_every_scenario() {
    let r = Renderings::shipped();
    let files = scenario_files();
    assert!(files.len() >= 10, "scenarios/: {files:?}");
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        for native in [false, true] {
            for (status, n) in check_scenario(&r, file, native) {
                *total.entry(status).or_insert(0) += n;
            }
        }
    }
    // Every rollout is Progressing before it is Healthy; the stuck pod below is Degraded.
    for status in ["Healthy", "Progressing", "Degraded"] {
        assert!(
            total.get(status).is_some_and(|n| *n > 0),
            "{status}: {total:?}"
        );
    }
}

/// stuck-rollout.yaml guarded (recovery off): once web-2 has been stuck past `recover-after-seconds`,
/// the stepper records it and every rendering says Degraded; before that, Progressing.
#[test]
fn a_stuck_rollout_turns_degraded_after_its_recovery_time() {
    let r = Renderings::shipped();
    let seen = check_scenario(&r, "stuck-rollout.yaml", false);
    assert!(seen.get("Degraded").is_some_and(|n| *n > 0), "{seen:?}");
    assert!(seen.get("Progressing").is_some_and(|n| *n > 0), "{seen:?}");
}
