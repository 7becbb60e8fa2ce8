//! The shipped files and the interpreters' environments: the argocd-cm patch installs health.lua as
//! is; the Lua sandbox is argocd-cm's (base, `package`, `table`; no `string`, `math`, global `os`, …),
//! with Argo CD's result contract; the
//! Flux patch adds one entry for apps/v1 StatefulSet; `deploy/render.sh` renders another annotation
//! prefix into both, and the rendered checks read that prefix only.

mod common;

use std::process::Command;

use gitops_health::argocd::{HealthScript, INVALID_STATUS, LuaHealth};
use gitops_health::flux::FluxStatus;
use gitops_health::manifests::{
    argocd_check_dir, argocd_cm_path, argocd_cm_script, flux_entry, flux_patch_path, read,
    repo_root,
};
use serde_json::{Value, json};

use common::{Renderings, fixture_set};

#[test]
fn the_argocd_cm_patch_installs_health_lua_byte_for_byte() {
    let installed = argocd_cm_script(&argocd_cm_path()).expect("argocd-cm.yaml");
    let bundled = read(&argocd_check_dir().join("health.lua")).expect("health.lua");
    assert_eq!(installed, bundled);
}

fn run(script: HealthScript) -> Result<LuaHealth, String> {
    script.health(&json!({"metadata": {"name": "x"}}))
}

#[test]
fn an_argocd_cm_script_has_no_string_math_io_or_coroutine() {
    for source in [
        "return {status = 'Healthy', message = string.format('%d', 1)}",
        "return {status = 'Healthy', message = ('x'):rep(2)}",
        "return {status = 'Healthy', message = '' .. math.floor(1.5)}",
        "return {status = 'Healthy', message = io.read()}",
        "return {status = 'Healthy', message = os.getenv('HOME')}",
        "return {status = 'Healthy', message = tostring(coroutine.create(print))}",
    ] {
        let err = run(HealthScript::argocd_cm(source)).expect_err(source);
        // A missing library is nil; without `string`, a string has no methods either.
        assert!(
            err.contains("a nil value") || err.contains("attempt to index a string value"),
            "{source}: {err}"
        );
    }
    // The base library and `table` are there, and the safe `os` through `require` only (argo-cd
    // `util/lua/lua.go`, `runLuaWithResourceActionParameters`); with open libs `string` and `math` too.
    let ok = "return {status = 'Healthy', message = tostring(tonumber('2')) .. type(table.concat)
        .. type(require('os').time()) .. type(require('os').getenv) .. type(os)}";
    assert_eq!(
        run(HealthScript::argocd_cm(ok)).expect("base, table, os.time"),
        LuaHealth {
            status: "Healthy".into(),
            message: "2functionnumbernilnil".into()
        }
    );
    let open = "return {status = 'Healthy', message = string.format('%d', math.floor(1.5))}";
    assert_eq!(
        run(HealthScript::open_libs(open))
            .expect("open libs")
            .message,
        "1"
    );
}

