//! The RBAC of deploy/stepper/: pod `delete` only in the opt-in Component `recovery/`, pod `patch` only
//! in the opt-in Component `approvals/`, neither in the default ClusterRole, which reads
//! ControllerRevisions by name only (`get`, for `on-failure: rollback`); the Component turns `--recover-stuck-pods` on in both the Deployment and the
//! CronJob, with a flag the command line accepts after the manifest's subcommand.
use serde_json::Value;
use sts_stepper::cli::plugin::parse_from;

fn docs(path: &str) -> Vec<Value> {
    let full = format!("{}/../deploy/stepper/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    serde_saphyr::from_multiple(&text).expect("YAML")
}

/// Every (apiGroup, resource, verb) a ClusterRole in `path` grants.
fn grants(path: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for doc in docs(path).iter().filter(|d| d["kind"] == "ClusterRole") {
        for rule in doc["rules"].as_array().expect("rules") {
            let list = |k: &str| -> Vec<String> {
                rule[k]
                    .as_array()
                    .expect(k)
                    .iter()
                    .map(|v| v.as_str().expect("str").to_string())
                    .collect()
            };
            for g in list("apiGroups") {
                for r in list("resources") {
                    for v in list("verbs") {
                        out.push((g.clone(), r.clone(), v.clone()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_default_cluster_role_deletes_nothing() {
    let base = grants("base/rbac.yaml");
    assert!(
        base.iter()
            .any(|(_, r, v)| r == "statefulsets" && v == "patch"),
        "{base:?}"
    );
    assert!(
        base.iter().all(|(_, _, v)| v != "delete" && v != "*"),
        "{base:?}"
    );
}

#[test]
fn the_default_cluster_role_gets_controller_revisions_by_name_and_nothing_more() {
    // on-failure: rollback (issue 36) GETs the ControllerRevision of status.currentRevision; it never
    // lists, watches or writes one.
    let base = grants("base/rbac.yaml");
    let on_revisions: Vec<&str> = base
        .iter()
        .filter(|(_, r, _)| r == "controllerrevisions")
        .map(|(g, _, v)| {
            assert_eq!(g, "apps");
            v.as_str()
        })
        .collect();
    assert_eq!(on_revisions, ["get"], "{base:?}");
}

#[test]
fn the_recovery_component_grants_pod_delete_and_nothing_else() {
    assert_eq!(
        grants("recovery/rbac.yaml"),
        [("".to_string(), "pods".to_string(), "delete".to_string())]
    );
    let binding = docs("recovery/rbac.yaml")
        .into_iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .expect("binding");
    assert_eq!(binding["subjects"][0]["name"], "sts-stepper");
    assert_eq!(binding["subjects"][0]["namespace"], "sts-safe-rollout");
    assert_eq!(binding["roleRef"]["name"], "sts-stepper-recover-stuck-pods");
}

#[test]
fn the_default_cluster_role_patches_no_pod_and_the_approvals_component_only_that() {
    let base = grants("base/rbac.yaml");
    assert!(
        !base.iter().any(|(_, r, v)| r == "pods" && v == "patch"),
        "{base:?}"
    );
    assert_eq!(
        grants("approvals/rbac.yaml"),
        [("".to_string(), "pods".to_string(), "patch".to_string())]
    );
    let binding = docs("approvals/rbac.yaml")
        .into_iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .expect("binding");
    assert_eq!(binding["subjects"][0]["name"], "sts-stepper");
    assert_eq!(binding["subjects"][0]["namespace"], "sts-safe-rollout");
    assert_eq!(binding["roleRef"]["name"], "sts-stepper-approvals");
    let kz = &docs("approvals/kustomization.yaml")[0];
    assert_eq!(kz["kind"], "Component");
    assert_eq!(kz["resources"][0], "rbac.yaml");
}

#[test]
fn the_component_turns_the_flag_on_for_both_ways_of_running() {
    let kz = &docs("recovery/kustomization.yaml")[0];
    assert_eq!(kz["kind"], "Component");
    let patches = kz["patches"].as_array().expect("patches");
    for (kind, file, args_path) in [
        (
            "Deployment",
            "watch/deployment.yaml",
            "/spec/template/spec/containers/0/args/-",
        ),
        (
            "CronJob",
            "cronjob.yaml",
            "/spec/jobTemplate/spec/template/spec/containers/0/args/-",
        ),
    ] {
        let patch = patches
            .iter()
            .find(|p| p["target"]["kind"] == kind)
            .unwrap_or_else(|| panic!("a patch for the {kind}"));
        let ops: Value =
            serde_saphyr::from_str(patch["patch"].as_str().expect("patch")).expect("ops");
        assert_eq!(ops[0]["path"], args_path);
        let manifest = &docs(file)[0];
        let spec = if kind == "CronJob" {
            &manifest["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        } else {
            &manifest["spec"]["template"]["spec"]
        };
        // The manifest's subcommand with the appended flag (the other flags are the manifest's own).
        let subcommand = spec["containers"][0]["args"][0]
            .as_str()
            .expect("subcommand");
        let flag = ops[0]["value"].as_str().expect("flag");
        let args = ["sts-stepper", subcommand, flag];
        let cli = parse_from(args).unwrap_or_else(|e| panic!("{kind} args {args:?}: {e}"));
        let pass = cli.command.pass_args().expect("once or watch");
        assert!(pass.recover_stuck_pods, "{kind}");
    }
}
