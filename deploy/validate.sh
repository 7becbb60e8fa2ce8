#!/usr/bin/env bash
# Validates every Kubernetes manifest under deploy/ against the Kubernetes OpenAPI schemas
# (strict: unknown fields are errors), with kubernetes-validate from PyPI (it ships the schemas, so no
# cluster and no network beyond the pip install are needed).
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
# Exit status: 0 when every manifest is valid, 1 when any is not (each failure is printed).
set -euo pipefail

# The directory to check: deploy/ (where this script is) unless given.
here="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")}" && pwd)"
python="${PYTHON:-python3}"

if ! "$python" -c 'import kubernetes_validate' 2>/dev/null; then
    echo "validate.sh: installing kubernetes-validate from PyPI" >&2
    "$python" -m pip install --quiet --disable-pip-version-check kubernetes-validate
fi

exec "$python" - "$here" <<'PY'
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
            for version in versions:
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