#[rstest::rstest]
#[case::nil("return nil", Ok(("", "")))]
#[case::empty_table("return {}", Ok(("", "")))]
#[case::unknown_status("return {status = 'Fine'}", Ok(("Unknown", INVALID_STATUS)))]
#[case::no_status("return {message = 'x'}", Ok(("Unknown", INVALID_STATUS)))]
#[case::number("return 1", Err("expect table output from Lua script, not number"))]
#[case::runtime_error("return obj.spec.replicas + 1", Err("attempt to index"))]
#[case::endless("while true do end", Err("time limit"))]
fn argo_cd_reads_a_script_result(#[case] source: &str, #[case] want: Result<(&str, &str), &str>) {
    let got = run(HealthScript::argocd_cm(source));
    match (got, want) {
        (Ok(h), Ok((status, message))) => {
            assert_eq!((h.status.as_str(), h.message.as_str()), (status, message))
        }
        (Err(e), Err(part)) => assert!(e.contains(part), "{e}"),
        (got, want) => panic!("{source}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn the_flux_patch_adds_one_entry_for_apps_v1_statefulsets() {
    let entry = flux_entry(&flux_patch_path()).expect("the entry");
    assert_eq!(
        (entry.api_version.as_str(), entry.kind.as_str()),
        ("apps/v1", "StatefulSet")
    );
    assert!(entry.in_progress.is_none(), "InProgress is Flux's default");
    assert!(entry.failed.is_some());
    // The Components apply the two patches.
    let argocd =
        read(&repo_root().join("deploy/gitops/argocd/kustomization.yaml")).expect("argocd");
    assert!(argocd.contains("kind: Component") && argocd.contains("- path: argocd-cm.yaml"));
    let flux = read(&repo_root().join("deploy/gitops/flux/kustomization.yaml")).expect("flux");
    for part in [
        "kind: Component",
        "- path: statefulset-health.yaml",
        "group: kustomize.toolkit.fluxcd.io",
        "kind: Kustomization",
    ] {
        assert!(flux.contains(part), "{part}");
    }
}

/// 2-stepped-4 with `pairs` (prefix, name, value) as annotations.
fn annotated(pairs: &[(&str, &str, &str)]) -> Value {
    let mut set = fixture_set("2-stepped-4");
    for (prefix, name, value) in pairs {
        set["metadata"]["annotations"][format!("{prefix}/{name}")] = json!(value);
    }
    set
}

#[test]
fn render_sh_renders_another_annotation_prefix_into_both_checks() {
    let out = tempfile::tempdir().expect("temp dir");
    let status = Command::new(repo_root().join("deploy/render.sh"))
        .env("ANNOTATION_PREFIX", "moco.cybozu.com")
        .args([
            "registry://example.com/policies/sts-safe-rollout:v0",
            "example.com/sts-stepper:v0",
        ])
        .arg(out.path())
        .output()
        .expect("deploy/render.sh runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let argocd_cm = out.path().join("sts-safe-rollout-argocd-cm.yaml");
    let flux = out.path().join("sts-safe-rollout-flux-health.yaml");
    for file in [&argocd_cm, &flux] {
        let text = read(file).expect("rendered");
        assert!(!text.contains("safe-rollout.dev"), "{}", file.display());
    }
    let moco = Renderings::from_files(&argocd_cm, &flux, "moco.cybozu.com");
    let mark = ("moco.cybozu.com", "guarded", "true");
    for (pairs, status, flux_status) in [
        (
            vec![mark, ("moco.cybozu.com", "paused", "true")],
            "Suspended",
            FluxStatus::InProgress,
        ),
        (
            vec![
                mark,
                ("moco.cybozu.com", "degraded-reason", "StuckPod: web-1"),
            ],
            "Degraded",
            FluxStatus::Failed,
        ),
        (
            vec![mark, ("safe-rollout.dev", "paused", "true")],
            "Progressing",
            FluxStatus::InProgress,
        ),
        (
            vec![mark, ("safe-rollout.dev", "degraded-reason", "x")],
            "Progressing",
            FluxStatus::InProgress,
        ),
        // The other prefix's mark does not mark the set: the built-in rule.
        (
            vec![("safe-rollout.dev", "guarded", "true")],
            "Healthy",
            FluxStatus::Current,
        ),
    ] {
        let agreed = moco.check(&format!("{pairs:?}"), &annotated(&pairs));
        assert_eq!(agreed.health.status, status, "{pairs:?}");
        assert_eq!(agreed.flux, Ok(flux_status), "{pairs:?}");
    }
    // The shipped files read the default prefix only.
    let shipped = Renderings::shipped();
    let pairs = [
        ("safe-rollout.dev", "guarded", "true"),
        ("moco.cybozu.com", "paused", "true"),
    ];
    let agreed = shipped.check("moco paused", &annotated(&pairs));
    assert_eq!(agreed.health.status, "Progressing");
    let agreed = shipped.check("moco mark", &annotated(&[mark]));
    assert_eq!(
        agreed.health.message,
        "unguarded (no safe-rollout.dev/guarded mark): 5 of 5 pods Ready"
    );
}
