#!/usr/bin/env bash
# Validates every Kubernetes manifest under deploy/ against the Kubernetes OpenAPI schemas
# (strict: unknown fields are errors), with kubernetes-validate from PyPI (it ships the schemas, so no
# cluster and no network beyond the pip install into scripts/python-env.sh's venv are needed).
#
#   deploy/validate.sh                      validate against Kubernetes 1.28 and the newest bundled
#   deploy/validate.sh dist/                the manifests `make deploy-manifests` rendered instead
#   K8S_VERSIONS="1.30.0" deploy/validate.sh
#   KUBEWARDEN_CRD=path/to/policies.kubewarden.io_clusteradmissionpolicies.yaml deploy/validate.sh
#
# Kustomization files are kustomize's, not API objects: they are checked to parse and to name only
# files that exist. A Kubewarden ClusterAdmissionPolicy is validated against the CRD schema in
# $KUBEWARDEN_CRD when given; otherwise it is skipped, and the script says so. The PrometheusRule of
# deploy/monitoring/ is skipped here: `make monitoring-tests` validates it against its real CRD.
# API objects that exist only from some Kubernetes version on (the MutatingAdmissionPolicy and its binding of
# deploy/native/, admissionregistration.k8s.io/v1 from 1.36) are validated against that version's schema
# and the newer ones checked, or structurally when kubernetes-validate has no such schema (the output says
# which).
# Exit status: 0 when every manifest is valid, 1 when any is not (each failure is printed).
set -euo pipefail

# The directory to check: deploy/ (where this script is) unless given.
here="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")}" && pwd)"
# kubernetes-validate (with jsonschema and PyYAML) in the project's Python venv (scripts/python-env.sh).
python="$("$(dirname "${BASH_SOURCE[0]}")/../scripts/python-env.sh" kubernetes-validate jsonschema pyyaml)"

exec "$python" - "$here" <<'PY'
import importlib.metadata
import os
import sys

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

custom = crd_schemas(crd_path) if crd_path else {}

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

for dirpath, _, files in sorted(os.walk(root)):
    for name in sorted(files):
        if not name.endswith((".yaml", ".yml")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, os.path.dirname(root))
        try:
            with open(path) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            print(f"FAIL {rel}: not YAML: {e}")
            failures += 1
            continue
        for doc in docs:
            kind = doc.get("kind", "?")
            api = doc.get("apiVersion", "?")
            what = f"{rel} {kind}/{(doc.get('metadata') or {}).get('name', '')}"
            if api.startswith("kustomize.config.k8s.io/"):
                missing = [r for r in doc.get("resources", [])
                           if not os.path.exists(os.path.join(dirpath, r))]
                if missing:
                    print(f"FAIL {rel}: kustomization names missing resources {missing}")
                    failures += 1
                else:
                    print(f"ok   {rel} (kustomization: all {len(doc.get('resources', []))} resources exist)")
                continue
            if api.startswith("monitoring.coreos.com/"):
                skipped.append(what)
                print(f"SKIP {what}: validated against its CRD by scripts/monitoring-test.sh")
                continue
            if api.startswith("policies.kubewarden.io/"):
                schema = custom.get((api, kind))
                if schema is None:
                    skipped.append(what)
                    print(f"SKIP {what}: no CRD schema for {api} {kind} at hand "
                          f"(set KUBEWARDEN_CRD to the Kubewarden CRD file to validate it)")
                    continue
                try:
                    jsonschema.validate(doc, schema)
                    print(f"ok   {what} against the CRD schema in {crd_path}")
                    checked += 1
                except jsonschema.ValidationError as e:
                    print(f"FAIL {what}: {e.message} at {'/'.join(map(str, e.absolute_path))}")
                    failures += 1
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
