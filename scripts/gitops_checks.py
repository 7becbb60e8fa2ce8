"""Checks deploy/validate.sh runs on the GitOps sync recipes (deploy/gitops/argocd-sync/,
deploy/gitops/flux-sync/, docs/examples/gitops/): Argo CD's Application and Flux's Kustomization against
their real CRD schemas (fixtures/crds/, see its README), strictly, through signing_checks.SigningSchemas;
an argocd-cm `resource.customizations.ignoreDifferences.<group>_<kind>` value against argo-cd's
OverrideIgnoreDiff (pkg/apis/application/v1alpha1/types.go: jsonPointers, jqPathExpressions,
managedFieldsManagers, each a list of strings); and a JSON 6902 patch's `/spec/ignore` value against the
Kustomization CRD's `spec.ignore` schema. What the jq expressions select is run with jq by
deploy/gitops.bats."""
import jsonschema
import yaml

# (group/version, kind) -> the CRD file under fixtures/crds/ holding its schema.
# Also the Prometheus Operator's ServiceMonitor of deploy/monitoring/ (the PrometheusRule beside it is
# checked by scripts/monitoring-test.sh).
CRD_FILES = {
    ("argoproj.io/v1alpha1", "Application"): "argoproj.io_applications.yaml",
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"): "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "monitoring.coreos.com_servicemonitors.yaml",
}

IGNORE_DIFF_KEY = "resource.customizations.ignoreDifferences."
IGNORE_DIFF_FIELDS = ("jsonPointers", "jqPathExpressions", "managedFieldsManagers")


def argocd_ignore_problems(doc):
    """Problems of the ignoreDifferences values of an argocd-cm ConfigMap (none for any other object)."""
    if doc.get("kind") != "ConfigMap" or (doc.get("metadata") or {}).get("name") != "argocd-cm":
        return []
    problems = []
    for key, text in (doc.get("data") or {}).items():
        if not key.startswith(IGNORE_DIFF_KEY):
            continue
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            problems.append(f"{key}: not YAML: {e}")
            continue
        if not isinstance(value, dict) or not value:
            problems.append(f"{key}: expected a map of {', '.join(IGNORE_DIFF_FIELDS)}")
            continue
        for field, items in value.items():
            if field not in IGNORE_DIFF_FIELDS:
                problems.append(f"{key}: unknown field {field!r} (argo-cd OverrideIgnoreDiff has {', '.join(IGNORE_DIFF_FIELDS)})")
            elif not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
                problems.append(f"{key}.{field}: expected a list of non-empty strings")
            elif field == "jsonPointers" and not all(i.startswith("/") for i in items):
                problems.append(f"{key}.jsonPointers: each a JSON pointer starting with /")
    return problems


def flux_ignore_problems(op, schemas):
    """Problems of a JSON 6902 op that adds a Kustomization's `spec.ignore`, against the CRD (strict)."""
    if op.get("path") != "/spec/ignore":
        return []
    schema, _ = schemas.schema("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
    ignore = schema["properties"]["spec"]["properties"]["ignore"]
    validator = jsonschema.Draft7Validator(ignore)
    return [f"spec.ignore: {e.message} at {'/'.join(map(str, e.absolute_path)) or '(top level)'}"
            for e in validator.iter_errors(op.get("value"))]
