#!/usr/bin/env bash
# Validates every Kubernetes manifest under deploy/ against the Kubernetes OpenAPI schemas
# (strict: unknown fields are errors), with kubernetes-validate from PyPI (it ships the schemas, so no
# cluster and no network beyond the pip install into scripts/python-env.sh's venv are needed).
#
#   deploy/validate.sh                      validate against Kubernetes 1.28 and the newest bundled
#   deploy/validate.sh dist/                the manifests `make deploy-manifests` rendered instead
#   K8S_VERSIONS="1.30.0" deploy/validate.sh
#   KUBEWARDEN_CRD=path/to/policies.kubewarden.io_clusteradmissionpolicies.yaml:path/to/…_policyservers.yaml deploy/validate.sh
#                                           (another Kubewarden release's CRDs)
#
# Kustomization files (and kustomize Components) are kustomize's, not API objects: they are checked to
# parse and to name only files that exist (`resources:`, `patches:`, a generator's `files:`; the files a
# generator reads are data, not API objects, and are not validated as such). A JSON 6902 patch (a YAML list of ops,
# deploy/gitops/flux/) is checked op by op, and a Flux `spec.healthCheckExprs` value against the fields of
# kustomize-controller's CRD (apiVersion, kind, current required; inProgress, failed optional). Argo CD's
# health_test.yaml (deploy/gitops/argocd/resource_customizations/) is checked against Argo CD's test format
# (each test's inputPath exists, its status is an Argo CD health status); the objects it names are validated
# as any other manifest. Argo CD's Application and Flux's Kustomization (the GitOps sync recipes, also in
# docs/examples/gitops/: `deploy/validate.sh docs/examples/gitops`) are validated strictly against their real
# CRDs in fixtures/crds/, an argocd-cm ignoreDifferences value against Argo CD's format, and a JSON 6902
# `/spec/ignore` against the Kustomization CRD (scripts/gitops_checks.py). Kubewarden's ClusterAdmissionPolicy
# and PolicyServer are validated against the CRD schemas in $KUBEWARDEN_CRD (files separated by `:`; default:
# the repository's fixtures/crds/ copies of Kubewarden's two CRDs; an empty value skips them, and the script
# says so). The PrometheusRule of
# deploy/monitoring/ is skipped here: `make monitoring-tests` validates it against its real CRD; its
# ServiceMonitor is validated here, against the Prometheus Operator's CRD in fixtures/crds/.
# API objects that exist only from some Kubernetes version on (the MutatingAdmissionPolicy and its binding of
# deploy/native/, admissionregistration.k8s.io/v1 from 1.36) are validated against that version's schema
# and the newer ones checked, or structurally when kubernetes-validate has no such schema (the output says
# which).
# Exit status: 0 when every manifest is valid, 1 when any is not (each failure is printed).
set -euo pipefail

# The directory to check: deploy/ (where this script is) unless given.
here="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")}" && pwd)"
# kubernetes-validate (with jsonschema and PyYAML) in the project's Python venv (scripts/python-env.sh).
# Kubewarden's real CRDs (fixtures/crds/README.md says which commit) unless KUBEWARDEN_CRD is set.
crds="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/fixtures/crds"
export KUBEWARDEN_CRD="${KUBEWARDEN_CRD-$crds/policies.kubewarden.io_clusteradmissionpolicies.yaml:$crds/policies.kubewarden.io_policyservers.yaml}"
python="$("$(dirname "${BASH_SOURCE[0]}")/../scripts/python-env.sh" kubernetes-validate jsonschema pyyaml)"
# The signing manifests' checks (Kyverno's and policy-controller's CRDs, Kubewarden's verification config).
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

exec "$python" - "$here" "$repo" <<'PY'
import importlib.metadata
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[2], "scripts"))
sys.path.insert(0, os.path.join(sys.argv[2], "deploy", "krew"))
import check_manifest as krew
import gitops_checks
import signing_checks

import jsonschema
import kubernetes_validate
import yaml

root = sys.argv[1]
versions = os.environ.get("K8S_VERSIONS", "").split() or [
    "1.28.0",  # the control plane the project's fixtures were captured on
    kubernetes_validate.latest_version(),
]
crd_path = os.environ.get("KUBEWARDEN_CRD", "")

def crd_schemas(path):
    """openAPIV3Schema by (group/version, kind) from a CRD file."""
    schemas = {}
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec.get("versions", []):
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    schemas[(f"{spec['group']}/{v['name']}", spec["names"]["kind"])] = schema
    return schemas

custom = {}
for path in filter(None, crd_path.split(os.pathsep)):
    # Strict, as `kubectl apply`'s field validation: a misspelt field (minAvaliable) is an error.
    custom.update({key: signing_checks.strict(s) for key, s in crd_schemas(path).items()})
signing = signing_checks.SigningSchemas(os.path.join(sys.argv[2], "fixtures", "crds"))
gitops = signing_checks.SigningSchemas(os.path.join(sys.argv[2], "fixtures", "crds"), gitops_checks.CRD_FILES)

