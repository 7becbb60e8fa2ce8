//! The command line under its two names: `sts-stepper`, and the kubectl plugin `kubectl safe-rollout`
//! (a `kubectl-safe_rollout` link to the same binary), whose help and errors name it so; and the
//! `pause`/`resume` arguments.
use std::process::Command as Process;

use clap::error::ErrorKind;
use sts_stepper::cli::plugin::{command, is_plugin, parse_from};
use sts_stepper::cli::{Command, Target, TargetRef};

#[test]
fn the_plugin_is_told_by_its_file_name() {
    assert!(is_plugin("kubectl-safe_rollout"));
    assert!(is_plugin("/usr/local/bin/kubectl-safe_rollout"));
    assert!(!is_plugin("sts-stepper"));
    assert!(!is_plugin("/opt/kubectl-safe_rollout/sts-stepper"));
    assert!(!is_plugin("kubectl-safe_rollout-old"));
}

#[test]
fn help_names_the_binary_as_it_was_run() {
    let plain = command("/usr/bin/sts-stepper")
        .render_long_help()
        .to_string();
    assert!(
        plain.contains("Usage: sts-stepper [OPTIONS] <COMMAND>"),
        "{plain}"
    );
    assert!(
        plain.contains("  sts-stepper pause demo/web --reason"),
        "{plain}"
    );
    let plugin = command("/usr/local/bin/kubectl-safe_rollout")
        .render_long_help()
        .to_string();
    assert!(
        plugin.contains("Usage: kubectl safe-rollout [OPTIONS] <COMMAND>"),
        "{plugin}"
    );
    for example in [
        "  kubectl safe-rollout status ",
        "  kubectl safe-rollout wait demo/web",
        "  kubectl safe-rollout pause demo/web --reason",
    ] {
        assert!(plugin.contains(example), "{example} in {plugin}");
    }
    assert!(!plugin.contains("sts-stepper "), "{plugin}");
}

#[test]
fn subcommand_help_and_errors_name_the_plugin() {
    let help = parse_from(["kubectl-safe_rollout", "pause", "--help"]).expect_err("help");
    assert_eq!(help.kind(), ErrorKind::DisplayHelp);
    assert!(
        help.to_string()
            .contains("Usage: kubectl safe-rollout pause"),
        "{help}"
    );
    let missing = parse_from(["kubectl-safe_rollout", "pause", "demo/web"]).expect_err("no reason");
    assert_eq!(missing.kind(), ErrorKind::MissingRequiredArgument);
    let text = missing.to_string();
    assert!(
        text.contains("--reason") && text.contains("kubectl safe-rollout pause"),
        "{text}"
    );
}

#[test]
fn pause_and_resume_parse() {
    let cli =
        parse_from(["sts-stepper", "pause", "demo/web", "--reason", "INC-1234"]).expect("pause");
    let Command::Pause(p) = cli.command else {
        panic!("pause")
    };
    let web = TargetRef {
        namespace: Some("demo".into()),
        name: "web".into(),
    };
    assert_eq!((&p.target, p.reason.as_str()), (&web, "INC-1234"));
    let cli = parse_from(["kubectl-safe_rollout", "resume", "sts/web", "-n", "x"]).expect("resume");
    let Command::Resume(r) = cli.command else {
        panic!("resume")
    };
    assert_eq!(
        r.target.resolve(&cli.global.namespaces, "default"),
        Ok(Target {
            namespace: "x".into(),
            name: "web".into()
        })
    );
    assert!(parse_from(["sts-stepper", "resume", "a/b/c"]).is_err());
}

/// The real binary run through a `kubectl-safe_rollout` symlink, as kubectl runs a plugin.
#[test]
fn the_binary_run_through_the_plugin_link_calls_itself_kubectl_safe_rollout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let link = dir.path().join("kubectl-safe_rollout");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_sts-stepper"), &link).expect("symlink");
    let out = Process::new(&link).arg("--help").output().expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Usage: kubectl safe-rollout [OPTIONS] <COMMAND>"),
        "{stdout}"
    );
    let out = Process::new(&link)
        .args(["pause", "demo/web"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Usage: kubectl safe-rollout pause"),
        "{stderr}"
    );
    let out = Process::new(env!("CARGO_BIN_EXE_sts-stepper"))
        .arg("--help")
        .output()
        .expect("runs");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: sts-stepper [OPTIONS] <COMMAND>")
    );
}
