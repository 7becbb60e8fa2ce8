//! metadata.yml, artifacthub-pkg.yml and the ClusterAdmissionPolicy in deploy/policy/ agree with each
//! other and with the crate: one version, the same rules, the settings the policy accepts. Kubewarden's
//! release workflow refuses a tag whose versions disagree.

use std::path::Path;

use kubewarden_policy_sdk::settings::Validatable;
use serde_json::Value;

fn yaml(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn expected_rules() -> Value {
    serde_saphyr::from_str(
        "- apiGroups: [apps]\n  apiVersions: [v1]\n  resources: [statefulsets]\n  operations: [CREATE, UPDATE]\n",
    )
    .unwrap()
}

#[test]
fn metadata_declares_a_mutating_wapc_policy_for_statefulsets() {
    let m = yaml("metadata.yml");
    assert_eq!(m["rules"], expected_rules());
    assert_eq!(m["mutating"], Value::Bool(true));
    assert_eq!(m["executionMode"], "kubewarden-wapc");
    assert_eq!(m["contextAwareResources"], Value::Array(vec![]));
    assert_eq!(m["backgroundAudit"], Value::Bool(false));
    let a = &m["annotations"];
    for key in [
        "io.artifacthub.displayName",
        "io.artifacthub.resources",
        "io.artifacthub.keywords",
        "io.kubewarden.policy.ociUrl",
        "io.kubewarden.policy.title",
        "io.kubewarden.policy.version",
        "io.kubewarden.policy.description",
        "io.kubewarden.policy.author",
        "io.kubewarden.policy.url",
        "io.kubewarden.policy.source",
        "io.kubewarden.policy.license",
        "io.kubewarden.policy.severity",
        "io.kubewarden.policy.category",
    ] {
        assert!(
            a[key].as_str().is_some_and(|v| !v.is_empty()),
            "metadata.yml lacks {key}"
        );
    }
    assert_eq!(a["io.artifacthub.resources"], "StatefulSet");
}

#[test]
fn versions_agree() {
    let m = yaml("metadata.yml");
    assert_eq!(
        m["annotations"]["io.kubewarden.policy.version"], VERSION,
        "metadata.yml"
    );
    let a = yaml("artifacthub-pkg.yml");
    assert_eq!(a["version"], VERSION, "artifacthub-pkg.yml version");
    let tag = format!(":v{VERSION}");
    let image = a["containersImages"][0]["image"].as_str().unwrap();
    assert!(
        image.ends_with(&tag),
        "artifacthub-pkg.yml image {image} is not {tag}"
    );
    let oci = m["annotations"]["io.kubewarden.policy.ociUrl"]
        .as_str()
        .unwrap();
    assert!(
        image.starts_with(oci),
        "artifacthub image {image} is not at ociUrl {oci}"
    );
    let cap = yaml("deploy/policy/cluster-admission-policy.yaml");
    let module = cap["spec"]["module"].as_str().unwrap();
    assert_eq!(
        module,
        format!("registry://{image}"),
        "deploy/policy module"
    );
    assert_eq!(
        module,
        format!("registry://{oci}:v{VERSION}"),
        "deploy/policy module is not ociUrl:v<version>"
    );
    let links = a["links"].as_array().unwrap();
    assert!(
        links.iter().all(|l| {
            let url = l["url"].as_str().unwrap();
            !url.contains("/releases/") || url.contains(&format!("/v{VERSION}/"))
        }),
        "artifacthub-pkg.yml release links are not v{VERSION}: {links:?}"
    );
}

fn text(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

/// The value of `NAME ?= value` in the Makefile.
fn make_default(name: &str) -> String {
    let prefix = format!("{name} ?= ");
    text("Makefile")
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("Makefile has no `{prefix}…`"))
}

/// `make publish`, `make push-image` and `make deploy-manifests` without REGISTRY/TAG publish and render
/// exactly what deploy/ ships and metadata.yml announces: render.sh replaces those references.
#[test]
fn makefile_defaults_are_the_shipped_references() {
    let registry = make_default("REGISTRY");
    assert_eq!(make_default("TAG"), "v$(VERSION)");
    let m = yaml("metadata.yml");
    assert_eq!(
        m["annotations"]["io.kubewarden.policy.ociUrl"],
        format!("{registry}/policies/sts-safe-rollout").as_str(),
        "metadata.yml ociUrl is not the Makefile's $(REGISTRY)/policies/sts-safe-rollout"
    );
    let image = format!("{registry}/sts-stepper:v{VERSION}");
    for (file, containers) in [
        (
            "deploy/stepper/cronjob.yaml",
            &yaml("deploy/stepper/cronjob.yaml")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
                ["containers"],
        ),
        (
            "deploy/stepper/watch/deployment.yaml",
            &yaml("deploy/stepper/watch/deployment.yaml")["spec"]["template"]["spec"]["containers"],
        ),
    ] {
        assert_eq!(containers[0]["image"], image.as_str(), "{file}");
    }
}

/// The image runs as the user the manifests demand, on scratch, with the labels the issue lists.
#[test]
fn containerfile_matches_the_manifests_security_context() {
    let containerfile = text("stepper/Containerfile");
    let instructions: Vec<&str> = containerfile
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(instructions.contains(&"FROM scratch"), "{instructions:?}");
    let cronjob = yaml("deploy/stepper/cronjob.yaml");
    let pod = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["securityContext"];
    let user = format!(
        "USER {}:{}",
        pod["runAsUser"].as_u64().unwrap(),
        pod["runAsGroup"].as_u64().unwrap()
    );
    assert!(
        instructions.contains(&user.as_str()),
        "no `{user}` in {instructions:?}"
    );
    assert!(instructions.contains(&r#"ENTRYPOINT ["/sts-stepper"]"#));
    for label in [
        "org.opencontainers.image.source=".to_string(),
        "org.opencontainers.image.version=".to_string(),
        format!(
            "org.opencontainers.image.licenses=\"{}\"",
            env!("CARGO_PKG_LICENSE")
        ),
    ] {
        assert!(
            containerfile.contains(&label),
            "Containerfile lacks {label}"
        );
    }
}

#[test]
fn artifacthub_annotations_match_metadata() {
    let a = yaml("artifacthub-pkg.yml");
    let ann = &a["annotations"];
    assert_eq!(ann["kubewarden/mutation"], "true");
    assert_eq!(ann["kubewarden/resources"], "StatefulSet");
    let rules: Value = serde_saphyr::from_str(ann["kubewarden/rules"].as_str().unwrap()).unwrap();
    assert_eq!(rules, expected_rules());
    assert!(a["install"].as_str().unwrap().contains("kwctl pull"));
}

#[test]
fn cluster_admission_policy_is_mutating_fail_closed_and_spares_kube_system() {
    let cap = yaml("deploy/policy/cluster-admission-policy.yaml");
    assert_eq!(cap["kind"], "ClusterAdmissionPolicy");
    let spec = &cap["spec"];
    assert_eq!(spec["mutating"], Value::Bool(true));
    assert_eq!(spec["failurePolicy"], "Fail");
    assert!(
        spec["timeoutSeconds"]
            .as_u64()
            .is_some_and(|t| (1..=30).contains(&t))
    );
    assert_eq!(spec["rules"], expected_rules());
    let excluded = &spec["namespaceSelector"]["matchExpressions"][0];
    assert_eq!(excluded["key"], "kubernetes.io/metadata.name");
    assert_eq!(excluded["operator"], "NotIn");
    let names: Vec<&str> = excluded["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(names.contains(&"kube-system"), "{names:?}");
    // The settings it ships are settings the policy accepts.
    let parsed = sts_safe_rollout::settings::parse(&spec["settings"]).expect("settings parse");
    assert_eq!(parsed.validate(), Ok(()));
}

/// The objects of the ```yaml block of artifacthub-pkg.yml's install text, as the page shows them.
fn install_text_objects() -> Vec<Value> {
    let a = yaml("artifacthub-pkg.yml");
    let install = a["install"].as_str().expect("install text");
    let block = install
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```yaml block in the install text");
    serde_saphyr::from_multiple(block).unwrap_or_else(|e| panic!("install text's YAML: {e}"))
}

/// Artifact Hub's install text shows the policy deploy/policy/ ships, field for field: the opt-in
/// objectSelector, the namespaceSelector that spares the control plane and Kubewarden, on its own PolicyServer.
#[test]
fn artifacthub_install_text_is_the_shipped_opt_in_policy() {
    let shown = install_text_objects();
    for (kind, file) in [
        ("PolicyServer", "deploy/policy/policy-server.yaml"),
        (
            "ClusterAdmissionPolicy",
            "deploy/policy/cluster-admission-policy.yaml",
        ),
    ] {
        let shipped = yaml(file);
        let doc = shown
            .iter()
            .find(|d| d["kind"] == kind)
            .unwrap_or_else(|| panic!("artifacthub-pkg.yml's install text shows no {kind}"));
        assert_eq!(doc["apiVersion"], shipped["apiVersion"], "{kind}");
        assert_eq!(doc["metadata"], shipped["metadata"], "{kind} metadata");
        assert_eq!(doc["spec"], shipped["spec"], "{kind} spec vs {file}");
    }
    let cap = &shown
        .iter()
        .find(|d| d["kind"] == "ClusterAdmissionPolicy")
        .expect("shown")["spec"];
    assert_eq!(
        cap["objectSelector"],
        serde_json::json!({"matchLabels": {"safe-rollout.dev/guard": "true"}}),
        "opt-in by the label"
    );
    let excluded: Vec<&str> = cap["namespaceSelector"]["matchExpressions"][0]["values"]
        .as_array()
        .expect("NotIn values")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        cap["namespaceSelector"]["matchExpressions"][0]["operator"],
        "NotIn"
    );
    for ns in ["kube-system", "kubewarden"] {
        assert!(excluded.contains(&ns), "{ns} not excluded: {excluded:?}");
    }
    assert_eq!(cap["policyServer"], "sts-safe-rollout");
}

/// The value of `NAME := value` in the Makefile.
fn make_constant(name: &str) -> String {
    let prefix = format!("{name} := ");
    text("Makefile")
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("Makefile has no `{prefix}…`"))
}

/// The stepper image's platforms on Artifact Hub are the architectures `make image-multiarch` builds.
#[test]
fn artifacthub_platforms_are_the_makefiles_image_archs() {
    let archs: Vec<String> = make_constant("IMAGE_ARCHS")
        .split_whitespace()
        .map(|a| format!("linux/{a}"))
        .collect();
    assert!(archs.len() >= 2, "IMAGE_ARCHS: {archs:?}");
    let a = yaml("artifacthub-pkg.yml");
    let stepper = a["containersImages"]
        .as_array()
        .expect("containersImages")
        .iter()
        .find(|i| i["name"] == "sts-stepper")
        .expect("the sts-stepper image");
    let platforms: Vec<&str> = stepper["platforms"]
        .as_array()
        .expect("platforms")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        platforms, archs,
        "artifacthub-pkg.yml vs the Makefile's IMAGE_ARCHS"
    );
}