# The first Kubernetes version that serves these objects: they are validated against it and the newer ones.
introduced = {
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"): "1.36.0",
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"): "1.36.0",
}
known = set(kubernetes_validate.utils.all_versions())

def mm(version):
    return tuple(int(x) for x in version.split(".")[:2])

def versions_for(api, kind):
    first = introduced.get((api, kind))
    if first is None:
        return versions
    return sorted({first, *versions} - {v for v in versions if mm(v) < mm(first)}, key=mm)

def structural(doc):
    """Problems found without a schema: the fields admissionregistration.k8s.io/v1 requires."""
    spec = doc.get("spec") or {}
    if doc["kind"] == "MutatingAdmissionPolicyBinding":
        return [] if spec.get("policyName") else ["spec.policyName is required"]
    problems = []
    if not (spec.get("matchConstraints") or {}).get("resourceRules"):
        problems.append("spec.matchConstraints.resourceRules is required")
    if spec.get("failurePolicy", "Fail") not in ("Fail", "Ignore"):
        problems.append("spec.failurePolicy must be Fail or Ignore")
    if spec.get("reinvocationPolicy") not in ("Never", "IfNeeded"):
        problems.append("spec.reinvocationPolicy must be Never or IfNeeded")
    mutations = spec.get("mutations") or []
    if not mutations:
        problems.append("spec.mutations must not be empty")
    for i, m in enumerate(mutations):
        body = {"JSONPatch": "jsonPatch", "ApplyConfiguration": "applyConfiguration"}.get(m.get("patchType"))
        if body is None or not (m.get(body) or {}).get("expression"):
            problems.append(f"spec.mutations[{i}] needs patchType JSONPatch/ApplyConfiguration and its expression")
    for i, v in enumerate(spec.get("variables") or []):
        if not v.get("name") or not v.get("expression"):
            problems.append(f"spec.variables[{i}] needs name and expression")
    return problems
failures = 0
checked = 0
skipped = []

JSON6902_OPS = {"add", "remove", "replace", "move", "copy", "test"}
HEALTH_CHECK_FIELDS = {"apiVersion", "kind", "current", "inProgress", "failed"}
ARGO_HEALTH_STATUSES = {"Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown"}

def json6902_problems(ops):
    """Problems of a JSON 6902 patch; a Flux healthCheckExprs value is checked against its CRD fields."""
    problems = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in JSON6902_OPS:
            problems.append(f"op {i}: not a JSON 6902 operation (op one of {sorted(JSON6902_OPS)})")
            continue
        if not str(op.get("path", "")).startswith("/"):
            problems.append(f"op {i}: path must be a JSON pointer")
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            problems.append(f"op {i}: {op['op']} needs a value")
        problems += [f"op {i}: {p}" for p in gitops_checks.flux_ignore_problems(op, gitops)]
        if op.get("path") == "/spec/healthCheckExprs":
            entries = op.get("value")
            if not isinstance(entries, list) or not entries:
                problems.append(f"op {i}: healthCheckExprs must be a non-empty list")
                continue
            for j, e in enumerate(entries):
                if not isinstance(e, dict):
                    problems.append(f"op {i}: healthCheckExprs[{j}] is not an object")
                    continue
                unknown = set(e) - HEALTH_CHECK_FIELDS
                missing = {"apiVersion", "kind", "current"} - set(e)
                if unknown or missing:
                    problems.append(f"op {i}: healthCheckExprs[{j}]: unknown {sorted(unknown)}, missing {sorted(missing)}")
                if any(not isinstance(v, str) for v in e.values()):
                    problems.append(f"op {i}: healthCheckExprs[{j}]: every field is a string")
    return problems

def argo_test_problems(doc, dirpath):
    """Problems of an Argo CD health_test.yaml (argo-cd util/lua/health_test.go's format)."""
    problems = []
    for i, t in enumerate(doc.get("tests") or []):
        status = ((t or {}).get("healthStatus") or {})
        if status.get("status") not in ARGO_HEALTH_STATUSES:
            problems.append(f"tests[{i}]: healthStatus.status must be one of {sorted(ARGO_HEALTH_STATUSES)}")
        if not isinstance(status.get("message", ""), str):
            problems.append(f"tests[{i}]: healthStatus.message must be a string")
        if not os.path.isfile(os.path.join(dirpath, str((t or {}).get("inputPath", "")))):
            problems.append(f"tests[{i}]: inputPath {t.get('inputPath')!r} does not exist")
    if not doc.get("tests"):
        problems.append("no tests")
    return problems

def generator_files(doc):
    """The files a kustomization's configMapGenerator and secretGenerator entries read (`files:`, each
    `path` or `key=path`)."""
    names = []
    for gen in (doc.get("configMapGenerator") or []) + (doc.get("secretGenerator") or []):
        names += [f.split("=", 1)[-1] for f in (gen or {}).get("files") or []]
    return names

# Files a generator turns into a ConfigMap's data are data, not API objects (the stepper's webhook and answerer files:
# their own tests parse them); their kustomization checks that they exist.
data_files = set()
for dirpath, _, files in os.walk(root):
    for name in files:
        if name in ("kustomization.yaml", "kustomization.yml"):
            with open(os.path.join(dirpath, name)) as f:
                for doc in yaml.safe_load_all(f):
                    data_files.update(os.path.normpath(os.path.join(dirpath, g)) for g in generator_files(doc or {}))

