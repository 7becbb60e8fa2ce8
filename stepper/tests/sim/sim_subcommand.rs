//! Every shipped scenario of `scenarios/` parses and renders, natively and guarded, and the `simulate`
//! subcommand prints the MOCO incident both ways.
use std::path::PathBuf;

use sts_stepper::sim::scenario;

#[test]
fn every_shipped_scenario_parses_and_renders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        for native in [false, true] {
            let out = scenario::simulate(&text, native, 7)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(out.contains("max pods unavailable at once"), "{out}");
        }
        n += 1;
    }
    assert!(n >= 7, "{n} scenarios");
}

#[test]
fn the_simulate_subcommand_prints_the_incident_both_ways() {
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/moco-incident.yaml");
    let run = |native: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sts-stepper"));
        cmd.arg("simulate").arg("--scenario").arg(&scenario);
        if native {
            cmd.arg("--native");
        }
        let out = cmd.output().expect("run sts-stepper simulate");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let native = run(true);
    let guarded = run(false);
    let max_line = |s: &str| {
        s.lines()
            .find(|l| l.contains("max pods unavailable at once"))
            .and_then(|l| l.split_whitespace().last())
            .map(str::to_string)
    };
    assert_eq!(max_line(&native).as_deref(), Some("2"), "{native}");
    assert_eq!(max_line(&guarded).as_deref(), Some("1"), "{guarded}");
    assert!(
        guarded.contains("Blocked PodNotReady web-0: NodeNotReady"),
        "{guarded}"
    );
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_sts-stepper"))
        .args(["simulate", "--scenario", "/nonexistent.yaml"])
        .output()
        .expect("run sts-stepper simulate");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("read scenario"));
}