for dirpath, _, files in sorted(os.walk(root)):
    for name in sorted(files):
        if not name.endswith((".yaml", ".yml")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, os.path.dirname(root))
        if os.path.normpath(path) in data_files:
            print(f"ok   {rel} (data of a kustomize generator, not an API object)")
            continue
        try:
            with open(path) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            print(f"FAIL {rel}: not YAML: {e}")
            failures += 1
            continue
        for doc in docs:
            if isinstance(doc, list):
                problems = json6902_problems(doc)
                for p in problems:
                    print(f"FAIL {rel} (JSON 6902 patch): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {rel} (JSON 6902 patch: {len(doc)} ops)")
                continue
            if name == "health_test.yaml" and "kind" not in doc:
                problems = argo_test_problems(doc, dirpath)
                for p in problems:
                    print(f"FAIL {rel} (Argo CD health test): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {rel} (Argo CD health test: {len(doc['tests'])} tests, every input exists)")
                continue
            if signing_checks.is_verification_config(doc):
                problems = signing_checks.verification_config_problems(doc)
                for p in problems:
                    print(f"FAIL {rel} (Kubewarden verification config): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {rel} (Kubewarden verification config: its format)")
                continue
            kind = doc.get("kind", "?")
            api = doc.get("apiVersion", "?")
            what = f"{rel} {kind}/{(doc.get('metadata') or {}).get('name', '')}"
            if api.startswith("kustomize.config.k8s.io/"):
                named = (list(doc.get("resources", [])) + [p.get("path") for p in doc.get("patches", []) if p.get("path")]
                         + generator_files(doc))
                missing = [r for r in named if not os.path.exists(os.path.join(dirpath, r))]
                if missing:
                    print(f"FAIL {rel}: {kind} names missing files {missing}")
                    failures += 1
                else:
                    print(f"ok   {rel} ({kind}: all {len(named)} resources, patches and generator files exist)")
                continue
            if api == krew.API_VERSION:
                problems = krew.template_problems(doc)
                for p in problems:
                    print(f"FAIL {what} (krew plugin manifest template): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {what}: krew's rules and the plugin's four platforms, placeholders filled (deploy/krew.bats checks it rendered)")
                continue
            if api.startswith("monitoring.coreos.com/") and not gitops.handles(api, kind):
                skipped.append(what)
                print(f"SKIP {what}: validated against its CRD by scripts/monitoring-test.sh")
                continue
            if gitops.handles(api, kind) or signing.handles(api, kind):
                problems, crd = (gitops if gitops.handles(api, kind) else signing).problems(doc)
                for p in problems:
                    print(f"FAIL {what} (strict, against the CRD schema in {os.path.relpath(crd, sys.argv[2])}): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {what} against the CRD schema in {os.path.relpath(crd, sys.argv[2])} (strict)")
                continue
            if api.startswith("policies.kubewarden.io/"):
                schema = custom.get((api, kind))
                if schema is None:
                    skipped.append(what)
                    print(f"SKIP {what}: no CRD schema for {api} {kind} at hand "
                          f"(set KUBEWARDEN_CRD to the Kubewarden CRD files to validate it)")
                    continue
                try:
                    jsonschema.validate(doc, schema)
                    print(f"ok   {what} against the CRD schema of {api} {kind} in $KUBEWARDEN_CRD (strict)")
                    checked += 1
                except jsonschema.ValidationError as e:
                    print(f"FAIL {what}: {e.message} at {'/'.join(map(str, e.absolute_path))}")
                    failures += 1
                continue
            problems = gitops_checks.argocd_ignore_problems(doc)
            for p in problems:
                print(f"FAIL {what} (Argo CD ignoreDifferences): {p}")
            failures += len(problems)
            if problems:
                continue
            wanted = versions_for(api, kind)
            if (api, kind) in introduced and not any(v in known for v in wanted):
                problems = structural(doc)
                for p in problems:
                    print(f"FAIL {what} (structural check: kubernetes-validate has no schema for "
                          f"Kubernetes {wanted[0]}): {p}")
                failures += len(problems)
                if not problems:
                    checked += 1
                    print(f"ok   {what} by a structural check only (kubernetes-validate "
                          f"{importlib.metadata.version('kubernetes-validate')} has no Kubernetes {wanted[0]} schema)")
                continue
            for version in wanted:
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                    print(f"ok   {what} against Kubernetes {version}")
                    checked += 1
                except kubernetes_validate.ValidationError as e:
                    where = "/".join(map(str, e.path)) or "(top level)"
                    print(f"FAIL {what} against Kubernetes {version}: {e.message} at {where}")
                    failures += 1
                except kubernetes_validate.SchemaNotFoundError as e:
                    print(f"FAIL {what}: no Kubernetes {version} schema for {api} {kind}: {e}")
                    failures += 1

print(f"{checked} validations passed, {failures} failed"
      + (f", {len(skipped)} skipped (no schema)" if skipped else ""))
sys.exit(1 if failures else 0)
PY
